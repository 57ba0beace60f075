-- merge_repeats: whether a staged span has the (trace_id, span_id) of a
-- span an earlier file stored starting within $4 ns of the staged spans'
-- range of start_ns ($2..$3): if not, the stage can be loaded as it is
-- (load_spans) rather than merged with care (merge_conflicts,
-- merge_stage). $1 is the file's file_id. One row, one BOOLEAN column.
SELECT EXISTS (
    SELECT 1
    FROM retryscope_staged() k
    SEMI JOIN (
        SELECT trace_id, span_id FROM spans
        WHERE start_ns BETWEEN $2 - $4 AND $3 + $4 AND file_id < $1
    ) p ON p.trace_id = k.trace_id AND p.span_id = k.span_id
);
