-- rebuild_source_count: how many spans the build reads (rebuild_source,
-- from rebuild_source_all or rebuild_source_scope), which sets how many
-- slices rebuild_spans deals them into. One row, one column: spans.
SELECT count(*) AS spans FROM rebuild_source
