-- store_set_memory_limit: sets DuckDB's memory limit. $1 the limit as
-- DuckDB takes it (e.g. '512MB'; store.CheckOptions or SetMemoryLimit
-- checked it). No rows.
SET memory_limit = $1;
