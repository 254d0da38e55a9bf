-- gpusort 1.0: sort arrays of int2, int4, int8, float4 and float8 on NVIDIA GPUs (CPU fallback)
\echo Use "CREATE EXTENSION gpusort" to load this file. \quit

-- Support functions of gpu_sort_agg shared by every element type.  Not STRICT:
-- the states are internal, so NULL states are handled in C.
CREATE FUNCTION gpu_sort_agg_combine(internal, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_combine' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION gpu_sort_agg_serialize(internal)
RETURNS bytea AS 'MODULE_PATHNAME', 'gpu_sort_agg_serialize' LANGUAGE C STRICT PARALLEL SAFE;

CREATE FUNCTION gpu_sort_agg_deserialize(bytea, internal)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_deserialize' LANGUAGE C STRICT PARALLEL SAFE;

-- The sorts are IMMUTABLE: the settings choose where a sort runs, never its
-- result.  They are not STRICT: nulls_first may be NULL (ORDER BY's rule), a
-- NULL array gives NULL, and a NULL descending is an error.

-- int2
CREATE FUNCTION gpu_sort(a int2[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS int2[] AS 'MODULE_PATHNAME', 'gpu_sort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_sort(int2[], bool, bool) IS 'sorted copy of an int2 array (GPU or CPU)';

CREATE FUNCTION gpu_argsort(a int2[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_argsort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_argsort(int2[], bool, bool) IS 'subscripts of an int2 array in sorted order, stable';

CREATE FUNCTION gpu_sort_rows(a int2[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS SETOF int2 AS 'MODULE_PATHNAME', 'gpu_sort_rows' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION gpu_sort_rows(int2[], bool, bool) IS 'elements of an int2 array in sorted order, one row each';

CREATE FUNCTION gpu_sort_agg_transfn(internal, int2)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(internal, int2, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_int2(internal)
RETURNS int2[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_sort_agg(int2) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_int2,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(int2) IS 'the int2 values as one array in ascending order, as array_agg(x ORDER BY x)';

CREATE AGGREGATE gpu_sort_agg(int2, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_int2,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(int2, bool) IS 'the int2 values as one array, descending when the second argument is true, as array_agg(x ORDER BY x [DESC])';

-- int4
CREATE FUNCTION gpu_sort(a int4[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_sort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_sort(int4[], bool, bool) IS 'sorted copy of an int4 array (GPU or CPU)';

CREATE FUNCTION gpu_argsort(a int4[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_argsort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_argsort(int4[], bool, bool) IS 'subscripts of an int4 array in sorted order, stable';

CREATE FUNCTION gpu_sort_rows(a int4[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS SETOF int4 AS 'MODULE_PATHNAME', 'gpu_sort_rows' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION gpu_sort_rows(int4[], bool, bool) IS 'elements of an int4 array in sorted order, one row each';

CREATE FUNCTION gpu_sort_agg_transfn(internal, int4)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(internal, int4, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_int4(internal)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_sort_agg(int4) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_int4,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(int4) IS 'the int4 values as one array in ascending order, as array_agg(x ORDER BY x)';

CREATE AGGREGATE gpu_sort_agg(int4, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_int4,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(int4, bool) IS 'the int4 values as one array, descending when the second argument is true, as array_agg(x ORDER BY x [DESC])';

-- int8
CREATE FUNCTION gpu_sort(a int8[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS int8[] AS 'MODULE_PATHNAME', 'gpu_sort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_sort(int8[], bool, bool) IS 'sorted copy of an int8 array (GPU or CPU)';

CREATE FUNCTION gpu_argsort(a int8[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_argsort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_argsort(int8[], bool, bool) IS 'subscripts of an int8 array in sorted order, stable';

CREATE FUNCTION gpu_sort_rows(a int8[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS SETOF int8 AS 'MODULE_PATHNAME', 'gpu_sort_rows' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION gpu_sort_rows(int8[], bool, bool) IS 'elements of an int8 array in sorted order, one row each';

CREATE FUNCTION gpu_sort_agg_transfn(internal, int8)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(internal, int8, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_int8(internal)
RETURNS int8[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_sort_agg(int8) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_int8,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(int8) IS 'the int8 values as one array in ascending order, as array_agg(x ORDER BY x)';

CREATE AGGREGATE gpu_sort_agg(int8, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_int8,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(int8, bool) IS 'the int8 values as one array, descending when the second argument is true, as array_agg(x ORDER BY x [DESC])';

-- float4
CREATE FUNCTION gpu_sort(a float4[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS float4[] AS 'MODULE_PATHNAME', 'gpu_sort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_sort(float4[], bool, bool) IS 'sorted copy of a float4 array (GPU or CPU)';

CREATE FUNCTION gpu_argsort(a float4[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_argsort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_argsort(float4[], bool, bool) IS 'subscripts of a float4 array in sorted order, stable';

CREATE FUNCTION gpu_sort_rows(a float4[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS SETOF float4 AS 'MODULE_PATHNAME', 'gpu_sort_rows' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION gpu_sort_rows(float4[], bool, bool) IS 'elements of a float4 array in sorted order, one row each';

CREATE FUNCTION gpu_sort_agg_transfn(internal, float4)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(internal, float4, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_float4(internal)
RETURNS float4[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_sort_agg(float4) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_float4,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(float4) IS 'the float4 values as one array in ascending order, as array_agg(x ORDER BY x)';

CREATE AGGREGATE gpu_sort_agg(float4, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_float4,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(float4, bool) IS 'the float4 values as one array, descending when the second argument is true, as array_agg(x ORDER BY x [DESC])';

-- float8
CREATE FUNCTION gpu_sort(a float8[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS float8[] AS 'MODULE_PATHNAME', 'gpu_sort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_sort(float8[], bool, bool) IS 'sorted copy of a float8 array (GPU or CPU)';

CREATE FUNCTION gpu_argsort(a float8[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_argsort' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_argsort(float8[], bool, bool) IS 'subscripts of a float8 array in sorted order, stable';

CREATE FUNCTION gpu_sort_rows(a float8[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL)
RETURNS SETOF float8 AS 'MODULE_PATHNAME', 'gpu_sort_rows' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION gpu_sort_rows(float8[], bool, bool) IS 'elements of a float8 array in sorted order, one row each';

CREATE FUNCTION gpu_sort_agg_transfn(internal, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(internal, float8, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_float8(internal)
RETURNS float8[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_sort_agg(float8) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_float8,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(float8) IS 'the float8 values as one array in ascending order, as array_agg(x ORDER BY x)';

CREATE AGGREGATE gpu_sort_agg(float8, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = internal, FINALFUNC = gpu_sort_agg_final_float8,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_sort_agg(float8, bool) IS 'the float8 values as one array, descending when the second argument is true, as array_agg(x ORDER BY x [DESC])';

-- What gpusort found and what it did.  VOLATILE: they read the machine and this backend's state.
CREATE FUNCTION gpusort_info(
	OUT built_with_cuda bool, OUT cuda_runtime_version text, OUT driver_version text,
	OUT device_count int, OUT gpu_usable bool, OUT reason text)
RETURNS record AS 'MODULE_PATHNAME', 'gpusort_info' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION gpusort_info() IS 'whether gpusort was built with CUDA, the CUDA versions, the GPUs it sees, and why none is usable when none is';

CREATE FUNCTION gpusort_devices(
	OUT id int, OUT name text, OUT compute_capability text,
	OUT memory_total_mb bigint, OUT memory_free_mb bigint, OUT multiprocessors int)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'gpusort_devices' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 8;
COMMENT ON FUNCTION gpusort_devices() IS 'one row per GPU gpusort sees';

CREATE FUNCTION gpusort_last_run(
	OUT elements bigint, OUT type text, OUT device text, OUT algorithm text,
	OUT copy_in_ms float8, OUT sort_ms float8, OUT copy_out_ms float8, OUT total_ms float8)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'gpusort_last_run' LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1;
COMMENT ON FUNCTION gpusort_last_run() IS 'this backend''s last sort: elements, type, where it ran, algorithm and milliseconds; no row before the first';
