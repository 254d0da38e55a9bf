-- The ORDER BY node: every result compared with PostgreSQL's own Sort
-- (gpusort.enable_sort off) on the same data.  The node's sort is stable, so
-- its order is PostgreSQL's with the row's place in the table as the last
-- key: node_check compares "q" under the node with "q, ctid" under Sort, and says
-- whether the node ran at all.

-- The planner offers the node once the module is loaded in the session:
-- preloaded in server mode, else by LOAD (or a first call of a gpusort function).
LOAD 'gpusort';
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';

-- id is the insertion order, so that a sequential scan returns rows by id
CREATE TABLE ob (id int4, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
				 d date, ts timestamp, tz timestamptz, t text);
SELECT setseed(0.13);
INSERT INTO ob
SELECT g,
	   CASE WHEN r1 < 0.1 THEN NULL ELSE (r2 * 200 - 100)::int2 END,
	   CASE WHEN r1 BETWEEN 0.1 AND 0.2 THEN NULL ELSE (r3 * 4e9 - 2e9)::int4 END,
	   CASE WHEN r1 BETWEEN 0.2 AND 0.3 THEN NULL ELSE (r2 * 1e18)::int8 * (CASE WHEN r3 < 0.5 THEN -1 ELSE 1 END) END,
	   CASE WHEN r1 BETWEEN 0.3 AND 0.4 THEN NULL
			WHEN r2 < 0.05 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '-0', '0'])[1 + (r3 * 4.99)::int]::float4
			ELSE (r3 * 20 - 10)::numeric(4, 1)::float4 END,
	   CASE WHEN r1 BETWEEN 0.4 AND 0.5 THEN NULL
			WHEN r3 < 0.05 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '-0', '0'])[1 + (r2 * 4.99)::int]::float8
			ELSE (r2 - 0.5) * 1e300 END,
	   CASE WHEN r1 BETWEEN 0.5 AND 0.6 THEN NULL
			WHEN r2 < 0.02 THEN (ARRAY['infinity', '-infinity'])[1 + (r3 > 0.5)::int]::date
			ELSE date '2000-01-01' + (r3 * 20000 - 10000)::int END,
	   CASE WHEN r1 BETWEEN 0.6 AND 0.7 THEN NULL
			WHEN r3 < 0.02 THEN (ARRAY['infinity', '-infinity'])[1 + (r2 > 0.5)::int]::timestamp
			ELSE timestamp '2000-01-01' + (r2 * 1e6 - 5e5) * interval '1 hour' END,
	   CASE WHEN r1 BETWEEN 0.7 AND 0.8 THEN NULL
			ELSE timestamptz '2000-01-01 00:00+00' + (r3 * 1e4)::int * interval '1 minute' END,
	   md5(g::text)
FROM (SELECT g, random() r1, random() r2, random() r3 FROM generate_series(1, 20000) g) s;
ANALYZE ob;

-- node_check (include/helpers.sql): the node's rows against Sort's
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all

-- every type, direction and NULL placement
SELECT c, o, node_check(format('SELECT id, %s FROM ob ORDER BY %s %s', c, c, o))
FROM unnest(ARRAY['i2', 'i4', 'i8', 'f4', 'f8', 'd', 'ts', 'tz']) c,
	 unnest(ARRAY['', 'NULLS FIRST', 'DESC', 'DESC NULLS LAST']) o;

-- several keys: 32, 64 and 128 bits a row (NULL bits included)
SELECT q, node_check(q) FROM unnest(ARRAY[
	'SELECT id, i2 FROM ob ORDER BY i2, id',
	'SELECT * FROM ob ORDER BY i2 DESC, f4 NULLS FIRST',
	'SELECT * FROM ob ORDER BY d, i2 DESC',
	'SELECT * FROM ob ORDER BY f4 DESC NULLS LAST, i4',
	'SELECT * FROM ob ORDER BY i2, i4 DESC, i2',
	'SELECT * FROM ob ORDER BY i8, f4 DESC',
	'SELECT * FROM ob ORDER BY f8 NULLS FIRST, d DESC',
	'SELECT * FROM ob ORDER BY i2 DESC NULLS LAST, d, f4 DESC, i2',
	'SELECT * FROM ob ORDER BY tz, i4 DESC NULLS LAST',
	'SELECT * FROM ob ORDER BY i2, i2 + 1, i4, i2 - 1'
]) q;

