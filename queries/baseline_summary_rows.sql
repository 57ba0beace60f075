-- baseline_summary_rows: what baseline.Summarize needs about one kind, one
-- row per logical request that is in the kind's population or has a
-- baselines row of the kind.
--
-- The population is the logical requests that ran under the retry policy
-- being judged: all of them but a policy experiment's control arm, and for
-- the experiment kind only those in a treatment arm.
--
-- Parameters: $1 the kind; $2, $3 the report's window, requests starting
-- in [$2, $3] (Unix ns).
-- Columns: request_id, retried (attempts > 1), latency_ms, has_row (a
-- baselines row of the kind exists), l0_ms, provenance, method, reason,
-- match_distance, in_population.
SELECT
    r.request_id,
    r.attempts > 1 AS retried,
    r.latency_ms,
    b.request_id IS NOT NULL AS has_row,
    b.l0_ms, b.provenance, b.method, b.reason, b.match_distance,
    CASE WHEN $1::VARCHAR = 'experiment' THEN coalesce(NOT a.control, false)
         ELSE NOT coalesce(a.control, false) END AS in_population
FROM requests r
LEFT JOIN baselines b ON b.request_id = r.request_id AND b.kind = $1::VARCHAR
LEFT JOIN baseline_arms a ON a.request_id = r.request_id
WHERE r.start_ns BETWEEN $2 AND $3
  AND (b.request_id IS NOT NULL
   OR CASE WHEN $1::VARCHAR = 'experiment' THEN coalesce(NOT a.control, false)
           ELSE NOT coalesce(a.control, false) END)
ORDER BY r.request_id;
