-- export_models: the models the requests of export_scope were answered by
-- (else asked for), to price. No parameters. A row per model, in order:
-- m (VARCHAR).
SELECT DISTINCT coalesce(final_model, model) AS m FROM export_scope WHERE m IS NOT NULL ORDER BY m;
