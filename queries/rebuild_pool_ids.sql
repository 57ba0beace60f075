-- rebuild_pool_ids: the temporary table of the rows of rebuild_facts the
-- rebuild set aside (id: the fact's rowid, fact_row), filled by the
-- rebuild and read by rebuild_pool. Yields no rows.
CREATE OR REPLACE TEMP TABLE rebuild_pool_ids (id BIGINT)
