-- export_baseline_arms: the arm of each request in a policy experiment
-- (baseline_arms: arm, and whether it is the control arm), partitioned by
-- the request's start day, so that a report over the union of shard
-- datasets (docs/sharding.md) draws the baselines' populations as one run
-- does. A dataset without an experiment has no files of it.
-- Yields the baseline_arms columns plus "date".
-- export_scope is the requests of the days being written (a temporary
-- view package export defines).
SELECT a.*, CAST(make_timestamp(r.start_ns // 1000) AS DATE) AS date
FROM baseline_arms a
JOIN export_scope r USING (request_id)
ORDER BY r.start_ns, a.request_id;
