-- export_requests: the requests table as notebooks read it (README,
-- "Parquet schemas"). Times are kept as exact Unix nanoseconds and as UTC
-- timestamps; durations are milliseconds (DOUBLE); ids are strings.
-- Yields the documented columns plus "date", the UTC day of start_time,
-- which becomes the Hive partition.
-- export_scope is the requests of the days being written (a temporary
-- view package export defines), so a night's export reads that night.
SELECT
    request_id, trace_id, span_id, linkage, inferred,
    service, operation, route, final_route, model, final_model, stream,
    make_timestamp(start_ns // 1000)::TIMESTAMPTZ AS start_time,
    make_timestamp(end_ns // 1000)::TIMESTAMPTZ AS end_time,
    start_ns, end_ns, latency_ms,
    attempts, layers, layer_counts, outcome, final_trigger, triggers,
    t_failed_ms, backoff_ms, overhead_ms, gap_ms, gap_split, t_final_ms, residual_ms,
    ttft_ms, input_tokens, output_tokens, duplicated_output_tokens, hidden_work_ms,
    outcome_detail,
    CAST(make_timestamp(start_ns // 1000) AS DATE) AS date
FROM export_scope
ORDER BY start_ns, request_id;
