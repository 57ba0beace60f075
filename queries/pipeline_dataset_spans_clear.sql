-- pipeline_dataset_spans_clear: removes the stand-in spans
-- pipeline_dataset_stated wrote, once the outcomes are judged. No
-- parameters, no rows.
DELETE FROM spans;
