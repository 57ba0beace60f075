-- store_schema_version_record: records the schema version a migration
-- brought the database to, and the retryscope that wrote it. $1 version
-- (INTEGER), $2 written_by (VARCHAR); the time is now(). No rows.
DELETE FROM schema_version;
INSERT INTO schema_version VALUES ($1, $2, now());
