-- store_next_file_id: the file_id the next ingested file gets: one more
-- than any the ledger or the spans hold. No parameters. One row, one
-- column: file_id (BIGINT).
SELECT greatest((SELECT coalesce(max(file_id), 0) FROM ingest_files),
                (SELECT coalesce(max(file_id), 0) FROM spans)) + 1 AS file_id;
