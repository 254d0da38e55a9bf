--
-- 42_sort_node_topk_groups: a hashed aggregation whose only aggregate is
-- gpu_topk_agg(x, k [, descending]) of a constant k runs as a sorted one
-- over the sort node, which sorts the input by the grouping columns and x
-- and keeps about k rows a group (the rows of rank at most k in each group,
-- and the next peer group).  Checked against (array_agg(x ORDER BY x
-- [DESC]))[1:k] of each group and against the hashed aggregation
-- (gpusort.enable_topk_groups = off): every element type the aggregate
-- packs, both directions, NULL values and NULL groups, ties at the cut,
-- groups smaller than k, k of 1 and past every group, two grouping
-- columns, a text one under a collation, HAVING, rescans; and the plans that
-- keep the hashed aggregation (other aggregates, HAVING count(*), a
-- parameter's k, an expression's value, the numeric and polymorphic
-- overloads, the setting off).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
SET gpusort.sort_node_min_rows = 0;
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 0;
-- the hashed aggregation, not Sort and a GroupAggregate
SET enable_sort = off;

-- Whether q (a query of gpu_topk_agg ... GROUP BY with the aggregate's
-- column named t and the grouping columns before it) gives the same rows
-- as ref (the same groups with array_agg's first k), and as itself with the
-- hashed aggregation; 'node' where the node was in q's plan, 'hash' where
-- it was not.
CREATE FUNCTION topk_check(q text, ref text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
	n bigint;
	bad text := '';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	EXECUTE format('CREATE TEMP TABLE tc_on AS %s', q);
	PERFORM set_config('gpusort.enable_topk_groups', 'off', true);
	EXECUTE format('CREATE TEMP TABLE tc_off AS %s', q);
	PERFORM set_config('gpusort.enable_topk_groups', 'on', true);
	EXECUTE format('CREATE TEMP TABLE tc_ref AS %s', ref);
	EXECUTE 'SELECT count(*) FROM ((TABLE tc_on EXCEPT ALL TABLE tc_ref) UNION ALL (TABLE tc_ref EXCEPT ALL TABLE tc_on)) d' INTO n;
	IF n > 0 THEN
		bad := bad || format(' %s rows differ from array_agg''s', n);
	END IF;
	EXECUTE 'SELECT count(*) FROM ((TABLE tc_on EXCEPT ALL TABLE tc_off) UNION ALL (TABLE tc_off EXCEPT ALL TABLE tc_on)) d' INTO n;
	IF n > 0 THEN
		bad := bad || format(' %s rows differ from the hashed aggregation''s', n);
	END IF;
	SELECT count(*) INTO n FROM tc_on;
	DROP TABLE tc_on, tc_off, tc_ref;
	RETURN CASE WHEN bad <> '' THEN 'FAILED:' || bad
		ELSE format('%s groups, %s', n,
					CASE WHEN plan LIKE '%Custom Scan (gpusort)%' AND plan LIKE '%GroupAggregate%' THEN 'node'
						 WHEN plan LIKE '%HashAggregate%' THEN 'hash' ELSE 'other' END) END;
END $$;

-- 20,000 rows: g int4 of 300 values, NULL in 1% of rows, and 50 groups of
-- one row; c text of 7 values; each value column with 5% NULLs and many
-- ties (values from small ranges), f8 with NaN and infinities
SELECT setseed(0.42);
CREATE TABLE tg (id int4, g int4, c text, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
				 d date, ts timestamp, tz timestamptz, m numeric);
INSERT INTO tg
SELECT i,
	   CASE WHEN i > 19950 THEN 1000 + i WHEN random() < 0.01 THEN NULL ELSE floor(random() * 300)::int4 END,
	   (ARRAY['a', 'B', 'b', 'c', 'C', 'é', 'd'])[1 + floor(random() * 7)::int],
	   CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 600 - 300)::int2 END,
	   CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 200 - 100)::int4 END,
	   CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 1e18 - 5e17)::int8 END,
	   CASE WHEN random() < 0.05 THEN NULL ELSE round((random() * 40 - 20)::numeric, 1)::float4 END,
	   CASE WHEN random() < 0.05 THEN NULL WHEN random() < 0.01 THEN 'NaN'
			WHEN random() < 0.01 THEN '-Infinity' ELSE round((random() * 100)::numeric, 0)::float8 END,
	   CASE WHEN random() < 0.05 THEN NULL ELSE date '2000-01-01' + (random() * 50)::int END,
	   CASE WHEN random() < 0.05 THEN NULL ELSE timestamp '2000-01-01' + random() * interval '9000 days' END,
	   CASE WHEN random() < 0.05 THEN NULL ELSE timestamptz '2000-01-01 UTC' + (random() * 60)::int * interval '1 hour' END,
	   round((random() * 100)::numeric, 1)
