-- store_seen_file: the path under which content of this hash was ingested
-- before. $1 sha256 (hex). At most one row: path (VARCHAR).
SELECT path FROM ingest_files WHERE sha256 = $1;
