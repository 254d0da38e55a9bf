--
-- 40_sort_node_numeric_columns: where each column the sort node returns is
-- by value or a numeric(p,s) sort key (p <= 18, 0 <= s <= 18, domains
-- included), the node keeps its rows as one array per column, a numeric key
-- column as its key's exact bits alone, and rebuilds each value as the row
-- is returned.  The rows must be Sort's to the byte: text form, binary form
-- (numeric_send) and stored size (pg_column_size) of each value.  Covered:
-- each scale from 0 to 18 with the edges of its precision, NaN, NULLs, zero,
-- DESC and NULLS FIRST, several numeric keys (past 128 bits of words), a
-- numeric key after an int4 expression, LIMIT and WITH TIES, past work_mem
-- (a tuplesort of the rebuilt rows), a GroupAggregate, DISTINCT, a merge
-- join, window functions in the node and above it, a run condition per
-- partition, a scroll cursor, rescans, workers handing their rows to the
-- leader, the memory the arrays save, and a value whose display scale is
-- not its column's (a catalog changed under the data): Sort's way.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
-- node_check, rc_check, plan_value (include/helpers.sql)
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all
SET gpusort.sort_node_min_rows = 0;
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 0;

CREATE DOMAIN nc_amount AS numeric(12,3);

SELECT setseed(0.40);
CREATE TABLE nc (
	id int4,
	a numeric(15,2),
	b numeric(18,0),
	c numeric(18,18),
	d numeric(10,4),
	e nc_amount,
	f numeric(7,5),
	g numeric(3,1),
	h numeric(18,9),
	w numeric(19,2),			-- not exact: rows kept as tuples
	i int8
);
INSERT INTO nc
SELECT n,
	   CASE WHEN random() < 0.04 THEN NULL
			WHEN random() < 0.03 THEN 'NaN'
			WHEN random() < 0.15 THEN (ARRAY[9999999999999.99, -9999999999999.99, 0, 0.01, -0.01, 1, -1,
											 10000, 9999.99, 10000.01, 0.1, -0.1, 100000000, 12345678.9])
									  [1 + floor(random() * 14)::int]
			ELSE round(((random() - 0.5) * 10 ^ (floor(random() * 14)))::numeric, 2) END,
	   CASE WHEN random() < 0.04 THEN NULL
			WHEN random() < 0.1 THEN (ARRAY[999999999999999999, -999999999999999999, 0, 10000, 100000000,
											1000000000000, -10000000000000000])[1 + floor(random() * 7)::int]
			ELSE round(((random() - 0.5) * 10 ^ (floor(random() * 19)))::numeric) END,
	   CASE WHEN random() < 0.1 THEN (ARRAY[0.999999999999999999, -0.999999999999999999, 0.000000000000000001,
										   0.5, -0.0001, 0.00010001])[1 + floor(random() * 6)::int]
			ELSE round((random() - 0.5)::numeric, floor(random() * 19)::int) END,
	   round(((random() - 0.5) * 10 ^ (floor(random() * 7)))::numeric, floor(random() * 5)::int),
	   CASE WHEN random() < 0.05 THEN NULL ELSE round(((random() - 0.5) * 10 ^ (floor(random() * 10)))::numeric, 3) END,
	   round(((random() - 0.5) * 190)::numeric, 5),
	   round(((random() - 0.5) * 190)::numeric, 1),
	   CASE WHEN random() < 0.03 THEN 'NaN'
			ELSE round(((random() - 0.5) * 10 ^ (floor(random() * 10)))::numeric, floor(random() * 10)::int) END,
	   NULL,
	   floor(random() * 20)::int8
FROM generate_series(1, 20000) n;
UPDATE nc SET w = a;
ANALYZE nc;

-- cols (the first named x) ordered by keys under the node, against Sort with
-- ctid last (the node keeps peers in input order), each row with x's binary
-- form and size (node_check, include/helpers.sql): 'ok', 'not used' or what
-- differs
CREATE FUNCTION nc_check(cols text, keys text, lim text DEFAULT '') RETURNS text LANGUAGE sql
	RETURN node_check('SELECT r.*, numeric_send(r.x), pg_column_size(r.x) FROM (SELECT ' || cols ||
					  ' FROM nc ORDER BY ' || keys, ', ctid', lim || ') r');

