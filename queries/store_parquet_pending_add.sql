-- store_parquet_pending_add: adds a day to parquet_pending, the Parquet
-- days the next export writes again, unless it is listed already. $1 the
-- UTC day (YYYY-MM-DD, or '*' for every day). No rows.
INSERT INTO parquet_pending SELECT $1 WHERE $1 NOT IN (SELECT day FROM parquet_pending);
