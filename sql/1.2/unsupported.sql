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

-- @each numeric anyelement
CREATE FUNCTION gpu_collect_transfn(internal, @T@)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_sort_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(internal, @T@, float8)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_percentile_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_transfn(internal, @T@, float8[])
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_percentile_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_final(internal, float8, @T@)
RETURNS @T@ AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_final(internal, float8[], @T@)
RETURNS @A@ AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(internal, @T@, float8)
RETURNS @T@ AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_percentile_disc_agg_final(internal, @T@, float8[])
RETURNS @A@ AS 'MODULE_PATHNAME', 'gpu_percentile_disc_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_mode_final(internal, @T@)
RETURNS @T@ AS 'MODULE_PATHNAME', 'gpu_mode_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_percentile_disc(float8 ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc(float8 ORDER BY @T@) IS 'an error that names the element types gpusort sorts (@T@ is not one)';
CREATE AGGREGATE gpu_percentile_disc(float8[] ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc(float8[] ORDER BY @T@) IS 'an error that names the element types gpusort sorts (@T@ is not one)';
CREATE AGGREGATE gpu_mode(ORDER BY @T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA, FINALFUNC_MODIFY = SHAREABLE,
	PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_mode(ORDER BY @T@) IS 'an error that names the element types gpusort sorts (@T@ is not one)';

CREATE AGGREGATE gpu_percentile_disc_agg(@T@, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc_agg(@T@, float8) IS 'an error that names the element types gpusort sorts (@T@ is not one)';
CREATE AGGREGATE gpu_percentile_disc_agg(@T@, float8[]) (
	SFUNC = gpu_percentile_transfn, STYPE = internal,
	FINALFUNC = gpu_percentile_disc_agg_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_percentile_disc_agg(@T@, float8[]) IS 'an error that names the element types gpusort sorts (@T@ is not one)';
CREATE AGGREGATE gpu_mode_agg(@T@) (
	SFUNC = gpu_collect_transfn, STYPE = internal,
	FINALFUNC = gpu_mode_final, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_mode_agg(@T@) IS 'an error that names the element types gpusort sorts (@T@ is not one)';

CREATE FUNCTION gpu_topk(a @A@, k int, descending bool DEFAULT false)
RETURNS @A@ AS 'MODULE_PATHNAME', 'gpu_topk' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION gpu_topk(@A@, int, bool) IS 'an error that names the element types gpusort sorts (@T@ is not one)';

CREATE FUNCTION gpu_topk_agg_transfn(internal, @T@, int)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_transfn(internal, @T@, int, bool)
RETURNS internal AS 'MODULE_PATHNAME', 'gpu_topk_agg_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_unsupported(internal, @T@, int)
RETURNS @A@ AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_topk_agg_final_unsupported(internal, @T@, int, bool)
RETURNS @A@ AS 'MODULE_PATHNAME', 'gpu_topk_agg_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gpu_topk_agg(@T@, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = internal,
	FINALFUNC = gpu_topk_agg_final_unsupported, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_topk_agg(@T@, int) IS 'an error that names the element types gpusort sorts (@T@ is not one)';
CREATE AGGREGATE gpu_topk_agg(@T@, int, bool) (
	SFUNC = gpu_topk_agg_transfn, STYPE = internal,
	FINALFUNC = gpu_topk_agg_final_unsupported, FINALFUNC_EXTRA,
	COMBINEFUNC = gpu_sort_agg_combine, SERIALFUNC = gpu_sort_agg_serialize,
	DESERIALFUNC = gpu_sort_agg_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE gpu_topk_agg(@T@, int, bool) IS 'an error that names the element types gpusort sorts (@T@ is not one)';
-- @end
