-- report_workload: the whole-workload counts (docs/report.md, "report"), one
-- row, from the rebuilt requests and attempts tables. Columns:
-- logical_requests, attempts, retried (requests with more than one attempt),
-- retried_ok (of those, finally succeeded), failed (final failures),
-- duplicated_attempts (attempts beyond the one whose answer was used),
-- duplicated_input_tokens and duplicated_output_tokens (usage of every
-- attempt but the final one), hidden_work_ms (server time after the client
-- gave up), hidden_output_tokens (output generated in that time),
-- duplicated_attempt_ms (client time spent in attempts whose answer was not
-- used). $1, $2: the window, requests starting in [$1, $2] (Unix ns). $3: no
-- attempt of those requests starts before this (the window's start less an
-- hour for clock skew), so DuckDB skips older days' attempts. Floating-point
-- sums run in request order: storage order differs between a full and an
-- incremental rebuild, and the figures must not.
SELECT
    count(*) AS logical_requests,
    coalesce(sum(attempts), 0) AS attempts,
    count(*) FILTER (WHERE attempts > 1) AS retried,
    count(*) FILTER (WHERE attempts > 1 AND outcome = 'ok') AS retried_ok,
    count(*) FILTER (WHERE outcome = 'error') AS failed,
    coalesce(sum(attempts - 1), 0) AS duplicated_attempts,
    (SELECT coalesce(sum(input_tokens), 0) FROM attempts WHERE NOT is_final AND start_ns >= $3
        AND request_id IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2)) AS duplicated_input_tokens,
    coalesce(sum(duplicated_output_tokens), 0) AS duplicated_output_tokens,
    coalesce(sum(hidden_work_ms ORDER BY request_id), 0) AS hidden_work_ms,
    coalesce(sum(hidden_output_tokens), 0) AS hidden_output_tokens,
    (SELECT coalesce(sum(elapsed_ms ORDER BY request_id, ordinal), 0) FROM attempts WHERE NOT is_final AND start_ns >= $3
        AND request_id IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2)) AS duplicated_attempt_ms
FROM requests
WHERE start_ns BETWEEN $1 AND $2
