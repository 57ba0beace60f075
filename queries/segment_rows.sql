-- segment_rows: one row per logical request that started in [$1, $2)
-- (Unix ns), with what the segment measures need. package segment
-- replaces six marker comments (the baseline, task, dims, joins, where
-- and slice markers below) with fixed expressions of its own; the user-given parts
-- of those (attribute names, bucket edges and labels, filter values,
-- the baseline kind) are bound as further $N parameters, never spliced:
--   baseline  b.l0_ms, b.provenance in place of the NULL pair
--   task      the task attribute of the anchor span, before the trace id
--   dims      one VARCHAR column per dimension, dim_1, dim_2, ...
--   joins     the anchor span (alias s, segment_anchor_values) and the
--             chosen baseline (alias b, segment_baselines) when a
--             dimension or the baseline needs them
--   where     filters on named dimensions
--   slice     bounds on the request ids, when the window's requests are
--             read a slice at a time (request_order then counts within
--             the slice); the joined anchor spans and baselines get the
--             same bounds
--
-- Columns:
--   start_ns            the request's start (Unix ns)
--   latency_ms          end-to-end, client-observed
--   attempts            physical attempts
--   ok                  the request finally succeeded
--   stream              a streaming request
--   ttft_ms             time to the first token of the answer used, or NULL
--   duplicated_output_tokens  output of every attempt but the final one
--   first_attempt_ms    elapsed time of attempt 1
--   second_attempt_ms   elapsed time of attempt 2, NULL without one
--   generation_ms       first token to the end of the answer used, or NULL
--   duplicated_input_tokens, duplicated_attempt_ms  input tokens and
--                       client time of every attempt but the final one
--   hidden_work_ms, hidden_output_tokens  server work after the client
--                       gave up on an attempt
--   client_error_retries, client_error_retry_ms, client_error_retry_tokens
--                       attempts made right after a client_error attempt (a
--                       deterministic failure: 400, 401, 403, 404, 422 ...),
--                       their elapsed time with the gap before each, and
--                       their input and output tokens
--   same_route_retries, same_route_retry_ok, same_route_retry_ms,
--   same_route_failed_ms, same_route_failed_tokens
--                       retry attempts (ordinal > 1) on the route of the
--                       request's first attempt: how many, how many
--                       succeeded, their time with the gap before each, and
--                       the time and tokens of those that failed
--   alternate_route_retries, alternate_route_retry_ok, alternate_route_retry_ms
--                       the same of retry attempts on another route
--   retry_after_retries, retry_after_ignored, retry_after_early_ms
--                       attempts made after a response that carried
--                       Retry-After (not hedges sent before it came), those
--                       of them made sooner than it said, and how much
--                       sooner in all (ms)
--   retry_after_ignored_ms  the elapsed time of those made sooner
--   retry_gaps_ms       the gap before each retry the client timed itself
--                       (after a response without Retry-After; hedges, which
--                       overlap, and re-prompts after an evaluator rejected
--                       the output, which no backoff helps, left out), in
--                       ordinal order, or NULL
--   retry_gaps_cost_ms  the client time of those retries: each one's elapsed
--                       time with the gap before it (what no_jitter costs)
--   retry_starts_ns     the start of every attempt but the first, or NULL
--   retry_costs_ms      the elapsed time with the gap before it of every
--                       attempt but the first, in the order of
--                       retry_starts_ns (what a lockstep wave costs), or NULL
--   outcome_detail      what ended the request beyond ok/error, or NULL
--   final_output_tokens, final_attempt_ms  output tokens and elapsed time
--                       of the final attempt (an abandoned stream's waste)
--   retry_loops         retry loops one inside the other (len(layer_counts))
--   app_tries           tries of the outermost loop (layer_counts[1])
--   sdk_attempts_max    most tries of the innermost loop within one outer
--                       try, NULL for a single loop
--   first_token_seen_ms the request's start to the first token of any of its
--                       attempts (a failed or abandoned one included), or NULL
--   queue_sum_ms, queue_n, connect_sum_ms, connect_n, serve_sum_ms,
--   serve_n, generate_sum_ms, generate_n  each phase of the attempts
--                       (attempts.queue_ms ...): its sum over the attempts
--                       that show it, and how many do
--   task_hash           the task the request belongs to: its trace, or
--                       (task marker) an attribute of its anchor span, as a
--                       63-bit hash (tasks are only told apart, and a
--                       report holds one per request)
--   model, input_tokens, output_tokens  for spend: the model of the answer
--                       used (else the one asked for) and all usage
--   l0_ms, provenance   the baseline's L0 and provenance, NULL without one
--   request_order       the request's place among the window's requests
--                       in request_id order: package segment puts the rows
--                       in that order (sorting rows this wide, lists and
--                       all, in DuckDB needs them all in memory at once;
--                       numbering the ids alone sorts only them)
--   dim_1 ...           the request's value of each dimension
WITH numbered AS (
    SELECT request_id, attempts > 1 AS retried, row_number() OVER (ORDER BY request_id) - 1 AS request_order
    FROM requests
    WHERE start_ns >= $1 AND start_ns < $2 /*slice*/
),
ordered AS (
    SELECT request_id, ordinal, elapsed_ms, is_final, input_tokens, output_tokens, gap_before_ms, route, outcome,
           tries, start_ns, ttft_ms, queue_ms, connect_ms, serve_ms, generate_ms,
           lag(trigger) OVER w = 'client_error' AS after_client_error,
           ordinal > 1 AND route IS NOT DISTINCT FROM first_value(route) OVER w AS same_route_retry,
           ordinal > 1 AND route IS DISTINCT FROM first_value(route) OVER w AS alternate_route_retry,
           lag(retry_after_s) OVER w AS after_retry_after_s,
           coalesce(lag(trigger) OVER w = 'rejected_output', false) AS after_rejection,
           outcome = 'ok' AS attempt_ok
    FROM attempts
    -- Only the window's retried requests: a nightly report over a database
    -- of many nights reads the night's attempts, not the history's, and a
    -- request of one attempt (most of them) needs neither the windows nor
    -- the aggregates (single_attempt below).
    WHERE request_id IN (SELECT request_id FROM numbered WHERE retried)
    WINDOW w AS (PARTITION BY request_id ORDER BY ordinal)
),
-- Sums of milliseconds add whole nanoseconds, so they are exact and do not
-- depend on the order the rows come in.
per_request AS (
    SELECT request_id,
           max(elapsed_ms) FILTER (WHERE ordinal = 1) AS first_attempt_ms,
           max(elapsed_ms) FILTER (WHERE ordinal = 2) AS second_attempt_ms,
           coalesce(sum(input_tokens) FILTER (WHERE NOT is_final), 0) AS duplicated_input_tokens,
           coalesce(sum(round(elapsed_ms * 1e6)::BIGINT) FILTER (WHERE NOT is_final), 0) / 1e6 AS duplicated_attempt_ms,
           count(*) FILTER (WHERE after_client_error) AS client_error_retries,
           coalesce(sum(round((elapsed_ms + coalesce(gap_before_ms, 0)) * 1e6)::BIGINT) FILTER (WHERE after_client_error), 0) / 1e6 AS client_error_retry_ms,
           coalesce(sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) FILTER (WHERE after_client_error), 0) AS client_error_retry_tokens,
           count(*) FILTER (WHERE same_route_retry) AS same_route_retries,
           count(*) FILTER (WHERE same_route_retry AND attempt_ok) AS same_route_retry_ok,
           coalesce(sum(round((elapsed_ms + greatest(coalesce(gap_before_ms, 0), 0)) * 1e6)::BIGINT) FILTER (WHERE same_route_retry), 0) / 1e6 AS same_route_retry_ms,
           coalesce(sum(round((elapsed_ms + greatest(coalesce(gap_before_ms, 0), 0)) * 1e6)::BIGINT) FILTER (WHERE same_route_retry AND NOT attempt_ok), 0) / 1e6 AS same_route_failed_ms,
           coalesce(sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) FILTER (WHERE same_route_retry AND NOT attempt_ok), 0) AS same_route_failed_tokens,
           count(*) FILTER (WHERE alternate_route_retry) AS alternate_route_retries,
           count(*) FILTER (WHERE alternate_route_retry AND attempt_ok) AS alternate_route_retry_ok,
           coalesce(sum(round((elapsed_ms + greatest(coalesce(gap_before_ms, 0), 0)) * 1e6)::BIGINT) FILTER (WHERE alternate_route_retry), 0) / 1e6 AS alternate_route_retry_ms,
           coalesce(max(output_tokens) FILTER (WHERE is_final), 0) AS final_output_tokens,
           max(elapsed_ms) FILTER (WHERE is_final) AS final_attempt_ms,
           max(tries[len(tries)]) FILTER (WHERE len(tries) >= 2) AS sdk_attempts_max,
           min(start_ns + ttft_ms * 1e6) AS first_token_at_ns,
           coalesce(sum(round(queue_ms * 1e6)::BIGINT), 0) / 1e6 AS queue_sum_ms, count(queue_ms) AS queue_n,
           coalesce(sum(round(connect_ms * 1e6)::BIGINT), 0) / 1e6 AS connect_sum_ms, count(connect_ms) AS connect_n,
           coalesce(sum(round(serve_ms * 1e6)::BIGINT), 0) / 1e6 AS serve_sum_ms, count(serve_ms) AS serve_n,
           coalesce(sum(round(generate_ms * 1e6)::BIGINT), 0) / 1e6 AS generate_sum_ms, count(generate_ms) AS generate_n,
           -- retry hygiene
           count(*) FILTER (WHERE after_retry_after_s > 0 AND gap_before_ms >= 0) AS retry_after_retries,
           count(*) FILTER (WHERE gap_before_ms >= 0 AND gap_before_ms < after_retry_after_s * 1000) AS retry_after_ignored,
           coalesce(sum(round((after_retry_after_s * 1000 - gap_before_ms) * 1e6)::BIGINT)
                    FILTER (WHERE gap_before_ms >= 0 AND gap_before_ms < after_retry_after_s * 1000), 0) / 1e6 AS retry_after_early_ms,
           coalesce(sum(round(elapsed_ms * 1e6)::BIGINT)
                    FILTER (WHERE gap_before_ms >= 0 AND gap_before_ms < after_retry_after_s * 1000), 0) / 1e6 AS retry_after_ignored_ms,
           -- The lists are in ordinal order: gathered as (ordinal, value)
           -- pairs and sorted after, which gives the same lists as an
           -- aggregate's ORDER BY in a third of the time of DuckDB's
           -- ordered aggregates (one sort per request).
           list_transform(list_sort(list({'o': ordinal, 'v': gap_before_ms})
               FILTER (WHERE gap_before_ms >= 0 AND coalesce(after_retry_after_s, 0) <= 0 AND NOT after_rejection)), x -> x.v) AS retry_gaps_ms,
           coalesce(sum(round((elapsed_ms + gap_before_ms) * 1e6)::BIGINT)
                    FILTER (WHERE gap_before_ms >= 0 AND coalesce(after_retry_after_s, 0) <= 0 AND NOT after_rejection), 0) / 1e6 AS retry_gaps_cost_ms,
           list_transform(list_sort(list({'o': ordinal, 'v': start_ns}) FILTER (WHERE ordinal > 1)), x -> x.v) AS retry_starts_ns,
           list_transform(list_sort(list({'o': ordinal, 'v': round((coalesce(elapsed_ms, 0) + greatest(coalesce(gap_before_ms, 0), 0)) * 1e6)::BIGINT / 1e6})
               FILTER (WHERE ordinal > 1)), x -> x.v) AS retry_costs_ms
    FROM ordered
    GROUP BY request_id
),
-- What per_request gives a request of one attempt (requests.attempts is the
-- number of its attempts), without the windows and the aggregates: over
-- one attempt, ordinal 1 and the final one, the retries' figures are zero
-- or NULL and the others are the attempt's own, rounded alike.
single_attempt AS (
    SELECT request_id,
           elapsed_ms AS first_attempt_ms,
           NULL::DOUBLE AS second_attempt_ms,
           CASE WHEN NOT is_final THEN coalesce(input_tokens, 0) ELSE 0 END AS duplicated_input_tokens,
           CASE WHEN NOT is_final THEN coalesce(round(elapsed_ms * 1e6)::BIGINT, 0) ELSE 0 END / 1e6 AS duplicated_attempt_ms,
           0 AS client_error_retries, 0::DOUBLE AS client_error_retry_ms, 0 AS client_error_retry_tokens,
           0 AS same_route_retries, 0 AS same_route_retry_ok, 0::DOUBLE AS same_route_retry_ms,
           0::DOUBLE AS same_route_failed_ms, 0 AS same_route_failed_tokens,
           0 AS alternate_route_retries, 0 AS alternate_route_retry_ok, 0::DOUBLE AS alternate_route_retry_ms,
           CASE WHEN is_final THEN coalesce(output_tokens, 0) ELSE 0 END AS final_output_tokens,
           CASE WHEN is_final THEN elapsed_ms END AS final_attempt_ms,
           CASE WHEN len(tries) >= 2 THEN tries[len(tries)] END AS sdk_attempts_max,
           start_ns + ttft_ms * 1e6 AS first_token_at_ns,
           coalesce(round(queue_ms * 1e6)::BIGINT, 0) / 1e6 AS queue_sum_ms, (queue_ms IS NOT NULL)::BIGINT AS queue_n,
           coalesce(round(connect_ms * 1e6)::BIGINT, 0) / 1e6 AS connect_sum_ms, (connect_ms IS NOT NULL)::BIGINT AS connect_n,
           coalesce(round(serve_ms * 1e6)::BIGINT, 0) / 1e6 AS serve_sum_ms, (serve_ms IS NOT NULL)::BIGINT AS serve_n,
           coalesce(round(generate_ms * 1e6)::BIGINT, 0) / 1e6 AS generate_sum_ms, (generate_ms IS NOT NULL)::BIGINT AS generate_n,
           0 AS retry_after_retries, 0 AS retry_after_ignored, 0::DOUBLE AS retry_after_early_ms, 0::DOUBLE AS retry_after_ignored_ms,
           CASE WHEN gap_before_ms >= 0 THEN [gap_before_ms] END AS retry_gaps_ms,
           CASE WHEN gap_before_ms >= 0 THEN round((elapsed_ms + gap_before_ms) * 1e6)::BIGINT / 1e6 ELSE 0 END AS retry_gaps_cost_ms,
           NULL::BIGINT[] AS retry_starts_ns,
           NULL::DOUBLE[] AS retry_costs_ms
    FROM attempts
    WHERE ordinal = 1 AND request_id IN (SELECT request_id FROM numbered WHERE NOT retried)
)
SELECT r.start_ns,
       r.latency_ms,
       r.attempts,
       r.outcome = 'ok' AS ok,
       r.stream,
       r.ttft_ms,
       r.duplicated_output_tokens,
       a.first_attempt_ms,
       a.second_attempt_ms,
       r.generation_ms,
       a.duplicated_input_tokens,
       a.duplicated_attempt_ms,
       r.hidden_work_ms,
       r.hidden_output_tokens,
       a.client_error_retries,
       a.client_error_retry_ms,
       a.client_error_retry_tokens,
       a.same_route_retries, a.same_route_retry_ok, a.same_route_retry_ms, a.same_route_failed_ms, a.same_route_failed_tokens,
       a.alternate_route_retries, a.alternate_route_retry_ok, a.alternate_route_retry_ms,
       a.retry_after_retries, a.retry_after_ignored, a.retry_after_early_ms, a.retry_after_ignored_ms,
       a.retry_gaps_ms, a.retry_starts_ns,
       r.outcome_detail,
       coalesce(a.final_output_tokens, 0) AS final_output_tokens,
       a.final_attempt_ms,
       coalesce(len(r.layer_counts), 1) AS retry_loops,
       coalesce(r.layer_counts[1], r.attempts) AS app_tries,
       a.sdk_attempts_max,
       (a.first_token_at_ns - r.start_ns) / 1e6 AS first_token_seen_ms,
       (hash(coalesce(/*task*/ r.trace_id)) >> 1)::BIGINT AS task_hash,
       coalesce(a.queue_sum_ms, 0) AS queue_sum_ms, coalesce(a.queue_n, 0) AS queue_n,
       coalesce(a.connect_sum_ms, 0) AS connect_sum_ms, coalesce(a.connect_n, 0) AS connect_n,
       coalesce(a.serve_sum_ms, 0) AS serve_sum_ms, coalesce(a.serve_n, 0) AS serve_n,
       coalesce(a.generate_sum_ms, 0) AS generate_sum_ms, coalesce(a.generate_n, 0) AS generate_n,
       coalesce(r.final_model, r.model) AS model,
       r.input_tokens,
       r.output_tokens,
       /*baseline*/ NULL::DOUBLE AS l0_ms, NULL::VARCHAR AS provenance,
       coalesce(a.retry_gaps_cost_ms, 0) AS retry_gaps_cost_ms, a.retry_costs_ms,
       o.request_order
       /*dims*/
FROM requests r
JOIN numbered o ON o.request_id = r.request_id
LEFT JOIN (SELECT * FROM per_request UNION ALL BY NAME SELECT * FROM single_attempt) a ON a.request_id = r.request_id
/*joins*/
WHERE r.start_ns >= $1 AND r.start_ns < $2
/*where*/
