-- baseline_input_drop: drops the temporary table baseline_input (see
-- baseline_input) once the baselines are computed. No parameters, no rows.
DROP TABLE IF EXISTS baseline_input;
