-- prune_resources: after prune_spans, deletes the resources no span
-- refers to any more. No parameters; the affected-row count is the
-- resources deleted.
DELETE FROM resources
WHERE resource_id NOT IN (SELECT DISTINCT resource_id FROM spans WHERE resource_id IS NOT NULL);
