-- report_triggers: failed attempts by SPEC §3 trigger.
-- Columns: trigger, attempts.
SELECT trigger, count(*) AS attempts
FROM attempts
WHERE trigger IS NOT NULL
GROUP BY trigger
ORDER BY attempts DESC, trigger
