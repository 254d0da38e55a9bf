--
-- 41_sort_node_prune_no_nulls: a bounded sort node prunes the rows it holds
-- as it reads them where its keys pack exactly into one word with a NULL bit
-- each (64 bits under a run condition, 128 under a LIMIT).  Keys that fill
-- the word without their NULL bits (a float8, int8 or timestamptz key, two
-- int4 keys under a run condition; two int8 keys under a LIMIT) are pruned
-- with words of no NULL bits until a key's first NULL; from there on a run
-- condition's node holds every row it reads, and a LIMIT's prunes by the
-- first key's leading bits.  Checked against Sort: rank() and row_number()
-- <= and < k with ties at the cut, k of 1, past the pruning size and past
-- the rows, DESC, NULLs from the first row, from late in the input and on
-- the last row only, under NULLS FIRST and LAST, LIMIT and OFFSET, a
-- generic plan's parameter, parallel workers; that the node held fewer
-- rows where it pruned (its memory); and that the planner counts on it
-- where the key columns have no NULLs.
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

-- 30,000 rows: f float8 of few values (many ties), b int8 over its range,
-- t timestamptz, a and c int4 (a of 50 values), fl float8 NULL from row
-- 26,000 on, fe float8 NULL on the last row only, fn float8 NULL from the
-- first row on, bn int8 NULL from row 27,000 on, b2 int8
SELECT setseed(0.41);
CREATE TABLE pn (id int4, f float8, b int8, t timestamptz, a int4, c int4,
				 fl float8, fe float8, fn float8, bn int8, b2 int8);
INSERT INTO pn
SELECT g,
	   round((random() * 300)::numeric, 0)::float8 - 150,
	   (random() * 9.2e18 * (CASE WHEN random() < 0.5 THEN -1 ELSE 1 END))::int8,
	   timestamptz '2026-01-01' + random() * interval '400 days',
	   floor(random() * 50)::int4,
	   floor(random() * 2e9 - 1e9)::int4,
	   CASE WHEN g > 26000 AND g % 3 = 0 THEN NULL ELSE random() END,
	   CASE WHEN g = 30000 THEN NULL ELSE random() END,
	   CASE WHEN g % 7 = 1 THEN NULL ELSE random() END,
	   CASE WHEN g > 27000 AND g % 2 = 0 THEN NULL ELSE floor(random() * 1000)::int8 END,
	   (random() * 9e18)::int8
FROM generate_series(1, 30000) g;
ANALYZE pn;

-- run conditions over keys of 64 bits or two of 32: the node's rows against
-- Sort's ('bound': the node held the run condition's bound)
CREATE TEMP TABLE pn_ks (k int8);
INSERT INTO pn_ks VALUES (1), (2), (100), (1000), (2047), (2048), (5000), (29999), (30000), (40000);
SELECT q, k, rc_check(format(q, k))
FROM unnest(ARRAY[
	'SELECT * FROM (SELECT f, id, rank() OVER (ORDER BY f) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT f, id, rank() OVER (ORDER BY f DESC) r FROM pn) w WHERE r < %s',
	'SELECT * FROM (SELECT b, id, row_number() OVER (ORDER BY b) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT b, id, rank() OVER (ORDER BY b) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT b, id, rank() OVER (ORDER BY b DESC) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT t, id, rank() OVER (ORDER BY t) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT a, c, id, rank() OVER (ORDER BY a, c) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT a, c, id, rank() OVER (ORDER BY a DESC, c) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT a, f, id, rank() OVER (ORDER BY a, f) r FROM pn) w WHERE r <= %s'
]) q, pn_ks
ORDER BY q, k;

-- NULLs: from late in the input (after several prunings), on the last row
-- only, from the first row on; first and last, ascending and descending
SELECT q, k, rc_check(format(q, k))
FROM unnest(ARRAY[
	'SELECT * FROM (SELECT fl, id, rank() OVER (ORDER BY fl) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT fl, id, rank() OVER (ORDER BY fl NULLS FIRST) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT fl, id, rank() OVER (ORDER BY fl DESC) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT fl, id, rank() OVER (ORDER BY fl DESC NULLS LAST) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT fe, id, rank() OVER (ORDER BY fe DESC) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT fe, id, row_number() OVER (ORDER BY fe NULLS FIRST) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT fe, id, rank() OVER (ORDER BY fe) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT fn, id, rank() OVER (ORDER BY fn NULLS FIRST) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT fn, id, rank() OVER (ORDER BY fn) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT bn, c, id, rank() OVER (ORDER BY bn) r FROM pn) w WHERE r <= %s',
	'SELECT * FROM (SELECT bn, c, id, rank() OVER (ORDER BY bn DESC, c) r FROM pn) w WHERE r <= %s'
]) q, (VALUES (1), (10), (100), (3000), (5000)) ks(k)
ORDER BY q, k;

-- under a LIMIT, two int8 keys (128 bits without NULL bits): the node's
-- rows in order against Sort's, ties broken by id on both sides
SELECT q, l, node_check(q, ', id', l)
FROM unnest(ARRAY[
	'SELECT b, b2, id FROM pn ORDER BY b, b2',
	'SELECT b, b2, id FROM pn ORDER BY b DESC, b2',
	'SELECT bn, b2, id FROM pn ORDER BY bn, b2',
	'SELECT bn, b2, id FROM pn ORDER BY bn NULLS FIRST, b2 DESC',
	'SELECT bn, b2, id FROM pn ORDER BY bn DESC, b2'
]) q, unnest(ARRAY[' LIMIT 1', ' LIMIT 100', ' LIMIT 3000', ' LIMIT 100 OFFSET 4000', ' LIMIT 40000']) l
ORDER BY q, l;

