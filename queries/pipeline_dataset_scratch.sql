-- pipeline_dataset_scratch: the scratch database of report --dataset is
-- removed when the report is done, so closing it need not checkpoint what
-- loading the datasets and judging their outcomes wrote (at 10M spans a
-- checkpoint of 0.7 GB and several seconds after the report was made).
-- Yields no rows.
PRAGMA disable_checkpoint_on_shutdown;
