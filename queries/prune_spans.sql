-- prune_spans: deletes the spans of the traces the prune drops
-- (prune_traces), once prune_derived has removed what was built from
-- them. No parameters; the affected-row count is the spans deleted.
DELETE FROM spans WHERE trace_id IN (SELECT trace_id FROM prune_traces);
