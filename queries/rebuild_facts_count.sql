-- rebuild_facts_count: how many span facts rebuild_spans extracted
-- (rebuild_facts), the total the rebuild's progress counts towards. One
-- row, one column: spans.
SELECT count(*) AS spans FROM rebuild_facts
