-- rebuild_scope_range: the range of starts of the requests an incremental
-- rebuild built (those whose trace is in rebuild_scope). One row; columns
-- lo, hi (Unix ns), both NULL when it built none.
SELECT min(start_ns) AS lo, max(start_ns) AS hi FROM requests
WHERE trace_id IN (SELECT trace_id FROM rebuild_scope)
