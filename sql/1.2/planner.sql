-- What the planner knows of a sort: the rows gpu_sort_rows returns and the
-- cost of each sort, from the length of its array (gpu_sort_support in
-- src/rows.c says how).

CREATE FUNCTION gpu_sort_support(internal)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_support' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION gpu_sort_support(internal) IS 'planner support of gpu_sort, gpu_argsort and gpu_sort_rows: rows and cost from the array''s length';

-- @each int2 int4 int8 float4 float8 date timestamp timestamptz numeric anyelement
ALTER FUNCTION gpu_sort(@A@, bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(@A@, bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(@A@, bool, bool) SUPPORT gpu_sort_support;
-- @end
