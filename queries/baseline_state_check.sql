-- baseline_state_check: whether the baselines table was computed from the
-- current rebuild of requests. Yields one row, one column: fresh (BOOLEAN).
SELECT coalesce((SELECT rebuilt_at FROM baseline_state) = (SELECT max(rebuilt_at) FROM rebuild_state), false) AS fresh;
