-- baseline_keep: before a partial recompute, sets the current baselines and
-- arms aside (baselines_kept, baseline_arms_kept); baseline_merge brings
-- back the rows the recompute did not cover.
DROP TABLE IF EXISTS baselines_kept;
DROP TABLE IF EXISTS baseline_arms_kept;
ALTER TABLE baselines RENAME TO baselines_kept;
ALTER TABLE baseline_arms RENAME TO baseline_arms_kept;
