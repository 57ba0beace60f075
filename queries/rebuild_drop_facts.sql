-- rebuild_drop_facts: drops the rebuild's temporary tables, the span facts
-- (rebuild_facts, from rebuild_spans) and the rows set aside
-- (rebuild_pool_ids), once a build is done with them. Yields no rows.
DROP TABLE IF EXISTS rebuild_facts;
DROP TABLE IF EXISTS rebuild_pool_ids
