-- report_distributions: every observation behind the workload's latency
-- distributions, one row each; the report takes count, mean and
-- nearest-rank percentiles from them (model.Percentile).
-- Columns: measure, retried (the request had more than one attempt), value_ms.
-- Measures: latency_ms (end-to-end, every request), ttft_ms (requests with
-- a first token from the answer used), generation_ms (that token to the
-- end of the final attempt), first_attempt_ms (elapsed of each
-- request's first attempt), second_attempt_ms (elapsed of the second
-- attempt, where there is one). $1, $2: the window, requests starting in
-- [$1, $2] (Unix ns); $3 a bound no attempt of theirs starts before.
WITH r AS (SELECT * FROM requests WHERE start_ns BETWEEN $1 AND $2)
SELECT 'latency_ms' AS measure, attempts > 1 AS retried, latency_ms AS value_ms FROM r
UNION ALL
SELECT 'ttft_ms', attempts > 1, ttft_ms FROM r WHERE ttft_ms IS NOT NULL
UNION ALL
SELECT 'generation_ms', attempts > 1, generation_ms FROM r WHERE generation_ms IS NOT NULL
UNION ALL
SELECT 'first_attempt_ms', r.attempts > 1, a.elapsed_ms
FROM attempts a JOIN r USING (request_id) WHERE a.ordinal = 1 AND a.start_ns >= $3
UNION ALL
SELECT 'second_attempt_ms', true, a.elapsed_ms FROM attempts a JOIN r USING (request_id) WHERE a.ordinal = 2 AND a.start_ns >= $3
ORDER BY measure, value_ms
