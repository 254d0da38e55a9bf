-- gpu_sort(array_agg(x) [, descending]) is planned as the aggregate
-- gpu_sort_agg(x [, descending]), which runs as a partial aggregate in
-- parallel workers.  The two must give the same array for every input:
-- each query is run as written (rewritten) and with the rewrite defeated
-- (array_agg in a subquery that the planner keeps, OFFSET 0, and gpu_sort
-- over its column), and the two arrays are compared as text (-0 and +0 told
-- apart); both are compared with PostgreSQL's array_agg(x ORDER BY x [DESC])
-- as well.  Where the two forms could differ (another NULL placement, a
-- descending that is not a constant, DISTINCT, ...) the call is left alone.

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;

\set ECHO none
\i sql/include/helpers.sql
\set ECHO all

CREATE TABLE sa (id int4, g int4, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
				 d date, ts timestamp, tz timestamptz);
SELECT setseed(0.2);
INSERT INTO sa
SELECT i, i % 4,
	   CASE WHEN r < 0.1 THEN NULL ELSE (random() * 200 - 100)::int2 END,
	   CASE WHEN r < 0.1 THEN NULL ELSE (random() * 4e9 - 2e9)::int4 END,
	   CASE WHEN r < 0.1 THEN NULL ELSE (random() * 4e18 - 2e18)::int8 END,
	   CASE WHEN r < 0.1 THEN NULL WHEN r > 0.95 THEN '-0' ELSE (random() * 2 - 1)::float4 END,
	   CASE WHEN r < 0.1 THEN NULL WHEN r > 0.97 THEN 'NaN' WHEN r > 0.95 THEN '-0' ELSE random() * 1e6 - 5e5 END,
	   CASE WHEN r < 0.1 THEN NULL ELSE date '2000-01-01' + (random() * 20000 - 10000)::int END,
	   CASE WHEN r < 0.1 THEN NULL ELSE timestamp '2000-01-01' + (random() * 1e6 - 5e5) * interval '1 hour' END,
	   CASE WHEN r < 0.1 THEN NULL ELSE timestamptz '2000-01-01 00:00+00' + (random() * 1e4)::int * interval '1 minute' END
FROM (SELECT i, random() r FROM generate_series(1, 20000) i) s;
ANALYZE sa;

-- The plan: the aggregate in place of gpu_sort over array_agg, its FILTER
-- kept, an ORDER BY inside array_agg dropped, HAVING rewritten as well.
SET max_parallel_workers_per_gather = 0;
EXPLAIN (VERBOSE, COSTS OFF) SELECT gpu_sort(array_agg(i4)) FROM sa;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT g, gpu_sort(array_agg(f8 ORDER BY id) FILTER (WHERE id % 3 <> 0), true) FROM sa GROUP BY g
HAVING gpu_sort(array_agg(f8), descending => true) IS NOT NULL;

-- With parallel plans made cheap: partial aggregation in the workers.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 4;
EXPLAIN (VERBOSE, COSTS OFF) SELECT gpu_sort(array_agg(i4)) FROM sa;
EXPLAIN (VERBOSE, COSTS OFF) SELECT gpu_sort(array_agg(ts) FILTER (WHERE g = 1), true) FROM sa;

-- What a query's plan aggregates with: 'gpu_sort_agg' or, left alone,
-- 'array_agg'; ', partial' under partial aggregation.
CREATE FUNCTION plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	RETURN concat_ws(', ',
		CASE WHEN plan LIKE '%gpu\_sort\_agg(%' THEN 'gpu_sort_agg' END,
		CASE WHEN plan LIKE '%array\_agg(%' THEN 'array_agg' END,
		CASE WHEN plan LIKE '%Partial%Aggregate%' THEN 'partial' END);
END $$;

