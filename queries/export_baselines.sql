-- export_baselines: one row per retried request and baseline kind, every
-- column of the baselines table, partitioned by the request's start day.
-- Yields the baselines columns plus "date".
-- export_scope is the requests of the days being written (a temporary
-- view package export defines), so a night's export reads that night.
SELECT b.*, CAST(make_timestamp(r.start_ns // 1000) AS DATE) AS date
FROM baselines b
JOIN export_scope r USING (request_id)
ORDER BY r.start_ns, b.request_id, b.kind;
