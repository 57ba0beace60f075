-- rebuild_forget: deletes the requests (and their attempts) that an
-- incremental rebuild is about to build again (rebuild_touched, from
-- rebuild_scope), and the alternatives recorded for them.
CREATE TABLE IF NOT EXISTS join_alternatives (request_id VARCHAR NOT NULL, start_ns BIGINT NOT NULL,
    d_requests INTEGER NOT NULL, d_retried INTEGER NOT NULL, d_retried_ok INTEGER NOT NULL, d_failed INTEGER NOT NULL);
DELETE FROM join_alternatives WHERE request_id IN (SELECT request_id FROM rebuild_touched);
DELETE FROM attempts WHERE request_id IN (SELECT request_id FROM rebuild_touched);
DELETE FROM requests WHERE request_id IN (SELECT request_id FROM rebuild_touched);
