-- rebuild_spans: the facts about every span that the rebuild needs, one row
-- per span of rebuild_source (all spans, or the traces an incremental
-- rebuild recomputes), into the temporary table rebuild_facts; rebuild_partition
-- reads them back one slice of traces at a time, so memory stays bounded.
-- SERVER spans come only when they are roots or the parent of an
-- attempt-like span (a CLIENT span or a gRPC Attempt span): the callee's
-- SERVER spans under attempts are summarised onto the attempt instead.
--
-- Attribute names follow the OTel semantic conventions (http.*, rpc.*,
-- gen_ai.*, error.type, server.address), gRFC A72, the captured SDK/proxy
-- headers of docs/recognition.md, "How retries are recognised", and
-- retryscope's own retryscope.request.id / retryscope.attempt pair;
-- OpenLLMetry and OpenInference token names and the old HTTP conventions
-- (http.url, http.method, http.status_code) are read as fallbacks. Header
-- captures are JSON string arrays (["1"]); both that and a bare string are
-- accepted.
--
-- Parameters (rebuild.Keys, user keys first, then the defaults): $1 logical
-- id attributes, $2 attempt-number attributes (1 = first), $3 first-token
-- event names, $4 route attributes, $5 model attributes. The first key a
-- span has wins. $6: how many slices the traces are dealt into; the rows
-- are stored in slice order, so reading one slice skips the others' row
-- groups instead of scanning them all (reading every slice stays linear
-- in the spans, at 10M as at 1M), and in each slice by trace, start and
-- span id, the order the rebuild takes them in, so a slice is read
-- without sorting it again.
--
-- Columns:
--   trace_id, span_id, parent_span_id, parent_exported (the parent span is
--   in the table), name, kind, service_name, start_ns, end_ns,
--   status_code, status_message;
--   route ($4: server.address...), method, url, model ($5), gen_ai_operation;
--   http_status, grpc_status, error_type;
--   request_key: a logical id shared by attempts ($1: retryscope.request.id;
--     amz-sdk-invocation-id);
--   retry_index: 0 for a first attempt, n for the n-th retry, from the first
--     counter present; counter_kind: explicit | header | resend | grpc;
--   retry_after_s: a captured Retry-After, in seconds: retry-after-ms
--     first, else Retry-After as seconds or as an HTTP-date (counted from
--     the span's end); NULL when the span captured none;
--   rejected: an evaluator rejected this output (attribute or event);
--   has_response: something came back (a status code, output, an inbound
--     message, an OK status);
--   trigger: the classification of the span's own failure
--     (docs/recognition.md, "How retries are recognised"), NULL when
--     the span itself shows none (the "no response, followed by another
--     attempt" and hedge-loser rules need the neighbours and are applied by
--     the rebuild); a gRPC attempt that failed before its Outbound message
--     is a connection failure, an unexplained failure whose callee SERVER
--     span failed too is a server error; an error code the AWS SDKs retry
--     (throttling: rate_limited; RequestTimeout: timeout) wins over the
--     HTTP 400 it comes with, and a parse, schema, validation or
--     over-length error is a client_error (deterministic) without a 4xx;
--   first_token_ns: the first first-token event ($3: gen_ai.first_token...),
--     else the span's start plus gen_ai.response.time_to_first_chunk;
--   backoff_at_ns, backoff_ms: every retry.backoff event (start of the wait
--     and its length);
--   input_tokens, output_tokens: token usage recorded on the span;
--   request_params: the request parameters a re-send repeats (max tokens,
--     temperature, top_p, stream flag, OpenInference's invocation
--     parameters) as "key=value" entries apart by chr(31), NULL when none
--     is recorded;
--   input_hash: a hash of the captured input (gen_ai.input.messages,
--     gen_ai.prompt, OpenLLMetry's gen_ai.prompt.N.*, OpenInference's
--     llm.input_messages.* or input.value), NULL when none is captured;
--   retry_event_ns: times of the span's events that say an attempt failed
--     or is retried ("exception", any name with "retry" or "fallback" in
--     it: a fallback try re-sends the request elsewhere);
--   server_end_ns, server_model, server_output_tokens: from SERVER children
--     (the callee), which are never attempts themselves;
--   attempt_max: the attempt cap a counter states (amz-sdk-request max=M);
--   server_start_ns: the first start of the SERVER children (see
--     server_end_ns); conn_start_ns, conn_end_ns: the first start and last
--     end of the children that set up a connection (otelhttptrace's
--     http.getconn, http.dns, http.connect, http.tls), for the attempt's
--     phases; without them, a gRPC attempt's wait for its pick (its start
--     to its "Delayed LB pick complete" event, gRPC A72);
--   exhausted_reason: why the span's retry loop gave up, as it states
--     (retryscope.exhausted.reason), when that is one of attempt_cap,
--     deadline, no_progress, token_cap, no_capacity, retry_budget,
--     not_retryable; without one, retry_budget when its failed status says
--     the retry quota or budget ran out, attempt_cap when it says the
--     maximum number of attempts was exceeded; deadline_ms: the
--     deadline it states (retryscope.deadline_ms); length_cut: its answer
--     stopped at the output token cap (gen_ai.response.finish_reasons
--     holds "length"), for the request's outcome detail;
--   stated_queue_ms, server_queue_ms: a queue time the span, or its
--     SERVER children, state (retryscope.queue_ms, ms; vLLM's
--     gen_ai.latency.time_in_queue, s);
--   slice: hash(trace_id) % $6, the slice of traces the span is read in.
CREATE OR REPLACE TEMP TABLE rebuild_facts AS
WITH attempt_parents AS (
    SELECT DISTINCT hash(trace_id, parent_span_id) AS k
    FROM rebuild_source
    WHERE parent_span_id IS NOT NULL AND (kind = 'client' OR (kind = 'internal' AND name LIKE 'Attempt.%'))
),
-- The callee's SERVER spans under attempts are only summarised (srv): the
-- attribute work below is spent on the others alone.
kept AS (
    SELECT s.*
    FROM rebuild_source s
    LEFT JOIN attempt_parents ap ON ap.k = hash(s.trace_id, s.span_id)
    WHERE s.kind <> 'server' OR s.parent_span_id IS NULL OR ap.k IS NOT NULL
),
a AS (
    SELECT
        trace_id, span_id, parent_span_id, name, kind, service_name, start_ns, end_ns, status_code, status_message,
        -- Old HTTP semantic conventions (http.url, http.method,
        -- http.status_code) are still the default of several instrumentations.
        coalesce(list_filter(list_transform($4::VARCHAR[], lambda k: attributes[k]), lambda v: v IS NOT NULL)[1],
                 nullif(regexp_extract(coalesce(attributes['url.full'], attributes['http.url']), '^[A-Za-z][A-Za-z0-9+.-]*://([^/:?#@]+)', 1), '')) AS route,
        coalesce(attributes['http.request.method'], attributes['http.method']) AS method,
        coalesce(attributes['url.full'], attributes['http.url']) AS url,
        list_filter(list_transform($5::VARCHAR[], lambda k: attributes[k]), lambda v: v IS NOT NULL)[1] AS model,
        attributes['gen_ai.operation.name'] AS gen_ai_operation,
        TRY_CAST(coalesce(attributes['http.response.status_code'], attributes['http.status_code']) AS BIGINT) AS http_status,
        TRY_CAST(attributes['rpc.grpc.status_code'] AS BIGINT) AS grpc_status,
        attributes['error.type'] AS error_type,
        attributes['aws.error'] AS aws_error,
        list_filter(list_transform($1::VARCHAR[], lambda k: attributes[k]), lambda v: v IS NOT NULL)[1] AS explicit_id,
        TRY_CAST(list_filter(list_transform($2::VARCHAR[], lambda k: attributes[k]), lambda v: v IS NOT NULL)[1] AS BIGINT) AS explicit_attempt,
        TRY_CAST(attributes['http.request.resend_count'] AS BIGINT) AS resend_count,
        TRY_CAST(attributes['retry.count'] AS BIGINT) AS envoy_retry_count,
        TRY_CAST(attributes['previous-rpc-attempts'] AS BIGINT) AS previous_rpc_attempts,
        -- A captured header: the first element of a JSON array, or the text itself.
        CASE WHEN attributes['http.request.header.x-stainless-retry-count'] LIKE '[%'
             THEN TRY(json_extract_string(attributes['http.request.header.x-stainless-retry-count'], '$[0]'))
             ELSE attributes['http.request.header.x-stainless-retry-count'] END AS stainless,
        CASE WHEN attributes['http.request.header.x-envoy-attempt-count'] LIKE '[%'
             THEN TRY(json_extract_string(attributes['http.request.header.x-envoy-attempt-count'], '$[0]'))
             ELSE attributes['http.request.header.x-envoy-attempt-count'] END AS envoy,
        CASE WHEN attributes['http.request.header.amz-sdk-invocation-id'] LIKE '[%'
             THEN TRY(json_extract_string(attributes['http.request.header.amz-sdk-invocation-id'], '$[0]'))
             ELSE attributes['http.request.header.amz-sdk-invocation-id'] END AS amz_id,
        CASE WHEN attributes['http.request.header.amz-sdk-request'] LIKE '[%'
             THEN TRY(json_extract_string(attributes['http.request.header.amz-sdk-request'], '$[0]'))
             ELSE attributes['http.request.header.amz-sdk-request'] END AS amz_request,
        CASE WHEN attributes['http.response.header.retry-after'] LIKE '[%'
             THEN TRY(json_extract_string(attributes['http.response.header.retry-after'], '$[0]'))
             ELSE attributes['http.response.header.retry-after'] END AS retry_after,
        -- OpenAI's and Anthropic's retry-after-ms, which their SDKs prefer.
        CASE WHEN attributes['http.response.header.retry-after-ms'] LIKE '[%'
             THEN TRY(json_extract_string(attributes['http.response.header.retry-after-ms'], '$[0]'))
             ELSE attributes['http.response.header.retry-after-ms'] END AS retry_after_ms,
        -- The GenAI conventions' time to the first chunk of a stream (s),
        -- for instrumentations that record no first-token event.
        TRY_CAST(attributes['gen_ai.response.time_to_first_chunk'] AS DOUBLE) AS first_chunk_s,
        -- A queue time the span states: retryscope's own (ms), or vLLM's
        -- gen_ai.latency.time_in_queue (s).
        coalesce(TRY_CAST(attributes['retryscope.queue_ms'] AS DOUBLE),
                 TRY_CAST(attributes['gen_ai.latency.time_in_queue'] AS DOUBLE) * 1000) AS stated_queue_ms,
        coalesce(
            TRY_CAST(attributes['gen_ai.usage.input_tokens'] AS BIGINT),
            TRY_CAST(attributes['gen_ai.usage.prompt_tokens'] AS BIGINT),
            TRY_CAST(attributes['llm.token_count.prompt'] AS BIGINT)) AS input_tokens,
        coalesce(
            TRY_CAST(attributes['gen_ai.usage.output_tokens'] AS BIGINT),
            TRY_CAST(attributes['gen_ai.usage.completion_tokens'] AS BIGINT),
            TRY_CAST(attributes['llm.token_count.completion'] AS BIGINT)) AS output_tokens,
        attributes['gen_ai.response.model'] IS NOT NULL AS has_response_model,
        -- Entries apart by the unit separator (chr(31)): a value such as
        -- OpenInference's invocation JSON may hold ';' or '='.
        nullif(concat_ws(chr(31),
            'max_tokens=' || coalesce(attributes['gen_ai.request.max_tokens'], attributes['llm.request.max_tokens']),
            'temperature=' || coalesce(attributes['gen_ai.request.temperature'], attributes['llm.request.temperature']),
            'top_p=' || coalesce(attributes['gen_ai.request.top_p'], attributes['llm.request.top_p']),
            'stream=' || coalesce(attributes['gen_ai.request.stream'], attributes['llm.is_streaming']),
            'invocation=' || attributes['llm.invocation_parameters']), '') AS request_params,
        coalesce(attributes['gen_ai.input.messages'], attributes['gen_ai.prompt'], attributes['input.value']) AS input_text,
        -- The flattened prompt is looked for only on LLM calls (they name a
        -- model) that captured no whole input: scanning every span's
        -- attributes would cost the rebuild on every HTTP attempt.
        CASE WHEN kind = 'client' AND input_text IS NULL AND model IS NOT NULL
             THEN [x.key || '=' || x.value FOR x IN map_entries(attributes)
                   IF starts_with(x.key, 'gen_ai.prompt.') OR starts_with(x.key, 'llm.input_messages.')] END AS input_parts,
        coalesce(attributes['retryscope.rejected_output'] = 'true', false) AS rejected_attr,
        -- A retry loop that gave up because its retry quota or budget was
        -- empty, or at its attempt cap, may say so in its error (the AWS SDK
        -- for Go v2: "retry quota exceeded", "exceeded maximum number of
        -- attempts"), when it states no reason itself.
        CASE WHEN attributes['retryscope.exhausted.reason'] IN ('attempt_cap', 'deadline', 'no_progress', 'token_cap', 'no_capacity',
                                                                 'retry_budget', 'not_retryable')
             THEN attributes['retryscope.exhausted.reason']
             WHEN status_code = 'error' AND regexp_matches(status_message, '(?i)retry quota exceeded|RetryQuotaExceeded|retry budget (exhausted|exceeded)')
             THEN 'retry_budget'
             WHEN status_code = 'error' AND status_message ILIKE '%exceeded maximum number of attempts%'
             THEN 'attempt_cap' END AS exhausted_reason,
        TRY_CAST(attributes['retryscope.deadline_ms'] AS DOUBLE) AS deadline_ms,
        coalesce(attributes['gen_ai.response.finish_reasons'] ILIKE '%length%', false) AS length_cut,
        CASE WHEN len(events) > 0 THEN events END AS events
    FROM kept
),
e AS (
    SELECT
        a.* EXCLUDE (events, input_text, input_parts),
        -- An exception event alone is a handled exception (OTel records
        -- them on spans that go on to succeed): it explains a failure, it
        -- does not make one.
        CASE WHEN status_code = 'error' OR error_type IS NOT NULL
             THEN [x.attributes['exception.type'] FOR x IN events IF x.name = 'exception'][1] END AS exception_type,
        CASE WHEN status_code = 'error' OR error_type IS NOT NULL
             THEN [x.attributes['exception.message'] FOR x IN events IF x.name = 'exception'][1] END AS exception_message,
        -- Shifted to fit a signed BIGINT.
        CASE WHEN input_text IS NOT NULL THEN (hash(input_text) >> 1)::BIGINT
             WHEN len(input_parts) > 0 THEN (hash(list_sort(input_parts)) >> 1)::BIGINT END AS input_hash,
        rejected_attr OR coalesce(list_bool_or([x.name = 'evaluation.rejected' FOR x IN events]), false) AS rejected,
        coalesce(list_bool_or([x.name = 'Inbound message' FOR x IN events]), false) AS inbound,
        coalesce(list_bool_or([x.name = 'Outbound message' FOR x IN events]), false) AS outbound,
        coalesce(list_min([x.time_ns FOR x IN events IF list_contains($3::VARCHAR[], x.name)]),
                 CASE WHEN first_chunk_s >= 0 THEN start_ns + round(first_chunk_s * 1e9)::BIGINT END) AS first_token_ns,
        nullif([x.time_ns FOR x IN events IF x.name = 'retry.backoff'], []) AS backoff_at_ns,
        nullif([TRY_CAST(x.attributes['retry.backoff_ms'] AS DOUBLE) FOR x IN events IF x.name = 'retry.backoff'], []) AS backoff_ms,
        nullif([x.time_ns FOR x IN events IF x.name = 'exception' OR x.name ILIKE '%retry%' OR x.name ILIKE '%fallback%'], []) AS retry_event_ns,
        -- gRPC's attempt span (A72) marks when a pick it had to wait for
        -- completed: the wait is the client's, before anything was sent.
        list_min([x.time_ns FOR x IN events IF x.name = 'Delayed LB pick complete' AND x.time_ns BETWEEN start_ns AND end_ns]) AS lb_pick_ns
    FROM a
),
-- The error code a failure names, where it names one, and whether it
-- names a failure no retry fixes. AWS services answer throttling with
-- HTTP 400 (or 503) and a code the SDKs retry after a backoff: the codes
-- are the SDKs' own lists of throttling and transient errors
-- (aws-sdk-go-v2 aws/retry, aws-sdk-js-v3 service-error-classification,
-- botocore's standard retry mode). A code counts where the span's error
-- shows it: error.type, the exception event's type or message, aws.error
-- (the JS SDK instrumentation's), or the status message of a failed span.
-- A parse, schema, validation or over-length error is deterministic,
-- with or without an HTTP status.
coded AS (
    SELECT e.*,
        CASE WHEN regexp_matches(concat_ws(' ', e.error_type, e.exception_type, e.exception_message, e.aws_error,
                                           CASE WHEN e.status_code = 'error' THEN e.status_message END),
                                 '\b(Throttling|ThrottlingException|ThrottledException|RequestThrottledException|TooManyRequestsException|ProvisionedThroughputExceededException|TransactionInProgressException|RequestLimitExceeded|BandwidthLimitExceeded|LimitExceededException|RequestThrottled|SlowDown|PriorRequestNotComplete|EC2ThrottledException)\b')
             THEN 'rate_limited'
             WHEN regexp_matches(concat_ws(' ', e.error_type, e.exception_type, e.exception_message, e.aws_error,
                                           CASE WHEN e.status_code = 'error' THEN e.status_message END),
                                 '\b(RequestTimeout|RequestTimeoutException)\b')
             THEN 'timeout'
             WHEN regexp_matches(concat_ws(' ', e.error_type, e.exception_type, e.aws_error,
                                           CASE WHEN e.status_code = 'error' THEN e.status_message END),
                                 '(?i)pars(e|er|ing)\b|parseerror|parserexception|jsondecode|decodeerror|schema|validation|context_length|context.window|too long|too large|toolong|toolarge|maximum context length|exceeds the maximum')
             THEN 'deterministic'
        END AS error_class
    FROM e
),
-- Joins between spans go by hash(trace_id, span_id): 8 bytes a key instead
-- of 48 characters, so the hash tables stay small; a collision among the
-- spans of one database is vanishingly unlikely (64-bit hashes).
srv AS (
    SELECT hash(trace_id, parent_span_id) AS k, min(start_ns) AS server_start_ns, max(end_ns) AS server_end_ns,
           min(list_filter(list_transform($5::VARCHAR[], lambda k: attributes[k]), lambda v: v IS NOT NULL)[1]) AS server_model,
           sum(TRY_CAST(attributes['gen_ai.usage.output_tokens'] AS BIGINT)) AS server_output_tokens,
           bool_or(status_code = 'error') AS server_failed,
           max(coalesce(TRY_CAST(attributes['retryscope.queue_ms'] AS DOUBLE),
                        TRY_CAST(attributes['gen_ai.latency.time_in_queue'] AS DOUBLE) * 1000)) AS server_queue_ms
    FROM rebuild_source
    WHERE kind = 'server' AND parent_span_id IS NOT NULL
    GROUP BY ALL
),
-- otelhttptrace's spans of a connection's setup, summarised onto their
-- parent (the attempt).
conn AS (
    SELECT hash(trace_id, parent_span_id) AS k, min(start_ns) AS conn_start_ns, max(end_ns) AS conn_end_ns
    FROM rebuild_source
    WHERE name IN ('http.getconn', 'http.dns', 'http.connect', 'http.tls') AND parent_span_id IS NOT NULL
    GROUP BY ALL
)
SELECT
    e.trace_id, e.span_id, e.parent_span_id, p.k IS NOT NULL AS parent_exported,
    e.name, e.kind, e.service_name, e.start_ns, e.end_ns, e.status_code, e.status_message,
    e.route, e.method, e.url, e.model, e.gen_ai_operation,
    e.http_status, e.grpc_status, e.error_type,
    coalesce(e.explicit_id, e.amz_id) AS request_key,
    coalesce(
        e.explicit_attempt - 1,
        TRY_CAST(e.stainless AS BIGINT),
        TRY_CAST(e.envoy AS BIGINT) - 1,
        TRY_CAST(regexp_extract(e.amz_request, 'attempt=(\d+)', 1) AS BIGINT) - 1,
        e.resend_count,
        e.envoy_retry_count,
        e.previous_rpc_attempts) AS retry_index,
    CASE
        WHEN e.explicit_attempt IS NOT NULL OR e.explicit_id IS NOT NULL THEN 'explicit'
        WHEN e.stainless IS NOT NULL OR e.envoy IS NOT NULL OR e.amz_id IS NOT NULL OR e.amz_request IS NOT NULL THEN 'header'
        WHEN e.resend_count IS NOT NULL OR e.envoy_retry_count IS NOT NULL THEN 'resend'
        WHEN e.previous_rpc_attempts IS NOT NULL THEN 'grpc'
    END AS counter_kind,
    coalesce(TRY_CAST(e.retry_after_ms AS DOUBLE) / 1000, TRY_CAST(e.retry_after AS DOUBLE),
             -- An HTTP-date: the wait from the response (the span's end),
             -- none before it; NULL without one (greatest skips a NULL).
             CASE WHEN TRY(strptime(e.retry_after, '%a, %d %b %Y %H:%M:%S GMT')) IS NOT NULL THEN
                 greatest(0, (epoch_ns(TRY(strptime(e.retry_after, '%a, %d %b %Y %H:%M:%S GMT'))) - e.end_ns) / 1e9) END) AS retry_after_s,
    e.rejected,
    e.http_status IS NOT NULL OR e.grpc_status IS NOT NULL OR e.output_tokens IS NOT NULL
        OR e.has_response_model OR e.status_code = 'ok' OR e.inbound AS has_response,
    CASE
        WHEN e.rejected THEN 'rejected_output'
        WHEN e.error_type = 'cancelled' OR e.grpc_status = 1
            OR (e.status_code = 'error' AND (lower(e.status_message) IN ('cancelled', 'canceled')
                OR e.status_message ILIKE '%code = Canceled%' OR e.status_message ILIKE 'CANCELLED:%')) THEN 'cancelled'
        WHEN e.http_status = 429 OR e.grpc_status = 8 OR e.error_type = '429' OR e.error_class = 'rate_limited'
            OR e.error_type ILIKE '%RateLimit%' OR e.error_type ILIKE '%Throttl%'
            OR (e.status_code = 'error' AND (e.status_message ILIKE '%ResourceExhausted%' OR e.status_message ILIKE 'RESOURCE_EXHAUSTED%')) THEN 'rate_limited'
        WHEN e.http_status = 408 OR e.grpc_status = 4 OR e.error_type = '408' OR e.error_class = 'timeout'
            OR e.error_type ILIKE '%timeout%' OR e.exception_type ILIKE '%timeout%'
            OR (e.status_code = 'error' AND (e.status_message ILIKE '%timed out%' OR e.status_message ILIKE '%timeout%'
                OR e.status_message ILIKE '%DeadlineExceeded%' OR e.status_message ILIKE '%deadline exceeded%')) THEN 'timeout'
        WHEN e.error_type ILIKE '%connect%' OR e.error_type ILIKE '%socket%' OR e.error_type ILIKE '%RemoteProtocolError%'
            OR e.error_type ILIKE 'UND_ERR%' OR e.error_type ILIKE 'ECONN%' OR e.error_type ILIKE '%reset%'
            OR e.exception_type ILIKE '%connect%' OR e.exception_type ILIKE '%socket%'
            OR (e.status_code = 'error' AND (e.status_message ILIKE '%connection%' OR e.status_message ILIKE '%transport is closing%'
                OR e.status_message ILIKE '%io exception%'))
            -- A gRPC attempt that failed before its message went out: the
            -- channel failed, the server never saw it.
            OR (e.name LIKE 'Attempt.%' AND NOT e.outbound AND (e.status_code = 'error' OR e.grpc_status <> 0)) THEN 'connection'
        WHEN e.http_status >= 500 OR e.grpc_status IN (2, 10, 13, 14, 15) OR regexp_full_match(coalesce(e.error_type, ''), '5\d\d')
            OR e.error_type ILIKE '%InternalServer%' OR e.error_type ILIKE '%ServiceUnavailable%' OR e.error_type ILIKE '%Overloaded%'
            OR (e.status_code = 'error' AND (e.status_message ILIKE '%code = Unavailable%' OR e.status_message ILIKE 'UNAVAILABLE%'
                OR e.status_message ILIKE '%code = Internal%')) THEN 'server_error'
        WHEN e.http_status >= 400 OR e.grpc_status IN (3, 5, 6, 7, 9, 11, 12, 16) OR regexp_full_match(coalesce(e.error_type, ''), '4\d\d')
            OR e.error_type ILIKE '%BadRequest%' OR e.error_type ILIKE '%Authentication%' OR e.error_type ILIKE '%NotFound%'
            OR e.error_type ILIKE '%PermissionDenied%' OR e.error_type ILIKE '%Unprocessable%'
            OR (e.error_class = 'deterministic' AND (e.status_code = 'error' OR e.error_type IS NOT NULL)) THEN 'client_error'
        -- Failed with nothing more specific, but the callee's SERVER span
        -- failed too: the server answered with an error.
        WHEN (e.status_code = 'error' OR e.error_type IS NOT NULL OR e.grpc_status <> 0) AND srv.server_failed THEN 'server_error'
        WHEN e.status_code = 'error' OR e.error_type IS NOT NULL OR e.grpc_status <> 0 THEN 'unknown'
    END AS trigger,
    e.first_token_ns, e.backoff_at_ns, e.backoff_ms,
    e.input_tokens, e.output_tokens, e.request_params, e.input_hash, e.retry_event_ns,
    srv.server_end_ns, srv.server_model, srv.server_output_tokens,
    TRY_CAST(regexp_extract(e.amz_request, 'max=(\d+)', 1) AS BIGINT) AS attempt_max,
    srv.server_start_ns,
    CASE WHEN conn.k IS NOT NULL THEN conn.conn_start_ns WHEN e.lb_pick_ns IS NOT NULL THEN e.start_ns END AS conn_start_ns,
    CASE WHEN conn.k IS NOT NULL THEN conn.conn_end_ns ELSE e.lb_pick_ns END AS conn_end_ns,
    e.exhausted_reason, e.deadline_ms, e.length_cut,
    e.stated_queue_ms, srv.server_queue_ms,
    hash(e.trace_id) % $6::UBIGINT AS slice
FROM coded e
LEFT JOIN (SELECT hash(trace_id, span_id) AS k FROM rebuild_source) p ON p.k = hash(e.trace_id, e.parent_span_id)
LEFT JOIN srv ON srv.k = hash(e.trace_id, e.span_id)
LEFT JOIN conn ON conn.k = hash(e.trace_id, e.span_id)
ORDER BY slice, e.trace_id, e.start_ns, e.span_id;
