-- rebuild_source_scope: for an incremental rebuild, the spans it reads
-- (rebuild_source: those of the traces in rebuild_scope) and the requests
-- it builds anew (rebuild_built: those whose trace, the anchor's or the
-- first attempt's, is in rebuild_scope), as temporary views. Yields no
-- rows.
CREATE OR REPLACE TEMP VIEW rebuild_source AS
SELECT * FROM spans WHERE trace_id IN (SELECT trace_id FROM rebuild_scope);
CREATE OR REPLACE TEMP VIEW rebuild_built AS
SELECT request_id FROM requests WHERE trace_id IN (SELECT trace_id FROM rebuild_scope)
