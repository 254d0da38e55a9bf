-- The sort node in place of every Sort of a plan whose keys it packs: under
-- WindowAgg, GroupAggregate, Unique, SetOp, both sides of a Merge Join,
-- under a Limit (a bounded sort), in parallel workers, in subplans.  Every
-- result is compared with the same query under PostgreSQL's Sort
-- (gpusort.enable_sort off) on the same data.
LOAD 'gpusort';
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';
SET gpusort.sort_node_min_rows = 0;

SELECT setseed(0.21);
CREATE TABLE ev (id int4, k int4, s int2, b int8, f float8, d date, t text);
INSERT INTO ev
SELECT g, (random() * 500)::int4,
	   CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 40 - 20)::int2 END,
	   CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 1e12)::int8 END,
	   CASE WHEN random() < 0.05 THEN 'NaN'::float8 WHEN random() < 0.05 THEN '-0'::float8
			ELSE round((random() * 100)::numeric, 1)::float8 END,
	   date '2020-01-01' + (random() * 300)::int,
	   md5(g::text)
FROM generate_series(1, 6000) g;
CREATE TABLE ev2 AS SELECT id + 3000 AS id, k, s, f FROM ev WHERE id % 3 <> 0;
ANALYZE ev;
ANALYZE ev2;

-- node_check (include/helpers.sql): the node's rows against Sort's, in order
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all