-- Rewritten: every direction that gpu_sort_agg places NULLs for (last
-- ascending, first descending), with ORDER BY inside array_agg, FILTER.
SELECT q, plan_of(q) FROM unnest(ARRAY[
	'SELECT gpu_sort(array_agg(i2)) FROM sa',
	'SELECT gpu_sort(array_agg(f4), false) FROM sa',
	'SELECT gpu_sort(array_agg(f4), false, false) FROM sa',
	'SELECT gpu_sort(array_agg(i8), true) FROM sa',
	'SELECT gpu_sort(array_agg(i8), true, true) FROM sa',
	'SELECT gpu_sort(array_agg(d ORDER BY id DESC)) FROM sa',
	'SELECT g, gpu_sort(array_agg(tz) FILTER (WHERE id > 10), true) FROM sa GROUP BY g',
	'SELECT gpu_sort(array_agg(i4 + 1)) FROM sa GROUP BY g HAVING gpu_sort(array_agg(i4 + 1)) IS NOT NULL'
]) q;

-- Left alone: NULLs placed where gpu_sort_agg does not put them, a
-- descending that is NULL or not a constant, DISTINCT, a volatile ORDER BY
-- inside array_agg, array_agg over arrays, a window's array_agg, an outer
-- query's aggregate, a type gpusort does not sort, and the other functions.
-- (Serial plans: PostgreSQL 16 and later aggregate array_agg in parallel too.)
SET max_parallel_workers_per_gather = 0;
SELECT q, plan_of(q) FROM unnest(ARRAY[
	'SELECT gpu_sort(array_agg(i4), false, true) FROM sa',
	'SELECT gpu_sort(array_agg(i4), true, false) FROM sa',
	'SELECT gpu_sort(array_agg(i4), NULL) FROM sa',
	'SELECT gpu_sort(array_agg(i4), g > 1) FROM sa GROUP BY g',
	'SELECT gpu_sort(array_agg(DISTINCT i4)) FROM sa',
	'SELECT gpu_sort(array_agg(i4 ORDER BY random())) FROM sa',
	'SELECT gpu_sort(array_agg(ARRAY[i4])) FROM sa',
	'SELECT gpu_sort(array_agg(i4) OVER (PARTITION BY g)) FROM sa',
	'SELECT (SELECT gpu_sort(array_agg(sa.i4)) FROM (VALUES (1)) v) FROM sa',
	'SELECT gpu_sort(array_agg(i4::numeric)) FROM sa',
	'SELECT gpu_argsort(array_agg(i4)) FROM sa',
	'SELECT gpu_sort_rows(array_agg(i4)) FROM sa'
]) q;
SET max_parallel_workers_per_gather = 4;

-- The calls left alone answer as before: the same errors, or the same array.
SELECT gpu_sort(array_agg(i4), NULL) FROM sa;
SELECT gpu_sort(array_agg(i4::numeric)) = array_agg(i4::numeric ORDER BY i4::numeric) AS numeric FROM sa;
SELECT gpu_sort(array_agg(ARRAY[i4])) FROM sa;
SELECT gpu_sort(array_agg(i4), false, true) IS NOT DISTINCT FROM array_agg(i4 ORDER BY i4 NULLS FIRST) AS nulls_first
FROM sa;

-- The rewrite is made for each plan: a view keeps gpu_sort(array_agg(x)) in
-- its definition, and its plans aggregate with gpu_sort_agg.
CREATE VIEW sa_view AS SELECT g, gpu_sort(array_agg(i4), true) AS s FROM sa GROUP BY g;
SELECT pg_get_viewdef('sa_view') AS viewdef \gset
SELECT plan_of('SELECT * FROM sa_view');
SELECT count(*) AS groups FROM sa_view WHERE s IS NOT NULL;
SELECT pg_get_viewdef('sa_view') = :'viewdef' AS unchanged,
	   pg_get_viewdef('sa_view') ~ 'gpu_sort\(array_agg\((sa\.)?i4\), true\)' AS shows_gpu_sort_array_agg;

