-- gpu_percentile_cont, gpu_percentile_disc, gpu_median and gpu_mode: the
-- answers of percentile_cont, percentile_disc and mode, as WITHIN GROUP
-- aggregates, and as plain aggregates that may run in parallel workers
-- (gpu_percentile_cont_agg(x, fraction), gpu_percentile_disc_agg, gpu_mode_agg,
-- gpu_median: an ordered-set aggregate and a plain one cannot share a name
-- and argument types).
-- percentile_cont (and so gpu_median) is offered for the numeric types, whose
-- values PostgreSQL's percentile_cont takes through their cast to double
-- precision; percentile_disc and mode for every gpusort type.

-- Final functions shared by every element type.  Not STRICT: a NULL state or
-- fraction gives NULL.
CREATE FUNCTION gpu_percentile_cont_final(internal, float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'gpu_percentile_cont_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_cont_final(internal, float8[])
RETURNS float8[] AS 'MODULE_PATHNAME', 'gpu_percentile_cont_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_cont_agg_final(internal)
RETURNS float8 AS 'MODULE_PATHNAME', 'gpu_percentile_cont_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_cont_multi_agg_final(internal)
RETURNS float8[] AS 'MODULE_PATHNAME', 'gpu_percentile_cont_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_median_final(internal)
RETURNS float8 AS 'MODULE_PATHNAME', 'gpu_median_final' LANGUAGE C PARALLEL SAFE;

-- @each int2 int4 int8 float4 float8 date timestamp timestamptz
CREATE FUNCTION gpu_collect_transfn(internal, @T@)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(internal, @T@, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_percentile_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(internal, @T@, float8[])
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_percentile_transfn' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION gpu_percentile_disc_final(internal, float8, @T@)
RETURNS @T@ AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_final(internal, float8[], @T@)
RETURNS @T@[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(internal, @T@, float8)
RETURNS @T@ AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(internal, @T@, float8[])
RETURNS @T@[] AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(internal, @T@)
RETURNS @T@ AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_percentile_disc(float8 ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE);
COMMENT ON AGGREGATE gpu_percentile_disc(float8 ORDER BY @T@) IS 'the first @T@ value whose position in the sort order is at least the fraction, as percentile_disc';
CREATE AGGREGATE gpu_percentile_disc(float8[] ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE);
COMMENT ON AGGREGATE gpu_percentile_disc(float8[] ORDER BY @T@) IS 'percentile_disc of each fraction, an array of @T@ of the fractions'' shape';
CREATE AGGREGATE gpu_mode(ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE);
COMMENT ON AGGREGATE gpu_mode(ORDER BY @T@) IS 'the most frequent @T@ value, the smallest of equally frequent ones, as mode';

CREATE AGGREGATE gpu_percentile_disc_agg(@T@, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc_agg(@T@, float8) IS 'percentile_disc(fraction) WITHIN GROUP (ORDER BY x) as a plain aggregate that may run in parallel workers; the fraction is the same in every row';
CREATE AGGREGATE gpu_percentile_disc_agg(@T@, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc_agg(@T@, float8[]) IS 'percentile_disc(fractions) WITHIN GROUP (ORDER BY x) as a plain aggregate that may run in parallel workers';
CREATE AGGREGATE gpu_mode_agg(@T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_mode_agg(@T@) IS 'mode() WITHIN GROUP (ORDER BY x) as a plain aggregate that may run in parallel workers';
-- @end

-- @each int2 int4 int8 float4 float8
CREATE AGGREGATE gpu_percentile_cont(float8 ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE);
COMMENT ON AGGREGATE gpu_percentile_cont(float8 ORDER BY @T@) IS 'the value at the fraction of the sort order, interpolated, as percentile_cont over the values as double precision';
CREATE AGGREGATE gpu_percentile_cont(float8[] ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_cont_final, FINALFUNC_MODIFY = SHAREABLE);
COMMENT ON AGGREGATE gpu_percentile_cont(float8[] ORDER BY @T@) IS 'percentile_cont of each fraction, an array of the fractions'' shape';

CREATE AGGREGATE gpu_percentile_cont_agg(@T@, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = internal, FINALFUNC = gpu_percentile_cont_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_cont_agg(@T@, float8) IS 'percentile_cont(fraction) WITHIN GROUP (ORDER BY x) as a plain aggregate that may run in parallel workers; the fraction is the same in every row';
CREATE AGGREGATE gpu_percentile_cont_agg(@T@, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = internal, FINALFUNC = gpu_percentile_cont_multi_agg_final,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_cont_agg(@T@, float8[]) IS 'percentile_cont(fractions) WITHIN GROUP (ORDER BY x) as a plain aggregate that may run in parallel workers';
CREATE AGGREGATE gpu_median(@T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal, FINALFUNC = gpu_median_final,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_median(@T@) IS 'percentile_cont(0.5) WITHIN GROUP (ORDER BY x) as a plain aggregate that may run in parallel workers';
-- @end
