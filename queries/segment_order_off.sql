-- segment_order_off: lets DuckDB return segment_rows' rows in any order
-- (package segment puts them in order by request_order itself): holding
-- them back in order is what ran out of memory. segment_order_reset sets
-- it back. Yields no rows.
SET preserve_insertion_order = false
