-- store_may_repeat: the stored spans that have the key of a span of files
-- about to be stored together (store.MayRepeat). The window only lets
-- DuckDB skip older row groups: a stored copy outside it is another span
-- (see store.ResendWindow), as merge_stage has it. $1..$2 the files' range
-- of start_ns, $3 the re-send window (ns), $4 and $5 the spans' trace_id
-- and span_id (VARCHAR[], the same length). A row per stored span found:
-- trace_id, span_id (VARCHAR).
SELECT DISTINCT s.trace_id, s.span_id
FROM spans s
SEMI JOIN (SELECT unnest($4::VARCHAR[]) AS trace_id, unnest($5::VARCHAR[]) AS span_id) k
  ON k.trace_id = s.trace_id AND k.span_id = s.span_id
WHERE s.start_ns BETWEEN $1 - $3 AND $2 + $3;
