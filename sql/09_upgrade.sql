-- ALTER EXTENSION gpusort UPDATE must give the objects a fresh install of
-- the current version gives, from 1.0 (through 1.1 and 1.2), from 1.1 and
-- from 1.2: every
-- column of every catalog row of the extension's members (pg_proc, and
-- whichever catalogs hold its other members) and of its aggregates'
-- pg_aggregate rows, their comments, initial privileges and dependencies.
-- A column that refers to another object by oid is compared as that
-- object's description (pg_get_catalog_foreign_keys says which columns do),
-- and an expression tree without its positions in the script's text, so
-- the comparison needs no list of columns and holds on every PostgreSQL
-- version.  Prints the rows that differ (none).  An update from 1.1 drops
-- nothing: views over its functions and revoked privileges survive it.

DROP EXTENSION gpusort;

-- One catalog's rows with the given oids (pg_aggregate: aggfnoid), one row
-- per column: the object, catalog.column, and the value as text.
CREATE FUNCTION pg_temp.catalog_rows(catalog regclass, oids oid[])
RETURNS TABLE (object text, attribute text, value text) LANGUAGE plpgsql AS $$
DECLARE
	key text := CASE WHEN catalog = 'pg_aggregate'::regclass THEN 'aggfnoid' ELSE 'oid' END;
	owner regclass := CASE WHEN catalog = 'pg_aggregate'::regclass THEN 'pg_proc'::regclass ELSE catalog END;
	columns text;
