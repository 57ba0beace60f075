-- segment_baselines: for the added latency, the baselines of kind $1 per
-- request: l0_ms, the mean of the request's baselines' L0, and provenance,
-- the provenances of those with an L0 joined with + in name order. package
-- segment joins it to segment_rows, at its joins marker, as alias b, with
-- the kind bound as a further parameter of segment_rows, and the slice
-- marker replaced by segment_rows' bounds on the request ids when the
-- window is read a slice at a time.
-- Columns: request_id, l0_ms, provenance.
SELECT request_id, avg(l0_ms) AS l0_ms,
       string_agg(DISTINCT provenance, '+' ORDER BY provenance) FILTER (WHERE l0_ms IS NOT NULL) AS provenance
FROM baselines
WHERE kind = $1 /*slice*/
GROUP BY request_id
