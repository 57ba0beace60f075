-- 001_schema_version: the table that says which of these migrations a
-- database has had. One row: version, the number of the last migration
-- applied; written_by, the retryscope that applied it; written_at, when.
-- A database with no such table was written before schema versions
-- (see store.Open), or is new.
CREATE TABLE schema_version (
    version    INTEGER NOT NULL,
    written_by VARCHAR NOT NULL,
    written_at TIMESTAMPTZ NOT NULL
);
