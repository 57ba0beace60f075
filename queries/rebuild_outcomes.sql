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
-- Runs after every rebuild and update, over the whole table, since a cap
-- seen depends on every request of the segment.
UPDATE requests SET outcome_detail = d.detail
FROM (
    WITH dump AS (
        SELECT max(end_ns) AS end_ns FROM spans
    ),
    per_request AS (
        SELECT a.request_id,
               bool_and(coalesce(a.http_status IN (429, 503), false) OR coalesce(a.grpc_status = 8, false)) AS no_capacity,
               bool_or(a.is_final AND coalesce(s.attributes['gen_ai.response.finish_reasons'] ILIKE '%length%', false)) AS token_cap
        FROM attempts a
        LEFT JOIN spans s ON s.trace_id = a.trace_id AND s.span_id = a.span_id
        GROUP BY a.request_id
    ),
    caps AS (
        SELECT service, operation, route, max(attempts) AS cap FROM requests GROUP BY ALL
    )
    SELECT r.request_id,
           CASE
               WHEN r.outcome = 'error' AND anchor.attributes['retryscope.exhausted.reason']
                    IN ('attempt_cap', 'deadline', 'no_progress', 'token_cap', 'no_capacity')
                    THEN anchor.attributes['retryscope.exhausted.reason']
               WHEN r.outcome = 'error' AND coalesce(anchor.parent_span_id, '') <> '' AND parent.span_id IS NULL
                    AND (SELECT end_ns FROM dump) - r.end_ns < $1 THEN 'unfinished'
               WHEN r.outcome = 'error' AND r.final_trigger = 'cancelled' THEN 'cancelled'
               WHEN r.outcome = 'error'
                    AND r.latency_ms >= TRY_CAST(anchor.attributes['retryscope.deadline_ms'] AS DOUBLE) THEN 'deadline'
               WHEN p.token_cap THEN 'token_cap'
               WHEN r.outcome = 'error' AND p.no_capacity THEN 'no_capacity'
               WHEN r.outcome = 'error' AND r.attempts > 1 AND r.attempts = c.cap THEN 'attempt_cap'
           END AS detail
    FROM requests r
    LEFT JOIN spans anchor ON anchor.trace_id = r.trace_id AND anchor.span_id = r.span_id
    LEFT JOIN spans parent ON parent.trace_id = anchor.trace_id AND parent.span_id = anchor.parent_span_id
    LEFT JOIN per_request p ON p.request_id = r.request_id
    LEFT JOIN caps c ON c.service IS NOT DISTINCT FROM r.service AND c.operation IS NOT DISTINCT FROM r.operation
        AND c.route IS NOT DISTINCT FROM r.route
) d
WHERE requests.request_id = d.request_id;
