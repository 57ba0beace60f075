-- whatif_quota_stops: the logical requests starting from $1 to $2 (Unix
-- ns, inclusive) whose client's retry quota stopped them: failed, with
-- outcome_detail retry_budget, and the anchor span's error in the AWS
-- SDKs' words for an empty quota ("retry quota exceeded", the SDK for Go
-- v2's "failed to get rate limit token, retry quota exceeded, N
-- available, C requested"; RetryQuotaExceeded), which a retry budget
-- (also retry_budget) does not say. Package whatif infers the recorded
-- quota from them. In request start, request_id order.
-- Columns:
--   request_id
--   available   the tokens the quota had, NULL when the error does not say
--   requested   what the retry would have cost, NULL when it does not say
SELECT r.request_id,
       TRY_CAST(nullif(regexp_extract(s.status_message, '(\d+) available, (\d+) requested', 1), '') AS DOUBLE) AS available,
       TRY_CAST(nullif(regexp_extract(s.status_message, '(\d+) available, (\d+) requested', 2), '') AS DOUBLE) AS requested
FROM requests r
JOIN spans s ON s.trace_id = r.trace_id AND s.span_id = r.span_id
WHERE r.start_ns BETWEEN $1 AND $2
  AND r.outcome = 'error' AND r.outcome_detail = 'retry_budget'
  AND s.status_code = 'error' AND regexp_matches(s.status_message, '(?i)retry quota exceeded|RetryQuotaExceeded')
ORDER BY r.start_ns, r.request_id
