-- store_rebuild_pending: whether an earlier prune left traces to build
-- again (rebuild_pending). No parameters. One row, one column: pending
-- (BOOLEAN).
SELECT count(*) > 0 AS pending FROM rebuild_pending;
