-- gpu_topk and gpu_topk_agg: the first k elements of gpu_sort and of
-- gpu_sort_agg, selected without sorting the rest.

-- @each int2 int4 int8 float4 float8 date timestamp timestamptz
CREATE FUNCTION gpu_topk(a @T@[], k int, descending bool DEFAULT false)
RETURNS @T@[] AS 'MODULE_PATHNAME', 'gpu_topk' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_topk(@T@[], int, bool) IS 'the first k elements of gpu_sort(a, descending), NULLs placed as there';

CREATE FUNCTION gpu_topk_agg_transfn(internal, @T@, int)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(internal, @T@, int, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_@T@(internal)
RETURNS @T@[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_topk_agg(@T@, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = internal, FINALFUNC = gpu_topk_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_topk_agg(@T@, int) IS 'the k smallest @T@ values in ascending order, NULLs after them: the first k of array_agg(x ORDER BY x)';
CREATE AGGREGATE gpu_topk_agg(@T@, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = internal, FINALFUNC = gpu_topk_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_topk_agg(@T@, int, bool) IS 'the first k of array_agg(x ORDER BY x [DESC]), descending when the third argument is true';
-- @end
