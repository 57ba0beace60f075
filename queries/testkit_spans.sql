-- testkit_spans: the spans, for a test to compare, with the columns that
-- depend only on the input, not on which file or run brought a span in
-- (testkit.SpansColumns lists the same), in a stable order. No
-- parameters. A row per span.
SELECT trace_id, span_id, parent_span_id, trace_state, name, kind, start_ns, end_ns,
       duration_ns, status_code, status_message, service_name, scope_name, scope_version,
       attributes::VARCHAR, resource_attributes::VARCHAR, events::VARCHAR, links::VARCHAR
FROM spans ORDER BY trace_id, span_id;