FROM generate_series(1, 20000) i;
ANALYZE tg;

-- every element type, both directions, k of 1, 3, 10 and past every group
SELECT col, k, dir,
	   topk_check(format('SELECT g, gpu_topk_agg(%s, %s%s) t FROM tg GROUP BY g', col, k,
						 CASE dir WHEN 'asc' THEN '' WHEN 'asc, explicit' THEN ', false' ELSE ', true' END),
				  format('SELECT g, (array_agg(%s ORDER BY %s%s))[1:%s] t FROM tg GROUP BY g', col, col,
						 CASE WHEN dir = 'desc' THEN ' DESC' ELSE '' END, k)) AS result
FROM unnest(ARRAY['i2', 'i4', 'i8', 'f4', 'f8', 'd', 'ts', 'tz']) col,
	 unnest(ARRAY[1, 3, 10, 500]) k,
	 unnest(ARRAY['asc', 'desc']) dir
ORDER BY 1, 2, 3;
SELECT topk_check('SELECT g, gpu_topk_agg(i4, 5, false) t FROM tg GROUP BY g',
				  'SELECT g, (array_agg(i4 ORDER BY i4))[1:5] t FROM tg GROUP BY g');

-- two grouping columns, one of text under a collation; the value a
-- grouping column too; the aggregate in HAVING and under an expression
SELECT topk_check('SELECT c, g, gpu_topk_agg(f8, 4, true) t FROM tg GROUP BY c, g',
				  'SELECT c, g, (array_agg(f8 ORDER BY f8 DESC))[1:4] t FROM tg GROUP BY c, g');
SELECT topk_check('SELECT c COLLATE "C" AS c, gpu_topk_agg(i8, 7) t FROM tg GROUP BY c COLLATE "C"',
				  'SELECT c COLLATE "C" AS c, (array_agg(i8 ORDER BY i8))[1:7] t FROM tg GROUP BY c COLLATE "C"');
SELECT topk_check('SELECT i4 % 7 AS m, gpu_topk_agg(i4, 3, true) t FROM tg GROUP BY i4 % 7',
				  'SELECT i4 % 7 AS m, (array_agg(i4 ORDER BY i4 DESC))[1:3] t FROM tg GROUP BY i4 % 7');
SELECT topk_check('SELECT g, gpu_topk_agg(d, 2) t FROM tg GROUP BY g HAVING gpu_topk_agg(d, 2) IS NOT NULL AND g < 100',
				  'SELECT g, (array_agg(d ORDER BY d))[1:2] t FROM tg GROUP BY g HAVING g < 100');
SELECT topk_check('SELECT g, array_length(gpu_topk_agg(f4, 6, true), 1) t FROM tg GROUP BY g',
				  'SELECT g, array_length((array_agg(f4 ORDER BY f4 DESC))[1:6], 1) t FROM tg GROUP BY g');
SELECT topk_check('SELECT g, unnest(gpu_topk_agg(tz, 3)) t FROM tg GROUP BY g',
				  'SELECT g, unnest((array_agg(tz ORDER BY tz))[1:3]) t FROM tg GROUP BY g');

-- 900 groups: the CPU path's selection before the sort grows its table
SELECT topk_check('SELECT id % 900 AS r, gpu_topk_agg(f8, 2) t FROM tg GROUP BY id % 900',
				  'SELECT id % 900 AS r, (array_agg(f8 ORDER BY f8))[1:2] t FROM tg GROUP BY id % 900');
SELECT topk_check('SELECT id % 900 AS r, gpu_topk_agg(i8, 3, true) t FROM tg GROUP BY id % 900',
				  'SELECT id % 900 AS r, (array_agg(i8 ORDER BY i8 DESC))[1:3] t FROM tg GROUP BY id % 900');

-- a WHERE that leaves groups of one row and no rows at all
SELECT topk_check('SELECT g, gpu_topk_agg(i4, 2) t FROM tg WHERE id % 97 = 0 GROUP BY g',
				  'SELECT g, (array_agg(i4 ORDER BY i4))[1:2] t FROM tg WHERE id % 97 = 0 GROUP BY g');
SELECT topk_check('SELECT g, gpu_topk_agg(i4, 2) t FROM tg WHERE id < 0 GROUP BY g',
				  'SELECT g, (array_agg(i4 ORDER BY i4))[1:2] t FROM tg WHERE id < 0 GROUP BY g');

