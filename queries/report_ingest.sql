-- report_ingest: what the database was loaded from.
-- Columns: files (ingested file contents), spans_read (spans decoded from
-- them), spans (stored, after de-duplication), rejected (records and spans
-- in ingest_errors).
SELECT
    (SELECT count(*) FROM ingest_files) AS files,
    (SELECT coalesce(sum(spans_read), 0) FROM ingest_files) AS spans_read,
    (SELECT count(*) FROM spans) AS spans,
    (SELECT count(*) FROM ingest_errors) AS rejected
