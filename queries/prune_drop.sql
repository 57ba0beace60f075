-- prune_drop: drops the temporary table prune_traces once the prune is
-- done. No parameters, no rows.
DROP TABLE IF EXISTS prune_traces;
