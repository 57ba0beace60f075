-- segment_anchor_values: the anchor span's values that the segment
-- dimensions (and the task) read, per request that started in [$1, $2)
-- (Unix ns). package segment joins it to segment_rows, at its joins
-- marker, as alias s when a dimension or the task reads them, with the
-- values marker replaced by the values read, as select items of the spans
-- joined (sp.attributes[$3] AS v1, res.attributes[$4] AS v2, ...: res is
-- the span's resource; the attribute names are bound as further
-- parameters). The window's anchor spans are found first, by a join of
-- narrow rows, and their values joined to the wide ones by request. The
-- slice marker takes segment_rows' bounds on the request ids when the
-- window is read a slice at a time.
-- Columns: request_id, then v1, v2 ... (none here, where the marker is
-- left).
SELECT rr.request_id, /*values*/
FROM requests rr
JOIN spans sp ON sp.trace_id = rr.trace_id AND sp.span_id = rr.span_id
LEFT JOIN resources res ON res.resource_id = sp.resource_id
WHERE rr.start_ns >= $1 AND rr.start_ns < $2 /*slice*/
