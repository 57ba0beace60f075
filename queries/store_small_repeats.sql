-- store_small_repeats: merge_needed and merge_repeats in one, for a chunk
-- of a few spans whose keys are given: whether a span an earlier file
-- stored has one of the keys and starts within $4 ns of the chunk's range
-- of start_ns ($2..$3). $1 the file's file_id (earlier files have smaller
-- ones), $5 the keys (VARCHAR[], trace_id || span_id). Prepared once per
-- store. One row, one BOOLEAN column.
SELECT EXISTS (
    SELECT 1 FROM spans
    WHERE start_ns BETWEEN $2 - $4 AND $3 + $4 AND file_id < $1
      AND trace_id || span_id IN (SELECT unnest($5::VARCHAR[])));
