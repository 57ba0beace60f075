-- baseline_state_mark: records that the baselines table now reflects the
-- latest rebuild of requests (see baseline_state_check).
CREATE OR REPLACE TABLE baseline_state AS
SELECT (SELECT max(rebuilt_at) FROM rebuild_state) AS rebuilt_at;