-- rescans: a LATERAL aggregation over each of a few categories
SELECT topk_check('SELECT v.c, s.g, s.t FROM (VALUES (''a''), (''b''), (''C'')) v(c), LATERAL (SELECT g, gpu_topk_agg(i2, 3, true) t FROM tg WHERE tg.c = v.c GROUP BY g) s',
				  'SELECT v.c, s.g, s.t FROM (VALUES (''a''), (''b''), (''C'')) v(c), LATERAL (SELECT g, (array_agg(i2 ORDER BY i2 DESC))[1:3] t FROM tg WHERE tg.c = v.c GROUP BY g) s');

-- the plan: a GroupAggregate over the node, its bound in each group
EXPLAIN (COSTS OFF) SELECT g, gpu_topk_agg(f8, 10, true) FROM tg GROUP BY g;
EXPLAIN (COSTS OFF) SELECT c, g, gpu_topk_agg(i4, 3) FROM tg GROUP BY c, g;

-- the hashed aggregation stays: another aggregate, HAVING count(*), a
-- parameter's k, a value that is an expression, the numeric and
-- polymorphic overloads, a k below 1, the setting off
SELECT topk_check('SELECT g, gpu_topk_agg(i4, 3) t, count(*) n FROM tg GROUP BY g',
				  'SELECT g, (array_agg(i4 ORDER BY i4))[1:3] t, count(*) n FROM tg GROUP BY g');
SELECT topk_check('SELECT g, gpu_topk_agg(i4, 3) t FROM tg GROUP BY g HAVING count(*) > 60',
				  'SELECT g, (array_agg(i4 ORDER BY i4))[1:3] t FROM tg GROUP BY g HAVING count(*) > 60');
SELECT topk_check('SELECT g, gpu_topk_agg(i4 + 1, 3) t FROM tg GROUP BY g',
				  'SELECT g, (array_agg(i4 + 1 ORDER BY i4 + 1))[1:3] t FROM tg GROUP BY g');
SELECT topk_check('SELECT g, gpu_topk_agg(m, 3) t FROM tg GROUP BY g',
				  'SELECT g, (array_agg(m ORDER BY m))[1:3] t FROM tg GROUP BY g');
SELECT topk_check('SELECT g, gpu_topk_agg(c, 3) t FROM tg GROUP BY g',
				  'SELECT g, (array_agg(c ORDER BY c))[1:3] t FROM tg GROUP BY g');
SELECT topk_check('SELECT g, gpu_topk_agg(i4, 0) t FROM tg GROUP BY g',
				  'SELECT g, (array_agg(i4 ORDER BY i4))[1:0] t FROM tg GROUP BY g');
-- an aggregate of gpu_topk_agg's transition function without its final
-- function: the state counts every NULL of the group
CREATE AGGREGATE topk_state(int4, int) (SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state);
SELECT topk_check('SELECT g, topk_state(i4, 3)::text t FROM tg GROUP BY g',
				  'SELECT g, t FROM (SELECT g, topk_state(i4, 3)::text t, count(*) FROM tg GROUP BY g) s');
DROP AGGREGATE topk_state(int4, int);
PREPARE topk_k(int) AS SELECT g, gpu_topk_agg(i4, $1) FROM tg GROUP BY g;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE topk_k(3);
CREATE TEMP TABLE topk_param AS EXECUTE topk_k(3);
SELECT count(*) AS differ FROM ((SELECT g, gpu_topk_agg AS t FROM topk_param
								 EXCEPT ALL SELECT g, (array_agg(i4 ORDER BY i4))[1:3] FROM tg GROUP BY g)
								UNION ALL (SELECT g, (array_agg(i4 ORDER BY i4))[1:3] FROM tg GROUP BY g
										   EXCEPT ALL SELECT g, gpu_topk_agg FROM topk_param)) d;
RESET plan_cache_mode;
SET gpusort.enable_topk_groups = off;
EXPLAIN (COSTS OFF) SELECT g, gpu_topk_agg(f8, 10, true) FROM tg GROUP BY g;
RESET gpusort.enable_topk_groups;

-- the planner's estimates: at the default fewest rows, groups of one row
-- too; not past work_mem, nor under the fewest rows
RESET gpusort.sort_node_min_rows;
EXPLAIN (COSTS OFF) SELECT g, gpu_topk_agg(f8, 10, true) FROM tg GROUP BY g;
EXPLAIN (COSTS OFF) SELECT id, gpu_topk_agg(f8, 1, true) FROM tg GROUP BY id;
SET work_mem = '256kB';
EXPLAIN (COSTS OFF) SELECT g, gpu_topk_agg(f8, 10, true) FROM tg GROUP BY g;
RESET work_mem;
EXPLAIN (COSTS OFF) SELECT g, gpu_topk_agg(f8, 10, true) FROM tg WHERE id < 500 GROUP BY g;

DROP FUNCTION topk_check(text, text);
DROP TABLE tg;
