-- store_setting: the current value of one of DuckDB's settings, as text.
-- $1 the setting's name ('memory_limit', 'threads'). One row, one column:
-- value (VARCHAR; memory_limit as DuckDB shows it, rounded: 488.2 MiB).
SELECT current_setting($1) AS value;
