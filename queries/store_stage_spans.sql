-- store_stage_spans: copies the spans being loaded, which the staged-spans
-- function yields (retryscope_staged, internal/store/load.go), into the
-- staging table stage_spans (see stage), for merge_conflicts and
-- merge_stage. No parameters; the affected-row count is the spans staged.
INSERT INTO stage_spans SELECT * FROM retryscope_staged();
