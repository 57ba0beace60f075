-- yield_attempts: every attempt of the logical requests that started in
-- [$1, $2] (Unix ns), with its request, for the marginal yield curve and
-- the capacity timeline (package analysis). One row per attempt, in
-- request_id then ordinal order.
-- Columns:
--   request_id
--   service, operation, route  the request's, '(unset)' when unknown (the
--                       findings' dimensions)
--   req_start_ns        the request's start (Unix ns)
--   latency_ms          the request's end-to-end latency
--   req_attempts        the request's attempt count
--   ok                  the request succeeded
--   ordinal             the attempt's 1-based ordinal
--   final_ok            the attempt is a final one and succeeded: the
--                       first such of a request that succeeded is the one
--                       whose answer was used (package analysis finds it
--                       as the rows come, rather than DuckDB grouping the
--                       attempts for it and joining them back, which took
--                       half the query's time)
--   start_ns, end_ns    the attempt's client-side start and end (Unix ns)
--   end_offset_ms       the attempt's end after the request's start
--   cost_ms             the attempt's elapsed time and the gap before it
--   tokens              its input and output tokens
--   hidden_work_ms      server time after the client abandoned it
--   rejected            an evaluator rejected its output (trigger
--                       rejected_output): the next attempt is a re-prompt,
--                       not a transport retry
--   unfinished          the request never returned: its loop was still
--                       running at the dump's end (outcome_detail)
-- $3: a bound no attempt of these requests starts before.
SELECT r.request_id,
       coalesce(r.service, '(unset)') AS service,
       coalesce(r.operation, '(unset)') AS operation,
       coalesce(r.route, '(unset)') AS route,
       r.start_ns AS req_start_ns, r.latency_ms, r.attempts AS req_attempts,
       r.outcome = 'ok' AS ok,
       a.ordinal, coalesce(a.is_final AND a.outcome = 'ok', false) AS final_ok, a.start_ns, a.end_ns,
       (a.end_ns - r.start_ns) / 1e6 AS end_offset_ms,
       a.elapsed_ms + greatest(coalesce(a.gap_before_ms, 0), 0) AS cost_ms,
       coalesce(a.input_tokens, 0) + coalesce(a.output_tokens, 0) AS tokens,
       coalesce(a.hidden_work_ms, 0) AS hidden_work_ms,
       coalesce(a.trigger = 'rejected_output', false) AS rejected,
       coalesce(r.outcome_detail = 'unfinished', false) AS unfinished
FROM requests r
JOIN attempts a ON a.request_id = r.request_id
WHERE r.start_ns BETWEEN $1 AND $2 AND a.start_ns >= $3
ORDER BY r.request_id, a.ordinal
