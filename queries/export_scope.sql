-- export_scope: the temporary view export_scope, which the export queries
-- read: the requests starting in the range the variable export_scope
-- holds (export_scope_bounds), every request when its since is NULL. A
-- view takes no parameters; the variable is read, as a constant, each
-- time a query using the view is planned, so DuckDB still skips the row
-- groups outside the range. Columns: those of requests. No rows.
CREATE OR REPLACE TEMP VIEW export_scope AS
SELECT * FROM requests
WHERE getvariable('export_scope').since IS NULL
   OR start_ns >= getvariable('export_scope').since AND start_ns < getvariable('export_scope').until;
