-- ALTER EXTENSION gpusort UPDATE from 1.0 must give the same objects as a
-- fresh install of the current version: the extension's members as
-- pg_describe_object names them, with each function's signature, result,
-- attributes and C symbol, and each aggregate's support functions.  Prints
-- the versions, whether the numbers of members agree, and the members that
-- differ (none).

DROP EXTENSION gpusort;

CREATE FUNCTION pg_temp.gpusort_members()
RETURNS TABLE (object text, definition text) LANGUAGE sql AS $$
	SELECT pg_describe_object(d.classid, d.objid, d.objsubid),
		   coalesce((SELECT format('(%s) %s%s %s %s strict=%s rows=%s %s',
								   pg_get_function_arguments(p.oid),
								   CASE WHEN p.proretset THEN 'SETOF ' ELSE '' END,
								   format_type(p.prorettype, NULL), p.provolatile, p.proparallel,
								   p.proisstrict, p.prorows, p.prosrc)
					 FROM pg_proc p WHERE d.classid = 'pg_proc'::regclass AND p.oid = d.objid), '') ||
		   coalesce((SELECT format(' agg %s %s %s %s %s %s', a.aggtransfn, a.aggfinalfn, a.aggcombinefn,
								   a.aggserialfn, a.aggdeserialfn, format_type(a.aggtranstype, NULL))
					 FROM pg_aggregate a WHERE d.classid = 'pg_proc'::regclass AND a.aggfnoid = d.objid), '')
	FROM pg_depend d
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpusort')
$$;

CREATE EXTENSION gpusort VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';
SELECT count(*) AS members_1_0 FROM pg_temp.gpusort_members();

ALTER EXTENSION gpusort UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.gpusort_members();

-- the new types work in the updated install
SELECT gpu_sort('{2024-03-01,infinity,NULL,-infinity,2024-01-31}'::date[]) AS updated_sort;

DROP EXTENSION gpusort;
CREATE EXTENSION gpusort;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'gpusort')
	AS fresh_is_default
FROM pg_extension WHERE extname = 'gpusort';
CREATE TEMP TABLE fresh AS SELECT * FROM pg_temp.gpusort_members();

SELECT (SELECT count(*) FROM updated) = (SELECT count(*) FROM fresh) AS same_count,
	   (SELECT count(*) FROM fresh) > 46 AS more_than_1_0;

-- members of one install that the other lacks or defines differently
(SELECT 'only after update' AS side, * FROM updated EXCEPT SELECT 'only after update', * FROM fresh)
UNION ALL
(SELECT 'only in fresh install', * FROM fresh EXCEPT SELECT 'only in fresh install', * FROM updated)
ORDER BY 2, 1;

-- every element type has each function and both aggregates
SELECT t AS type,
	   to_regprocedure(format('gpu_sort(%s[], bool, bool)', t)) IS NOT NULL AS sort,
	   to_regprocedure(format('gpu_argsort(%s[], bool, bool)', t)) IS NOT NULL AS argsort,
	   to_regprocedure(format('gpu_sort_rows(%s[], bool, bool)', t)) IS NOT NULL AS sort_rows,
	   to_regprocedure(format('gpu_sort_agg(%s)', t)) IS NOT NULL
		   AND to_regprocedure(format('gpu_sort_agg(%s, bool)', t)) IS NOT NULL AS sort_agg
FROM unnest('{int2,int4,int8,float4,float8,date,timestamp,timestamptz}'::text[]) t;