-- The rewrite needs no right to use gpu_sort's schema: a view's caller
-- without it gets the rewrite too.  Where PUBLIC may not execute
-- gpu_sort_agg, gpu_sort over array_agg stays.
SET max_parallel_workers_per_gather = 0;
CREATE ROLE regress_sa_user;
CREATE SCHEMA sa_views;
CREATE VIEW sa_views.sa_sorted AS SELECT gpu_sort(array_agg(i2)) AS s FROM sa;
GRANT USAGE ON SCHEMA sa_views TO regress_sa_user;
GRANT SELECT ON sa_views.sa_sorted, sa TO regress_sa_user;
REVOKE USAGE ON SCHEMA public FROM PUBLIC;
SET ROLE regress_sa_user;
EXPLAIN (VERBOSE, COSTS OFF) SELECT s FROM sa_views.sa_sorted;
SELECT cardinality(s) FROM sa_views.sa_sorted;
RESET ROLE;
GRANT USAGE ON SCHEMA public TO PUBLIC;
REVOKE EXECUTE ON FUNCTION gpu_sort_agg(int2) FROM PUBLIC;
SET ROLE regress_sa_user;
EXPLAIN (VERBOSE, COSTS OFF) SELECT s FROM sa_views.sa_sorted;
SELECT s IS NOT DISTINCT FROM (SELECT array_agg(i2 ORDER BY i2) FROM sa) AS same FROM sa_views.sa_sorted;
RESET ROLE;
-- A plan is cached across roles and the executor checks EXECUTE as the role
-- that runs it: where PUBLIC may not execute gpu_sort_agg, no plan is
-- rewritten, so that a plan made by a role that may cannot fail for one that
-- may not.
GRANT EXECUTE ON FUNCTION gpu_sort_agg(int2) TO CURRENT_USER;
PREPARE sa_cached AS SELECT cardinality(s) FROM sa_views.sa_sorted;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE sa_cached;
SET ROLE regress_sa_user;
EXECUTE sa_cached;
RESET ROLE;
DEALLOCATE sa_cached;
REVOKE EXECUTE ON FUNCTION gpu_sort_agg(int2) FROM CURRENT_USER;
GRANT EXECUTE ON FUNCTION gpu_sort_agg(int2) TO PUBLIC;
DROP SCHEMA sa_views CASCADE;
REVOKE ALL ON sa FROM regress_sa_user;
DROP ROLE regress_sa_user;
SET max_parallel_workers_per_gather = 4;

-- A prepared statement's descending parameter: a constant in a custom plan
-- (rewritten), a parameter in the generic plan (left alone); same answers.
PREPARE sa_prep(bool) AS SELECT g, gpu_sort(array_agg(i8), $1)::text AS s FROM sa GROUP BY g;
SET plan_cache_mode = force_custom_plan;
SELECT plan_of('EXECUTE sa_prep(true)');
CREATE TABLE sa_custom AS EXECUTE sa_prep(true);
SET plan_cache_mode = force_generic_plan;
SET max_parallel_workers_per_gather = 0;
SELECT plan_of('EXECUTE sa_prep(true)');
SET max_parallel_workers_per_gather = 4;
CREATE TABLE sa_generic AS EXECUTE sa_prep(true);
RESET plan_cache_mode;
SELECT count(*) AS groups, count(*) FILTER (WHERE c.s IS DISTINCT FROM p.s) AS mismatches
FROM sa_custom c FULL JOIN sa_generic p USING (g);
DEALLOCATE sa_prep;

-- Compares the three forms over table tab, column col, grouped by g (or
-- not grouped), with a FILTER (or none), ascending or descending, and with an
-- ORDER BY inside array_agg of the rewritten and unrewritten forms (or none):
-- the groups, how many differ between the rewritten form (run with parallel
-- plans on or off) and the unrewritten one (as text: -0 and +0 told apart),
-- how many of the unrewritten one differ from array_agg(x ORDER BY x [DESC])
-- (as arrays: -0 = +0 there), and the rewritten form's plan.
CREATE FUNCTION compare_forms(tab text, col text, grouped bool, filter text, descending bool, parallel bool,
							  agg_order text, OUT groups int, OUT mismatches int, OUT order_by_mismatches int, OUT plan text)
LANGUAGE plpgsql AS $$
DECLARE
	key text := CASE WHEN grouped THEN 'g' ELSE '0' END;
	group_by text := CASE WHEN grouped THEN ' GROUP BY g' ELSE '' END;
	agg_filter text := CASE WHEN filter IS NULL THEN '' ELSE format(' FILTER (WHERE %s)', filter) END;
	rewritten text := format('SELECT %s AS g, gpu_sort(array_agg(%s%s)%s, %s) AS s FROM %s%s',
							 key, col, agg_order, agg_filter, descending::text, tab, group_by);
	unrewritten text := format('SELECT g, gpu_sort(a, %s) AS s FROM (SELECT %s AS g, array_agg(%s%s)%s AS a FROM %s%s OFFSET 0) sub',
							   descending::text, key, col, agg_order, agg_filter, tab, group_by);
	order_by text := format('SELECT %s AS g, array_agg(%s ORDER BY %s %s)%s AS s FROM %s%s',
							key, col, col, CASE WHEN descending THEN 'DESC' ELSE '' END, agg_filter, tab, group_by);
	got jsonb;
	want jsonb;
