-- store_baseline_pending: the ranges of request starts whose baselines
-- retention left to recompute (baseline_pending). No parameters. A row per
-- range, in order: since_ns, until_ns (BIGINT, inclusive).
SELECT since_ns, until_ns FROM baseline_pending ORDER BY ALL;
