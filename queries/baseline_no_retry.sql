-- baseline_no_retry: the no-retry termination baseline (docs/recognition.md,
-- "Baselines"). Without the retry the request would have ended when its first
-- attempt did, so L0 = T1, logical start to the end of the first attempt.
-- Measured: it is read off the request's own trace.
--
-- Parameters: $1 the method text.
-- Inserts into baselines one row per retried request (attempts > 1).
INSERT INTO baselines
SELECT
    request_id, 'no_retry', latency_ms,
    l0, latency_ms - l0, latency_ms / nullif(l0, 0),
    'measured', $1::VARCHAR, NULL, NULL,
    CASE WHEN l0 IS NULL THEN 'first attempt has no end' END
FROM (SELECT request_id, latency_ms, t1_ms AS l0 FROM baseline_input WHERE attempts > 1)
ORDER BY request_id;
