-- store_configure: the settings every connection gets on open. Freed
-- memory goes back to the OS sooner than DuckDB's default (128 MB), so the
-- process stays near its memory limit. An ASOF join is always planned as
-- one: DuckDB uses a nested loop instead when it expects few rows on the
-- probe side, and it has no estimate for a table written in the open
-- transaction, which the derive's are (the rebuild and the baselines
-- commit together). At 1M spans that made the healthy and alternate-route
-- baselines take 14 s and 31 s instead of 0.2 s and 0.4 s.
-- No parameters, no rows.
SET allocator_flush_threshold = '32MB';
SET asof_loop_join_threshold = 0;
