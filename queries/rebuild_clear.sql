-- rebuild_clear: empties the rebuilt tables and their bookkeeping before a
-- full rebuild fills them again from spans (tables: migrations/003_derived).
DELETE FROM attempts;
DELETE FROM requests;
DELETE FROM join_alternatives;
DELETE FROM rebuild_state;
DELETE FROM rebuild_pending;
DELETE FROM baseline_pending;
DELETE FROM parent_cycles;
