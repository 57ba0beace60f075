-- rebuild_dump_end: the end of the latest span stored (Unix ns, 0 with no
-- spans), the dump's end that decides which failed requests may still be
-- unfinished. One row, one column: end_ns.
SELECT coalesce(max(end_ns), 0) AS end_ns FROM spans
