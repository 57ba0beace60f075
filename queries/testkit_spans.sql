-- testkit_spans: the spans, for a test to compare, with the columns that
-- depend only on the input, not on which file or run brought a span in
-- (testkit.SpansColumns lists the same), in a stable order. No
-- parameters. A row per span.
-- The resource's attributes are those of the span's row of resources.
SELECT s.trace_id, s.span_id, s.parent_span_id, s.trace_state, s.name, s.kind, s.start_ns, s.end_ns,
       s.duration_ns, s.status_code, s.status_message, s.service_name, s.scope_name, s.scope_version,
       s.attributes::VARCHAR, r.attributes::VARCHAR, s.events::VARCHAR, s.links::VARCHAR
FROM spans s LEFT JOIN resources r ON r.resource_id = s.resource_id
ORDER BY s.trace_id, s.span_id;
