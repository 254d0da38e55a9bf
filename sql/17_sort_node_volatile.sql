-- The ORDER BY node where output columns, sort keys, GROUP BY and DISTINCT
-- lists hold volatile expressions (random()) and expressions that appear more
-- than once.  Each query runs twice, with the node and with PostgreSQL's Sort
-- (gpusort.enable_sort off), each run right after the same setseed so that
-- random() gives both runs the same values.  The runs must return the same
-- multiset of rows and the same sequence of sort keys (the same sequence of
-- rows where the keys order every row).
--
-- The generated cases each have a seed of their own, derived from the base
-- seed printed below; a failing case is listed with its seed and query, and
-- SELECT nv_case(<seed>) runs it again.  Another base seed:
--   PGOPTIONS='-c gpusort_test.volatile_seed=12345' make installcheck REGRESS=17_sort_node_volatile

-- The planner offers the node once the module is loaded in the session:
-- preloaded in server mode, else by LOAD (or a first call of a gpusort function).
LOAD 'gpusort';
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';

-- Runs q with the node and with Sort, random() seeded with seed before each
-- run.  keys: the sort keys that are output columns of q, in order, as
-- columns of s (NULL when none is); total: whether the sort keys order every
-- row.  Returns 'ok', 'not used' (no node in the plan), or what differs.
CREATE FUNCTION nv_compare(q text, keys text, total bool, seed float8) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	probe text := format('SELECT array_agg(s::text), array_agg(ROW(%s)::text) FROM (%s) s',
						 coalesce(keys, 'NULL'), q);
	plan text := '';
	line text;
	rows_on text[];
	rows_off text[];
	keys_on text[];
	keys_off text[];
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || probe LOOP
		plan := plan || line || E'\n';
	END LOOP;
	IF plan NOT LIKE '%Custom Scan (gpusort)%' THEN
		RETURN 'not used';
	END IF;
	PERFORM setseed(seed);
	EXECUTE probe INTO rows_on, keys_on;
	SET LOCAL gpusort.enable_sort = off;
	PERFORM setseed(seed);
	EXECUTE probe INTO rows_off, keys_off;
	SET LOCAL gpusort.enable_sort = on;
	IF keys_on IS DISTINCT FROM keys_off THEN
		RETURN 'keys differ';
	END IF;
	IF total AND rows_on IS DISTINCT FROM rows_off THEN
		RETURN 'rows differ in order';
	END IF;
	IF (SELECT array_agg(r ORDER BY r) FROM unnest(rows_on) r) IS DISTINCT FROM
	   (SELECT array_agg(r ORDER BY r) FROM unnest(rows_off) r) THEN
		RETURN 'rows differ';
	END IF;
	RETURN 'ok';
END $$;

-- The two reproductions of the bug this test guards against.  Two equal
-- volatile output columns, both sort keys: every row had the first value
-- twice.
SELECT setseed(0.25);
SELECT count(*) AS rows, count(*) FILTER (WHERE r1 = r2) AS equal_pairs
FROM (SELECT (random() * 1e6)::int4 AS r1, (random() * 1e6)::int4 AS r2
	  FROM generate_series(1, 10000) ORDER BY r1, r2) s;
SELECT nv_compare('SELECT (random() * 1e6)::int4 AS r1, (random() * 1e6)::int4 AS r2 '
				  'FROM generate_series(1, 10000) ORDER BY r1, r2', 's.r1, s.r2', true, 0.25);
-- GROUP BY on two equal volatile columns, then ORDER BY: groups came back
-- twice, each with a = b
SELECT setseed(0.5);
SELECT count(*) = count(DISTINCT (k, a, b)) AS groups_distinct,
	   count(*) FILTER (WHERE a = b) < count(*) / 2 AS few_a_equal_b
FROM (SELECT g % 20000 AS k, (random() * 3)::int4 AS a, (random() * 3)::int4 AS b
	  FROM generate_series(1, 100000) g GROUP BY 1, 2, 3 ORDER BY k, a) s;
