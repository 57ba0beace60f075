-- 002_ingest: the tables ingest writes (the layout of the last release
-- before schema versions, 18b8751, which store.Open checks an unversioned
-- database against).
--
-- spans: one row per (trace_id, span_id), whichever file it came in first.
--   ids are lowercase hex; times are Unix nanoseconds (BIGINT); kind is
--   unspecified|internal|server|client|producer|consumer; status_code is
--   unset|ok|error. attributes and resource_attributes map every key to its
--   value as text (ints in decimal, arrays and maps as JSON), so
--   attributes['http.response.status_code'] reads a value.
-- ingest_files: the ledger, one row per file content (sha256) taken in.
-- ingest_errors: every record or span that was skipped, with where and why.
CREATE TABLE ingest_files (
    file_id      BIGINT PRIMARY KEY,
    path         VARCHAR NOT NULL,
    sha256       VARCHAR NOT NULL UNIQUE,
    size_bytes   BIGINT,
    format       VARCHAR,
    compression  VARCHAR,
    records      BIGINT,
    spans_read   BIGINT,
    spans_new    BIGINT,
    rejected     BIGINT,
    ingested_at  TIMESTAMPTZ,
    seconds      DOUBLE
);

CREATE TABLE ingest_errors (
    file_id      BIGINT,
    path         VARCHAR NOT NULL,
    "offset"     BIGINT,
    reason       VARCHAR NOT NULL,
    detail       VARCHAR,
    trace_id     VARCHAR,
    span_id      VARCHAR,
    recorded_at  TIMESTAMPTZ
);

CREATE TABLE spans (
    trace_id            VARCHAR NOT NULL,
    span_id             VARCHAR NOT NULL,
    parent_span_id      VARCHAR,
    trace_state         VARCHAR,
    name                VARCHAR,
    kind                VARCHAR,
    start_ns            BIGINT NOT NULL,
    end_ns              BIGINT NOT NULL,
    duration_ns         BIGINT NOT NULL,
    status_code         VARCHAR,
    status_message      VARCHAR,
    service_name        VARCHAR,
    scope_name          VARCHAR,
    scope_version       VARCHAR,
    attributes          MAP(VARCHAR, VARCHAR),
    resource_attributes MAP(VARCHAR, VARCHAR),
    events              STRUCT(name VARCHAR, time_ns BIGINT, attributes MAP(VARCHAR, VARCHAR))[],
    links               STRUCT(trace_id VARCHAR, span_id VARCHAR, attributes MAP(VARCHAR, VARCHAR))[],
    file_id             BIGINT NOT NULL
);
