-- rebuild_partition: one slice of rebuild_facts (see rebuild_spans): the
-- traces of slice $1, by trace and start so the rebuild takes one trace at
-- a time. rebuild_spans stored the rows in that order, and DuckDB returns
-- a table's rows in the order they were stored when nothing says
-- otherwise (preserve_insertion_order, on by default and never turned
-- off here): sorting each slice again cost a quarter of reading it.
-- Columns: those of rebuild_spans but slice, then fact_row, the row's
-- rowid, by which the rebuild sets a span aside (rebuild_pool).
SELECT * EXCLUDE (slice), rowid AS fact_row
FROM rebuild_facts
WHERE slice = $1::UBIGINT
