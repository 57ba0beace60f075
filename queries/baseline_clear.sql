-- baseline_clear: before a full recompute, empties the baselines and arms
-- (tables: migrations/003_derived). Yields no rows.
DELETE FROM baselines;
DELETE FROM baseline_arms;
