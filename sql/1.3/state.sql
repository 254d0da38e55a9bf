-- The states of the plain aggregates under one aggregate context share a
-- memory context, and a state with its first values takes 224 bytes of it
-- (a group of up to 16 int4 or 8 int8 values; src/aggregate.c,
-- AGG_STATE_SIZE).  SSPACE is not that size but what the planner takes for
-- array_agg's internal state: it adds 16 bytes to the SSPACE of a state
-- passed by reference, so 8176 gives ALLOCSET_DEFAULT_INITSIZE (8 kB) a
-- group, as for array_agg (PostgreSQL 18 rounds the sum up to a power of 2:
-- 8 kB again).  A hash aggregation holds at most hash_mem / that many groups
-- in a batch: where groups x 8 kB fit in hash_mem nothing changes; where
-- they do not, it spills though the states would fit, and a batch of hash_mem / 8 kB groups
-- (a few thousand at 32 MB) stays in the CPU's caches and its hash table,
-- states and final pass take less time than the spilled rows written and
-- read again, as for array_agg: 10^6 groups of 1 to 10 rows at work_mem 16MB
-- took 1.3x array_agg's time and 6x its memory with SSPACE 224 (a full
-- hash_mem, 17 batches), and take 1.0-1.2x and 1.06x with 8176 (513 batches,
-- as array_agg).

-- @each int2 int4 int8 float4 float8 date timestamp timestamptz
CREATE OR REPLACE AGGREGATE gpu_sort_agg(@T@) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 8176, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_sort_agg(@T@, bool) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 8176, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(@T@, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 8176, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_topk_agg(@T@, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_topk_agg_final_@T@,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 8176, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(@T@, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 8176, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc_agg(@T@, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 8176, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode_agg(@T@) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 8176, PARALLEL = SAFE);
-- @end

-- @each int2 int4 int8 float4 float8
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(@T@, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 8176, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont_agg(@T@, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_multi_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 8176, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_median(@T@) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state, FINALFUNC = gpu_median_final,
	COMBINEFUNC = gpu_sort_agg_combine, SSPACE = 8176, PARALLEL = SAFE);
-- @end
