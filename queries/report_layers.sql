-- report_layers: tries per retry layer, for requests grouped by how many
-- nested retry loops they show (1: one loop; 2: an application loop around
-- an SDK loop). The multiplier of layer k is tries(k) / tries(k-1), with
-- tries(0) the requests.
-- Columns: depth, requests, layer (1 = outermost), tries. $1, $2: the
-- window, requests starting in [$1, $2] (Unix ns).
WITH l AS (
    SELECT len(layer_counts) AS depth, unnest(layer_counts) AS tries,
           generate_subscripts(layer_counts, 1) AS layer
    FROM requests WHERE start_ns BETWEEN $1 AND $2
)
SELECT l.depth, d.requests, l.layer, sum(l.tries) AS tries
FROM l JOIN (SELECT len(layer_counts) AS depth, count(*) AS requests FROM requests WHERE start_ns BETWEEN $1 AND $2 GROUP BY 1) d USING (depth)
GROUP BY ALL
ORDER BY l.depth, l.layer
