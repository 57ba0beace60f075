-- store_ledger_row: the ledger row of one ingested file, written in the
-- file's transaction. $1 file_id, $2 path, $3 sha256, $4 size_bytes,
-- $5 format, $6 compression, $7 records, $8 spans_read, $9 spans_new,
-- $10 rejected, $11 seconds; ingested_at is now(). No rows.
INSERT INTO ingest_files VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), $11);
