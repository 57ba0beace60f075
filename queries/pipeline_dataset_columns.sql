-- pipeline_dataset_columns: the columns the Parquet files of one of a
-- dataset's tables hold, as the pipeline_dataset_* inserts read them. $1
-- the files' globs (VARCHAR[]). A row per column: column_name (VARCHAR).
SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet($1::VARCHAR[], hive_partitioning = true, union_by_name = true));
