-- The ORDER BY node's rescans and its place above set operations, compared
-- with PostgreSQL's Sort (gpusort.enable_sort off) on the same queries.
--
-- A rescan without a parameter change must read the input again unless the
-- node was begun for rewinding: a volatile input (nextval(), random()) gives
-- other rows each time.
LOAD 'gpusort';
SET max_parallel_workers_per_gather = 0;

-- rs_plan says whether the node is in a query's plan
CREATE FUNCTION rs_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	RETURN CASE WHEN plan LIKE '%Custom Scan (gpusort)%' THEN 'node' ELSE 'no node' END;
END $$;

-- a correlated subquery: its sorted subquery is rescanned for every g
CREATE SEQUENCE rs_seq;
SET gpusort.enable_sort = on;
SELECT rs_plan($$SELECT g, (SELECT min(x) || '..' || max(x)
	FROM (SELECT nextval('rs_seq') x FROM generate_series(1, 1000) ORDER BY 1 OFFSET 0) s
	WHERE s.x > g - 1000000) FROM generate_series(1, 3) g$$);
SELECT g, (SELECT min(x) || '..' || max(x)
		   FROM (SELECT nextval('rs_seq') x FROM generate_series(1, 1000) ORDER BY 1 OFFSET 0) s
		   WHERE s.x > g - 1000000)
FROM generate_series(1, 3) g;
SET gpusort.enable_sort = off;
ALTER SEQUENCE rs_seq RESTART;
SELECT g, (SELECT min(x) || '..' || max(x)
		   FROM (SELECT nextval('rs_seq') x FROM generate_series(1, 1000) ORDER BY 1 OFFSET 0) s
		   WHERE s.x > g - 1000000)
FROM generate_series(1, 3) g;

-- the same with random(): each rescan draws new values, so the three rows
-- differ (they would be equal if the node returned its first rows again)
SET gpusort.enable_sort = on;
SELECT setseed(0.5);
SELECT count(DISTINCT sig) AS distinct_scans
FROM (SELECT g, (SELECT md5(string_agg(x::text, ',' ORDER BY x))
				 FROM (SELECT (random() * 1e6)::int4 x FROM generate_series(1, 1000) ORDER BY 1 OFFSET 0) s
				 WHERE s.x > g - 1000000) sig
	  FROM generate_series(1, 3) g) t;

-- node on against off, each after the same setseed: the same rows in the same order
CREATE FUNCTION rs_random_scans(on_off bool) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	PERFORM set_config('gpusort.enable_sort', on_off::text, true);
	PERFORM setseed(0.25);
	-- EXECUTE plans the query anew, under the setting just made
	EXECUTE $q$SELECT string_agg(sig, '|' ORDER BY g)
	FROM (SELECT g, (SELECT md5(string_agg(x::text, ','))
					 FROM (SELECT (random() * 1e6)::int4 x FROM generate_series(1, 1000) ORDER BY 1 OFFSET 0) s
					 WHERE s.x > g - 1000000) sig
		  FROM generate_series(1, 3) g) t$q$ INTO r;
	RETURN r;
END $$;
SELECT rs_random_scans(true) = rs_random_scans(false) AS same_rows;

-- a rescan the node may answer from its stored rows: the inner side of a
-- nested loop without parameters (begun for rewinding), against Sort
SET gpusort.enable_sort = on;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
CREATE TABLE rs_t AS SELECT g AS id, (g * 7919) % 1000 AS v FROM generate_series(1, 2000) g;
ANALYZE rs_t;
SELECT rs_plan('SELECT k, s.id FROM (VALUES (1), (2), (3)) v(k) JOIN (SELECT id, v FROM rs_t ORDER BY v, id OFFSET 0) s ON s.v = k');
CREATE FUNCTION rs_join(on_off bool) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	PERFORM set_config('gpusort.enable_sort', on_off::text, true);
	EXECUTE $q$SELECT md5(string_agg(k || ':' || id, ','))
	FROM (SELECT k, s.id FROM (VALUES (1), (2), (3)) v(k)
		  JOIN (SELECT id, v FROM rs_t ORDER BY v, id OFFSET 0) s ON s.v = k) j$q$ INTO r;
	RETURN r;
END $$;
SELECT rs_join(true) = rs_join(false) AS same_rows;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- set operations: ORDER BY above UNION ALL / UNION / INTERSECT / EXCEPT
CREATE FUNCTION rs_setop(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	got text;
	want text;
BEGIN
	PERFORM set_config('gpusort.enable_sort', 'on', true);
	EXECUTE 'SELECT count(*) || '':'' || md5(string_agg(s::text, '','')) FROM (' || q || ') s' INTO got;
	PERFORM set_config('gpusort.enable_sort', 'off', true);
	EXECUTE 'SELECT count(*) || '':'' || md5(string_agg(s::text, '','')) FROM (' || q || ') s' INTO want;
	RETURN CASE WHEN got = want THEN 'ok' ELSE 'differs: ' || got || ' vs ' || want END;
END $$;
CREATE TABLE rs_a AS SELECT g AS id, (g * 7919) % 5000 AS v FROM generate_series(1, 20000) g;
CREATE TABLE rs_b AS SELECT g AS id, (g * 104729) % 5000 AS v FROM generate_series(1, 20000) g;
ANALYZE rs_a;
ANALYZE rs_b;
SET gpusort.enable_sort = on;
SELECT q, rs_plan(q), rs_setop(q) FROM unnest(ARRAY[
	'SELECT v, id FROM rs_a UNION ALL SELECT v, -id FROM rs_b ORDER BY v, id',
	'SELECT v FROM rs_a UNION SELECT v + 2500 FROM rs_b ORDER BY 1 DESC',
	'SELECT v FROM rs_a INTERSECT SELECT v FROM rs_b ORDER BY 1',
	'SELECT v FROM rs_a EXCEPT SELECT v FROM rs_b WHERE v < 100 ORDER BY 1',
	'SELECT v, id FROM rs_a UNION ALL SELECT v, id FROM rs_b ORDER BY v, id LIMIT 10',
	'(SELECT v, id FROM rs_a UNION ALL SELECT v, id FROM rs_b) ORDER BY v DESC, id OFFSET 39990']) q;
