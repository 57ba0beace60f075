-- find_client_error_statuses: the retries made right after a client error
-- (trigger client_error: 400, 401, 403, 404, 422, a parse or schema
-- error ...), by the HTTP status of that error, per findings segment
-- (service, operation, route), over the requests that started in [$1, $2]
-- (Unix ns). $3 stands for a value a request does not carry.
--
-- Columns: service, operation, route, status (the error's status: "HTTP
-- 404", "gRPC 3", or "no status"), retries, retries_ok (those retries that
-- succeeded: the dump's own evidence that the status is not deterministic
-- on the route), retry_ms (each retry's elapsed time and the gap before it,
-- summed in whole nanoseconds, as segment_rows sums client_error_retry_ms),
-- retry_tokens (their input and output tokens).
WITH after AS (
    SELECT request_id, outcome, elapsed_ms, gap_before_ms, input_tokens, output_tokens,
           lag(trigger) OVER w = 'client_error' AS after_client_error,
           CASE WHEN lag(http_status) OVER w IS NOT NULL THEN 'HTTP ' || lag(http_status) OVER w
                WHEN lag(grpc_status) OVER w IS NOT NULL THEN 'gRPC ' || lag(grpc_status) OVER w
                ELSE 'no status' END AS status
    FROM attempts
    WHERE request_id IN (SELECT request_id FROM requests WHERE attempts > 1 AND start_ns >= $1 AND start_ns <= $2)
    WINDOW w AS (PARTITION BY request_id ORDER BY ordinal)
)
SELECT coalesce(r.service, $3) AS service,
       coalesce(r.operation, $3) AS operation,
       coalesce(r.route, $3) AS route,
       a.status,
       count(*) AS retries,
       count(*) FILTER (WHERE a.outcome = 'ok') AS retries_ok,
       sum(round((a.elapsed_ms + coalesce(a.gap_before_ms, 0)) * 1e6)::BIGINT) / 1e6 AS retry_ms,
       sum(coalesce(a.input_tokens, 0) + coalesce(a.output_tokens, 0)) AS retry_tokens
FROM after a
JOIN requests r ON r.request_id = a.request_id
WHERE a.after_client_error
GROUP BY ALL
ORDER BY service, operation, route, status;
