-- rebuild_touched_range: the range of starts of the requests an
-- incremental rebuild replaces (rebuild_touched, from rebuild_scope), before
-- they are dropped. One row; columns lo, hi (Unix ns), both NULL when it
-- replaces none.
SELECT min(start_ns) AS lo, max(start_ns) AS hi FROM requests
WHERE request_id IN (SELECT request_id FROM rebuild_touched)
