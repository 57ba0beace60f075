-- rebuild_phases: splits each attempt's elapsed time T into the phases
-- T = Q + C + S + G (queue, connection, serving, generation), as far as
-- its telemetry shows them, setting attempts.queue_ms, connect_ms,
-- serve_ms and generate_ms; a phase the spans do not show is NULL.
--   C  connection setup: first start to last end of the attempt's child
--      spans http.getconn, http.dns, http.connect, http.tls (otelhttptrace)
--   Q  from the end of C (or the attempt's start) to the start of the
--      callee's SERVER span: transit and queues before it served; needs
--      that span
--   S  from the SERVER span's start to the first token (streams) or to the
--      server's end, at most the attempt's end: serving up to the first
--      output; needs that span
--   G  the rest of the attempt: the stream after its first token, or the
--      response coming back; known with a first token or a SERVER span
-- With a SERVER span, Q + C + S + G is the attempt's elapsed time (C taken
-- as 0 when unseen). Runs after every rebuild and update, over the
-- attempts of the requests it built (rebuild_built), whose child spans are
-- in the traces it read (rebuild_source).
CREATE OR REPLACE TEMP TABLE rebuild_attempt_phases AS
    WITH built AS (
        SELECT request_id, ordinal, trace_id, span_id, start_ns, end_ns, ttft_ms
        FROM attempts
        WHERE request_id IN (SELECT request_id FROM rebuild_built)
    ),
    children AS (
        SELECT a.request_id, a.ordinal,
               min(c.start_ns) FILTER (WHERE c.kind = 'server') AS server_start_ns,
               max(c.end_ns) FILTER (WHERE c.kind = 'server') AS server_end_ns,
               min(c.start_ns) FILTER (WHERE c.name IN ('http.getconn', 'http.dns', 'http.connect', 'http.tls')) AS conn_start_ns,
               max(c.end_ns) FILTER (WHERE c.name IN ('http.getconn', 'http.dns', 'http.connect', 'http.tls')) AS conn_end_ns
        FROM built a
        JOIN rebuild_source c ON c.trace_id = a.trace_id AND c.parent_span_id = a.span_id
        GROUP BY a.request_id, a.ordinal
    ),
    marks AS (
        SELECT a.request_id, a.ordinal, a.start_ns, a.end_ns,
               CASE WHEN a.ttft_ms IS NOT NULL THEN a.start_ns + round(a.ttft_ms * 1e6)::BIGINT END AS first_token_ns,
               k.server_start_ns, k.server_end_ns,
               CASE WHEN k.conn_start_ns IS NOT NULL THEN (k.conn_end_ns - k.conn_start_ns) / 1e6 END AS connect_ms,
               coalesce(k.conn_end_ns, a.start_ns) AS sent_ns
        FROM built a
        LEFT JOIN children k ON k.request_id = a.request_id AND k.ordinal = a.ordinal
    ),
    served AS (
        SELECT *, coalesce(first_token_ns, least(server_end_ns, end_ns)) AS output_ns FROM marks
    )
    SELECT request_id, ordinal, connect_ms,
           CASE WHEN server_start_ns IS NOT NULL THEN (server_start_ns - sent_ns) / 1e6 END AS queue_ms,
           CASE WHEN server_start_ns IS NOT NULL THEN (output_ns - server_start_ns) / 1e6 END AS serve_ms,
           CASE WHEN first_token_ns IS NOT NULL OR server_start_ns IS NOT NULL THEN (end_ns - output_ns) / 1e6 END AS generate_ms
    FROM served;

-- Set apart from the query above: DuckDB runs an UPDATE over a join of
-- this size many times slower than over a table.
UPDATE attempts SET queue_ms = p.queue_ms, connect_ms = p.connect_ms, serve_ms = p.serve_ms,
    generate_ms = p.generate_ms
FROM rebuild_attempt_phases p
WHERE attempts.request_id = p.request_id AND attempts.ordinal = p.ordinal
  AND (p.queue_ms IS NOT NULL OR p.connect_ms IS NOT NULL OR p.serve_ms IS NOT NULL OR p.generate_ms IS NOT NULL);

DROP TABLE rebuild_attempt_phases;
