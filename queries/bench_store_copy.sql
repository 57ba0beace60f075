-- bench_store_copy: bench step S's copy: the attached database src's spans
-- into a new table of this one, written to disk. No parameters, no rows.
CREATE TABLE spans AS SELECT * FROM src.spans;
CHECKPOINT;
