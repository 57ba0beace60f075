-- report_linkage: how many logical requests each rebuild rule built
-- (docs/recognition.md, "How retries are recognised"), so a user can see why
-- traces were grouped as they were. Columns: linkage, requests, attempts,
-- retried (more than one attempt), inferred (joined on circumstantial
-- evidence), example (a request_id it built, retried when there is one, to
-- look at in the attempts table). $1, $2: the window, requests starting in
-- [$1, $2] (Unix ns).
SELECT linkage, count(*) AS requests, sum(attempts) AS attempts,
       count(*) FILTER (WHERE attempts > 1) AS retried,
       count(*) FILTER (WHERE inferred) AS inferred,
       coalesce(min(request_id) FILTER (WHERE attempts > 1), min(request_id)) AS example
FROM requests
WHERE start_ns BETWEEN $1 AND $2
GROUP BY linkage
ORDER BY requests DESC, linkage
