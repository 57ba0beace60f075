-- export_attempts: one row per physical attempt, partitioned by the day its
-- logical request started, so a request and its attempts share a partition.
-- Yields the documented columns plus "date". generation_ms is the time
-- after the attempt's first token (elapsed_ms - ttft_ms; NULL without a
-- first token). spend_usd prices the attempt's tokens as export_requests
-- prices its request's (the model of the request's answer, by
-- export_prices), so a request's attempts add up to its spend_usd.
-- export_scope is the requests of the days being written (a temporary
-- view package export defines), so a night's export reads that night.
SELECT
    a.request_id, a.trace_id, a.span_id, a.ordinal, a.tries,
    a.service, a.name, a.route, a.model, a.operation,
    make_timestamp(a.start_ns // 1000)::TIMESTAMPTZ AS start_time,
    make_timestamp(a.end_ns // 1000)::TIMESTAMPTZ AS end_time,
    a.start_ns, a.end_ns, a.elapsed_ms,
    a.outcome, a.trigger, a.is_final, a.http_status, a.grpc_status, a.error_type,
    a.retry_after_s, a.input_tokens, a.output_tokens, a.ttft_ms,
    a.elapsed_ms - a.ttft_ms AS generation_ms,
    CASE WHEN coalesce(a.input_tokens, 0) = 0 AND coalesce(a.output_tokens, 0) = 0 THEN 0.0
         ELSE (coalesce(a.input_tokens, 0) * p.input_per_mtok + coalesce(a.output_tokens, 0) * p.output_per_mtok) / 1e6
    END AS spend_usd,
    a.gap_before_ms, a.overlap_ms, a.server_end_ns, a.hidden_work_ms, a.hidden_output_tokens,
    a.queue_ms, a.connect_ms, a.serve_ms, a.generate_ms,
    CAST(make_timestamp(r.start_ns // 1000) AS DATE) AS date
FROM attempts a
JOIN export_scope r USING (request_id)
LEFT JOIN export_prices p ON p.price_model = coalesce(r.final_model, r.model)
ORDER BY r.start_ns, a.request_id, a.ordinal;
