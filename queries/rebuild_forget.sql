-- rebuild_forget: deletes the requests (and their attempts) that an
-- incremental rebuild is about to build again (rebuild_touched, from
-- rebuild_scope), and the alternatives recorded for them.
DELETE FROM join_alternatives WHERE request_id IN (SELECT request_id FROM rebuild_touched);
DELETE FROM attempts WHERE request_id IN (SELECT request_id FROM rebuild_touched);
DELETE FROM requests WHERE request_id IN (SELECT request_id FROM rebuild_touched);