-- a generic plan's parameter as k: the node's statement against Sort's
SET plan_cache_mode = force_generic_plan;
PREPARE pn_on(int8) AS
	SELECT count(*) || ' ' || sum(id) || ' ' || min(f) || ' ' || max(f) AS r
	FROM (SELECT f, id, rank() OVER (ORDER BY f) r FROM pn) w WHERE r <= $1;
EXECUTE pn_on(1);
SET gpusort.enable_sort = off;
PREPARE pn_off(int8) AS
	SELECT count(*) || ' ' || sum(id) || ' ' || min(f) || ' ' || max(f) AS r
	FROM (SELECT f, id, rank() OVER (ORDER BY f) r FROM pn) w WHERE r <= $1;
EXECUTE pn_off(1);
RESET gpusort.enable_sort;
SELECT plan_value('EXECUTE pn_on(100)', 'Rank Bound') AS generic_rank_bound;
EXECUTE pn_on(100) \gset on_
EXECUTE pn_off(100) \gset off_
SELECT :'on_r' = :'off_r' AS same_100;
EXECUTE pn_on(3000) \gset on_
EXECUTE pn_off(3000) \gset off_
SELECT :'on_r' = :'off_r' AS same_3000;
EXECUTE pn_on(40000) \gset on_
EXECUTE pn_off(40000) \gset off_
SELECT :'on_r' = :'off_r' AS same_40000;
DEALLOCATE pn_on;
DEALLOCATE pn_off;
RESET plan_cache_mode;

-- workers under a Gather Merge hand their rows to the leader
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT rc_check('SELECT * FROM (SELECT f, id, rank() OVER (ORDER BY f) r FROM pn) w WHERE r <= 100') AS parallel_f,
	   rc_check('SELECT * FROM (SELECT fl, id, rank() OVER (ORDER BY fl NULLS FIRST) r FROM pn) w WHERE r <= 100')
		   AS parallel_late_nulls,
	   node_check('SELECT b, b2, id FROM pn ORDER BY b, b2', ', id', ' LIMIT 100') AS parallel_limit;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- the rows held: a float8 and an int8 key with no NULLs pruned (the
-- node's memory under a third of the same query's over a float8 with NULLs
-- from the first row); under a LIMIT, two int8 keys pruned by their exact
-- words, not by the first key's leading bits (which EXPLAIN would name)
CREATE FUNCTION pn_memory_kb(q text) RETURNS int8 LANGUAGE sql AS $$
	SELECT substring(plan_value(q, 'Sort Memory', 'ANALYZE, COSTS OFF, TIMING OFF') FROM '^[0-9]+')::int8
$$;
SELECT pn_memory_kb('SELECT * FROM (SELECT f, id, rank() OVER (ORDER BY f) r FROM pn) w WHERE r <= 100') * 3 <
	   pn_memory_kb('SELECT * FROM (SELECT fn, id, rank() OVER (ORDER BY fn) r FROM pn) w WHERE r <= 100')
		   AS f_pruned,
	   pn_memory_kb('SELECT * FROM (SELECT b, id, rank() OVER (ORDER BY b) r FROM pn) w WHERE r <= 100') * 3 <
	   pn_memory_kb('SELECT * FROM (SELECT fn, id, rank() OVER (ORDER BY fn) r FROM pn) w WHERE r <= 100')
		   AS b_pruned,
	   plan_value('SELECT b, b2, id FROM pn ORDER BY b, b2 LIMIT 100', 'Sort Bound',
				  'ANALYZE, COSTS OFF, TIMING OFF') AS limit_bound;
-- from a key's first NULL on, a LIMIT's rows are pruned by the first key's
-- leading bits
SELECT plan_value('SELECT bn, b2, id FROM pn ORDER BY bn, b2 LIMIT 100', 'Sort Bound',
				  'ANALYZE, COSTS OFF, TIMING OFF') LIKE '100 with ties of the leading key bits: % rows'
		   AS limit_late_nulls_pruned,
	   pn_memory_kb('SELECT bn, b2, id FROM pn ORDER BY bn, b2 LIMIT 100') * 3 <
	   pn_memory_kb('SELECT fn, b2, id FROM pn ORDER BY fn, b2 LIMIT 100 OFFSET 29000')
		   AS limit_late_nulls_held_less;

-- the planner: where a key column has no NULL (by its statistics, or NOT
-- NULL), the node prunes, so a run condition's node takes more rows than
-- work_mem holds; over a column with NULLs Sort keeps them
RESET gpusort.sort_node_min_rows;
SET work_mem = '512kB';
CREATE TEMP TABLE pn_notnull (id int4, f float8 NOT NULL);
INSERT INTO pn_notnull SELECT id, f FROM pn;
SELECT t, c, (SELECT string_agg(l, ' ') FROM rc_plan(format(
			'SELECT * FROM (SELECT %s, id, rank() OVER (ORDER BY %s) r FROM %s) w WHERE r <= 100', c, c, t)) l)
		   LIKE '%Custom Scan (gpusort)%Rank Bound: <= 100%' AS node_with_bound
FROM (VALUES ('pn', 'f'), ('pn', 'b'), ('pn', 't'), ('pn', 'fn'), ('pn', 'fl'), ('pn_notnull', 'f')) v(t, c);
SELECT rc_check('SELECT * FROM (SELECT f, id, rank() OVER (ORDER BY f) r FROM pn) w WHERE r <= 100') AS planned_f;
DROP TABLE pn_notnull;
SET gpusort.sort_node_min_rows = 0;
SET work_mem = '64MB';

DROP FUNCTION pn_memory_kb(text);
DROP TABLE pn;
