-- rebuild_partition: one slice of rebuild_facts (see rebuild_spans): the
-- traces of slice $1, ordered by trace and start so the rebuild takes one
-- trace at a time. Columns: those of rebuild_spans but slice.
SELECT * EXCLUDE (slice)
FROM rebuild_facts
WHERE slice = $1::UBIGINT
ORDER BY trace_id, start_ns, span_id
