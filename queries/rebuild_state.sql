-- rebuild_state: the counts the rebuilt tables would be built from now.
-- Columns: spans, files, max_file_id. A rebuild records them in rebuild_state; a report
-- compares to decide whether the rebuilt tables are stale.
SELECT (SELECT count(*) FROM spans) AS spans, (SELECT count(*) FROM ingest_files) AS files,
       (SELECT coalesce(max(file_id), 0) FROM ingest_files) AS max_file_id
