-- rebuild_scope_traces: how many traces an incremental rebuild
-- recomputed (rebuild_scope). One row, one column: traces.
SELECT count(*) AS traces FROM rebuild_scope
