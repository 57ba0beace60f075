-- store_legacy_main: makes main the current schema again after
-- store_legacy_scratch. No parameters, no rows.
SET schema = 'main';
