-- baseline_merge: after a partial recompute (see baseline_keep), drops the
-- rows it wrote for requests read but not recomputed and puts their
-- set-aside rows back. Yields no rows.
DELETE FROM baselines WHERE request_id IN (SELECT request_id FROM baseline_read WHERE NOT target);
DELETE FROM baseline_arms WHERE request_id IN (SELECT request_id FROM baseline_read WHERE NOT target);
INSERT INTO baselines SELECT * FROM baselines_kept;
INSERT INTO baseline_arms SELECT * FROM baseline_arms_kept;
DROP TABLE baselines_kept;
DROP TABLE baseline_arms_kept;
DROP TABLE baseline_read;
