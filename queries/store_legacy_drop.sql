-- store_legacy_drop: drops the scratch schema store_legacy_scratch made,
-- once the comparison is done. No parameters, no rows.
DROP SCHEMA retryscope_legacy_check CASCADE;
