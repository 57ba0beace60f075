-- export_prices_create: the temporary table export_prices, which the
-- export queries join to price tokens: a row per model the export's
-- requests were answered by (else asked for) that the prices have
-- (export_price_row). No parameters, no rows.
CREATE OR REPLACE TEMP TABLE export_prices
    (price_model VARCHAR NOT NULL, input_per_mtok DOUBLE NOT NULL, output_per_mtok DOUBLE NOT NULL);