-- one column, each scale; with int8 and int4 columns; DESC and NULLS FIRST
SELECT cols, keys, nc_check(cols, keys)
FROM (VALUES ('a AS x', 'a'), ('a AS x', 'a DESC'), ('a AS x, id', 'a NULLS FIRST'),
			 ('a AS x, id', 'a DESC NULLS LAST'), ('b AS x, i', 'b, i'), ('b AS x', 'b DESC'),
			 ('c AS x', 'c'), ('c AS x', 'c DESC'), ('d AS x, id', 'd'), ('e AS x', 'e DESC'),
			 ('e AS x, id', 'e NULLS FIRST'), ('f AS x, g', 'f, g DESC'), ('g AS x, a, id', 'g, a DESC'),
			 ('h AS x', 'h'), ('h AS x, id', 'h DESC NULLS LAST'),
			 -- 61 + 61 + 64 bits: the last keys past the words
			 ('b AS x, h, i', 'b, h, i'), ('h AS x, b, c, id', 'h DESC, b, c DESC, id'),
			 -- a numeric key after an expression's
			 ('a AS x, id % 7 AS m', 'm, a DESC'),
			 -- the same column twice
			 ('a AS x, a AS y', 'a'),
			 -- rows kept as tuples (numeric(19,2) is not exact), for comparison
			 ('w AS x, id', 'w')) v(cols, keys);

-- bounded sorts: pruned as read, OFFSET, and ties
SELECT cols, keys, lim, nc_check(cols, keys, lim)
FROM (VALUES ('a AS x, id', 'a', ' LIMIT 100'), ('b AS x', 'b DESC', ' LIMIT 10 OFFSET 5'),
			 ('c AS x, id', 'c DESC NULLS LAST', ' LIMIT 2500 OFFSET 10')) v(cols, keys, lim);

-- past work_mem: the rows read so far rebuilt into a tuplesort (which
-- leaves peers in any order: id orders every row)
SET work_mem = '64kB';
SELECT nc_check('a AS x, id', 'a, id') AS past_work_mem, nc_check('h AS x, b', 'h DESC, b, id') AS past_work_mem_2;
RESET work_mem;

-- the memory the arrays save: a numeric(15,2) column against the same
-- values in numeric(19,2), whose rows stay tuples
SELECT (SELECT substring(plan_value('SELECT a, id FROM nc ORDER BY a', 'Sort Memory',
									 'ANALYZE, COSTS OFF, TIMING OFF') FROM '^[0-9]+')::int8) * 3 / 2 <
	   (SELECT substring(plan_value('SELECT w, id FROM nc ORDER BY w', 'Sort Memory',
									 'ANALYZE, COSTS OFF, TIMING OFF') FROM '^[0-9]+')::int8) AS arrays_take_less;

-- the node under a GroupAggregate, DISTINCT, a merge join and windows
SET enable_hashagg = off;
SELECT q, node_check(q, '')
FROM unnest(ARRAY[
	'SELECT a, count(*), sum(id) FROM nc GROUP BY a',
	'SELECT DISTINCT g FROM nc',
	'SELECT g FROM nc ORDER BY g FETCH FIRST 30 ROWS WITH TIES',
	'SELECT h, pg_column_size(h), numeric_send(h) FROM (SELECT DISTINCT h FROM nc) s',
	'SELECT a, row_number() OVER (ORDER BY a, id), rank() OVER (ORDER BY a), dense_rank() OVER (ORDER BY a) FROM nc',
	'SELECT g, a, percent_rank() OVER (PARTITION BY g ORDER BY a), ntile(3) OVER (PARTITION BY g ORDER BY a) FROM nc',
	'SELECT a, sum(a) OVER (ORDER BY a) FROM nc']) q;
