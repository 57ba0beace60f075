-- store_count_spans: the number of spans stored, from DuckDB's table
-- metadata (it costs the same however large the table). No parameters.
-- One row, one column: spans (BIGINT).
SELECT count(*) AS spans FROM spans;
