-- export_timezone: the export's days and timestamps are UTC, whatever the
-- machine's time zone. No parameters, no rows.
SET TimeZone = 'UTC';
