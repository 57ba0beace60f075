-- pipeline_dataset_stated: the anchors of a dataset's requests that stated
-- their own reason (outcome_stated), as spans carrying it, for
-- rebuild_outcomes to judge the union's outcomes (pipeline.OpenDataset).
-- $1 the requests files' globs (VARCHAR[]). No rows.
INSERT INTO spans (trace_id, span_id, start_ns, end_ns, duration_ns, attributes, file_id)
SELECT trace_id, span_id, start_ns, end_ns, end_ns - start_ns, MAP {'retryscope.exhausted.reason': outcome_detail}, 0
FROM read_parquet($1::VARCHAR[], hive_partitioning = true, union_by_name = true)
WHERE outcome_stated;
