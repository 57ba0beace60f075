-- rebuild_pool: the span facts the rebuild set aside while it read the
-- traces (the root CLIENT attempts, joined across traces once all are
-- read), by their rows of rebuild_facts, listed in the temporary table
-- rebuild_pool_ids, in no order: the rebuild sorts them itself, by start,
-- trace and span id, and a result streamed without a sort holds none of
-- its rows in DuckDB. Columns: those of rebuild_partition.
SELECT * EXCLUDE (slice), rowid AS fact_row
FROM rebuild_facts
WHERE rowid IN (SELECT id FROM rebuild_pool_ids)
