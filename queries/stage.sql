-- stage: the per-connection temporary table a file's spans are appended to
-- before they are merged into spans. Columns follow model.Span; maps, events
-- and links are still JSON text here; offset is where in
-- its file the span's record starts.
CREATE OR REPLACE TEMP TABLE stage_spans (
    seq             BIGINT,
    trace_id        VARCHAR,
    span_id         VARCHAR,
    parent_span_id  VARCHAR,
    trace_state     VARCHAR,
    name            VARCHAR,
    kind            VARCHAR,
    start_ns        BIGINT,
    end_ns          BIGINT,
    status_code     VARCHAR,
    status_message  VARCHAR,
    service_name    VARCHAR,
    scope_name      VARCHAR,
    scope_version   VARCHAR,
    attributes      VARCHAR,
    resource        VARCHAR,
    events          VARCHAR,
    links           VARCHAR,
    "offset"        BIGINT
);
