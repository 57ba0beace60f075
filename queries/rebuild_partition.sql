-- rebuild_partition: one slice of rebuild_facts (see rebuild_spans): the
-- traces whose trace_hash % $1 = $2, ordered by trace and start so the
-- rebuild takes one trace at a time. Columns: those of rebuild_spans but
-- trace_hash.
SELECT * EXCLUDE (trace_hash)
FROM rebuild_facts
WHERE trace_hash % $1::UBIGINT = $2::UBIGINT
ORDER BY trace_id, start_ns, span_id
