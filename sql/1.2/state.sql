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

-- @each int2 int4 int8 float4 float8 date timestamp timestamptz
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, @T@)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_transfn(gpusort_state, @T@, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_sort_agg_final_@T@(gpusort_state)
RETURNS @A@ AS 'MODULE_PATHNAME', 'gpu_sort_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_sort_agg(@T@) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(@T@, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, @T@, int)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(gpusort_state, @T@, int, bool)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_@T@(gpusort_state)
RETURNS @A@ AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_topk_agg(@T@, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(@T@, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);

CREATE FUNCTION gpu_collect_transfn(gpusort_state, @T@)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, @T@, float8)
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(gpusort_state, @T@, float8[])
RETURNS gpusort_state AS 'MODULE_PATHNAME', 'gpu_percentile_transfn_state' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, @T@, float8)
RETURNS @T@ AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(gpusort_state, @T@, float8[])
RETURNS @A@ AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(gpusort_state, @T@)
RETURNS @T@ AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(@T@, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(@T@, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(@T@) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
-- @end

-- @each int2 int4 int8 float4 float8
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(@T@, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(@T@, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_multi_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_median(@T@) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state, FINALFUNC = gpu_median_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 1024, PARALLEL = SAFE);
-- @end
