-- rebuild_state: the counts the rebuilt tables would be built from now.
-- Columns: spans, files. A rebuild records them in rebuild_state; a report
-- compares to decide whether the rebuilt tables are stale.
SELECT (SELECT count(*) FROM spans) AS spans, (SELECT count(*) FROM ingest_files) AS files
