-- merge_stage: moves staged spans into spans. A span's identity is
-- (trace_id, span_id): one already stored, or repeated in the stage, goes
-- in once, and the first copy wins (the one stored before; within a file,
-- the first in file order). Stored copies are looked for among spans
-- starting within $4 ns of the stage's time range ($2..$3): a re-sent span
-- keeps its start time, or nearly, and the range lets DuckDB skip the row
-- groups of older history by their min/max. Duplicates are found on the
-- keys alone so that no step holds whole rows twice. $1 is the file_id.
-- The resources of the spans kept are stored after it (merge_resources).
-- Yields no rows; the affected-row count is the number of new spans.
INSERT INTO spans (trace_id, span_id, parent_span_id, trace_state, name, kind, start_ns, end_ns, duration_ns,
                   status_code, status_message, service_name, scope_name, scope_version,
                   attributes, resource_id, events, links, file_id)
SELECT s.trace_id, s.span_id, nullif(s.parent_span_id, ''), nullif(s.trace_state, ''),
       s.name, s.kind, s.start_ns, s.end_ns, s.end_ns - s.start_ns,
       s.status_code, nullif(s.status_message, ''), s.service_name,
       s.scope_name, nullif(s.scope_version, ''),
       s.attributes, s.resource_id, s.events, s.links, $1
FROM stage_spans s
SEMI JOIN (
    SELECT min(k.seq) AS seq
    FROM stage_spans k
    ANTI JOIN (
        SELECT trace_id, span_id FROM spans WHERE start_ns BETWEEN $2 - $4 AND $3 + $4
    ) p ON p.trace_id = k.trace_id AND p.span_id = k.span_id
    GROUP BY k.trace_id, k.span_id
) keep ON keep.seq = s.seq;