-- run conditions (rows as sets: peers come in any order)
SELECT q, rc_check(q)
FROM unnest(ARRAY[
	'SELECT * FROM (SELECT g, a, id, rank() OVER (PARTITION BY g ORDER BY a DESC) r FROM nc) s WHERE r <= 3',
	'SELECT * FROM (SELECT a, id, rank() OVER (ORDER BY a) r FROM nc) s WHERE r <= 50']) q;
RESET enable_hashagg;

SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT node_check('SELECT x.a, x.id, y.id FROM (SELECT a, id FROM nc WHERE id % 3 = 0) x
				JOIN (SELECT a, id FROM nc WHERE id % 2 = 0) y ON x.a = y.a ORDER BY x.id, y.id', '') AS merge_join;
RESET enable_hashjoin;
RESET enable_nestloop;

-- rescans: a lateral subquery and a subplan, the node inside each
SELECT node_check('SELECT k.v, s.x FROM (VALUES (1), (2), (3)) k(v),
				LATERAL (SELECT a AS x FROM nc WHERE g > k.v ORDER BY a LIMIT 5 OFFSET 2) s', '') AS lateral_rescans,
	   node_check('SELECT v, (SELECT max(x) FROM (SELECT d AS x FROM nc WHERE g > v ORDER BY d LIMIT 7) s)
				FROM (VALUES (1), (-3), (40)) k(v)', '') AS subplan_rescans;

-- a scroll cursor: backwards, absolute, and past either end
BEGIN;
DECLARE nc_cur SCROLL CURSOR FOR SELECT a, id FROM nc WHERE id <= 40 ORDER BY a, id;
FETCH 3 FROM nc_cur;
FETCH LAST FROM nc_cur;
FETCH BACKWARD 4 FROM nc_cur;
FETCH ABSOLUTE 7 FROM nc_cur;
FETCH ABSOLUTE -1 FROM nc_cur;
FETCH FORWARD 2 FROM nc_cur;
FETCH BACKWARD 2 FROM nc_cur;
COMMIT;
BEGIN;
SET LOCAL gpusort.enable_sort = off;
DECLARE nc_cur SCROLL CURSOR FOR SELECT a, id FROM nc WHERE id <= 40 ORDER BY a, id;
FETCH 3 FROM nc_cur;
FETCH LAST FROM nc_cur;
FETCH BACKWARD 4 FROM nc_cur;
FETCH ABSOLUTE 7 FROM nc_cur;
COMMIT;

-- workers hand their rows to the leader, which sorts them with its own
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT node_check('SELECT a, id FROM nc ORDER BY a, id', '') AS parallel,
	   node_check('SELECT h, b, pg_column_size(h) FROM (SELECT h, b FROM nc ORDER BY h DESC, b, id OFFSET 0) s', '')
		   AS parallel_two_keys;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- A column whose typmod says numeric(15,2) over values of other display
-- scales (a catalog changed under the data): the node cannot give those
-- back from the bits, and its rows go to Sort's way as read; the values
-- keep their display scales.
CREATE TABLE nc_loose (id int4, v numeric);
INSERT INTO nc_loose
SELECT n, CASE n % 3 WHEN 0 THEN n * 1.25 + 100000 WHEN 1 THEN n + 0.5 ELSE n END FROM generate_series(1, 3000) n;
UPDATE pg_attribute SET atttypmod = ((15 << 16) | 2) + 4
WHERE attrelid = 'nc_loose'::regclass AND attname = 'v';
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'nc_loose'::regclass AND attname = 'v';
SELECT node_check('SELECT v, id FROM nc_loose ORDER BY v DESC', '') AS loose,
	   node_check('SELECT v, id FROM nc_loose WHERE id % 3 = 0 ORDER BY v', '') AS loose_at_scale,
	   plan_value('SELECT v, id FROM nc_loose ORDER BY v', 'Sort Device', 'ANALYZE, COSTS OFF, TIMING OFF')
		   LIKE '%tuplesort%' AS loose_to_tuplesort;
SELECT v FROM nc_loose WHERE id < 6 ORDER BY v;
DROP TABLE nc_loose;
