-- baseline_arm_contrast: the difference in mean latency between the
-- treatment arms and the control arm of the experiment baseline, over the
-- requests starting in $1..$2 (Unix ns, inclusive). One row, one column:
-- contrast_ms (DOUBLE; NULL unless both arms have requests).
SELECT avg(r.latency_ms) FILTER (WHERE NOT a.control)
     - avg(r.latency_ms) FILTER (WHERE a.control) AS contrast_ms
FROM requests r JOIN baseline_arms a USING (request_id)
WHERE r.start_ns BETWEEN $1 AND $2;
