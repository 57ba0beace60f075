-- pipeline_table_columns: the columns of one of the database's tables, in
-- their order. $1 the table's name. A row per column: column_name
-- (VARCHAR).
SELECT column_name FROM duckdb_columns()
WHERE table_name = $1 AND schema_name = 'main'
ORDER BY column_index;
