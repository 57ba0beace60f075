-- baseline_input: what the baselines need about every logical request, one
-- row per request, as a temporary table of the same name.
--
-- Parameters: $1 the policy-arm attribute key (read on the anchor span);
-- $2..$7 whether the cohort includes operation, model, route, stream, the
-- input-token size bucket and region; $8, $9 the range of start_ns read
-- (an incremental update reads the changed span of time and a margin).
--
-- Columns:
--   request_id, operation, model, route, final_route, stream, start_ns,
--   latency_ms, attempts, outcome  as in requests
--   in_tokens       the prompt size: the largest input_tokens any attempt
--                   recorded (every try sends the same prompt); NULL if none
--   out_tokens      output_tokens of the final attempt; NULL if none
--   size_bucket     floor(log2(in_tokens)): requests within a factor of two
--                   share a bucket; -1 without token counts
--   t1_ms           logical start to the end of the first attempt (T1)
--   arm             the policy-experiment arm, NULL when not recorded
--   region          the anchor span's resource cloud.region, NULL if none
--   cohort_key      the cohort: a hash of the chosen dimensions joined
--                   with '|' (an 8-byte key partitions and joins faster
--                   than the text; two cohorts of one database sharing a
--                   64-bit hash is vanishingly unlikely)
--   alt_key         the same for the cohort without route and model, which
--                   change with the route (the alternate_route baseline's
--                   cohort)
--   fallover_ms     elapsed_ms of the final attempt when it succeeded on
--                   another route than the first attempt's, else NULL
CREATE OR REPLACE TEMP TABLE baseline_input AS
WITH per_request AS (
    SELECT
        request_id,
        max(input_tokens) AS in_tokens,
        max(output_tokens) FILTER (WHERE is_final) AS out_tokens,
        min(end_ns) FILTER (WHERE ordinal = 1) AS first_end_ns,
        max(elapsed_ms) FILTER (WHERE is_final AND outcome = 'ok') AS final_ok_ms,
        max(route) FILTER (WHERE is_final) AS final_attempt_route
    FROM attempts
    -- Only the attempts of requests in range: a partial recompute reads a
    -- day, not the history.
    WHERE request_id IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $8 AND $9)
    GROUP BY request_id
),
joined AS (
    SELECT
        r.request_id, r.operation, r.model, r.route, r.final_route, r.stream,
        r.start_ns, r.latency_ms, r.attempts, r.outcome,
        p.in_tokens, p.out_tokens,
        CASE WHEN p.in_tokens > 0 THEN floor(log2(p.in_tokens))::INTEGER ELSE -1 END AS size_bucket,
        (coalesce(p.first_end_ns, r.end_ns) - r.start_ns) / 1e6 AS t1_ms,
        s.arm,
        s.region,
        CASE WHEN r.outcome = 'ok' AND p.final_attempt_route IS DISTINCT FROM r.route
             THEN p.final_ok_ms END AS fallover_ms
    FROM requests r
    LEFT JOIN per_request p USING (request_id)
    -- The anchor span starts when the request does, so the same range
    -- bounds the spans read. Its two values are looked up before the
    -- join: carrying the whole attribute maps of every span through it
    -- took a quarter of this query at 10M spans. The join goes by
    -- hash(trace_id, span_id), as the rebuild's do (rebuild_spans): 8
    -- bytes a key instead of two strings.
    -- The region is its resource's, looked up once per resource.
    LEFT JOIN (SELECT hash(sp.trace_id, sp.span_id) AS k, sp.attributes[$1::VARCHAR] AS arm, res.region
               FROM spans sp
               LEFT JOIN (SELECT resource_id, attributes['cloud.region'] AS region FROM resources) res
                   ON res.resource_id = sp.resource_id
               WHERE sp.start_ns BETWEEN $8 AND $9) s
        ON s.k = hash(r.trace_id, r.span_id)
    WHERE r.start_ns BETWEEN $8 AND $9
)
SELECT
    *,
    hash(concat_ws('|',
        CASE WHEN $2::BOOLEAN THEN 'op=' || coalesce(operation, '') END,
        CASE WHEN $3::BOOLEAN THEN 'model=' || coalesce(model, '') END,
        CASE WHEN $4::BOOLEAN THEN 'route=' || coalesce(route, '') END,
        CASE WHEN $5::BOOLEAN THEN 'stream=' || stream END,
        CASE WHEN $6::BOOLEAN THEN 'size=' || size_bucket END,
        CASE WHEN $7::BOOLEAN THEN 'region=' || coalesce(region, '') END)) AS cohort_key,
    hash(concat_ws('|',
        CASE WHEN $2::BOOLEAN THEN 'op=' || coalesce(operation, '') END,
        CASE WHEN $5::BOOLEAN THEN 'stream=' || stream END,
        CASE WHEN $6::BOOLEAN THEN 'size=' || size_bucket END,
        CASE WHEN $7::BOOLEAN THEN 'region=' || coalesce(region, '') END)) AS alt_key
FROM joined;
