-- testkit_table_columns: the columns of a table as its DDL has them, for
-- a test to compare with an appender's list (testkit.CheckColumns). $1 the
-- catalog ('' for the database, 'temp' for this connection's temporary
-- tables), $2 the table. A row per column, in order: column_name (VARCHAR).
SELECT column_name FROM duckdb_columns()
WHERE database_name = coalesce(nullif($1, ''), current_database())
  AND schema_name = 'main' AND table_name = $2
ORDER BY column_index;
