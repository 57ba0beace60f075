-- 004_outcome_detail_and_phases: what ended each request, and where each
-- attempt's time went.
--   requests.outcome_detail  what ended the request, beside outcome
--                   (ok/error), where the spans let it be inferred or state
--                   it, else NULL: unfinished, cancelled, deadline,
--                   no_progress, token_cap, no_capacity, attempt_cap
--                   (rebuild/outcome.go defines each; the rebuild sets it)
--   attempts.queue_ms, connect_ms, serve_ms, generate_ms  the attempt's time
--                   as T = Q + C + S + G where telemetry shows it, NULL where
--                   not (rebuild/phases.go defines each; the rebuild sets
--                   them)
-- Requests and attempts derived before this migration lack them, so the
-- rebuild state is cleared: the next command rebuilds every request from
-- its spans, and the baselines after it.
ALTER TABLE requests ADD COLUMN outcome_detail VARCHAR;
ALTER TABLE attempts ADD COLUMN queue_ms DOUBLE;
ALTER TABLE attempts ADD COLUMN connect_ms DOUBLE;
ALTER TABLE attempts ADD COLUMN serve_ms DOUBLE;
ALTER TABLE attempts ADD COLUMN generate_ms DOUBLE;
DELETE FROM rebuild_state;
