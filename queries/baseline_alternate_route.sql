-- baseline_alternate_route: the alternative-route baseline
-- (docs/recognition.md, "Baselines"): what the request would have taken had
-- its first attempt gone to another eligible route instead of being retried.
--
-- Measured where the request itself fell over: its final attempt succeeded
-- on a route other than the first attempt's, and L0 is that attempt's
-- elapsed time. Otherwise modeled: the mean latency of first-attempt
-- successes on the other routes, pooled, of the same cohort without route
-- and model (which change with the route: alt_key), within the window. A
-- route is eligible when requests of the same operation succeeded there.
-- Running sums per cohort and per cohort and route, looked up with ASOF
-- joins, give the windowed sums of all routes minus the request's own.
--
-- Parameters: $1 half-width of the window in ns; $2 the smallest cohort
-- that counts; $3 the method text when measured; $4 when modeled.
-- Inserts into baselines one row per retried request (attempts > 1).
INSERT INTO baselines
WITH healthy AS (
    SELECT alt_key, coalesce(route, '') AS route, start_ns, latency_ms
    FROM baseline_input
    WHERE attempts = 1 AND outcome = 'ok'
),
all_routes AS (
    SELECT DISTINCT alt_key, start_ns,
        sum(round(latency_ms * 1e6)::BIGINT) OVER (PARTITION BY alt_key ORDER BY start_ns
            RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cum_ns,
        count(*) OVER (PARTITION BY alt_key ORDER BY start_ns
            RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cum_n
    FROM healthy
),
own_route AS (
    SELECT DISTINCT alt_key, route, start_ns,
        sum(round(latency_ms * 1e6)::BIGINT) OVER (PARTITION BY alt_key, route ORDER BY start_ns
            RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cum_ns,
        count(*) OVER (PARTITION BY alt_key, route ORDER BY start_ns
            RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cum_n
    FROM healthy
),
retried AS (
    SELECT request_id, latency_ms, alt_key, coalesce(route, '') AS route, fallover_ms,
        start_ns + $1::BIGINT AS hi_ns, start_ns - $1::BIGINT - 1 AS lo_ns
    FROM baseline_input WHERE attempts > 1
),
windowed AS (
    SELECT r.request_id, r.latency_ms, r.fallover_ms,
        (coalesce(a_hi.cum_ns, 0) - coalesce(a_lo.cum_ns, 0))
            - (coalesce(o_hi.cum_ns, 0) - coalesce(o_lo.cum_ns, 0)) AS sum_ns,
        (coalesce(a_hi.cum_n, 0) - coalesce(a_lo.cum_n, 0))
            - (coalesce(o_hi.cum_n, 0) - coalesce(o_lo.cum_n, 0)) AS n
    FROM retried r
    ASOF LEFT JOIN all_routes a_hi ON r.alt_key = a_hi.alt_key AND r.hi_ns >= a_hi.start_ns
    ASOF LEFT JOIN all_routes a_lo ON r.alt_key = a_lo.alt_key AND r.lo_ns >= a_lo.start_ns
    ASOF LEFT JOIN own_route o_hi ON r.alt_key = o_hi.alt_key AND r.route = o_hi.route AND r.hi_ns >= o_hi.start_ns
    ASOF LEFT JOIN own_route o_lo ON r.alt_key = o_lo.alt_key AND r.route = o_lo.route AND r.lo_ns >= o_lo.start_ns
),
l0 AS (
    SELECT request_id, latency_ms, fallover_ms, n,
        coalesce(fallover_ms, CASE WHEN n >= $2::BIGINT THEN sum_ns / n / 1e6 END) AS l0
    FROM windowed
)
SELECT
    request_id, 'alternate_route', latency_ms,
    l0, latency_ms - l0, latency_ms / nullif(l0, 0),
    CASE WHEN fallover_ms IS NOT NULL THEN 'measured' ELSE 'modeled' END,
    CASE WHEN fallover_ms IS NOT NULL THEN $3::VARCHAR ELSE $4::VARCHAR END,
    CASE WHEN fallover_ms IS NULL THEN n::INTEGER END, NULL,
    CASE WHEN l0 IS NULL THEN format('other routes have {} first-attempt successes of the cohort in the window, fewer than {}', n, $2::BIGINT) END
FROM l0
ORDER BY request_id;
