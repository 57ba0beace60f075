-- segment_order_reset: sets preserve_insertion_order back to its default
-- after segment_order_off. Yields no rows.
RESET preserve_insertion_order