BEGIN
	PERFORM set_config('max_parallel_workers_per_gather', CASE WHEN parallel THEN '2' ELSE '0' END, true);
	plan := plan_of(rewritten);
	EXECUTE format('SELECT jsonb_object_agg(g, s::text) FROM (%s) r', rewritten) INTO got;
	PERFORM set_config('max_parallel_workers_per_gather', '0', true);
	EXECUTE format('SELECT jsonb_object_agg(g, s::text) FROM (%s) u', unrewritten) INTO want;
	SELECT count(*), count(*) FILTER (WHERE r.value IS DISTINCT FROM u.value) INTO groups, mismatches
	FROM jsonb_each_text(coalesce(got, '{}')) r FULL JOIN jsonb_each_text(coalesce(want, '{}')) u USING (key);
	EXECUTE format('SELECT count(*) FILTER (WHERE u.s IS DISTINCT FROM o.s) FROM (%s) u FULL JOIN (%s) o USING (g)',
				   unrewritten, order_by)
		INTO order_by_mismatches;
END $$;

-- Every type: groups with values and NULLs, with NULLs only (an all-NULL
-- group), with one row, and groups that FILTER leaves empty (NULL, as for
-- array_agg); one group, no FILTER; both directions, serial and parallel.
CREATE TABLE sa_edges AS
SELECT id, CASE WHEN id <= 5000 THEN g WHEN id <= 5003 THEN 10 ELSE 11 END AS g,
	   CASE WHEN id <= 5003 THEN NULL ELSE i2 END AS i2, i4, i8, f4, f8, d, ts, tz
FROM sa WHERE id <= 5004 OR g = 0;
UPDATE sa_edges SET i4 = NULL, i8 = NULL, f4 = NULL, f8 = NULL, d = NULL, ts = NULL, tz = NULL
WHERE g = 10;
ANALYZE sa_edges;
CREATE TEMP TABLE sa_edge_results AS
SELECT col, f.filter, descending, parallel, c.*
FROM unnest(ARRAY['i2', 'i4', 'i8', 'f4', 'f8', 'd', 'ts', 'tz']) col,
	 unnest(ARRAY[NULL, 'id % 7 <> 0', 'g = 1']) f(filter),
	 unnest(ARRAY[false, true]) descending,
	 unnest(ARRAY[false, true]) parallel,
	 LATERAL compare_forms('sa_edges', col, true, f.filter, descending, parallel, '') c;
SELECT * FROM sa_edge_results
WHERE mismatches <> 0 OR order_by_mismatches <> 0
   OR plan <> CASE WHEN parallel THEN 'gpu_sort_agg, partial' ELSE 'gpu_sort_agg' END;
SELECT count(*) AS cases, sum(groups) AS groups, sum(mismatches) AS mismatches,
	   sum(order_by_mismatches) AS order_by_mismatches
FROM sa_edge_results;

-- No rows at all: NULL, in every form.
CREATE TABLE sa_empty AS SELECT * FROM sa WHERE false;
SELECT gpu_sort(array_agg(i4)) AS rewritten, gpu_sort((SELECT array_agg(i4) FROM sa_empty)) AS unrewritten,
	   gpu_sort(array_agg(f8), true) AS rewritten_desc
FROM sa_empty;
SELECT col, c.* FROM unnest(ARRAY['i2', 'f8', 'tz']) col,
	 LATERAL compare_forms('sa_empty', col, false, NULL, true, true, '') c;

-- Property test: random tables (every type and distribution of the helpers,
-- 0 to 3000 rows, 1 to 7 groups or no GROUP BY), a random FILTER, direction,
-- ORDER BY inside array_agg and parallel setting.  Every case has a seed of
-- its own, listed when it fails; the base seed is printed (1 unless
-- gpusort_test.seed sets another).
CREATE FUNCTION sa_case(seed bigint, OUT typ text, OUT dist text, OUT n int, OUT groups int,
						OUT filter text, OUT descending bool, OUT parallel bool, OUT plan text, OUT result text)
