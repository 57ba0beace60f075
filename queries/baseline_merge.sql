-- baseline_merge: after a partial recompute, puts the recomputed rows of
-- requests starting in [$1, $2] into the set-aside tables in place of
-- their old rows, drops the old rows of requests that no longer exist, and
-- makes the set-aside tables the baselines again. Only the changed rows are
-- written, so the cost follows the change, not the history. Yields no rows.
DELETE FROM baselines_kept
WHERE request_id IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2)
   OR request_id NOT IN (SELECT request_id FROM requests);
INSERT INTO baselines_kept SELECT * FROM baselines
WHERE request_id IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2);
DELETE FROM baseline_arms_kept
WHERE request_id IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2)
   OR request_id NOT IN (SELECT request_id FROM requests);
INSERT INTO baseline_arms_kept SELECT * FROM baseline_arms
WHERE request_id IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2);
DROP TABLE baselines;
DROP TABLE baseline_arms;
ALTER TABLE baselines_kept RENAME TO baselines;
ALTER TABLE baseline_arms_kept RENAME TO baseline_arms;
