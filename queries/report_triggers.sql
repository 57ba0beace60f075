-- report_triggers: failed attempts by trigger (docs/recognition.md, "How
-- retries are recognised"). Columns: trigger, attempts. $1, $2: the window,
-- attempts of requests starting in [$1, $2] (Unix ns); $3 a bound no attempt
-- of theirs starts before.
SELECT trigger, count(*) AS attempts
FROM attempts
WHERE trigger IS NOT NULL AND start_ns >= $3
  AND request_id IN (SELECT request_id FROM requests WHERE start_ns BETWEEN $1 AND $2)
GROUP BY trigger
ORDER BY attempts DESC, trigger
