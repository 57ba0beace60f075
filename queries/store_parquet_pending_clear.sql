-- store_parquet_pending_clear: empties parquet_pending once an export has
-- written every day it listed. No parameters, no rows.
DELETE FROM parquet_pending;
