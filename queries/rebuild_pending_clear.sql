-- rebuild_pending_clear: after an incremental rebuild, forgets the traces
-- retention left to build again (rebuild_pending): the update built them.
-- Yields no rows.
DELETE FROM rebuild_pending
