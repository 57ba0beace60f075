-- store_size_seen: whether content of this many bytes was ingested before
-- (if not, no file of that size can have been). $1 size in bytes. One row,
-- one column: seen (BOOLEAN).
SELECT EXISTS (SELECT 1 FROM ingest_files WHERE size_bytes = $1) AS seen;
