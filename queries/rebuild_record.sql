-- rebuild_record: records what the rebuilt tables were built from, as the
-- one row of rebuild_state: $1 spans, $2 files, $3 max_file_id (from
-- rebuild_state.sql), $4 options (the rebuild's fingerprint), $5 requests,
-- $6 attempts (from rebuild_totals), and now. Yields no rows.
DELETE FROM rebuild_state;
INSERT INTO rebuild_state VALUES ($1, $2, $3, $4, $5, $6, now())