SELECT nv_compare('SELECT g % 20000 AS k, (random() * 3)::int4 AS a, (random() * 3)::int4 AS b '
				  'FROM generate_series(1, 100000) g GROUP BY 1, 2, 3 ORDER BY k, a', 's.k, s.a', false, 0.5);
-- ORDER BY the second of two equal volatile columns, and by one that is not
-- an output column
SELECT nv_compare('SELECT (random() * 1000)::int4 AS r1, (random() * 1000)::int4 AS r2 '
				  'FROM generate_series(1, 5000) ORDER BY r2, r1 DESC', 's.r2, s.r1', true, 0.75);
SELECT nv_compare('SELECT g, (random() * 1000)::int4 AS r1 FROM generate_series(1, 20000) g '
				  'ORDER BY (random() * 1000)::int4 DESC, random()', 's.r1', true, 0.125);

-- Past work_mem, where the node hands its rows to a tuplesort: a function
-- whose row estimate is far too low
CREATE FUNCTION nv_series(n int) RETURNS SETOF int4 LANGUAGE plpgsql ROWS 1000
AS 'BEGIN RETURN QUERY SELECT generate_series(1, n); END';
SET work_mem = '128kB';
SELECT nv_compare('SELECT (random() * 1000)::int4 AS r1, (random() * 1000)::int4 AS r2, g '
				  'FROM nv_series(20000) g ORDER BY r2, r1', 's.r2, s.r1', false, 0.375);
SET work_mem = '64MB';

-- One expression for an output column: its SQL, and whether it is volatile.
CREATE FUNCTION nv_expr(OUT sql text, OUT volatile bool) LANGUAGE plpgsql AS $$
DECLARE
	k int := (ARRAY[3, 100, 1000000])[1 + floor(random() * 3)::int];
	pick int := 1 + floor(random() * 11)::int;
BEGIN
	sql := (ARRAY[
		format('(random() * %s)::int4', k),
		format('(random() * %s)::int8', k),
		format('(random() * %s)::int2', least(k, 30000)),
		format('floor(random() * %s)', k),
		format('nullif((random() * %s)::int4, 1)', k),
		format('(date ''2000-01-01'' + (random() * %s)::int4)', k),
		'random()',
		'g',
		format('(g %% %s)', k),
		format('(g %% %s)::float8', k),
		format('nullif(g %% %s, 0)', k)
	])[pick];
	volatile := pick <= 7;
END $$;

