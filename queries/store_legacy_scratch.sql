-- store_legacy_scratch: makes the scratch schema retryscope_legacy_check,
-- in which the migrations up to the legacy version are run to compare a
-- database written before schema versions with them (store_legacy_compare),
-- and makes it the current schema. No parameters, no rows.
CREATE SCHEMA retryscope_legacy_check;
SET schema = 'retryscope_legacy_check';
