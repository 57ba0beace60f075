-- stage: the per-connection temporary table a file's spans are staged in
-- when they must be merged with care (see merge_conflicts and
-- merge_stage). Columns follow the staged-spans function that fills it
-- (internal/store/load.go): empty texts are still '' here; seq numbers the
-- spans in file order; offset is where in its file the span's record
-- starts; file_id is the file's (a load of several small files carries
-- each span's own, see load_spans); resource_id is the span's resource,
-- whose attributes the staged-resources function yields (load_resources).
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
    attributes      MAP(VARCHAR, VARCHAR),
    resource_id     BIGINT,
    events          STRUCT(name VARCHAR, time_ns BIGINT, attributes MAP(VARCHAR, VARCHAR))[],
    links           STRUCT(trace_id VARCHAR, span_id VARCHAR, attributes MAP(VARCHAR, VARCHAR))[],
    "offset"        BIGINT,
    file_id         BIGINT
);
