-- rebuild_kept: how many spans of the files up to $1 (the highest file_id
-- the last rebuild read) are still stored: fewer than it read means
-- retention pruned some and the rebuild must start over. One row, one
-- column: spans.
SELECT count(*) AS spans FROM spans WHERE file_id <= $1
