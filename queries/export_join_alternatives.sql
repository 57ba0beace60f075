-- export_join_alternatives: the doubtful joins of attempts split across
-- traces (docs/requests.md): one row per alternative, every column of the
-- join_alternatives table, partitioned by the request's start day, so that
-- a report over the union of shard datasets (docs/sharding.md) bounds its
-- figures as a report over one database does. A dataset without such
-- joins has no files of it.
-- Yields the join_alternatives columns plus "date".
-- export_scope is the requests of the days being written (a temporary
-- view package export defines).
SELECT j.*, CAST(make_timestamp(r.start_ns // 1000) AS DATE) AS date
FROM join_alternatives j
JOIN export_scope r USING (request_id)
ORDER BY r.start_ns, j.request_id, j.start_ns, j.d_requests, j.d_retried, j.d_retried_ok, j.d_failed;
