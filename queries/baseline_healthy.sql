-- baseline_healthy: the healthy single-attempt baseline (docs/recognition.md,
-- "Baselines"). L0 is the mean latency of the cohort's requests that
-- succeeded on their first and only attempt and started within the window
-- around the request's start. Modeled: it estimates, from other requests,
-- what this one would have taken had nothing gone wrong.
--
-- The mean (not the median) because the figures built on L0 are means of
-- differences, E[L - L0]: with a skewed latency distribution a median L0
-- would overstate the mean added latency by the distribution's skew.
--
-- Windowed means come from running sums per cohort, looked up with two
-- ASOF joins at start - window and start + window, so the cost grows with
-- the number of requests, not with requests x cohort. The sums are of
-- integer nanoseconds, so they are exact: a partial recompute, whose
-- running sums start later, gives the same bits as a full one.
--
-- Parameters: $1 half-width of the window in ns; $2 the smallest cohort
-- that counts; $3 the method text.
-- Inserts into baselines one row per retried request (attempts > 1).
INSERT INTO baselines
WITH healthy AS (
    SELECT cohort_key, start_ns,
        sum(round(latency_ms * 1e6)::BIGINT) OVER running AS cum_ns,
        count(*) OVER running AS cum_n
    FROM baseline_input
    WHERE attempts = 1 AND outcome = 'ok'
    WINDOW running AS (PARTITION BY cohort_key ORDER BY start_ns
                       RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
-- One row per distinct (cohort, start): the running totals include ties.
steps AS (
    SELECT DISTINCT cohort_key, start_ns, cum_ns, cum_n FROM healthy
),
retried AS (
    SELECT request_id, latency_ms, cohort_key, start_ns,
        start_ns + $1::BIGINT AS hi_ns, start_ns - $1::BIGINT - 1 AS lo_ns
    FROM baseline_input WHERE attempts > 1
),
windowed AS (
    SELECT r.request_id, r.latency_ms,
        coalesce(hi.cum_ns, 0) - coalesce(lo.cum_ns, 0) AS sum_ns,
        coalesce(hi.cum_n, 0) - coalesce(lo.cum_n, 0) AS n
    FROM retried r
    ASOF LEFT JOIN steps hi ON r.cohort_key = hi.cohort_key AND r.hi_ns >= hi.start_ns
    ASOF LEFT JOIN steps lo ON r.cohort_key = lo.cohort_key AND r.lo_ns >= lo.start_ns
),
l0 AS (
    SELECT request_id, latency_ms, n,
        CASE WHEN n >= $2::BIGINT THEN sum_ns / n / 1e6 END AS l0
    FROM windowed
)
SELECT
    request_id, 'healthy', latency_ms,
    l0, latency_ms - l0, latency_ms / nullif(l0, 0),
    'modeled', $3::VARCHAR, n::INTEGER, NULL,
    CASE WHEN l0 IS NULL THEN format('cohort has {} first-attempt successes in the window, fewer than {}', n, $2::BIGINT) END
FROM l0
ORDER BY request_id;
