-- export_requests: the requests table as notebooks read it (docs/parquet.md,
-- "Parquet, for notebooks"). Times are kept as exact Unix nanoseconds and as UTC
-- timestamps; durations are milliseconds (DOUBLE); ids are strings.
-- Yields the documented columns plus "date", the UTC day of start_time,
-- which becomes the Hive partition. The retry-hygiene columns
-- (client_error_retries, retry_after_ignored, retry_after_early_ms) are
-- each request's share of the report's measures of those names, defined
-- as in segment_rows.sql. spend_usd and duplicated_spend_usd are the
-- request's share of the report's measures of those names: its tokens,
-- and its duplicated ones (input of every attempt but the final one, and
-- duplicated_output_tokens), priced by export_prices (package export
-- fills it with the report's price table) for the model of the answer
-- used, else the one asked for; 0 without tokens, NULL when no price
-- covers the model.
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
    ttft_ms, generation_ms, input_tokens, output_tokens, duplicated_output_tokens, hidden_work_ms, hidden_output_tokens,
    CASE WHEN input_tokens = 0 AND output_tokens = 0 THEN 0.0
         ELSE (input_tokens * p.input_per_mtok + output_tokens * p.output_per_mtok) / 1e6 END AS spend_usd,
    CASE WHEN input_tokens = 0 AND output_tokens = 0 THEN 0.0
         ELSE (coalesce(h.duplicated_input_tokens, 0) * p.input_per_mtok + duplicated_output_tokens * p.output_per_mtok) / 1e6
    END AS duplicated_spend_usd,
    coalesce(h.client_error_retries, 0) AS client_error_retries,
    coalesce(h.retry_after_ignored, 0) AS retry_after_ignored,
    coalesce(h.retry_after_early_ms, 0) AS retry_after_early_ms,
    outcome_detail,
    st.stated_span IS NOT NULL AS outcome_stated,
    CAST(make_timestamp(start_ns // 1000) AS DATE) AS date
FROM export_scope
LEFT JOIN export_prices p ON p.price_model = coalesce(final_model, model)
-- The failed requests whose anchor span states why the loop gave up: the
-- test of rebuild_outcomes' "stated", so that a report over the union of
-- shard datasets judges the others' outcome_detail again as one run does.
LEFT JOIN (
    SELECT trace_id AS stated_trace, span_id AS stated_span
    FROM spans
    WHERE trace_id IN (SELECT trace_id FROM export_scope
                       WHERE outcome = 'error' AND outcome_detail IN ('attempt_cap', 'not_retryable', 'retry_budget', 'no_capacity'))
      AND (attributes['retryscope.exhausted.reason'] IN ('attempt_cap', 'deadline', 'no_progress', 'token_cap', 'no_capacity',
                                                         'retry_budget', 'not_retryable')
           OR (status_code = 'error' AND regexp_matches(status_message,
                   '(?i)retry quota exceeded|RetryQuotaExceeded|retry budget (exhausted|exceeded)|exceeded maximum number of attempts')))
) st ON st.stated_trace = export_scope.trace_id AND st.stated_span = export_scope.span_id
LEFT JOIN (
    SELECT request_id,
           count(*) FILTER (WHERE after_trigger = 'client_error') AS client_error_retries,
           count(*) FILTER (WHERE gap_before_ms >= 0 AND gap_before_ms < after_retry_after_s * 1000) AS retry_after_ignored,
           sum(after_retry_after_s * 1000 - gap_before_ms ORDER BY ordinal)
               FILTER (WHERE gap_before_ms >= 0 AND gap_before_ms < after_retry_after_s * 1000) AS retry_after_early_ms,
           sum(input_tokens) FILTER (WHERE NOT is_final) AS duplicated_input_tokens
    FROM (SELECT request_id, ordinal, gap_before_ms, input_tokens, is_final,
                 lag(trigger) OVER w AS after_trigger,
                 lag(retry_after_s) OVER w AS after_retry_after_s
          FROM attempts
          WHERE request_id IN (SELECT request_id FROM export_scope)
          WINDOW w AS (PARTITION BY request_id ORDER BY ordinal))
    GROUP BY request_id
) h USING (request_id)
ORDER BY start_ns, request_id;
