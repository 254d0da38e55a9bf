-- Element types gpusort does not sort: their calls reach gpusort, whose error
-- names the types it sorts, instead of failing to resolve.  The polymorphic
-- overloads take every type without a function of its own.  numeric needs its
-- own: it casts implicitly to both float4 and float8, so its calls would be
-- ambiguous ("is not unique"), or for gpu_sort_agg a lossy float8 sort.

-- @each numeric
CREATE FUNCTION gpu_sort(a @T@[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS @T@[] AS 'MODULE_PATHNAME', 'gpu_sort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_sort(@T@[], bool, bool) IS 'an error that names the element types gpusort sorts (@T@ is not one)';

CREATE FUNCTION gpu_argsort(a @T@[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_argsort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_argsort(@T@[], bool, bool) IS 'an error that names the element types gpusort sorts (@T@ is not one)';

CREATE FUNCTION gpu_sort_rows(a @T@[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS SETOF @T@ AS 'MODULE_PATHNAME', 'gpu_sort_rows' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION gpu_sort_rows(@T@[], bool, bool) IS 'an error that names the element types gpusort sorts (@T@ is not one)';

CREATE FUNCTION gpu_sort_agg_transfn(internal, @T@)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(internal, @T@, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_@T@(internal)
RETURNS @T@[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_sort_agg(@T@) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(@T@) IS 'an error that names the element types gpusort sorts (@T@ is not one)';

CREATE AGGREGATE gpu_sort_agg(@T@, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(@T@, bool) IS 'an error that names the element types gpusort sorts (@T@ is not one)';

-- @end

CREATE FUNCTION gpu_sort(a anyarray, descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS anyarray AS 'MODULE_PATHNAME', 'gpu_sort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_sort(anyarray, bool, bool) IS 'an error that names the element types gpusort sorts, for the types without a function of their own';

CREATE FUNCTION gpu_argsort(a anyarray, descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_argsort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_argsort(anyarray, bool, bool) IS 'an error that names the element types gpusort sorts, for the types without a function of their own';

CREATE FUNCTION gpu_sort_rows(a anyarray, descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS SETOF anyelement AS 'MODULE_PATHNAME', 'gpu_sort_rows' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION gpu_sort_rows(anyarray, bool, bool) IS 'an error that names the element types gpusort sorts, for the types without a function of their own';

CREATE FUNCTION gpu_sort_agg_transfn(internal, anyelement)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(internal, anyelement, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_any(internal, anyelement)
RETURNS anyarray AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_any(internal, anyelement, bool)
RETURNS anyarray AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_sort_agg(anyelement) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_any,
	FINALFUNC_EXTRA, COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(anyelement) IS 'an error that names the element types gpusort sorts, for the types without an aggregate of their own';

CREATE AGGREGATE gpu_sort_agg(anyelement, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_any,
	FINALFUNC_EXTRA, COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(anyelement, bool) IS 'an error that names the element types gpusort sorts, for the types without an aggregate of their own';
