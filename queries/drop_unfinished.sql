-- drop_unfinished: removes the spans (and the conflicts recorded) of a
-- file whose ingest was interrupted (a crash or kill after some of its
-- chunks were committed, before its ledger row was), and the resources
-- only those spans referred to (an older version's interrupted ingest
-- that migration 005 gave resources). Run on every open; cheap when there
-- is nothing to do.
-- The finished spans looked at are only those of a resource an
-- unfinished one refers to: with nothing to remove, the statement reads
-- the spans' file ids alone (0.01 s at 1M spans, where reading every
-- finished span's resource id took 0.13 s).
WITH gone AS (
    SELECT DISTINCT resource_id FROM spans
    WHERE resource_id IS NOT NULL
      AND (file_id > (SELECT coalesce(max(file_id), 0) FROM ingest_files)
           OR file_id NOT IN (SELECT file_id FROM ingest_files))
)
DELETE FROM resources
WHERE resource_id IN (SELECT resource_id FROM gone)
  AND NOT EXISTS (SELECT 1 FROM spans s
                  WHERE s.resource_id = resources.resource_id
                    AND s.resource_id IN (SELECT resource_id FROM gone)
                    AND s.file_id <= (SELECT coalesce(max(file_id), 0) FROM ingest_files)
                    AND s.file_id IN (SELECT file_id FROM ingest_files));

DELETE FROM spans
WHERE file_id > (SELECT coalesce(max(file_id), 0) FROM ingest_files)
   OR file_id NOT IN (SELECT file_id FROM ingest_files);

DELETE FROM ingest_errors
WHERE file_id IS NOT NULL AND file_id NOT IN (SELECT file_id FROM ingest_files);
