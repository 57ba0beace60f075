-- export_price_row: one model's prices in export_prices. $1 price_model
-- (the model as the requests name it), $2 input_per_mtok, $3
-- output_per_mtok (USD per million tokens). No rows.
INSERT INTO export_prices VALUES ($1, $2, $3);
