-- find_client_error_statuses: the retries made right after a client error
-- (trigger client_error: 400, 401, 403, 404, 422 ...), by the HTTP status
-- of that error, per findings segment (service, operation, route), over
-- the requests that started in [$1, $2] (Unix ns). $3 stands for a value
-- a request does not carry.
--
-- Columns: service, operation, route, status (the error's status: "HTTP
-- 404", "gRPC 3", or "no status"), retries.
WITH after AS (
    SELECT request_id,
           lag(trigger) OVER w = 'client_error' AS after_client_error,
           CASE WHEN lag(http_status) OVER w IS NOT NULL THEN 'HTTP ' || lag(http_status) OVER w
                WHEN lag(grpc_status) OVER w IS NOT NULL THEN 'gRPC ' || lag(grpc_status) OVER w
                ELSE 'no status' END AS status
    FROM attempts
    WINDOW w AS (PARTITION BY request_id ORDER BY ordinal)
)
SELECT coalesce(r.service, $3) AS service,
       coalesce(r.operation, $3) AS operation,
       coalesce(r.route, $3) AS route,
       a.status,
       count(*) AS retries
FROM after a
JOIN requests r ON r.request_id = a.request_id
WHERE a.after_client_error AND r.start_ns >= $1 AND r.start_ns <= $2
GROUP BY ALL
ORDER BY service, operation, route, status;
