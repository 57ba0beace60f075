-- store_schema_tables: what an opened database holds, to tell a new one
-- from one written before schema versions. No parameters. One row: tables
-- (BIGINT, the database's own tables), versioned (BIGINT, 1 when one of
-- them is schema_version).
SELECT count(*) AS tables, count(*) FILTER (WHERE table_name = 'schema_version') AS versioned
FROM duckdb_tables() WHERE database_name = current_database() AND NOT temporary;
