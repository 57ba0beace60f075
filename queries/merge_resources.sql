-- merge_resources: after merge_stage, stores the resources of the staged
-- spans (retryscope_staged_resources, see load_resources) that a span it
-- kept refers to and that are not stored yet: a span dropped as the
-- repeat of one stored before leaves no resource behind. The spans kept
-- are those of file $1 starting in the stage's range $2..$3 (of start_ns).
-- Yields no rows; the affected-row count is the resources new.
INSERT INTO resources
SELECT r.resource_id, r.attributes
FROM retryscope_staged_resources() r
SEMI JOIN (
    SELECT resource_id FROM spans WHERE file_id = $1 AND start_ns BETWEEN $2 AND $3
) s ON s.resource_id = r.resource_id
ANTI JOIN resources p ON p.resource_id = r.resource_id;
