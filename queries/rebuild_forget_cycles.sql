-- rebuild_forget_cycles: deletes the parent links recorded as cut
-- (parent_cycles) in the traces an incremental rebuild recomputes
-- (rebuild_scope): it cuts them again as it reads them. Yields no rows.
DELETE FROM parent_cycles WHERE trace_id IN (SELECT trace_id FROM rebuild_scope)
