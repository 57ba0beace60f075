-- rebuild_last_state: what the last rebuild with options $1 (its
-- fingerprint) was built from; no row when there was none. Columns spans,
-- files, max_file_id (as rebuild_state.sql counts them).
SELECT spans, files, max_file_id FROM rebuild_state WHERE options = $1
