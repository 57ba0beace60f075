-- store_legacy_compare: how the tables of main differ from those the
-- migrations made in the scratch schema retryscope_legacy_check
-- (store_legacy_scratch), column for column (name, position, type,
-- nullability). No parameters. One row: missing (BIGINT, tables of the
-- scratch schema main lacks), differ (BIGINT, columns of the tables both
-- have that are not alike).
WITH cols AS (
    SELECT schema_name, table_name, column_index, column_name, data_type, is_nullable
    FROM duckdb_columns() WHERE database_name = current_database()),
want AS (SELECT * EXCLUDE (schema_name) FROM cols WHERE schema_name = 'retryscope_legacy_check' AND table_name <> 'schema_version'),
have AS (SELECT * EXCLUDE (schema_name) FROM cols WHERE schema_name = 'main' AND table_name IN (SELECT table_name FROM want))
SELECT (SELECT count(DISTINCT table_name) FROM want) - (SELECT count(DISTINCT table_name) FROM have) AS missing,
       (SELECT count(*) FROM ((FROM want EXCEPT FROM have) UNION ALL (FROM have EXCEPT FROM want))) AS differ;
