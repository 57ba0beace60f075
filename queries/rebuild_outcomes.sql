-- rebuild_outcomes: sets requests.outcome_detail, what ended a request,
-- beside its outcome (ok | error, unchanged), wherever the spans let it be
-- inferred; NULL otherwise (every ok request but a token_cap one, and the
-- failures no rule below explains). The first rule that holds wins:
--   (stated)     failed, and its anchor span states why its loop gave up
--                (retryscope.exhausted.reason: attempt_cap, deadline,
--                no_progress, token_cap or no_capacity); the only way to
--                learn no_progress (the loop saw attempts repeat themselves)
--   unfinished   failed, its anchor names a parent span that was never
--                exported (the logical span had not ended), and the dump's
--                last span ends less than $1 (the split window, ns) after
--                the request's end: the retry loop was still running
--   cancelled    failed, and its final attempt was cancelled by the client
--                (trigger cancelled: error.type or status "cancelled", gRPC
--                CANCELLED), e.g. a stream the client stopped reading
--   deadline     failed, and it lasted at least the deadline its anchor
--                span states (retryscope.deadline_ms, ms from its start)
--   token_cap    the answer used stopped at the output token cap
--                (gen_ai.response.finish_reasons holds "length"); the
--                outcome may be ok
--   no_capacity  failed, and every attempt was turned away for want of
--                capacity (HTTP 429 or 503, gRPC RESOURCE_EXHAUSTED)
--   attempt_cap  failed after as many attempts as any request of its
--                service, operation and route made (the cap seen), and
--                more than one
-- Runs after every rebuild and update, over the requests it built
-- (rebuild_built) and those whose detail the new data may change without
-- rebuilding them: a cap seen moves when a segment's requests come and go,
-- so every failed request whose attempt_cap no longer matches its
-- segment's cap (unset at the cap, or set off it) is judged again; and the
-- dump's end moves, so every request marked unfinished or ending within $1
-- of the end is judged again. The rest keep their detail: no rule can
-- change it. The spans read are those of these requests' traces only.
CREATE OR REPLACE TEMP TABLE rebuild_detail AS
WITH dump AS (
    SELECT max(end_ns) AS end_ns FROM spans
),
caps AS (
    SELECT service, operation, route, max(attempts) AS cap FROM requests GROUP BY ALL
),
scope AS (
    SELECT request_id FROM rebuild_built
    UNION
    SELECT r.request_id
    FROM requests r
    JOIN caps c ON c.service IS NOT DISTINCT FROM r.service AND c.operation IS NOT DISTINCT FROM r.operation
        AND c.route IS NOT DISTINCT FROM r.route
    WHERE r.outcome = 'error' AND r.attempts > 1
      AND ((r.outcome_detail IS NULL AND r.attempts = c.cap) OR (r.outcome_detail = 'attempt_cap' AND r.attempts <> c.cap))
    UNION
    SELECT request_id FROM requests
    WHERE outcome_detail = 'unfinished' OR (outcome = 'error' AND end_ns > (SELECT end_ns FROM dump) - $1)
),
scoped AS (
    SELECT * FROM requests WHERE request_id IN (SELECT request_id FROM scope)
),
scoped_spans AS (
    SELECT trace_id, span_id, parent_span_id,
           attributes['retryscope.exhausted.reason'] AS exhausted_reason,
           attributes['retryscope.deadline_ms'] AS deadline_ms,
           attributes['gen_ai.response.finish_reasons'] AS finish_reasons
    FROM spans
    WHERE trace_id IN (SELECT trace_id FROM scoped UNION SELECT trace_id FROM attempts WHERE request_id IN (SELECT request_id FROM scope))
),
per_request AS (
    SELECT a.request_id,
           bool_and(coalesce(a.http_status IN (429, 503), false) OR coalesce(a.grpc_status = 8, false)) AS no_capacity,
           bool_or(a.is_final AND coalesce(s.finish_reasons ILIKE '%length%', false)) AS token_cap
    FROM attempts a
    LEFT JOIN scoped_spans s ON s.trace_id = a.trace_id AND s.span_id = a.span_id
    WHERE a.request_id IN (SELECT request_id FROM scope)
    GROUP BY a.request_id
)
SELECT r.request_id,
       CASE
           WHEN r.outcome = 'error' AND anchor.exhausted_reason
                IN ('attempt_cap', 'deadline', 'no_progress', 'token_cap', 'no_capacity')
                THEN anchor.exhausted_reason
           WHEN r.outcome = 'error' AND coalesce(anchor.parent_span_id, '') <> '' AND parent.span_id IS NULL
                AND (SELECT end_ns FROM dump) - r.end_ns < $1 THEN 'unfinished'
           WHEN r.outcome = 'error' AND r.final_trigger = 'cancelled' THEN 'cancelled'
           WHEN r.outcome = 'error'
                AND r.latency_ms >= TRY_CAST(anchor.deadline_ms AS DOUBLE) THEN 'deadline'
           WHEN p.token_cap THEN 'token_cap'
           WHEN r.outcome = 'error' AND p.no_capacity THEN 'no_capacity'
           WHEN r.outcome = 'error' AND r.attempts > 1 AND r.attempts = c.cap THEN 'attempt_cap'
       END AS detail
FROM scoped r
LEFT JOIN scoped_spans anchor ON anchor.trace_id = r.trace_id AND anchor.span_id = r.span_id
LEFT JOIN scoped_spans parent ON parent.trace_id = anchor.trace_id AND parent.span_id = anchor.parent_span_id
LEFT JOIN per_request p ON p.request_id = r.request_id
LEFT JOIN caps c ON c.service IS NOT DISTINCT FROM r.service AND c.operation IS NOT DISTINCT FROM r.operation
    AND c.route IS NOT DISTINCT FROM r.route;

-- Set apart from the query above: DuckDB runs an UPDATE over a join of
-- this size many times slower than over a table.
UPDATE requests SET outcome_detail = d.detail
FROM rebuild_detail d
WHERE requests.request_id = d.request_id AND requests.outcome_detail IS DISTINCT FROM d.detail;

DROP TABLE rebuild_detail;
