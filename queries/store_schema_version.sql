-- store_schema_version: the schema version the database was last
-- migrated to. No parameters. One row, one column: version (INTEGER).
SELECT version FROM schema_version;
