-- segment_count: how many logical requests started in [$1, $2) (Unix ns):
-- the rows segment_rows yields without filters, for which package segment
-- sizes its rows once. One row, one column: requests.
SELECT count(*) AS requests FROM requests WHERE start_ns >= $1 AND start_ns < $2