BEGIN
	SELECT string_agg(format('(%L, %s)', catalog::text || '.' || a.attname,
		CASE
			WHEN fk.pktable IS NOT NULL AND fk.is_array THEN
				format('(SELECT string_agg(CASE WHEN e = 0 THEN ''-'' ELSE pg_describe_object(%s, e, 0) END, '', '' ORDER BY o) FROM unnest(c.%I::oid[]) WITH ORDINALITY u(e, o))',
					   fk.pktable::oid, a.attname)
			WHEN fk.pktable IS NOT NULL THEN
				format('CASE WHEN c.%I::oid = 0 THEN ''-'' ELSE pg_describe_object(%s, c.%I::oid, 0) END',
					   a.attname, fk.pktable::oid, a.attname)
			WHEN a.atttypid IN ('oid'::regtype, 'oid[]'::regtype, 'oidvector'::regtype)
				 OR format_type(a.atttypid, NULL) LIKE 'reg%' THEN
				format('''unresolved oid '' || c.%I::text', a.attname)
			WHEN a.atttypid = 'pg_node_tree'::regtype THEN
				format('regexp_replace(c.%I::text, '':location -?[0-9]+'', '':location'', ''g'')', a.attname)
			ELSE format('c.%I::text', a.attname)
		END), ', ' ORDER BY a.attnum)
	INTO columns
	FROM pg_attribute a
	LEFT JOIN pg_get_catalog_foreign_keys() fk
		ON fk.fktable = catalog AND fk.fkcols = ARRAY[a.attname::text]
	WHERE a.attrelid = catalog AND a.attnum > 0 AND NOT a.attisdropped AND a.attname <> 'oid';

	RETURN QUERY EXECUTE format(
		'SELECT pg_describe_object(%s, c.%I, 0), v.attribute, v.value FROM %s c, LATERAL (VALUES %s) v(attribute, value) WHERE c.%I = ANY ($1)',
		owner::oid, key, catalog, columns, key) USING oids;
END $$;

-- Everything about the installed extension's members.
CREATE FUNCTION pg_temp.gpusort_catalog()
RETURNS TABLE (object text, attribute text, value text) LANGUAGE sql AS $$
	WITH members AS (
		SELECT d.classid, d.objid FROM pg_depend d
		WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpusort')
	), classes AS (
		SELECT classid AS catalog, array_agg(objid) AS oids FROM members GROUP BY classid
		UNION ALL
		SELECT 'pg_aggregate'::regclass, array_agg(objid) FROM members WHERE classid = 'pg_proc'::regclass
	)
	SELECT r.* FROM classes, pg_temp.catalog_rows(catalog, oids) r
	UNION ALL
	SELECT pg_describe_object(m.classid, m.objid, 0), 'comment', c.description
	FROM members m JOIN pg_description c ON c.classoid = m.classid AND c.objoid = m.objid
	UNION ALL
	SELECT pg_describe_object(m.classid, m.objid, 0), 'initial privileges ' || i.privtype::text, i.initprivs::text
	FROM members m JOIN pg_init_privs i ON i.classoid = m.classid AND i.objoid = m.objid
	UNION ALL
	SELECT pg_describe_object(m.classid, m.objid, 0), 'depends on',
		   d.deptype::text || ' ' || pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)
	FROM members m JOIN pg_depend d ON d.classid = m.classid AND d.objid = m.objid
$$;

-- 1.0, then 1.1, then the current version
CREATE EXTENSION gpusort VERSION '1.0';
ALTER EXTENSION gpusort UPDATE TO '1.1';
ALTER EXTENSION gpusort UPDATE;
CREATE TEMP TABLE from_1_0 AS SELECT * FROM pg_temp.gpusort_catalog();
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';

-- the new types work in the updated install
SELECT gpu_sort('{2024-03-01,infinity,NULL,-infinity,2024-01-31}'::date[]) AS updated_sort;
DROP EXTENSION gpusort;

-- 1.1, then the current version
CREATE EXTENSION gpusort VERSION '1.1';
ALTER EXTENSION gpusort UPDATE;
CREATE TEMP TABLE from_1_1 AS SELECT * FROM pg_temp.gpusort_catalog();
DROP EXTENSION gpusort;

-- 1.2, then the current version
CREATE EXTENSION gpusort VERSION '1.2';
ALTER EXTENSION gpusort UPDATE;
CREATE TEMP TABLE from_1_2 AS SELECT * FROM pg_temp.gpusort_catalog();
DROP EXTENSION gpusort;

-- a fresh install of the default version
CREATE EXTENSION gpusort;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'gpusort')
	AS fresh_is_default
FROM pg_extension WHERE extname = 'gpusort';
CREATE TEMP TABLE fresh AS SELECT * FROM pg_temp.gpusort_catalog();

-- what was compared: members, columns of pg_proc and pg_aggregate, comments,
-- dependencies, and no oid column left unresolved
SELECT (SELECT count(DISTINCT object) FROM fresh) > 300 AS members,
	   (SELECT count(DISTINCT attribute) FROM fresh WHERE attribute LIKE 'pg_proc.%') > 25 AS proc_columns,
	   (SELECT count(DISTINCT attribute) FROM fresh WHERE attribute LIKE 'pg_aggregate.%') > 15 AS aggregate_columns,
	   (SELECT count(*) FROM fresh WHERE attribute = 'comment') > 100 AS comments,
	   (SELECT count(*) FROM fresh WHERE attribute = 'depends on') > 300 AS dependencies,
	   (SELECT count(*) FROM fresh WHERE value LIKE 'unresolved oid%') AS unresolved;

-- the rows of an updated install that a fresh one lacks, and the reverse
SELECT 'from 1.0' AS updated, diff.* FROM (
	(SELECT 'only after update' AS side, * FROM from_1_0 EXCEPT SELECT 'only after update', * FROM fresh)
	UNION ALL
	(SELECT 'only in fresh install', * FROM fresh EXCEPT SELECT 'only in fresh install', * FROM from_1_0)) diff
UNION ALL
SELECT 'from 1.1', diff.* FROM (
	(SELECT 'only after update' AS side, * FROM from_1_1 EXCEPT SELECT 'only after update', * FROM fresh)
	UNION ALL
	(SELECT 'only in fresh install', * FROM fresh EXCEPT SELECT 'only in fresh install', * FROM from_1_1)) diff
UNION ALL
SELECT 'from 1.2', diff.* FROM (
	(SELECT 'only after update' AS side, * FROM from_1_2 EXCEPT SELECT 'only after update', * FROM fresh)
	UNION ALL
	(SELECT 'only in fresh install', * FROM fresh EXCEPT SELECT 'only in fresh install', * FROM from_1_2)) diff
ORDER BY 1, 3, 4, 2, 5;

-- every element type has each function and both aggregates
SELECT t AS type,
	   to_regprocedure(format('gpu_sort(%s[], bool, bool)', t)) IS NOT NULL AS sort,
	   to_regprocedure(format('gpu_argsort(%s[], bool, bool)', t)) IS NOT NULL AS argsort,
	   to_regprocedure(format('gpu_sort_rows(%s[], bool, bool)', t)) IS NOT NULL AS sort_rows,
	   to_regprocedure(format('gpu_sort_agg(%s)', t)) IS NOT NULL
		   AND to_regprocedure(format('gpu_sort_agg(%s, bool)', t)) IS NOT NULL AS sort_agg
FROM unnest('{int2,int4,int8,float4,float8,date,timestamp,timestamptz}'::text[]) t;
DROP EXTENSION gpusort;

-- An update from 1.1 keeps every object: views over the functions, revoked
-- privileges and the objects' oids survive it.
CREATE EXTENSION gpusort VERSION '1.1';
CREATE VIEW upgrade_last_run AS SELECT elements, device FROM gpusort_last_run();
CREATE VIEW upgrade_info AS SELECT built_with_cuda, mode FROM gpusort_info();
REVOKE EXECUTE ON FUNCTION gpusort_last_run() FROM PUBLIC;
-- views over the aggregates whose transition type the update changes
CREATE TABLE upgrade_data AS SELECT (i * 7919) % 101 AS x FROM generate_series(1, 1000) i;
CREATE VIEW upgrade_aggs AS
SELECT gpu_sort_agg(x) AS sorted, gpu_median(x) AS median, gpu_topk_agg(x, 3, true) AS top3,
	   gpu_percentile_disc_agg(x, 0.25) AS disc, gpu_mode_agg(x) AS mode
FROM upgrade_data;
CREATE TEMP TABLE members_1_1 AS
SELECT classid, objid FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpusort');
ALTER EXTENSION gpusort UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';
SELECT (SELECT count(*) FROM upgrade_last_run) >= 0 AS view_last_run,
	   (SELECT count(*) FROM upgrade_info) = 1 AS view_info,
	   has_function_privilege('public', 'gpusort_last_run()', 'EXECUTE') AS public_may_run,
	   (SELECT count(*) FROM members_1_1 m
		WHERE NOT EXISTS (SELECT FROM pg_depend d
						  WHERE d.classid = m.classid AND d.objid = m.objid AND d.deptype = 'e'
							AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpusort')))
		   AS members_lost;
SELECT sorted = (SELECT array_agg(x ORDER BY x) FROM upgrade_data) AS view_sort_agg,
	   median = (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM upgrade_data) AS view_median,
	   top3 = (SELECT (array_agg(x ORDER BY x DESC))[1:3] FROM upgrade_data) AS view_topk,
	   disc = (SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY x) FROM upgrade_data) AS view_disc,
	   mode = (SELECT mode() WITHIN GROUP (ORDER BY x) FROM upgrade_data) AS view_mode
FROM upgrade_aggs;
-- the plain aggregates' transition type is gpusort_state after the update
SELECT p.proname, count(*) AS aggregates, string_agg(DISTINCT a.aggtranstype::regtype::text, ',') AS transition_types
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
WHERE p.proname IN ('gpu_sort_agg', 'gpu_median', 'gpu_percentile_cont_agg', 'gpu_percentile_disc_agg',
					'gpu_mode_agg', 'gpu_topk_agg')
  AND p.proargtypes[0] = ANY ('{int2,int4,int8,float4,float8,date,timestamp,timestamptz}'::regtype[])
GROUP BY p.proname ORDER BY p.proname;
DROP VIEW upgrade_last_run, upgrade_info, upgrade_aggs;
DROP TABLE upgrade_data;
DROP EXTENSION gpusort;
CREATE EXTENSION gpusort;
