-- prune: retention. Deletes every trace whose spans all started before the
-- cutoff $1 (Unix ns), so no trace is cut in half; the ledger keeps its
-- rows, so pruned files are not taken in again. Yields no rows; the
-- affected-row count is the number of spans deleted.
DELETE FROM spans
WHERE trace_id IN (
    SELECT trace_id FROM spans GROUP BY trace_id HAVING max(start_ns) < $1
);
