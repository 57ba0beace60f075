-- baseline_merge: after a partial recompute, keeps the recomputed rows of
-- requests starting in [$1, $2] and brings back the set-aside rows of every
-- other request that still exists. Yields no rows.
DELETE FROM baselines WHERE request_id NOT IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2);
INSERT INTO baselines SELECT * FROM baselines_kept
WHERE request_id NOT IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2)
  AND request_id IN (SELECT request_id FROM requests);
DELETE FROM baseline_arms WHERE request_id NOT IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2);
INSERT INTO baseline_arms SELECT * FROM baseline_arms_kept
WHERE request_id NOT IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2)
  AND request_id IN (SELECT request_id FROM requests);
DROP TABLE baselines_kept;
DROP TABLE baseline_arms_kept;
