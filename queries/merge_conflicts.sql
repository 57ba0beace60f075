-- merge_conflicts: records in ingest_errors (reason duplicate_conflict) each
-- staged span whose (trace_id, span_id) was seen before with other content:
-- another start, end, parent, name, kind or status than the copy that wins
-- (see merge_stage: the stored copy, else the first staged one). Exact
-- repeats (a file exported twice, overlapping dumps) are not conflicts.
-- Runs before merge_stage, on the same stage. $1 file_id, $2..$3 the
-- stage's range of start_ns, $4 the re-send window in ns, $5 the path.
-- Yields no rows; the affected-row count is the number of conflicts.
INSERT INTO ingest_errors
SELECT $1, $5, k."offset", 'duplicate_conflict',
       'span seen before with start ' || w.start_ns || ', end ' || w.end_ns || ', parent ' ||
       coalesce(nullif(w.parent, ''), 'none') || '; this copy (start ' || k.start_ns || ', end ' ||
       k.end_ns || ', parent ' || coalesce(nullif(k.parent_span_id, ''), 'none') || ') is dropped, the first kept',
       k.trace_id, k.span_id, now()
FROM stage_spans k
JOIN (
    SELECT trace_id, span_id, start_ns, end_ns, coalesce(parent_span_id, '') AS parent,
           name, kind, status_code, -1 AS seq
    FROM spans WHERE start_ns BETWEEN $2 - $4 AND $3 + $4
    UNION ALL
    SELECT trace_id, span_id, start_ns, end_ns, parent_span_id, name, kind, status_code, seq
    FROM stage_spans
) w ON w.trace_id = k.trace_id AND w.span_id = k.span_id AND w.seq < k.seq
QUALIFY row_number() OVER (PARTITION BY k.seq ORDER BY w.seq) = 1
    AND (w.start_ns, w.end_ns, w.parent, w.name, w.kind, w.status_code)
        IS DISTINCT FROM (k.start_ns, k.end_ns, k.parent_span_id, k.name, k.kind, k.status_code);
