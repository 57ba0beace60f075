-- baseline_keep: before a partial recompute, which reads the requests
-- starting in [$1, $2] and recomputes those in [$3, $4], lists the requests
-- read (baseline_read: request_id, target), sets aside the rows of those
-- read but not recomputed (baselines_kept, baseline_arms_kept), and deletes
-- from baselines and baseline_arms the rows of every request read and of
-- requests that no longer exist. The recompute then writes rows for every
-- request read; baseline_merge keeps those of the requests recomputed and
-- puts the set-aside rows back. Only rows near the change move, so the cost
-- follows the change, not the history. Yields no rows.
CREATE OR REPLACE TEMP TABLE baseline_read AS
SELECT request_id, start_ns BETWEEN $3 AND $4 AS target
FROM requests WHERE start_ns BETWEEN $1 AND $2;
CREATE OR REPLACE TEMP TABLE baselines_kept AS
SELECT * FROM baselines WHERE request_id IN (SELECT request_id FROM baseline_read WHERE NOT target);
CREATE OR REPLACE TEMP TABLE baseline_arms_kept AS
SELECT * FROM baseline_arms WHERE request_id IN (SELECT request_id FROM baseline_read WHERE NOT target);
DELETE FROM baselines
WHERE request_id IN (SELECT request_id FROM baseline_read)
   OR request_id NOT IN (SELECT request_id FROM requests);
DELETE FROM baseline_arms
WHERE request_id IN (SELECT request_id FROM baseline_read)
   OR request_id NOT IN (SELECT request_id FROM requests);
