-- bench_store_threads: bench step S runs DuckDB on one thread. No
-- parameters, no rows.
SET threads = 1;