LANGUAGE plpgsql AS $$
DECLARE
	nonempty int;
	grouped bool;
	c record;
	agg_order text;
BEGIN
	PERFORM setseed((seed % 2147483647)::float8 / 2147483647);
	typ := (ARRAY['int2', 'int4', 'int8', 'float4', 'float8', 'date', 'timestamp', 'timestamptz'])[1 + floor(random() * 8)::int];
	dist := (ARRAY['uniform', 'equal', 'few', 'zero_one', 'nulls', 'all_nulls', 'extremes'])[1 + floor(random() * 7)::int];
	n := CASE WHEN random() < 0.1 THEN floor(random() * 3)::int ELSE floor(random() * 3000)::int END;
	nonempty := 1 + floor(random() * 7)::int;
	grouped := random() < 0.8;
	filter := (ARRAY[NULL, 'id % 3 <> 0', 'g <> 0', 'x IS NOT NULL', 'x IS NULL'])[1 + floor(random() * 5)::int];
	descending := random() < 0.5;
	parallel := random() < 0.5;
	agg_order := (ARRAY['', ' ORDER BY id', ' ORDER BY x DESC'])[1 + floor(random() * 3)::int];

	SET LOCAL client_min_messages = warning;
	DROP TABLE IF EXISTS sa_prop;
	RESET client_min_messages;
	EXECUTE format('CREATE TABLE sa_prop AS SELECT o::int4 AS id, floor(random() * %s)::int4 AS g, x'
				   ' FROM unnest(%s) WITH ORDINALITY u(x, o)', nonempty, gen_input(typ, dist, n));
	ANALYZE sa_prop;
	groups := CASE WHEN grouped THEN (SELECT count(DISTINCT g) FROM sa_prop) ELSE 1 END;
	SELECT * INTO c FROM compare_forms('sa_prop', 'x', grouped, filter, descending, parallel, agg_order);
	plan := c.plan;
	result := CASE
		WHEN c.groups <> groups THEN format('%s groups of %s', c.groups, groups)
		WHEN c.mismatches <> 0 THEN format('%s groups differ from the unrewritten form', c.mismatches)
		WHEN c.order_by_mismatches <> 0 THEN format('%s groups differ from ORDER BY', c.order_by_mismatches)
		WHEN c.plan NOT LIKE 'gpu_sort_agg%' THEN 'not rewritten: ' || c.plan
		ELSE 'ok' END;
END $$;

SELECT coalesce(nullif(current_setting('gpusort_test.seed', true), '')::bigint, 1) AS seed \gset
SELECT :seed AS seed;
CREATE TEMP TABLE sa_results AS
SELECT :seed * 100000 + i AS seed, c.* FROM generate_series(1, 100) i, LATERAL sa_case(:seed * 100000 + i) c;

-- failing cases, with the seed that reproduces each: SELECT * FROM sa_case(seed)
SELECT * FROM sa_results WHERE result <> 'ok' ORDER BY seed;
SELECT count(*) AS cases, count(*) FILTER (WHERE result = 'ok') AS ok FROM sa_results;

-- the generator covers what it should (true, except by a freak of the dice)
SELECT count(DISTINCT typ) = 8 AS every_type, count(DISTINCT dist) = 7 AS every_distribution,
	   count(*) FILTER (WHERE n = 0) > 0 AS empty_input,
	   count(*) FILTER (WHERE dist = 'all_nulls' AND n > 0) > 0 AS all_null_groups,
	   count(*) FILTER (WHERE groups > 1) > 50 AS grouped,
	   count(*) FILTER (WHERE filter IS NOT NULL) > 50 AS filtered,
	   count(*) FILTER (WHERE descending) > 30 AS descending,
	   count(*) FILTER (WHERE parallel AND plan LIKE '%partial') > 20 AS parallel
FROM sa_results;

DROP TABLE sa_results, sa_edge_results, sa_prop, sa_custom, sa_generic, sa_empty, sa_edges;
DROP VIEW sa_view;
DROP TABLE sa;
DROP FUNCTION sa_case(bigint), compare_forms(text, text, bool, text, bool, bool, text), plan_of(text);
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