-- keys that are expressions, and rows that are not all by value
SELECT q, node_check(q) FROM unnest(ARRAY[
	'SELECT id, t FROM ob ORDER BY i4 % 7, i2',
	'SELECT id, i2 + i4 AS s, t FROM ob ORDER BY i2 + i4 DESC',
	'SELECT t, f8 FROM ob ORDER BY f8 * 2, i2 NULLS FIRST'
]) q;

-- keys past the leading bits: text and numeric (abbreviated keys), keys
-- past 128 bits, ordered by the tie pass
SELECT q, node_check(q) FROM unnest(ARRAY[
	'SELECT id FROM ob ORDER BY t',
	'SELECT id, upper(t) FROM ob ORDER BY i2, 2',
	'SELECT id FROM ob ORDER BY tz, f8 DESC',
	'SELECT id FROM ob ORDER BY i4::numeric',
	'SELECT id FROM ob ORDER BY i8, ts',
	'SELECT id FROM ob ORDER BY i8, ts, i2, f4 DESC, tz NULLS FIRST'
]) q;

-- not offered: a key that gives no leading bits (a record)
SELECT q, node_check(q, '') FROM unnest(ARRAY[
	'SELECT id FROM ob ORDER BY (i4, i2)'
]) q;

-- LIMIT and OFFSET, subqueries, empty and all-equal inputs
SELECT q, node_check(q, '') FROM unnest(ARRAY[
	'SELECT id, i4 FROM ob ORDER BY i4, id LIMIT 10000 OFFSET 100',
	'SELECT i2 FROM ob ORDER BY i2 LIMIT 12000',
	'SELECT id, i2 FROM ob ORDER BY i2, id LIMIT 12000',
	'SELECT id, i4 FROM ob ORDER BY i4 DESC, id OFFSET 19990',
	'SELECT s.id, s.f4 FROM (SELECT * FROM ob ORDER BY f4, id OFFSET 0) s WHERE s.id % 3 = 0',
	'SELECT i2, count(*) FROM (SELECT i2 FROM ob ORDER BY i2 OFFSET 0) s GROUP BY i2 ORDER BY i2',
	'SELECT id, i4 FROM ob WHERE i4 > (SELECT max(i4) FROM ob) ORDER BY i4',
	'SELECT * FROM ob WHERE i4 IS NOT NULL ORDER BY i4 NULLS FIRST, id'
]) q;
SELECT node_check('SELECT id, 7 AS k FROM ob ORDER BY (id * 0)');

-- small LIMITs: the node prunes the rows as it reads them where the keys pack
-- exactly into 128 bits with a NULL bit each (words of two halves past 64
-- bits), or else by their leading 64 bits (keeping the rows that tie on
-- those: i8 then f8's first bits, text's first bytes under C), and the rows
-- are wider than a word, else Sort's top-N heap keeps the sort ('not
-- used'); cuts inside runs of NULLs and of equal values
SELECT q, lim, node_check(q, ', ctid', lim) FROM (VALUES
	('SELECT id, f8 FROM ob ORDER BY f8', ' LIMIT 100'),
	('SELECT id, f8 FROM ob ORDER BY f8 DESC NULLS LAST, i4', ' LIMIT 100 OFFSET 5'),
	('SELECT id, i8 FROM ob ORDER BY i8 DESC NULLS FIRST', ' LIMIT 50 OFFSET 1990'),
	('SELECT id, d, ts FROM ob ORDER BY d, ts NULLS FIRST', ' LIMIT 300'),
	('SELECT id, tz FROM ob ORDER BY tz DESC', ' LIMIT 1'),
	('SELECT id, i2, i4 FROM ob ORDER BY i2', ' LIMIT 700'),
	('SELECT id, f4, i2 FROM ob ORDER BY f4 NULLS FIRST, i2 DESC', ' LIMIT 2100'),
	('SELECT id, i8, f8 FROM ob ORDER BY i8, f8', ' LIMIT 10'),
	('SELECT id, t FROM ob ORDER BY t', ' LIMIT 10'),
	('SELECT f8 FROM ob ORDER BY f8', ' LIMIT 10')
) v(q, lim);

