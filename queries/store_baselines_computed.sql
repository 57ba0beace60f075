-- store_baselines_computed: whether baselines have been computed, which
-- baseline_state records with its one row. No parameters. One row, one
-- column: computed (BOOLEAN).
SELECT count(*) > 0 AS computed FROM baseline_state;
