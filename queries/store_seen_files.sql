-- store_seen_files: the files among these hashes ingested before, and the
-- path each was ingested under. $1 the hashes (VARCHAR[], hex). A row per
-- file seen: sha256 (VARCHAR), path (VARCHAR).
SELECT sha256, path FROM ingest_files
WHERE sha256 IN (SELECT unnest($1::VARCHAR[]));
