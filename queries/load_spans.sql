-- load_spans: inserts the staged spans into spans as they are, for a stage
-- that can repeat no stored span and no span of its own (see merge_needed):
-- the result is what merge_stage would give. Each span carries its file's
-- file_id, so that one statement can load the spans of several small files
-- (store.StoreWhole). The spans' resources are stored beside them
-- (load_resources).
-- Yields no rows; the affected-row count is the number of new spans.
INSERT INTO spans (trace_id, span_id, parent_span_id, trace_state, name, kind, start_ns, end_ns, duration_ns,
                   status_code, status_message, service_name, scope_name, scope_version,
                   attributes, resource_id, events, links, file_id)
SELECT trace_id, span_id, nullif(parent_span_id, ''), nullif(trace_state, ''),
       name, kind, start_ns, end_ns, end_ns - start_ns,
       status_code, nullif(status_message, ''), service_name,
       scope_name, nullif(scope_version, ''),
       attributes, resource_id, events, links, file_id
FROM retryscope_staged();
