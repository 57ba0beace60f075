-- 005_resources: a resource's attribute map is stored once, not on every
-- span of it (a real SDK puts 8-20 attributes on a resource, shared by
-- some 40-60 spans).
--
-- resources: one row per distinct resource attribute map.
--   resource_id  a content hash of the map: its entries sorted by key, each
--                written as <bytes of key>:<key><bytes of value>:<value>,
--                concatenated; the first 8 bytes of that text's MD5, big
--                endian, shifted right by one (so it is never negative).
--                Ingest computes the same in Go (store.SpanBatch.AddResource),
--                so the same resource gets the same id in every database
--                and every run.
--   attributes   MAP(VARCHAR, VARCHAR), as spans.attributes: every value
--                as text.
-- spans.resource_id  the span's resource (resources.resource_id); the
--                column resource_attributes is gone: read a resource
--                attribute by joining resources on resource_id.
--
-- A database of an earlier version keeps its spans: each distinct map
-- becomes a resource (of two maps alike but for the order of their
-- entries, the one first in text order is kept), and every span gets its
-- id.
CREATE TABLE resources (
    resource_id BIGINT NOT NULL,
    attributes  MAP(VARCHAR, VARCHAR)
);

CREATE TEMP TABLE migrate_resources AS
SELECT m, (('0x' || left(md5(array_to_string(list_transform(list_sort(map_entries(m)),
           lambda e: strlen(e.key) || ':' || e.key || strlen(coalesce(e.value, '')) || ':' || coalesce(e.value, '')), '')), 16))::UBIGINT >> 1)::BIGINT AS resource_id
FROM (SELECT DISTINCT resource_attributes AS m FROM spans WHERE resource_attributes IS NOT NULL);

INSERT INTO resources
SELECT resource_id, arg_min(m, m::VARCHAR) FROM migrate_resources GROUP BY resource_id ORDER BY resource_id;

-- spans is written again rather than altered (DuckDB refuses to commit a
-- column added, filled and another dropped in one transaction), in the
-- order of its rows.
CREATE TABLE spans_005 (
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
    events              STRUCT(name VARCHAR, time_ns BIGINT, attributes MAP(VARCHAR, VARCHAR))[],
    links               STRUCT(trace_id VARCHAR, span_id VARCHAR, attributes MAP(VARCHAR, VARCHAR))[],
    file_id             BIGINT NOT NULL,
    resource_id         BIGINT
);

INSERT INTO spans_005
SELECT s.trace_id, s.span_id, s.parent_span_id, s.trace_state, s.name, s.kind, s.start_ns, s.end_ns,
       s.duration_ns, s.status_code, s.status_message, s.service_name, s.scope_name, s.scope_version,
       s.attributes, s.events, s.links, s.file_id, r.resource_id
FROM spans s LEFT JOIN migrate_resources r ON r.m = s.resource_attributes
ORDER BY s.rowid;

DROP TABLE spans;
ALTER TABLE spans_005 RENAME TO spans;
DROP TABLE migrate_resources;
