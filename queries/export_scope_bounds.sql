-- export_scope_bounds: the range of request starts export_scope holds.
-- $1 since, $2 until (Unix ns, until exclusive; both NULL for every
-- request). No rows.
SET VARIABLE export_scope = {'since': $1::BIGINT, 'until': $2::BIGINT};
