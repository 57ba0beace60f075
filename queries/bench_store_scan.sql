-- bench_store_scan: bench step S's reading alone: every row of the
-- attached database src's spans, hashed (which costs more than the copy's
-- own reading, so S errs low). No parameters. One row: count (BIGINT,
-- almost always 0).
SELECT count(*) FROM (SELECT * FROM src.spans) AS t WHERE hash(t) = 0;
