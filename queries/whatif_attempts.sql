-- whatif_attempts: every attempt of every logical request starting from
-- $1 to $2 (Unix ns, inclusive), with its
-- request, for replaying the recorded traffic under another retry policy
-- (package whatif). One row per attempt, in request start, request_id,
-- ordinal order.
-- Columns:
--   request_id
--   service, operation, route  the request's, '(unset)' when unknown (the
--                       segment)
--   req_start_ns        the request's start (Unix ns)
--   req_end_ns          the request's end (Unix ns)
--   latency_ms          the request's end-to-end latency
--   req_ok              the request succeeded
--   ordinal             the attempt's 1-based ordinal
--   tries               its try number per retry layer, outermost first,
--                       comma-separated ('' when unknown)
--   start_ns, end_ns    the attempt's client-side start and end (Unix ns)
--   attempt_route       the attempt's route (server.address), '' when unknown
--   ok                  the attempt succeeded
--   trigger             trigger when it failed, else '' (docs/recognition.md,
--                       "How retries are recognised")
--   gap_before_ms       start minus the latest end of earlier attempts
--                       (NULL for the first)
--   input_tokens, output_tokens  the attempt's, 0 when unknown
--   hidden_work_ms      server time after the client abandoned it
--   retry_after_ms      the wait its answer asked for (Retry-After), 0
--                       when none
--   task_id             the request's task: its trace, or, with the
--                       commented-out task parts made live (package whatif
--                       does so for a --task-key), the attribute $3 of its
--                       anchor span s
--   endpoint            where the attempt went: the authority (host:port)
--                       of its span's url.full or http.url, else
--                       server.address and server.port ('' when unknown)
--   model               its model ('' when unknown)
--   outcome_detail      what ended the request (requests.outcome_detail),
--                       '' when nothing says
SELECT r.request_id,
       coalesce(r.service, '(unset)'), coalesce(r.operation, '(unset)'), coalesce(r.route, '(unset)'),
       r.start_ns, r.end_ns, r.latency_ms, r.outcome = 'ok',
       a.ordinal, coalesce(array_to_string(a.tries, ','), ''),
       a.start_ns, a.end_ns, coalesce(a.route, ''), a.outcome = 'ok', coalesce(a.trigger, ''),
       a.gap_before_ms,
       coalesce(a.input_tokens, 0), coalesce(a.output_tokens, 0),
       a.hidden_work_ms,
       coalesce(a.retry_after_s, 0) * 1000,
       coalesce(/*task: s.task, :task*/ r.trace_id),
       coalesce(sa.endpoint, ''),
       coalesce(a.model, ''),
       coalesce(r.outcome_detail, '')
FROM requests r
JOIN attempts a ON a.request_id = r.request_id
-- The spans are joined by hash(trace_id, span_id), as the rebuild joins
-- them, and bring only what is read of them: joined with their attribute
-- maps, the 10M spans of a day made the join's table larger than DuckDB's
-- 1GB and the query fail for want of memory.
LEFT JOIN (SELECT hash(trace_id, span_id) AS k,
                  coalesce(nullif(regexp_extract(coalesce(attributes['url.full'], attributes['http.url'], ''),
                                                 '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]+)', 1), ''),
                           attributes['server.address'] || coalesce(':' || attributes['server.port'], '')) AS endpoint
           FROM spans) sa ON sa.k = hash(a.trace_id, a.span_id)
/*task: LEFT JOIN (SELECT hash(trace_id, span_id) AS k, attributes[$3] AS task FROM spans) s ON s.k = hash(r.trace_id, r.span_id) :task*/
WHERE r.start_ns BETWEEN $1 AND $2
ORDER BY r.start_ns, r.request_id, a.ordinal
