-- report_ranges: how far the inferred joins across traces could move the
-- workload counts (join_alternatives). One row: the sums of the
-- alternatives that lower each count, then of those that raise it:
-- requests_down, retried_down, retried_ok_down, failed_down, requests_up,
-- retried_up, retried_ok_up, failed_up. $1, $2: the window, alternatives
-- of requests starting in [$1, $2] (Unix ns).
SELECT
    coalesce(sum(least(d_requests, 0)), 0), coalesce(sum(least(d_retried, 0)), 0),
    coalesce(sum(least(d_retried_ok, 0)), 0), coalesce(sum(least(d_failed, 0)), 0),
    coalesce(sum(greatest(d_requests, 0)), 0), coalesce(sum(greatest(d_retried, 0)), 0),
    coalesce(sum(greatest(d_retried_ok, 0)), 0), coalesce(sum(greatest(d_failed, 0)), 0)
FROM join_alternatives
WHERE start_ns BETWEEN $1 AND $2
