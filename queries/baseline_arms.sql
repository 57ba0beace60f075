-- baseline_arms: records the policy-experiment arm of every logical request
-- whose anchor span carries one.
--
-- Parameters: $1 the control arm's value.
-- Inserts into baseline_arms (request_id, arm, control).
INSERT INTO baseline_arms
SELECT request_id, arm, arm = $1::VARCHAR
FROM baseline_input
WHERE arm IS NOT NULL
ORDER BY request_id;
