-- export_days: the UTC days (YYYY-MM-DD) the requests of export_scope
-- start on, the days any exported table can have rows for. No parameters.
-- A row per day, in order: d (VARCHAR).
SELECT DISTINCT strftime(make_timestamp(start_ns // 1000), '%Y-%m-%d') AS d
FROM export_scope ORDER BY d;