-- EXPLAIN shows the node and its keys
EXPLAIN (COSTS OFF) SELECT * FROM ob ORDER BY f8 DESC, i2 NULLS FIRST;
EXPLAIN (COSTS OFF) SELECT id, i4 + 1 FROM ob ORDER BY i4 + 1 DESC NULLS LAST, d;
SET gpusort.enable_sort = off;
EXPLAIN (COSTS OFF) SELECT * FROM ob ORDER BY f8;
RESET gpusort.enable_sort;

-- a window function among the input's columns: the ORDER BY path leaves
-- these to Sort (EXPLAIN could not show the window function in its node:
-- PostgreSQL 18 names a window only from its WindowAgg), and the node then
-- takes Sort's place in the finished plan, where it shows its columns through
-- its input as Sort does; EXPLAIN VERBOSE, which shows every column, works
CREATE FUNCTION ob_verbose(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	RETURN CASE WHEN plan LIKE '%Custom Scan (gpusort)%' THEN 'node' ELSE 'sort' END;
END $$;
SELECT q, node_check(q, '') AS result, ob_verbose(q) AS verbose FROM unnest(ARRAY[
	'SELECT id, sum(i2) OVER (PARTITION BY i2 ORDER BY id) s FROM ob ORDER BY s, id',
	'SELECT id, count(*) OVER () c FROM ob ORDER BY i4, id',
	'SELECT id, row_number() OVER (ORDER BY id) FROM (SELECT id, i4 FROM ob ORDER BY i4, id OFFSET 0) s'
]) q;
DROP FUNCTION ob_verbose(text);

-- EXPLAIN ANALYZE: where it sorted, the rows, the key bits and the times
CREATE FUNCTION ob_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	-- (PostgreSQL 18 shows buffers by default and row counts with two decimals)
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		RETURN NEXT regexp_replace(regexp_replace(regexp_replace(line, '[0-9]+ kB', 'N kB'),
												  'Device: (cpu|gpu [0-9]+)$', 'Device: cpu or gpu'),
								   'rows=([0-9]+)\.00 ', 'rows=\1 ');
	END LOOP;
END $$;
SELECT ob_explain('SELECT * FROM ob ORDER BY i4');
SELECT ob_explain('SELECT id FROM ob ORDER BY i8, f4');
-- past work_mem the rows go to a tuplesort with the same keys: a planner
-- that expects them to fit (ob_rows says 8,000 rows) but they do not
CREATE FUNCTION ob_rows() RETURNS SETOF ob LANGUAGE sql ROWS 8000 AS 'SELECT * FROM ob';
SET work_mem = '2MB';
SELECT ob_explain('SELECT * FROM ob_rows() ORDER BY i4');
SELECT o, node_check(format('SELECT * FROM ob_rows() ORDER BY %s', o), '')
FROM unnest(ARRAY['i4, id', 'f8 DESC, id', 'd NULLS FIRST, f4 DESC, id']) o;
-- where the planner expects them not to fit, Sort
SELECT node_check('SELECT * FROM ob ORDER BY i4');
SET work_mem = '64MB';

-- SCROLL cursors: a walk back and forth gives the same rows as under Sort
CREATE FUNCTION ob_walk(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	c refcursor;
	r record;
	out text := '';
BEGIN
	OPEN c SCROLL FOR EXECUTE q;
	FETCH c INTO r; out := out || r::text;
	FOR i IN 1 .. 5 LOOP FETCH c INTO r; END LOOP;
	out := out || r::text;
	FETCH PRIOR FROM c INTO r; out := out || r::text;
	FETCH LAST FROM c INTO r; out := out || r::text;
	FETCH NEXT FROM c INTO r; out := out || coalesce(r::text, 'end') || found::text;
	FETCH PRIOR FROM c INTO r; out := out || r::text;
	FETCH ABSOLUTE 10000 FROM c INTO r; out := out || r::text;
	FETCH RELATIVE -10 FROM c INTO r; out := out || r::text;
	FETCH FIRST FROM c INTO r; out := out || r::text;
	FETCH PRIOR FROM c INTO r; out := out || found::text;
	FETCH NEXT FROM c INTO r; out := out || r::text;
	MOVE LAST FROM c;
	MOVE NEXT FROM c;
	FETCH PRIOR FROM c INTO r; out := out || r::text;
	CLOSE c;
	RETURN md5(out);
END $$;
CREATE FUNCTION ob_walk_same(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	a text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	a := ob_walk(q);
	SET LOCAL gpusort.enable_sort = off;
	RETURN a = ob_walk(q);
END $$;
SELECT q, ob_walk_same(q) FROM unnest(ARRAY[
	'SELECT id, i4 FROM ob ORDER BY i4, id',
	'SELECT id, f8, t FROM ob ORDER BY f8 DESC, id'
]) q;
BEGIN;
DECLARE cur SCROLL CURSOR FOR SELECT id, i2 FROM ob ORDER BY i2 DESC NULLS LAST, id;
FETCH 3 FROM cur;
FETCH BACKWARD 2 FROM cur;
FETCH LAST FROM cur;
FETCH BACKWARD 1 FROM cur;
COMMIT;
EXPLAIN (COSTS OFF) DECLARE cur SCROLL CURSOR FOR SELECT id, i2 FROM ob ORDER BY i2 DESC NULLS LAST, id;

-- rescans: the inner side of a nested loop, with and without parameters
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT node_check('SELECT v.k, s.id FROM (VALUES (1), (2), (3)) v(k) LEFT JOIN '
				'(SELECT id, i4 FROM ob ORDER BY i4, id OFFSET 0) s ON s.id % 5000 = v.k', '');
EXPLAIN (COSTS OFF) SELECT v.k, s.id FROM (VALUES (1), (2), (3)) v(k) LEFT JOIN
	(SELECT id, i4 FROM ob ORDER BY i4, id OFFSET 0) s ON s.id % 5000 = v.k;
SELECT node_check('SELECT v.k, s.* FROM (VALUES (-50), (0), (50)) v(k), '
				'LATERAL (SELECT id, f4 FROM ob WHERE i2 > v.k ORDER BY f4, id OFFSET 0) s', '');
EXPLAIN (COSTS OFF) SELECT v.k, s.* FROM (VALUES (-50), (0), (50)) v(k),
	LATERAL (SELECT id, f4 FROM ob WHERE i2 > v.k ORDER BY f4, id OFFSET 0) s;
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- parallel plans: the node in each worker under Gather Merge, and above a Gather
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT id, i4 FROM ob ORDER BY i4, id;
SELECT node_check('SELECT id, i4 FROM ob ORDER BY i4, id', '');
SELECT node_check('SELECT id, d, f8 FROM ob ORDER BY d DESC, i4, id', '');
SELECT node_check('SELECT i4, count(*) FROM ob GROUP BY i4 ORDER BY i4', '');
EXPLAIN (COSTS OFF) SELECT i4, count(*) FROM ob GROUP BY i4 ORDER BY i4;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;

DROP FUNCTION ob_walk_same(text);
DROP FUNCTION ob_walk(text);
DROP FUNCTION ob_explain(text);
DROP FUNCTION ob_rows();
DROP TABLE ob;
