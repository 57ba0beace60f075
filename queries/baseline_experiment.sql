-- baseline_experiment: the randomized policy-experiment baseline
-- (docs/recognition.md, "Baselines"), for traces whose anchor spans carry the
-- policy arm (baseline_input.arm). For a retried request of a treatment arm
-- (any arm but the control), L0 is the mean latency of the control arm's
-- requests of the same cohort that succeeded, within the window. Requests
-- were assigned to the arms at random, so the control arm is a random sample
-- of the same traffic, not the requests some rule left over; taking its
-- successes (an L0 is the latency of an answer) keeps the selection on the
-- first attempt's outcome that the healthy baseline has. Provenance
-- experiment.
--
-- Parameters: $1 the control arm's value (no_retry); $2 half-width of the
-- window in ns; $3 the smallest cohort that counts; $4 the method text.
-- Inserts into baselines one row per retried request (attempts > 1).
INSERT INTO baselines
WITH control AS (
    SELECT cohort_key, start_ns, latency_ms
    FROM baseline_input
    WHERE arm = $1::VARCHAR AND outcome = 'ok'
),
steps AS (
    SELECT DISTINCT cohort_key, start_ns,
        sum(round(latency_ms * 1e6)::BIGINT) OVER running AS cum_ns,
        count(*) OVER running AS cum_n
    FROM control
    WINDOW running AS (PARTITION BY cohort_key ORDER BY start_ns
                       RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
retried AS (
    SELECT request_id, latency_ms, cohort_key, arm,
        start_ns + $2::BIGINT AS hi_ns, start_ns - $2::BIGINT - 1 AS lo_ns
    FROM baseline_input WHERE attempts > 1
),
windowed AS (
    SELECT r.request_id, r.latency_ms, r.arm,
        coalesce(hi.cum_ns, 0) - coalesce(lo.cum_ns, 0) AS sum_ns,
        coalesce(hi.cum_n, 0) - coalesce(lo.cum_n, 0) AS n
    FROM retried r
    ASOF LEFT JOIN steps hi ON r.cohort_key = hi.cohort_key AND r.hi_ns >= hi.start_ns
    ASOF LEFT JOIN steps lo ON r.cohort_key = lo.cohort_key AND r.lo_ns >= lo.start_ns
),
l0 AS (
    SELECT request_id, latency_ms, arm, n,
        CASE WHEN arm IS NOT NULL AND arm <> $1::VARCHAR AND n >= $3::BIGINT THEN sum_ns / n / 1e6 END AS l0
    FROM windowed
)
SELECT
    request_id, 'experiment', latency_ms,
    l0, latency_ms - l0, latency_ms / nullif(l0, 0),
    'experiment', $4::VARCHAR, n::INTEGER, NULL,
    CASE
        WHEN arm IS NULL THEN 'no policy arm recorded'
        WHEN arm = $1::VARCHAR THEN 'retried although in the control arm'
        WHEN l0 IS NULL THEN format('control arm has {} successes of the cohort in the window, fewer than {}', n, $3::BIGINT)
    END
FROM l0
ORDER BY request_id;
