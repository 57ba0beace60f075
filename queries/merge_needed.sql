-- merge_needed: whether a span stored by an earlier file starts within $4
-- ns of the staged spans' range of start_ns ($2..$3), so that a staged
-- span may repeat it (see merge_repeats). $1 is the file's file_id: earlier
-- files have smaller ones, and the file's own spans so far are known by
-- their keys (store.FileTx). One row, one BOOLEAN column.
SELECT EXISTS (
    SELECT 1 FROM spans
    WHERE start_ns BETWEEN $2 - $4 AND $3 + $4 AND file_id < $1
);
