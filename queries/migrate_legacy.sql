-- migrate_legacy: upgrades a database written before schema versions, whose
-- ingest tables store.Open has found to be those of 002_ingest. Its
-- derived tables, of whatever layout its release gave them, are dropped
-- (003_derived creates them again, empty), so requests, baselines and
-- Parquet are derived again, whole, by the next command that reads them.
DROP TABLE IF EXISTS attempts;
DROP TABLE IF EXISTS requests;
DROP TABLE IF EXISTS join_alternatives;
DROP TABLE IF EXISTS rebuild_state;
DROP TABLE IF EXISTS rebuild_pending;
DROP TABLE IF EXISTS baseline_pending;
DROP TABLE IF EXISTS parent_cycles;
DROP TABLE IF EXISTS baselines;
DROP TABLE IF EXISTS baseline_arms;
DROP TABLE IF EXISTS baselines_kept;
DROP TABLE IF EXISTS baseline_arms_kept;
DROP TABLE IF EXISTS baseline_state;
DROP TABLE IF EXISTS run_window;
DROP TABLE IF EXISTS parquet_pending;
