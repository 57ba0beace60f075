-- store_baseline_pending_clear: empties baseline_pending once the
-- baselines of its ranges are recomputed. No parameters, no rows.
DELETE FROM baseline_pending;
