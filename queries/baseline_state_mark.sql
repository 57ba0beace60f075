-- baseline_state_mark: records that the baselines table now reflects the
-- latest rebuild of requests (see baseline_state_check).
DELETE FROM baseline_state;
INSERT INTO baseline_state SELECT max(rebuilt_at) FROM rebuild_state;
