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
-- change it. The spans read are those the rebuild read (rebuild_source)
-- and those of the other requests' traces.
CREATE OR REPLACE TEMP TABLE rebuild_detail AS
WITH dump AS (
    SELECT max(end_ns) AS end_ns FROM spans
),
caps AS (
    SELECT service, operation, route, max(attempts) AS cap FROM requests GROUP BY ALL
),
-- The requests not built now whose detail may have changed; none of their
-- traces is in rebuild_source (it would have rebuilt them).
dependents AS (
    SELECT r.request_id
    FROM requests r
    JOIN caps c ON c.service IS NOT DISTINCT FROM r.service AND c.operation IS NOT DISTINCT FROM r.operation
        AND c.route IS NOT DISTINCT FROM r.route
    WHERE r.outcome = 'error' AND r.attempts > 1
      AND ((r.outcome_detail IS NULL AND r.attempts = c.cap) OR (r.outcome_detail = 'attempt_cap' AND r.attempts <> c.cap))
    UNION
    SELECT request_id FROM requests
    WHERE outcome_detail = 'unfinished' OR (outcome = 'error' AND end_ns > (SELECT end_ns FROM dump) - $1)
    EXCEPT
    SELECT request_id FROM rebuild_built
),
scope AS (
    SELECT request_id FROM rebuild_built
    UNION ALL
    SELECT request_id FROM dependents
),
-- What the rules read of the spans of these requests, joined by
-- hash(trace_id, span_id) as in rebuild_spans.
facts AS (
    SELECT hash(trace_id, span_id) AS k,
           CASE WHEN coalesce(parent_span_id, '') <> '' THEN hash(trace_id, parent_span_id) END AS parent_k,
           attributes['retryscope.exhausted.reason'] AS exhausted_reason,
           attributes['retryscope.deadline_ms'] AS deadline_ms,
           coalesce(attributes['gen_ai.response.finish_reasons'] ILIKE '%length%', false) AS length_cut
    FROM (
        SELECT * FROM rebuild_source
        UNION ALL
        SELECT * FROM spans
        WHERE trace_id IN (SELECT trace_id FROM requests WHERE request_id IN (SELECT request_id FROM dependents)
                           UNION
                           SELECT trace_id FROM attempts WHERE request_id IN (SELECT request_id FROM dependents))
    )
),
per_request AS (
    SELECT a.request_id,
           bool_and(coalesce(a.http_status IN (429, 503), false) OR coalesce(a.grpc_status = 8, false)) AS no_capacity,
           bool_or(a.is_final AND coalesce(s.length_cut, false)) AS token_cap
    FROM attempts a
    LEFT JOIN facts s ON s.k = hash(a.trace_id, a.span_id)
    WHERE a.request_id IN (SELECT request_id FROM scope)
    GROUP BY a.request_id
)
SELECT r.request_id,
       CASE
           WHEN r.outcome = 'error' AND anchor.exhausted_reason
                IN ('attempt_cap', 'deadline', 'no_progress', 'token_cap', 'no_capacity')
                THEN anchor.exhausted_reason
           WHEN r.outcome = 'error' AND anchor.parent_k IS NOT NULL AND parent.k IS NULL
                AND (SELECT end_ns FROM dump) - r.end_ns < $1 THEN 'unfinished'
           WHEN r.outcome = 'error' AND r.final_trigger = 'cancelled' THEN 'cancelled'
           WHEN r.outcome = 'error'
                AND r.latency_ms >= TRY_CAST(anchor.deadline_ms AS DOUBLE) THEN 'deadline'
           WHEN p.token_cap THEN 'token_cap'
           WHEN r.outcome = 'error' AND p.no_capacity THEN 'no_capacity'
           WHEN r.outcome = 'error' AND r.attempts > 1 AND r.attempts = c.cap THEN 'attempt_cap'
       END AS detail
FROM requests r
LEFT JOIN facts anchor ON anchor.k = hash(r.trace_id, r.span_id)
LEFT JOIN facts parent ON parent.k = anchor.parent_k
LEFT JOIN per_request p ON p.request_id = r.request_id
LEFT JOIN caps c ON c.service IS NOT DISTINCT FROM r.service AND c.operation IS NOT DISTINCT FROM r.operation
    AND c.route IS NOT DISTINCT FROM r.route
WHERE r.request_id IN (SELECT request_id FROM scope);

-- Set apart from the query above: DuckDB runs an UPDATE over a join of
-- this size many times slower than over a table.
UPDATE requests SET outcome_detail = d.detail
FROM rebuild_detail d
WHERE requests.request_id = d.request_id AND requests.outcome_detail IS DISTINCT FROM d.detail;

DROP TABLE rebuild_detail;
