-- 003_derived: the tables derived from spans and the bookkeeping that keeps
-- them up to date. Each is created empty here; the rebuild, the baselines
-- and the nightly run fill and empty them, and never create tables.

-- attempts: one row per physical attempt, at the lowest layer (transport
--   CLIENT spans, gRPC Attempt spans); SERVER spans are never attempts.
--   request_id      the logical request ("<trace_id>:<span_id>" of its anchor)
--   trace_id, span_id  the attempt span
--   ordinal         1-based, in start order within the request
--   tries           try number per retry layer, outermost first
--   service, name, route (server.address), model, operation
--   start_ns, end_ns (Unix ns), elapsed_ms
--   outcome         ok | error
--   trigger         trigger when the attempt failed, else NULL (see
--                   docs/recognition.md, "How retries are recognised")
--   is_final        the attempt whose answer was used, or the last to fail
--   http_status, grpc_status, error_type, retry_after_s
--   input_tokens, output_tokens  usage of this attempt (an SDK span's usage
--                   belongs to its last attempt); NULL when not recorded
--   ttft_ms         attempt start to its first token; NULL without one
--   gap_before_ms   start minus the latest end of earlier attempts of the
--                   request (negative: it overlapped them); NULL for the first
--   overlap_ms      time it ran while an earlier attempt was still running
--   server_end_ns   end of the callee's SERVER span, when exported
--   hidden_work_ms  server time after the client abandoned the attempt
--   hidden_output_tokens  output the server generated beyond what the client
--                   received, for an abandoned attempt (LLM callees)
--
-- requests: one row per logical request.
--   request_id, trace_id, span_id  the anchor: the outermost exported span
--                   that stands for the request, or its first attempt
--   linkage         the rule that built it: grpc, orphan, split_inferred,
--                   wrapped, explicit, header, resend, parent, single
--   inferred        joined on circumstantial evidence (across traces)
--   service, operation (the anchor's name), route, final_route, model,
--   final_model, stream
--   start_ns, end_ns, latency_ms  the anchor span, or first attempt start to
--                   final attempt end when there is no logical span
--   attempts, layers (multipliers per layer, outermost first; their product
--                   is attempts), layer_counts (tries per layer)
--   outcome, final_trigger (when it failed), triggers (one per failed
--                   attempt, in start order)
--   t_failed_ms     time before the final attempt covered by other attempts
--   backoff_ms      intentional waits no attempt covers: retry.backoff events,
--                   or, without any, the captured Retry-After of every
--                   response before a retry, when each retry waited it out
--   overhead_ms     the rest of the time outside the final attempt
--   gap_ms          backoff_ms + overhead_ms (always known)
--   gap_split       telemetry separates backoff from overhead; when false,
--                   backoff_ms and overhead_ms are NULL and gap_ms is whole
--   t_final_ms      the final attempt's whole span
--   residual_ms     latency_ms - (t_failed_ms + gap_ms + t_final_ms); ~0
--   ttft_ms         start to the first token of the answer used (streams)
--   generation_ms   that first token to the end of the final attempt
--   input_tokens, output_tokens, duplicated_output_tokens (output of every
--                   attempt but the final one), hidden_work_ms,
--                   hidden_output_tokens
--   attached_to     orphans: the trace root span they were attached to
CREATE TABLE attempts (
    request_id     VARCHAR NOT NULL,
    trace_id       VARCHAR NOT NULL,
    span_id        VARCHAR NOT NULL,
    ordinal        INTEGER NOT NULL,
    tries          INTEGER[],
    service        VARCHAR,
    name           VARCHAR,
    route          VARCHAR,
    model          VARCHAR,
    operation      VARCHAR,
    start_ns       BIGINT NOT NULL,
    end_ns         BIGINT NOT NULL,
    elapsed_ms     DOUBLE NOT NULL,
    outcome        VARCHAR NOT NULL,
    trigger        VARCHAR,
    is_final       BOOLEAN NOT NULL,
    http_status    BIGINT,
    grpc_status    BIGINT,
    error_type     VARCHAR,
    retry_after_s  DOUBLE,
    input_tokens   BIGINT,
    output_tokens  BIGINT,
    ttft_ms        DOUBLE,
    gap_before_ms  DOUBLE,
    overlap_ms     DOUBLE NOT NULL,
    server_end_ns  BIGINT,
    hidden_work_ms DOUBLE NOT NULL,
    hidden_output_tokens BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE requests (
    request_id     VARCHAR NOT NULL,
    trace_id       VARCHAR NOT NULL,
    span_id        VARCHAR NOT NULL,
    linkage        VARCHAR NOT NULL,
    inferred       BOOLEAN NOT NULL,
    service        VARCHAR,
    operation      VARCHAR,
    route          VARCHAR,
    final_route    VARCHAR,
    model          VARCHAR,
    final_model    VARCHAR,
    stream         BOOLEAN NOT NULL,
    start_ns       BIGINT NOT NULL,
    end_ns         BIGINT NOT NULL,
    latency_ms     DOUBLE NOT NULL,
    attempts       INTEGER NOT NULL,
    layers         DOUBLE[],
    layer_counts   INTEGER[],
    outcome        VARCHAR NOT NULL,
    final_trigger  VARCHAR,
    triggers       VARCHAR[],
    t_failed_ms    DOUBLE NOT NULL,
    backoff_ms     DOUBLE,
    overhead_ms    DOUBLE,
    gap_ms         DOUBLE NOT NULL,
    gap_split      BOOLEAN NOT NULL,
    t_final_ms     DOUBLE NOT NULL,
    residual_ms    DOUBLE NOT NULL,
    ttft_ms        DOUBLE,
    generation_ms  DOUBLE,
    input_tokens   BIGINT NOT NULL,
    output_tokens  BIGINT NOT NULL,
    duplicated_output_tokens BIGINT NOT NULL,
    hidden_work_ms DOUBLE NOT NULL,
    hidden_output_tokens BIGINT NOT NULL DEFAULT 0,
    attached_to    VARCHAR
);

-- join_alternatives: for attempts joined across traces by inference (linkage
--   split_inferred), each doubtful decision the rebuild took and what the
--   request counts would be had it gone the other way: d_requests,
--   d_retried, d_retried_ok, d_failed (changes in logical requests, retried
--   requests, retried requests that succeeded, failed requests). request_id
--   and start_ns name the request that holds the decision. A report bounds
--   each figure by adding up the alternatives that lower it and those that
--   raise it.
CREATE TABLE join_alternatives (
    request_id   VARCHAR NOT NULL,
    start_ns     BIGINT NOT NULL,
    d_requests   INTEGER NOT NULL,
    d_retried    INTEGER NOT NULL,
    d_retried_ok INTEGER NOT NULL,
    d_failed     INTEGER NOT NULL
);

-- rebuild_state: what the rebuilt tables were built from (span and file
-- counts, the highest file_id, the rebuild's options), so a report knows
-- when they are stale and an update knows which spans are new.
-- Empty until a rebuild finishes.
CREATE TABLE rebuild_state (
    spans       BIGINT NOT NULL,
    files       BIGINT NOT NULL,
    max_file_id BIGINT NOT NULL,
    options     VARCHAR NOT NULL,
    requests    BIGINT NOT NULL,
    attempts    BIGINT NOT NULL,
    rebuilt_at  TIMESTAMPTZ NOT NULL
);

-- rebuild_pending: traces to build again at the next update although no
-- new file touched them (what retention left of a request it cut); a full
-- rebuild empties it. baseline_pending: spans of request starts whose
-- baselines the next baseline update recomputes.
CREATE TABLE rebuild_pending (trace_id VARCHAR NOT NULL);
CREATE TABLE baseline_pending (since_ns BIGINT NOT NULL, until_ns BIGINT NOT NULL);

-- parent_cycles: the parent links the rebuild cut because they formed a
-- loop (A's parent B, B's parent C, C's parent A). In each loop the span
-- that starts first (then the smallest span_id) is taken as a root, so
-- every span of the loop lands in the requests like any other trace.
--   trace_id, span_id    the span taken as a root
--   parent_span_id       the parent it named, ignored
CREATE TABLE parent_cycles (trace_id VARCHAR NOT NULL, span_id VARCHAR NOT NULL, parent_span_id VARCHAR NOT NULL);

-- baselines: one row per retried logical request (attempts > 1) and baseline
--   kind (docs/recognition.md, "Baselines"), also when no baseline could be
--   found for it.
--   request_id      the logical request (requests.request_id)
--   kind            no_retry | healthy | alternate_route | matched | experiment
--   latency_ms      L_retry: the request's client-observed latency
--   l0_ms           L0 under this kind; NULL when there is none (see reason)
--   added_ms        latency_ms - l0_ms
--   ratio           latency_ms / l0_ms
--   provenance      measured | experiment | modeled: how L0 was obtained
--   method          how L0 was computed, in words, with the options used
--   cohort_size     comparison requests L0 was taken from (NULL: no_retry and
--                   the measured alternate_route, which use the request itself)
--   match_distance  matched: mean covariate distance of the matches used
--   reason          why l0_ms is NULL, else NULL
--
-- baseline_arms: the policy-experiment arm of every logical request whose
--   anchor span carries the arm attribute.
--   request_id, arm  the attribute's value, e.g. no_retry or retry
--   control          arm is the control arm (no retries)
CREATE TABLE baselines (
    request_id     VARCHAR NOT NULL,
    kind           VARCHAR NOT NULL,
    latency_ms     DOUBLE NOT NULL,
    l0_ms          DOUBLE,
    added_ms       DOUBLE,
    ratio          DOUBLE,
    provenance     VARCHAR NOT NULL,
    method         VARCHAR NOT NULL,
    cohort_size    INTEGER,
    match_distance DOUBLE,
    reason         VARCHAR
);

CREATE TABLE baseline_arms (
    request_id VARCHAR NOT NULL,
    arm        VARCHAR NOT NULL,
    control    BOOLEAN NOT NULL
);

-- baseline_state: one row once baselines are computed: the rebuilt_at of
-- the rebuild of requests they reflect (NULL when computed from requests
-- no rebuild wrote). Empty: baselines never computed.
CREATE TABLE baseline_state (rebuilt_at TIMESTAMPTZ);

-- run_window: the window of request starts the last nightly run's report
-- covered (Unix ns, until exclusive; 0 leaves a side open), at most one row.
CREATE TABLE run_window (since_ns BIGINT NOT NULL, until_ns BIGINT NOT NULL);

-- parquet_pending: the UTC days (YYYY-MM-DD, or '*' for every day) whose
-- Parquet files the next export writes again.
CREATE TABLE parquet_pending (day VARCHAR NOT NULL);
