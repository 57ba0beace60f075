-- segment_slices: where the window's requests ([$1, $2), Unix ns) are cut
-- into slices of $3 requests each in request_id order, for package
-- segment to read segment_rows a slice at a time: the id ending each
-- slice but the last (the $3-th, 2*$3-th ... id), in order. The window's
-- ids are sorted alone, which DuckDB can spill; the wide rows of a whole
-- large window, with their joins and lists, cannot be held at once under
-- its memory limit.
-- Columns: request_id.
SELECT request_id
FROM (
    SELECT request_id, row_number() OVER (ORDER BY request_id) AS k, count(*) OVER () AS n
    FROM requests
    WHERE start_ns >= $1 AND start_ns < $2
)
WHERE k % $3 = 0 AND k < n
ORDER BY request_id