-- One generated query: a plain ORDER BY, a GROUP BY or a DISTINCT over
-- 1 to 4 columns drawn from nv_expr, often one repeating an earlier one, and
-- 1 to 3 sort keys among them, each ASC or DESC, NULLS FIRST or LAST; a plain
-- ORDER BY sometimes has a key that is no output column (random() or an
-- output column's expression written out).  keys and total as nv_compare
-- takes them.
--
-- A volatile output column that is no sort key is computed after the sort,
-- row by row in output order, so where the keys leave ties its values go to
-- the rows in the order the sort left them (Sort's order among equal keys is
-- not the node's).  Where such a column comes with another that is no key,
-- g is added as the last key so that the order is total.
CREATE FUNCTION nv_query(seed int, OUT q text, OUT keys text, OUT total bool) LANGUAGE plpgsql AS $$
DECLARE
	kind text;
	ncols int;
	nkeys int;
	nrows int;
	exprs text[] := '{}';
	volatile bool[] := '{}';
	is_key bool[] := '{}';
	items text := '';
	order_by text := '';
	e record;
	c int;
	postponed bool := false;
	fixed bool := false;
	all_keys bool := true;
BEGIN
	PERFORM setseed((seed % 1000003) / 1000003.0);
	kind := (ARRAY['order', 'order', 'group', 'distinct'])[1 + floor(random() * 4)::int];
	ncols := 1 + floor(random() * 4)::int;
	nrows := (ARRAY[2000, 5000, 10000])[1 + floor(random() * 3)::int];
	total := false;
	FOR i IN 1 .. ncols LOOP
		e := nv_expr();
		IF i > 1 AND random() < 0.4 THEN
			c := 1 + floor(random() * (i - 1))::int;
			e.sql := exprs[c];
			e.volatile := volatile[c];
		END IF;
		exprs := exprs || e.sql;
		volatile := volatile || e.volatile;
		is_key := is_key || false;
		items := items || format('%s%s AS c%s', CASE WHEN i > 1 THEN ', ' ELSE '' END, e.sql, i);
	END LOOP;

	nkeys := 1 + floor(random() * least(ncols, 3))::int;
	keys := NULL;
	FOR k IN 1 .. nkeys LOOP
		c := 1 + floor(random() * ncols)::int;
		is_key[c] := true;
		IF exprs[c] = 'g' THEN
			total := true;
		END IF;
		keys := coalesce(keys || ', ', '') || format('s.c%s', c);
		order_by := order_by || format('%sc%s%s%s', CASE WHEN k > 1 THEN ', ' ELSE '' END, c,
									   (ARRAY['', ' DESC'])[1 + floor(random() * 2)::int],
									   (ARRAY['', ' NULLS FIRST', ' NULLS LAST'])[1 + floor(random() * 3)::int]);
	END LOOP;

	IF kind = 'order' THEN
		IF random() < 0.25 THEN
			-- written out, an output column's expression is that column (the
			-- first of equal ones); random() is a hidden key of its own
			c := 1 + floor(random() * ncols)::int;
			IF random() < 0.5 THEN
				order_by := order_by || ', random()';
				total := true;
			ELSE
				c := array_position(exprs, exprs[c]);
				is_key[c] := true;
				IF exprs[c] = 'g' THEN
					total := true;
				END IF;
				keys := keys || format(', s.c%s', c);
				order_by := order_by || ', ' || exprs[c] || ' DESC';
			END IF;
		END IF;
		FOR i IN 1 .. ncols LOOP
			postponed := postponed OR (volatile[i] AND NOT is_key[i]);
			fixed := fixed OR (NOT volatile[i] AND NOT is_key[i]);
		END LOOP;
		IF postponed AND fixed AND NOT total THEN
			order_by := order_by || ', g';
			total := true;
		END IF;
		q := format('SELECT %s FROM generate_series(1, %s) g ORDER BY %s', items, nrows, order_by);
	ELSE
		FOR i IN 1 .. ncols LOOP
			all_keys := all_keys AND is_key[i];
		END LOOP;
		total := total OR all_keys;
		IF kind = 'group' THEN
			q := format('SELECT %s, count(*) AS n FROM generate_series(1, %s) g GROUP BY %s ORDER BY %s',
						items, nrows, (SELECT string_agg(i::text, ', ') FROM generate_series(1, ncols) i),
						order_by);
		ELSE
			q := format('SELECT DISTINCT %s FROM generate_series(1, %s) g ORDER BY %s', items, nrows, order_by);
		END IF;
	END IF;
END $$;

-- One generated case, its data seeded from its own seed.
CREATE FUNCTION nv_case(seed int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	g record := nv_query(seed);
BEGIN
	RETURN nv_compare(g.q, g.keys, g.total, (seed % 999983) / 999983.0);
END $$;

SELECT coalesce(nullif(current_setting('gpusort_test.volatile_seed', true), '')::int, 1717) AS base_seed \gset
SELECT :base_seed AS base_seed;

CREATE TEMP TABLE nv_results AS
SELECT i, :base_seed * 1000 + i AS seed, nv_case(:base_seed * 1000 + i) AS result
FROM generate_series(1, 100) i;

-- no case differs; most ran in the node
SELECT r.seed, r.result, (nv_query(r.seed)).q
FROM nv_results r WHERE r.result NOT IN ('ok', 'not used') ORDER BY r.i;
SELECT count(*) AS cases, count(*) FILTER (WHERE result = 'ok') >= 50 AS most_in_node
FROM nv_results;

DROP TABLE nv_results;
DROP FUNCTION nv_case(int);
DROP FUNCTION nv_query(int);
DROP FUNCTION nv_expr();
DROP FUNCTION nv_series(int);
DROP FUNCTION nv_compare(text, text, bool, float8);
