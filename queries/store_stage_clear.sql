-- store_stage_clear: empties the staging table once its spans are merged.
-- No parameters, no rows.
DELETE FROM stage_spans;
