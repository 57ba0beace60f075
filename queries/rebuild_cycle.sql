-- rebuild_cycle: records a parent link the rebuild cut to break a loop:
-- $1 trace_id and $2 span_id of the span taken as a root, $3 the
-- parent_span_id it named (table parent_cycles). Yields no rows.
INSERT INTO parent_cycles VALUES ($1, $2, $3)
