-- rebuild_scope: the traces an incremental rebuild recomputes after new
-- files (file_id > $1) arrived, as the temporary table rebuild_scope
-- (trace_id), and the requests it replaces, as rebuild_touched
-- (request_id). The scope holds every trace that received spans; every
-- single-span CLIENT trace starting within the split window ($2 ns) of the
-- new spans, since a retry split across traces may join them; and every
-- trace of a request built from any of those, so a request is rebuilt
-- whole. The traces in rebuild_pending (what retention left of a request)
-- count as new, with their own neighbours in time, and so do the traces of
-- the requests whose outcome detail the dump's end decides (failed ones
-- ending within the window of it, and those found unfinished before): the
-- new spans may have moved the end. Work grows with the new data, not with
-- the history.
CREATE OR REPLACE TEMP TABLE rebuild_seed AS
WITH near_end AS (
    SELECT trace_id FROM requests
    WHERE outcome_detail = 'unfinished' OR (outcome = 'error' AND end_ns > (SELECT max(end_ns) FROM spans) - $2)
),
fresh AS (
    SELECT trace_id, start_ns, end_ns, 0 AS source FROM spans WHERE file_id > $1
    UNION ALL
    SELECT trace_id, start_ns, end_ns, 1 FROM spans WHERE trace_id IN (SELECT trace_id FROM rebuild_pending)
    UNION ALL
    SELECT trace_id, start_ns, end_ns, 2 FROM spans WHERE trace_id IN (SELECT trace_id FROM near_end)
),
bounds AS (
    SELECT min(start_ns) - $2 AS lo, max(end_ns) + $2 AS hi FROM fresh GROUP BY source
)
SELECT DISTINCT trace_id FROM fresh
UNION
SELECT s.trace_id FROM spans s, bounds b
WHERE s.parent_span_id IS NULL AND s.kind = 'client' AND s.start_ns BETWEEN b.lo AND b.hi;

CREATE OR REPLACE TEMP TABLE rebuild_touched AS
SELECT request_id FROM requests WHERE trace_id IN (SELECT trace_id FROM rebuild_seed)
UNION
SELECT request_id FROM attempts WHERE trace_id IN (SELECT trace_id FROM rebuild_seed);

CREATE OR REPLACE TEMP TABLE rebuild_scope AS
SELECT trace_id FROM rebuild_seed
UNION
SELECT trace_id FROM requests WHERE request_id IN (SELECT request_id FROM rebuild_touched)
UNION
SELECT trace_id FROM attempts WHERE request_id IN (SELECT request_id FROM rebuild_touched);
