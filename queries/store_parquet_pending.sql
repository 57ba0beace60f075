-- store_parquet_pending: the Parquet days the next export writes again.
-- No parameters. A row per day, in order: day (VARCHAR, YYYY-MM-DD or '*'
-- for every day).
SELECT day FROM parquet_pending ORDER BY day;
