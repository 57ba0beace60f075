-- load_resources: stores the resources of the spans being loaded that are
-- not stored yet. The staged-resources function (retryscope_staged_resources,
-- internal/store/load.go) yields each distinct resource of the staged
-- spans once, in the order they first come: resource_id (a content hash,
-- see migrations/005_resources) and attributes. Run beside load_spans,
-- whose spans all go in, so each of these resources is referred to.
-- No parameters; the affected-row count is the resources new.
INSERT INTO resources
SELECT r.resource_id, r.attributes
FROM retryscope_staged_resources() r
ANTI JOIN resources p ON p.resource_id = r.resource_id;
