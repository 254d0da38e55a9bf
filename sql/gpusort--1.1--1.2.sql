-- gpusort 1.1 to 1.2: sql/1.2/*.sql, as released
\echo Use "ALTER EXTENSION gpusort UPDATE TO '1.2'" to load this file. \quit

-- The comments of the functions 1.0 had, as a fresh install of 1.1 sets them
-- (the update from 1.0 to 1.1 kept 1.0's wording).

COMMENT ON FUNCTION gpu_sort(int2[], bool, bool) IS 'sorted copy of an array of int2 (GPU or CPU)';
COMMENT ON FUNCTION gpu_argsort(int2[], bool, bool) IS 'subscripts of an array of int2 in sorted order, stable';
COMMENT ON FUNCTION gpu_sort_rows(int2[], bool, bool) IS 'elements of an array of int2 in sorted order, one row each';
COMMENT ON FUNCTION gpu_sort(int4[], bool, bool) IS 'sorted copy of an array of int4 (GPU or CPU)';
COMMENT ON FUNCTION gpu_argsort(int4[], bool, bool) IS 'subscripts of an array of int4 in sorted order, stable';
COMMENT ON FUNCTION gpu_sort_rows(int4[], bool, bool) IS 'elements of an array of int4 in sorted order, one row each';
COMMENT ON FUNCTION gpu_sort(int8[], bool, bool) IS 'sorted copy of an array of int8 (GPU or CPU)';
COMMENT ON FUNCTION gpu_argsort(int8[], bool, bool) IS 'subscripts of an array of int8 in sorted order, stable';
COMMENT ON FUNCTION gpu_sort_rows(int8[], bool, bool) IS 'elements of an array of int8 in sorted order, one row each';
COMMENT ON FUNCTION gpu_sort(float4[], bool, bool) IS 'sorted copy of an array of float4 (GPU or CPU)';
COMMENT ON FUNCTION gpu_argsort(float4[], bool, bool) IS 'subscripts of an array of float4 in sorted order, stable';
COMMENT ON FUNCTION gpu_sort_rows(float4[], bool, bool) IS 'elements of an array of float4 in sorted order, one row each';
COMMENT ON FUNCTION gpu_sort(float8[], bool, bool) IS 'sorted copy of an array of float8 (GPU or CPU)';
COMMENT ON FUNCTION gpu_argsort(float8[], bool, bool) IS 'subscripts of an array of float8 in sorted order, stable';
COMMENT ON FUNCTION gpu_sort_rows(float8[], bool, bool) IS 'elements of an array of float8 in sorted order, one row each';
-- The WITHIN GROUP aggregates are PARALLEL SAFE, as percentile_cont,
-- percentile_disc and mode are: a parallel-unsafe aggregate would keep the
-- whole query serial.  They gather their rows in the leader (no partial
-- aggregation), below which the scan may run in parallel workers.

CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8 ORDER BY int2) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8[] ORDER BY int2) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode(ORDER BY int2) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8 ORDER BY int4) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8[] ORDER BY int4) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode(ORDER BY int4) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8 ORDER BY int8) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8[] ORDER BY int8) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode(ORDER BY int8) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8 ORDER BY float4) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8[] ORDER BY float4) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode(ORDER BY float4) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8 ORDER BY float8) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8[] ORDER BY float8) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode(ORDER BY float8) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8 ORDER BY date) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8[] ORDER BY date) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode(ORDER BY date) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8 ORDER BY timestamp) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8[] ORDER BY timestamp) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode(ORDER BY timestamp) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8 ORDER BY timestamptz) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8[] ORDER BY timestamptz) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode(ORDER BY timestamptz) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);

CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8 ORDER BY int2) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8[] ORDER BY int2) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8 ORDER BY int4) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8[] ORDER BY int4) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8 ORDER BY int8) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8[] ORDER BY int8) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8 ORDER BY float4) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8[] ORDER BY float4) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8 ORDER BY float8) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8[] ORDER BY float8) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
-- What the planner knows of a sort: the rows gpu_sort_rows returns and the
-- cost of each sort, from the length of its array (gpu_sort_support in
-- src/rows.c says how).

CREATE FUNCTION gpu_sort_support(internal)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_support' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION gpu_sort_support(internal) IS 'planner support of gpu_sort, gpu_argsort and gpu_sort_rows: rows and cost from the array''s length';

ALTER FUNCTION gpu_sort(int2[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(int2[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(int2[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort(int4[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(int4[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(int4[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort(int8[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(int8[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(int8[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort(float4[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(float4[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(float4[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort(float8[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(float8[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(float8[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort(date[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(date[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(date[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort(timestamp[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(timestamp[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(timestamp[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort(timestamptz[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(timestamptz[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(timestamptz[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort(numeric[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(numeric[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(numeric[], bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort(anyarray, bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_argsort(anyarray, bool, bool) SUPPORT gpu_sort_support;
ALTER FUNCTION gpu_sort_rows(anyarray, bool, bool) SUPPORT gpu_sort_support;
-- The GPU server's own row: its state, the GPU process it supervises, how
-- many times it started one again after one died, and how the last one ended.

CREATE FUNCTION gpusort_gpu_process(
	OUT state text, OUT server_pid int, OUT gpu_pid int, OUT gpu_started timestamptz,
	OUT restarts bigint, OUT last_exit text, OUT last_exit_at timestamptz, OUT reason text)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'gpusort_gpu_process' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 1;
COMMENT ON FUNCTION gpusort_gpu_process() IS 'the GPU server and the GPU process it supervises: state, PIDs, restarts and how the last GPU process ended (no row without shared_preload_libraries = ''gpusort'')';
-- gpusort_state: the transition type of the plain aggregates (gpu_sort_agg,
-- gpu_median, gpu_percentile_cont_agg, gpu_percentile_disc_agg,
-- gpu_mode_agg, gpu_topk_agg) in place of internal.  In an aggregate it is
-- an expanded object that the transition functions change in place; its
-- flat form is a partial state that leaves its process, sorted (or cut to
-- its k), and its text form is how Citus moves a partial state from a
-- worker to the coordinator: with a transition type that is not a
-- pseudo-type, Citus pushes the aggregates down.  The aggregates keep their
-- OIDs (CREATE OR REPLACE AGGREGATE), so views over them survive the update.
-- The internal-state support functions of 1.1 stay declared.

CREATE TYPE gpusort_state;
CREATE FUNCTION gpusort_state_in(cstring) RETURNS gpusort_state
AS 'MODULE_PATHNAME', 'gpusort_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION gpusort_state_out(gpusort_state) RETURNS cstring
AS 'MODULE_PATHNAME', 'gpusort_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION gpusort_state_recv(internal) RETURNS gpusort_state
AS 'MODULE_PATHNAME', 'gpusort_state_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION gpusort_state_send(gpusort_state) RETURNS bytea
AS 'MODULE_PATHNAME', 'gpusort_state_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE gpusort_state (
	INPUT = gpusort_state_in, OUTPUT = gpusort_state_out,
	RECEIVE = gpusort_state_recv, SEND = gpusort_state_send,
	INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = extended);
COMMENT ON TYPE gpusort_state IS 'partial state of gpusort''s plain aggregates: values (sorted when it leaves its process), NULL count, direction and constant argument';

-- Each aggregate's state takes at least the 1 kB first block of its memory
-- context (SSPACE, as the planner assumes for array_append's expanded
-- array): without it the planner would size a hash aggregation by the 32
-- bytes it guesses for a varlena type.

-- Not STRICT: a NULL state is handled in C.
CREATE FUNCTION gpu_sort_agg_combine(gpusort_state, gpusort_state) RETURNS gpusort_state
AS 'MODULE_PATHNAME', 'gpu_sort_agg_combine_state' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION gpu_percentile_cont_agg_final(gpusort_state)
RETURNS float8 AS 'MODULE_PATHNAME', 'gpu_percentile_cont_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_cont_multi_agg_final(gpusort_state)
RETURNS float8[] AS 'MODULE_PATHNAME', 'gpu_percentile_cont_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_median_final(gpusort_state)
RETURNS float8 AS 'MODULE_PATHNAME', 'gpu_median_final' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, int2)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, int2, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_int2(gpusort_state)
RETURNS int2[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_sort_agg(int2) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_int2,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(int2, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_int2,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, int2, int)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, int2, int, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_int2(gpusort_state)
RETURNS int2[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_topk_agg(int2, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_int2,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(int2, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_int2,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_collect_transfn(gpusort_state, int2)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, int2, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, int2, float8[])
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, int2, float8)
RETURNS int2 AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, int2, float8[])
RETURNS int2[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(gpusort_state, int2)
RETURNS int2 AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(int2, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(int2, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(int2) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, int4)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, int4, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_int4(gpusort_state)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_sort_agg(int4) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_int4,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(int4, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_int4,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, int4, int)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, int4, int, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_int4(gpusort_state)
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_topk_agg(int4, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_int4,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(int4, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_int4,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_collect_transfn(gpusort_state, int4)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, int4, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, int4, float8[])
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, int4, float8)
RETURNS int4 AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, int4, float8[])
RETURNS int4[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(gpusort_state, int4)
RETURNS int4 AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(int4, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(int4, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(int4) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, int8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, int8, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_int8(gpusort_state)
RETURNS int8[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_sort_agg(int8) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_int8,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(int8, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_int8,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, int8, int)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, int8, int, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_int8(gpusort_state)
RETURNS int8[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_topk_agg(int8, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_int8,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(int8, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_int8,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_collect_transfn(gpusort_state, int8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, int8, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, int8, float8[])
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, int8, float8)
RETURNS int8 AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, int8, float8[])
RETURNS int8[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(gpusort_state, int8)
RETURNS int8 AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(int8, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(int8, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(int8) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, float4)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, float4, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_float4(gpusort_state)
RETURNS float4[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_sort_agg(float4) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_float4,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(float4, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_float4,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, float4, int)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, float4, int, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_float4(gpusort_state)
RETURNS float4[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_topk_agg(float4, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_float4,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(float4, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_float4,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_collect_transfn(gpusort_state, float4)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, float4, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, float4, float8[])
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, float4, float8)
RETURNS float4 AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, float4, float8[])
RETURNS float4[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(gpusort_state, float4)
RETURNS float4 AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(float4, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(float4, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(float4) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, float8, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_float8(gpusort_state)
RETURNS float8[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_sort_agg(float8) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_float8,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(float8, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_float8,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, float8, int)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, float8, int, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_float8(gpusort_state)
RETURNS float8[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_topk_agg(float8, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_float8,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(float8, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_float8,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_collect_transfn(gpusort_state, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, float8, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, float8, float8[])
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, float8, float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, float8, float8[])
RETURNS float8[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(gpusort_state, float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(float8, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(float8, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(float8) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, date)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, date, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_date(gpusort_state)
RETURNS date[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_sort_agg(date) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_date,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(date, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_date,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, date, int)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, date, int, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_date(gpusort_state)
RETURNS date[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_topk_agg(date, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_date,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(date, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_date,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_collect_transfn(gpusort_state, date)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, date, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, date, float8[])
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, date, float8)
RETURNS date AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, date, float8[])
RETURNS date[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(gpusort_state, date)
RETURNS date AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(date, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(date, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(date) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, timestamp)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, timestamp, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_timestamp(gpusort_state)
RETURNS timestamp[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_sort_agg(timestamp) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_timestamp,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(timestamp, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_timestamp,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, timestamp, int)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, timestamp, int, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_timestamp(gpusort_state)
RETURNS timestamp[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_topk_agg(timestamp, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_timestamp,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(timestamp, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_timestamp,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_collect_transfn(gpusort_state, timestamp)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, timestamp, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, timestamp, float8[])
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, timestamp, float8)
RETURNS timestamp AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, timestamp, float8[])
RETURNS timestamp[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(gpusort_state, timestamp)
RETURNS timestamp AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(timestamp, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(timestamp, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(timestamp) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, timestamptz)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, timestamptz, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_timestamptz(gpusort_state)
RETURNS timestamptz[] AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_sort_agg(timestamptz) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_timestamptz,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(timestamptz, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_timestamptz,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, timestamptz, int)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, timestamptz, int, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_timestamptz(gpusort_state)
RETURNS timestamptz[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_topk_agg(timestamptz, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_timestamptz,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(timestamptz, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_timestamptz,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_collect_transfn(gpusort_state, timestamptz)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, timestamptz, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, timestamptz, float8[])
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, timestamptz, float8)
RETURNS timestamptz AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, timestamptz, float8[])
RETURNS timestamptz[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(gpusort_state, timestamptz)
RETURNS timestamptz AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(timestamptz, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(timestamptz, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(timestamptz) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(int2, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(int2, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_multi_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_median(int2) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state, FINALFUNC = gpu_median_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(int4, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(int4, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_multi_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_median(int4) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state, FINALFUNC = gpu_median_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(int8, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(int8, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_multi_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_median(int8) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state, FINALFUNC = gpu_median_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(float4, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(float4, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_multi_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_median(float4) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state, FINALFUNC = gpu_median_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(float8, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(float8, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_multi_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_median(float8) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state, FINALFUNC = gpu_median_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
-- Element types gpusort does not sort, for the functions and aggregates that
-- 1.1 offered only for its own types: their calls reach gpusort, whose error
-- names the types it sorts, instead of a lossy cast or a failure to resolve.
-- The polymorphic overloads take every type without one of its own; numeric
-- needs its own, as it casts implicitly to real and double precision: without
-- it gpu_percentile_disc, gpu_mode and gpu_topk_agg over numeric would sort
-- its double precision values and gpu_topk would be "not unique".
-- gpu_percentile_cont, gpu_percentile_cont_agg and gpu_median take numeric
-- through double precision, as percentile_cont does, and have no polymorphic
-- overload: as for percentile_cont, an unknown-typed literal or an untyped
-- parameter then resolves to double precision (a polymorphic overload would
-- make that call ambiguous), and the types without a cast to double
-- precision (dates, timestamps, text) find no function, as percentile_cont's
-- calls do.

CREATE FUNCTION gpu_collect_transfn(internal, numeric)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(internal, numeric, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_percentile_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(internal, numeric, float8[])
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_percentile_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_final(internal, float8, numeric)
RETURNS numeric AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_final(internal, float8[], numeric)
RETURNS numeric[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(internal, numeric, float8)
RETURNS numeric AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(internal, numeric, float8[])
RETURNS numeric[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(internal, numeric)
RETURNS numeric AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_percentile_disc(float8 ORDER BY numeric) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc(float8 ORDER BY numeric) IS 'an error that names the element types gpusort sorts (numeric is not one)';
CREATE AGGREGATE gpu_percentile_disc(float8[] ORDER BY numeric) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc(float8[] ORDER BY numeric) IS 'an error that names the element types gpusort sorts (numeric is not one)';
CREATE AGGREGATE gpu_mode(ORDER BY numeric) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_mode(ORDER BY numeric) IS 'an error that names the element types gpusort sorts (numeric is not one)';

CREATE AGGREGATE gpu_percentile_disc_agg(numeric, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc_agg(numeric, float8) IS 'an error that names the element types gpusort sorts (numeric is not one)';
CREATE AGGREGATE gpu_percentile_disc_agg(numeric, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc_agg(numeric, float8[]) IS 'an error that names the element types gpusort sorts (numeric is not one)';
CREATE AGGREGATE gpu_mode_agg(numeric) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_mode_agg(numeric) IS 'an error that names the element types gpusort sorts (numeric is not one)';

CREATE FUNCTION gpu_topk(a numeric[], k int, descending bool DEFAULT false)
RETURNS numeric[] AS 'MODULE_PATHNAME', 'gpu_topk' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_topk(numeric[], int, bool) IS 'an error that names the element types gpusort sorts (numeric is not one)';

CREATE FUNCTION gpu_topk_agg_transfn(internal, numeric, int)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(internal, numeric, int, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_unsupported(internal, numeric, int)
RETURNS numeric[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_unsupported(internal, numeric, int, bool)
RETURNS numeric[] AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_topk_agg(numeric, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = internal,
	FINALFUNC = gpu_topk_agg_final_unsupported, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_topk_agg(numeric, int) IS 'an error that names the element types gpusort sorts (numeric is not one)';
CREATE AGGREGATE gpu_topk_agg(numeric, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = internal,
	FINALFUNC = gpu_topk_agg_final_unsupported, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_topk_agg(numeric, int, bool) IS 'an error that names the element types gpusort sorts (numeric is not one)';
CREATE FUNCTION gpu_collect_transfn(internal, anyelement)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(internal, anyelement, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_percentile_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(internal, anyelement, float8[])
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_percentile_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_final(internal, float8, anyelement)
RETURNS anyelement AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_final(internal, float8[], anyelement)
RETURNS anyarray AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(internal, anyelement, float8)
RETURNS anyelement AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(internal, anyelement, float8[])
RETURNS anyarray AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(internal, anyelement)
RETURNS anyelement AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_percentile_disc(float8 ORDER BY anyelement) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc(float8 ORDER BY anyelement) IS 'an error that names the element types gpusort sorts (anyelement is not one)';
CREATE AGGREGATE gpu_percentile_disc(float8[] ORDER BY anyelement) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc(float8[] ORDER BY anyelement) IS 'an error that names the element types gpusort sorts (anyelement is not one)';
CREATE AGGREGATE gpu_mode(ORDER BY anyelement) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_mode(ORDER BY anyelement) IS 'an error that names the element types gpusort sorts (anyelement is not one)';

CREATE AGGREGATE gpu_percentile_disc_agg(anyelement, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc_agg(anyelement, float8) IS 'an error that names the element types gpusort sorts (anyelement is not one)';
CREATE AGGREGATE gpu_percentile_disc_agg(anyelement, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc_agg(anyelement, float8[]) IS 'an error that names the element types gpusort sorts (anyelement is not one)';
CREATE AGGREGATE gpu_mode_agg(anyelement) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_mode_agg(anyelement) IS 'an error that names the element types gpusort sorts (anyelement is not one)';

CREATE FUNCTION gpu_topk(a anyarray, k int, descending bool DEFAULT false)
RETURNS anyarray AS 'MODULE_PATHNAME', 'gpu_topk' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_topk(anyarray, int, bool) IS 'an error that names the element types gpusort sorts (anyelement is not one)';

CREATE FUNCTION gpu_topk_agg_transfn(internal, anyelement, int)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(internal, anyelement, int, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_unsupported(internal, anyelement, int)
RETURNS anyarray AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_unsupported(internal, anyelement, int, bool)
RETURNS anyarray AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_topk_agg(anyelement, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = internal,
	FINALFUNC = gpu_topk_agg_final_unsupported, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_topk_agg(anyelement, int) IS 'an error that names the element types gpusort sorts (anyelement is not one)';
CREATE AGGREGATE gpu_topk_agg(anyelement, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = internal,
	FINALFUNC = gpu_topk_agg_final_unsupported, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_topk_agg(anyelement, int, bool) IS 'an error that names the element types gpusort sorts (anyelement is not one)';
