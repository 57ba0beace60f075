-- export_daily: a summary row per UTC day, client service and operation:
-- the workload measures (docs/report.md, "report") that add up across rows
-- (counts and sums), so a notebook can re-aggregate any way it likes.
-- Floating-point sums run in request order, so they do not depend on how rows
-- were stored. Yields the documented columns plus "date". export_scope is the
-- requests of the days being written (a temporary view package export
-- defines), so a night's export reads that night.
SELECT
    CAST(make_timestamp(start_ns // 1000) AS DATE) AS date,
    service, operation,
    count(*) AS logical_requests,
    sum(attempts)::BIGINT AS attempts,
    sum(attempts)::DOUBLE / count(*) AS amplification,
    count(*) FILTER (WHERE attempts > 1) AS retried,
    count(*) FILTER (WHERE attempts > 1 AND outcome = 'ok') AS retried_ok,
    count(*) FILTER (WHERE outcome = 'error') AS failed,
    sum(latency_ms ORDER BY request_id) AS latency_ms_sum,
    sum(duplicated_output_tokens)::BIGINT AS duplicated_output_tokens,
    sum(hidden_work_ms ORDER BY request_id) AS hidden_work_ms
FROM export_scope
GROUP BY ALL
ORDER BY date, service, operation;
