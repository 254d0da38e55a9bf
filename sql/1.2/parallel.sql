-- The WITHIN GROUP aggregates are PARALLEL SAFE, as percentile_cont,
-- percentile_disc and mode are: a parallel-unsafe aggregate would keep the
-- whole query serial.  They gather their rows in the leader (no partial
-- aggregation), below which the scan may run in parallel workers.

-- @each int2 int4 int8 float4 float8 date timestamp timestamptz
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8 ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_disc(float8[] ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_mode(ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
-- @end

-- @each int2 int4 int8 float4 float8
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8 ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE gpu_percentile_cont(float8[] ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
-- @end
