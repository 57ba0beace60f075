-- pipeline_dataset_baselines: inserts the rows of a dataset's baselines files
-- (pipeline.OpenDataset), the columns of $2 read by name: the files carry
-- more, and a column only the database keeps takes its default. $1 the
-- files' globs (VARCHAR[]), $2 the columns both have (VARCHAR[]). No rows.
INSERT INTO baselines BY NAME
SELECT COLUMNS(lambda c: list_contains($2::VARCHAR[], c))
FROM read_parquet($1::VARCHAR[], hive_partitioning = true, union_by_name = true);
