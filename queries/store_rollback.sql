-- store_rollback: abandons the transaction store_begin started. No
-- parameters, no rows.
ROLLBACK;
