-- store_set_threads: sets DuckDB's number of worker threads. $1 the
-- number (a positive INTEGER). No rows.
SET threads = $1;
