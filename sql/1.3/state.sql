-- The states of the plain aggregates under one aggregate context share a
-- memory context, and a state with its first values takes 224 bytes of it
-- (a group of up to 16 int4 or 8 int8 values; src/aggregate.c,
-- AGG_STATE_SIZE): SSPACE says so to the planner, which sized a hash
-- aggregation by the 1 kB first block of a memory context per state before.

-- @each int2 int4 int8 float4 float8 date timestamp timestamptz
CREATE OR REPLACE AGGREGATE gpu_sort_agg(@T@) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 224, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(@T@, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 224, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(@T@, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 224, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(@T@, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 224, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(@T@, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 224, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(@T@, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 224, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(@T@) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 224, PARALLEL = SAFE);
-- @end

-- @each int2 int4 int8 float4 float8
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(@T@, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 224, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(@T@, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_multi_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 224, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_median(@T@) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state, FINALFUNC = gpu_median_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 224, PARALLEL = SAFE);
-- @end
