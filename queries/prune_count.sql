-- prune_count: how many traces the prune found to drop (prune_traces, see
-- prune). No parameters. One row, one column: traces (BIGINT).
SELECT count(*) AS traces FROM prune_traces;
