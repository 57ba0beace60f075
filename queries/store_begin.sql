-- store_begin: starts a transaction (store.Tx, and the ingest's own: a
-- file's, or a group of small files'). No parameters, no rows.
BEGIN TRANSACTION;
