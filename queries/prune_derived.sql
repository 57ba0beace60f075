-- prune_derived: before the spans of prune_traces are deleted, removes
-- what was built from them, so the derived tables stay incremental rather
-- than being rebuilt whole: the requests with their anchor or an attempt in
-- a pruned trace go, with their attempts (their baselines go with the next
-- baseline update). Their other traces go to rebuild_pending, to be built
-- again from what remains by the next update, and the span of their
-- starts to baseline_pending, so the baselines within reach of them are
-- recomputed. The spans the last rebuild counted are taken off
-- rebuild_state, which then still describes what the tables were built from.
CREATE OR REPLACE TEMP TABLE prune_requests AS
SELECT request_id, start_ns FROM requests
WHERE trace_id IN (SELECT trace_id FROM prune_traces)
   OR request_id IN (SELECT request_id FROM attempts WHERE trace_id IN (SELECT trace_id FROM prune_traces));
INSERT INTO rebuild_pending
SELECT trace_id FROM requests WHERE request_id IN (SELECT request_id FROM prune_requests)
UNION
SELECT trace_id FROM attempts WHERE request_id IN (SELECT request_id FROM prune_requests)
EXCEPT
SELECT trace_id FROM prune_traces;
INSERT INTO baseline_pending
SELECT min(start_ns), max(start_ns) FROM prune_requests HAVING count(*) > 0;
UPDATE rebuild_state SET spans = spans - (
    SELECT count(*) FROM spans
    WHERE trace_id IN (SELECT trace_id FROM prune_traces)
      AND file_id <= (SELECT max(max_file_id) FROM rebuild_state));
DELETE FROM join_alternatives WHERE request_id IN (SELECT request_id FROM prune_requests);
DELETE FROM attempts WHERE request_id IN (SELECT request_id FROM prune_requests);
DELETE FROM requests WHERE request_id IN (SELECT request_id FROM prune_requests);
UPDATE rebuild_state SET requests = (SELECT count(*) FROM requests), attempts = (SELECT count(*) FROM attempts);
DROP TABLE prune_requests;
