-- prune: retention. The traces whose spans all started before the cutoff
-- $1 (Unix ns), so no trace is cut in half, as the temporary table
-- prune_traces. Reads the old spans, and of the rest only their trace ids.
-- The ledger keeps its rows, so pruned files are not taken in again.
CREATE OR REPLACE TEMP TABLE prune_traces AS
WITH old AS (SELECT DISTINCT trace_id FROM spans WHERE start_ns < $1)
SELECT trace_id FROM old
WHERE trace_id NOT IN (
    SELECT trace_id FROM spans WHERE start_ns >= $1 AND trace_id IN (SELECT trace_id FROM old)
);
