-- store_commit: commits the transaction store_begin started. No
-- parameters, no rows.
COMMIT;