-- the plan's node count (EXPLAIN without ANALYZE)
CREATE FUNCTION ev_nodes(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	n int := 0;
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line LIKE '%Custom Scan (gpusort)%' THEN
			n := n + 1;
		END IF;
	END LOOP;
	RETURN n;
END $$;

-- window functions
SELECT q, node_check(q, '') FROM unnest(ARRAY[
	'SELECT id, row_number() OVER (ORDER BY k, id) FROM ev',
	'SELECT id, rank() OVER (PARTITION BY s ORDER BY f, id) FROM ev',
	'SELECT id, sum(k) OVER (PARTITION BY d ORDER BY s DESC NULLS LAST, id ROWS 3 PRECEDING) FROM ev',
	'SELECT id, dense_rank() OVER (ORDER BY s NULLS FIRST), lag(id) OVER (ORDER BY k DESC, id) FROM ev ORDER BY id',
	'SELECT k, count(*) OVER (ORDER BY k RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) FROM ev ORDER BY k, 2'
]) q;
SELECT ev_nodes('SELECT id, row_number() OVER (ORDER BY k, id) FROM ev') AS window_nodes;

-- GROUP BY through GroupAggregate, DISTINCT through Unique, set operations through SetOp
SET enable_hashagg = off;
SELECT q, node_check(q, '') FROM unnest(ARRAY[
	'SELECT k, count(*), sum(id) FROM ev GROUP BY k',
	'SELECT s, d, max(t) FROM ev GROUP BY s, d',
	'SELECT f, count(*) FROM ev GROUP BY f',
	'SELECT DISTINCT s FROM ev',
	'SELECT DISTINCT k, s FROM ev',
	'SELECT DISTINCT ON (k) k, id FROM ev ORDER BY k, id DESC',
	'SELECT k FROM ev INTERSECT SELECT k FROM ev2',
	'SELECT k, s FROM ev EXCEPT ALL SELECT k, s FROM ev2',
	'SELECT f FROM ev UNION SELECT f FROM ev2 ORDER BY 1'
]) q;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM ev GROUP BY k;
-- (PostgreSQL 15 sorts the appended inputs once, 18 each input)
SELECT ev_nodes('SELECT k FROM ev INTERSECT SELECT k FROM ev2') > 0 AS setop_node;
RESET enable_hashagg;

-- merge joins: both inputs sorted by the node, the inner one marked and
-- restored over runs of equal keys
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT q, node_check(q, '') FROM unnest(ARRAY[
	'SELECT a.id, b.id FROM ev a JOIN ev2 b ON a.k = b.k ORDER BY a.id, b.id',
	'SELECT count(*), sum(a.id::int8 * b.id) FROM ev a JOIN ev2 b ON a.k = b.k',
	'SELECT a.id, b.id FROM ev a LEFT JOIN ev2 b ON a.s = b.s AND a.k = b.k ORDER BY 1, 2',
	'SELECT a.id, b.id FROM ev a FULL JOIN ev2 b ON a.f = b.f ORDER BY 1, 2',
	'SELECT count(*) FROM ev a WHERE EXISTS (SELECT 1 FROM ev2 b WHERE b.k = a.k)'
]) q;
SELECT ev_nodes('SELECT count(*) FROM ev a JOIN ev2 b ON a.k = b.k') AS merge_join_nodes;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ev a JOIN ev2 b ON a.k = b.k;
RESET enable_hashjoin;
RESET enable_nestloop;

-- under a Limit: only count + offset rows are kept.  Rows of equal keys may
-- come in any order, so these compare keys, or keys made unique by id.
SELECT q, node_check(q, '') FROM unnest(ARRAY[
	'SELECT k FROM ev ORDER BY k LIMIT 100',
	'SELECT k, id FROM ev ORDER BY k DESC, id LIMIT 2500',
	'SELECT s FROM ev ORDER BY s NULLS FIRST LIMIT 700 OFFSET 20',
	'SELECT s, b FROM ev ORDER BY s DESC, b LIMIT 5000',
	'SELECT f FROM ev ORDER BY f DESC LIMIT 300',
	'SELECT d, id FROM ev ORDER BY d, id LIMIT 9000',
	'SELECT k, t FROM ev ORDER BY k LIMIT 1',
	'SELECT k FROM ev ORDER BY k LIMIT 10 OFFSET 5990',
	'SELECT k FROM ev ORDER BY k LIMIT NULL',
	'SELECT k, s, id FROM ev ORDER BY k, s, id LIMIT 40'
]) q;
SELECT ev_nodes('SELECT k FROM ev ORDER BY k LIMIT 100') AS limit_nodes;
-- bounds past what memory holds (the rows are then read whole), and a count
-- or offset with volatile functions, which the Limit alone evaluates (the
-- node sorts every row then): one nextval() a scan, the rows Sort gives
SELECT q, node_check(q, '') FROM unnest(ARRAY[
	'SELECT k FROM ev ORDER BY k LIMIT 4611686018427387904',
	'SELECT k FROM ev ORDER BY k LIMIT 3000000000000000000 OFFSET 3000000000000000000',
	'SELECT k FROM ev ORDER BY k LIMIT 9223372036854775807 OFFSET 10'
]) q;
CREATE SEQUENCE ev_seq;
SELECT count(*) FROM (SELECT k FROM ev ORDER BY k LIMIT nextval('ev_seq') * 10) s;
SELECT currval('ev_seq') AS nextval_calls;
DROP SEQUENCE ev_seq;
CREATE FUNCTION ev_random_limit(node bool) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n text;
BEGIN
	PERFORM set_config('gpusort.enable_sort', node::text, true);
	PERFORM setseed(0.5);
	EXECUTE 'SELECT count(*) || '','' || sum(k) FROM (SELECT k FROM ev ORDER BY k '
		'LIMIT (random() * 3000)::int8 OFFSET (random() * 3000)::int8) s' INTO n;
	RETURN n;
END $$;
SELECT ev_random_limit(true) = ev_random_limit(false) AS random_limit_same;
DROP FUNCTION ev_random_limit(bool);
-- the bound as the executor sees it: a parameter, and one that changes per rescan
PREPARE ev_top(int8, int8) AS SELECT k, id FROM ev ORDER BY k, id LIMIT $1 OFFSET $2;
SET plan_cache_mode = force_generic_plan;
SELECT ev_nodes('EXECUTE ev_top(37, 5)') AS generic_plan_nodes;
CREATE TABLE ev_top_on AS EXECUTE ev_top(37, 5);
SET gpusort.enable_sort = off;
CREATE TABLE ev_top_off AS EXECUTE ev_top(37, 5);
RESET gpusort.enable_sort;
RESET plan_cache_mode;
SELECT count(*) AS rows, (SELECT count(*) FROM (TABLE ev_top_on EXCEPT ALL TABLE ev_top_off) x) AS differ FROM ev_top_on;
SELECT node_check('SELECT g, (SELECT sum(id) FROM (SELECT id FROM ev ORDER BY k, id LIMIT g * 1000) s) FROM generate_series(1, 4) g', '');
SELECT node_check('SELECT g, (SELECT max(k) FROM (SELECT k FROM ev WHERE id % 4 = g ORDER BY k DESC LIMIT 10) s) FROM generate_series(0, 3) g', '');
-- EXPLAIN ANALYZE shows the bound (PostgreSQL 18 shows buffers by default
-- and row counts with two decimals)
CREATE FUNCTION ev_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		RETURN NEXT regexp_replace(regexp_replace(regexp_replace(line, '[0-9]+ kB', 'N kB'),
												  'Device: (cpu|gpu [0-9]+)$', 'Device: cpu or gpu'),
								   'rows=([0-9]+)\.00 ', 'rows=\1 ');
	END LOOP;
END $$;
SELECT ev_explain('SELECT k FROM ev ORDER BY k LIMIT 10');
DROP FUNCTION ev_explain(text);

-- a scrollable cursor over a bounded sort, read both ways, under the node and under Sort
BEGIN;
DECLARE ev_cur SCROLL CURSOR FOR SELECT k, id FROM ev ORDER BY k DESC, id LIMIT 6;
FETCH 4 FROM ev_cur;
FETCH BACKWARD 3 FROM ev_cur;
FETCH ALL FROM ev_cur;
FETCH BACKWARD ALL FROM ev_cur;
SET LOCAL gpusort.enable_sort = off;
DECLARE ev_cur2 SCROLL CURSOR FOR SELECT k, id FROM ev ORDER BY k DESC, id LIMIT 6;
FETCH 4 FROM ev_cur2;
FETCH BACKWARD 3 FROM ev_cur2;
FETCH ALL FROM ev_cur2;
FETCH BACKWARD ALL FROM ev_cur2;
COMMIT;

-- parallel workers under a Gather Merge
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET enable_hashagg = off;
SELECT q, node_check(q, '') FROM unnest(ARRAY[
	'SELECT k, count(*) FROM ev GROUP BY k',
	'SELECT s, sum(b) FROM ev GROUP BY s',
	'SELECT k FROM ev ORDER BY k LIMIT 50'
]) q;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM ev GROUP BY k;
RESET enable_hashagg;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- where Sort stays: keys that give no leading bits (arrays, records; a text
-- key gives its abbreviated key), too few rows for the threshold, a small
-- LIMIT, the node turned off
SELECT ev_nodes('SELECT id FROM ev ORDER BY t') AS text_key,
	   ev_nodes('SELECT id FROM ev ORDER BY ARRAY[k]') AS array_key,
	   ev_nodes('SELECT id FROM ev ORDER BY (k, s)') AS record_key;
SET gpusort.sort_node_min_rows = 10000;
SET enable_hashagg = off;
SELECT ev_nodes('SELECT k, count(*) FROM ev GROUP BY k') AS below_threshold;
RESET enable_hashagg;
-- a small constant LIMIT (at the default threshold): the node where it
-- prunes as it reads (keys that pack exactly, or a text key's first bytes
-- under C) over rows enough to prune often (12,000 here) that are wider
-- than a word, Sort's top-N heap over fewer rows (6,000) or over rows of one
-- int4
RESET gpusort.sort_node_min_rows;
SELECT ev_nodes('SELECT k, id, b FROM ev, (VALUES (1), (2)) v(x) ORDER BY k LIMIT 100') AS small_limit,
	   ev_nodes('SELECT k, id, b FROM ev ORDER BY k LIMIT 100') AS small_limit_few_rows,
	   ev_nodes('SELECT k FROM ev, (VALUES (1), (2)) v(x) ORDER BY k LIMIT 100') AS small_limit_narrow,
	   ev_nodes('SELECT t FROM ev, (VALUES (1), (2)) v(x) ORDER BY t LIMIT 100') AS small_limit_text,
	   ev_nodes('SELECT k FROM ev ORDER BY k LIMIT 20000') AS large_limit;
SET gpusort.sort_node_min_rows = 0;
SET gpusort.enable_sort = off;
SELECT ev_nodes('SELECT id, row_number() OVER (ORDER BY k, id) FROM ev') AS turned_off;
RESET gpusort.enable_sort;

DROP TABLE ev_top_on, ev_top_off;
DEALLOCATE ev_top;
DROP FUNCTION ev_nodes(text);
DROP TABLE ev, ev2;
