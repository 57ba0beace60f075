-- rebuild_outcomes: the last rule of requests.outcome_detail, run once the
-- rebuild has written every request with the details its other rules give
-- (rebuild/outcome.go):
--   attempt_cap  failed after as many attempts as any request of its
--                service, operation and route made (the cap seen), and
--                more than one; only when no other rule holds (the
--                detail is NULL).
-- The cap seen moves as requests come and go, so every failed request is
-- judged again whose detail no longer matches its segment's cap: NULL at
-- the cap becomes attempt_cap, and attempt_cap off the cap becomes NULL,
-- unless its anchor span states attempt_cap itself
-- (retryscope.exhausted.reason, the rebuild's first rule). No other rule
-- can have come to hold for a request this leaves NULL: they read only the
-- request's own spans, which a request not rebuilt has not changed, and
-- the dump's end, which an update rebuilds the requests near (see
-- rebuild_scope).
CREATE OR REPLACE TEMP TABLE rebuild_detail AS
WITH caps AS (
    SELECT service, operation, route, max(attempts) AS cap FROM requests GROUP BY ALL
),
candidates AS (
    SELECT r.request_id, r.trace_id, r.span_id, r.attempts = c.cap AS at_cap
    FROM requests r
    JOIN caps c ON c.service IS NOT DISTINCT FROM r.service AND c.operation IS NOT DISTINCT FROM r.operation
        AND c.route IS NOT DISTINCT FROM r.route
    WHERE r.outcome = 'error' AND r.attempts > 1
      AND ((r.outcome_detail IS NULL AND r.attempts = c.cap) OR (r.outcome_detail = 'attempt_cap' AND r.attempts <> c.cap))
),
stated AS (
    SELECT trace_id, span_id
    FROM spans
    WHERE trace_id IN (SELECT trace_id FROM candidates WHERE NOT at_cap)
      AND attributes['retryscope.exhausted.reason'] = 'attempt_cap'
)
SELECT k.request_id, CASE WHEN k.at_cap THEN 'attempt_cap' END AS detail
FROM candidates k
ANTI JOIN stated s ON s.trace_id = k.trace_id AND s.span_id = k.span_id;

-- Set apart from the query above: DuckDB runs an UPDATE over a join of
-- this size many times slower than over a table.
UPDATE requests SET outcome_detail = d.detail
FROM rebuild_detail d
WHERE requests.request_id = d.request_id;

DROP TABLE rebuild_detail;
