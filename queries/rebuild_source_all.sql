-- rebuild_source_all: for a full rebuild, the spans it reads
-- (rebuild_source: every span) and the requests it builds anew
-- (rebuild_built: every request), as temporary views. Yields no rows.
CREATE OR REPLACE TEMP VIEW rebuild_source AS SELECT * FROM spans;
CREATE OR REPLACE TEMP VIEW rebuild_built AS SELECT request_id FROM requests
