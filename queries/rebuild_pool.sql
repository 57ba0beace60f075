-- rebuild_pool: the span facts the rebuild set aside while it read the
-- traces (the root CLIENT attempts, joined across traces once all are
-- read), by their rows of rebuild_facts, listed in the temporary table
-- rebuild_pool_ids; in start order. Columns: those of rebuild_partition.
SELECT * EXCLUDE (slice), rowid AS fact_row
FROM rebuild_facts
WHERE rowid IN (SELECT id FROM rebuild_pool_ids)
ORDER BY start_ns, trace_id, span_id
