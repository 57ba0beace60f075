-- baseline_match_input: the requests the matched baseline
-- (docs/recognition.md, "Baselines") pairs, grouped by what a match must
-- share exactly and ordered by start time within each group, for
-- baseline.Compute's nearest-neighbour search.
--
-- The search itself is in Go (baseline/match.go): finding the k nearest
-- with a distance that grows with the time apart lets it stop scanning a
-- group once the time alone is farther than the k-th match so far, which
-- SQL's all-pairs join cannot, and that join grows with the square of the
-- traffic.
--
-- Columns:
--   request_id
--   match_group  operation, model, route, stream and region, joined with '|'
--   start_ns, latency_ms
--   in_log       ln(1 + prompt tokens), NULL when unknown
--   out_log      ln(1 + output tokens of the final attempt), NULL when unknown
--   retried      attempts > 1: a request to match; otherwise a candidate,
--                a request that succeeded on its first and only attempt
SELECT
    request_id,
    concat_ws('|',
        'op=' || coalesce(operation, ''), 'model=' || coalesce(model, ''),
        'route=' || coalesce(route, ''), 'stream=' || stream,
        'region=' || coalesce(region, '')) AS match_group,
    start_ns,
    latency_ms,
    ln(1 + in_tokens) AS in_log,
    ln(1 + out_tokens) AS out_log,
    attempts > 1 AS retried
FROM baseline_input
WHERE attempts > 1 OR outcome = 'ok'
ORDER BY match_group, start_ns, request_id;
