-- rebuild_totals: how many requests and attempts the rebuilt tables hold
-- after a build (of them all or of some traces). One row; columns requests,
-- attempts.
SELECT (SELECT count(*) FROM requests) AS requests, (SELECT count(*) FROM attempts) AS attempts
