-- drop_unfinished_needed: whether drop_unfinished has anything to remove:
-- a span of a file with no ledger row, or an ingest error of one. Every
-- open asks this first; the check reads the spans' file ids alone, where
-- drop_unfinished's deletes read their resource ids twice (a tenth of a
-- second at 1M spans).
SELECT EXISTS (SELECT 1 FROM spans
               WHERE file_id > (SELECT coalesce(max(file_id), 0) FROM ingest_files)
                  OR file_id NOT IN (SELECT file_id FROM ingest_files))
    OR EXISTS (SELECT 1 FROM ingest_errors
               WHERE file_id IS NOT NULL AND file_id NOT IN (SELECT file_id FROM ingest_files)) AS needed
