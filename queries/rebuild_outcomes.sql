-- rebuild_outcomes: the rules of requests.outcome_detail that need every
-- request, run once the rebuild has written them all with the details
-- their own spans give (rebuild/outcome.go). They judge the failed
-- requests whose detail is none of those (NULL, or one this script gave:
-- attempt_cap, not_retryable, retry_budget, no_capacity) and whose anchor
-- span states no reason itself; the first that holds wins:
--   no_capacity    at the cap seen (below), and every attempt was turned
--                  away for want of capacity (HTTP 429 or 503, gRPC
--                  RESOURCE_EXHAUSTED, or a throttling code: trigger
--                  rate_limited),
--   attempt_cap    failed after as many attempts as any request of its
--                  service, operation and route made (the cap seen), and
--                  more than one, or, in nested loops, after as many tries
--                  of the outer loop as any of them made (more than one),
--   not_retryable  below the cap, the last attempt's failure was
--                  deterministic (trigger client_error: a 4xx, or a parse,
--                  schema or validation error),
--   retry_budget   below the cap, after a last attempt whose trigger the
--                  clients of its route, or its own client (service) on
--                  any route, do retry (after the failed attempt ended:
--                  hedges are no evidence):
--                  the loop had tries left and a retryable failure, and
--                  stopped all the same, as a retry budget or the AWS
--                  SDKs' retry quota stops it,
--   no_capacity    every attempt was turned away (as above), below the cap,
--                  after a failure neither the route's clients nor its own
--                  client ever retried.
-- The cap seen and the triggers retried move as requests come and go, so
-- every such request is judged again on each run: an update gives what a
-- full rebuild gives. No other rule can have come to hold for a request
-- this judges: they read only the request's own spans, which a request
-- not rebuilt has not changed, and the dump's end, which an update
-- rebuilds the requests near (see rebuild_scope).
CREATE OR REPLACE TEMP TABLE rebuild_detail AS
WITH caps AS (
    SELECT service, operation, route, max(attempts) AS cap,
           max(layer_counts[1]) FILTER (WHERE len(layer_counts) > 1) AS outer_cap
    FROM requests GROUP BY ALL
),
-- The triggers the clients of each route retried: a failed attempt that
-- another attempt of its request followed once it had ended (a hedge,
-- which overlaps, is no retry of a failure).
followed AS (
    SELECT request_id, trigger, lead(gap_before_ms) OVER (PARTITION BY request_id ORDER BY ordinal) >= 0 AS retried
    FROM attempts
    WHERE request_id IN (SELECT request_id FROM attempts WHERE trigger IS NOT NULL AND NOT is_final)
),
retried AS (
    SELECT DISTINCT r.service, r.route, f.trigger
    FROM followed f
    JOIN requests r ON r.request_id = f.request_id
    WHERE f.retried AND f.trigger IS NOT NULL
),
by_route AS (SELECT DISTINCT route, trigger FROM retried),
by_client AS (SELECT DISTINCT service, trigger FROM retried),
candidates AS (
    SELECT r.request_id, r.trace_id, r.span_id, r.service, r.operation, r.route, r.attempts,
           r.outcome_detail, c.cap,
           (r.attempts = c.cap AND r.attempts > 1)
           OR (len(r.layer_counts) > 1 AND r.layer_counts[1] = c.outer_cap AND r.layer_counts[1] > 1) AS at_cap
    FROM requests r
    JOIN caps c ON c.service IS NOT DISTINCT FROM r.service AND c.operation IS NOT DISTINCT FROM r.operation
        AND c.route IS NOT DISTINCT FROM r.route
    WHERE r.outcome = 'error'
      AND (r.outcome_detail IS NULL OR r.outcome_detail IN ('attempt_cap', 'not_retryable', 'retry_budget', 'no_capacity'))
),
-- Anchors that state why their loop gave up (rebuild_spans' exhausted_reason).
stated AS (
    SELECT trace_id, span_id
    FROM spans
    WHERE trace_id IN (SELECT trace_id FROM candidates WHERE outcome_detail IS NOT NULL)
      AND (attributes['retryscope.exhausted.reason'] IN ('attempt_cap', 'deadline', 'no_progress', 'token_cap', 'no_capacity',
                                                         'retry_budget', 'not_retryable')
           OR (status_code = 'error' AND regexp_matches(status_message,
                   '(?i)retry quota exceeded|RetryQuotaExceeded|retry budget (exhausted|exceeded)|exceeded maximum number of attempts')))
),
turned AS (
    SELECT request_id,
           bool_and(coalesce(http_status IN (429, 503), false) OR coalesce(grpc_status = 8, false)
                    OR coalesce(trigger = 'rate_limited', false)) AS turned_away,
           min(trigger) FILTER (WHERE is_final) AS last_trigger
    FROM attempts
    WHERE request_id IN (SELECT request_id FROM candidates)
    GROUP BY request_id
),
judged AS (
    SELECT k.request_id, k.outcome_detail AS was,
           CASE WHEN k.at_cap AND t.turned_away THEN 'no_capacity'
                WHEN k.at_cap THEN 'attempt_cap'
                WHEN t.last_trigger = 'client_error' THEN 'not_retryable'
                WHEN rt.trigger IS NOT NULL OR rc.trigger IS NOT NULL THEN 'retry_budget'
                WHEN t.turned_away THEN 'no_capacity'
           END AS detail
    FROM candidates k
    LEFT JOIN turned t ON t.request_id = k.request_id
    LEFT JOIN by_route rt ON rt.route IS NOT DISTINCT FROM k.route AND rt.trigger = t.last_trigger
    LEFT JOIN by_client rc ON rc.service IS NOT DISTINCT FROM k.service AND rc.trigger = t.last_trigger
    ANTI JOIN stated s ON s.trace_id = k.trace_id AND s.span_id = k.span_id
)
SELECT request_id, detail FROM judged WHERE detail IS DISTINCT FROM was;

-- Set apart from the query above: DuckDB runs an UPDATE over a join of
-- this size many times slower than over a table.
UPDATE requests SET outcome_detail = d.detail
FROM rebuild_detail d
WHERE requests.request_id = d.request_id;

DROP TABLE rebuild_detail;
