--
-- 31_sort_node_run_condition: a WindowAgg's run condition bounds the sort
-- node under it.  rank() or row_number() OVER (ORDER BY ...) <= k or < k
-- (k >= rank() alike), in a WHERE over the window's subquery, stops the top
-- WindowAgg without PARTITION BY at the first row past it; the node then
-- keeps the rows of rank at most k (k - 1 for <) and the peer group after
-- them, which the WindowAgg still reads (its target list and window
-- functions are computed for the first row past the condition, and a
-- RANGE frame reaches that row's peers).  Ties at the cut, NULLs first and
-- last, DESC, composite keys, float8, strings, k of 0, 1, NULL and past the
-- row count, k from a parameter, rescans, parallel workers under a Gather
-- Merge, an aggregate of the default RANGE frame beside rank(), and the
-- cases that take no bound (ntile, percent_rank, a frame reaching FOLLOWING
-- rows, PARTITION BY, dense_rank() <= k, a window ordered by other keys
-- than the sort).  Each query's rows
-- are compared with PostgreSQL's (gpusort.enable_sort off) as a set: peers
-- come in input order from the node and in any order from Sort.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
SET gpusort.sort_node_min_rows = 0;
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 0;

-- 20,000 rows: an int4 of about 600 values with NULLs (runs of about 33
-- peers), an int8 of 7 values, a float8 with NULLs, -0, NaN and Infinity,
-- a string with NULLs, an int4 to sum and the row's number
SELECT setseed(0.31);
CREATE TABLE rc (id int4, a int4, b int8, f float8, s text, x int4);
INSERT INTO rc
SELECT g,
	   CASE WHEN g % 41 = 0 THEN NULL ELSE floor(random() * 600)::int4 END,
	   floor(random() * 7)::int8,
	   CASE WHEN g % 37 = 0 THEN NULL
			WHEN g % 101 = 0 THEN (ARRAY['-0', '0', 'NaN', 'Infinity', '-Infinity'])[1 + g % 5]::float8
			ELSE round((random() * 200)::numeric, 1)::float8 END,
	   CASE WHEN g % 29 = 0 THEN NULL ELSE 'key-' || floor(random() * 300)::text END,
	   floor(random() * 100)::int4
FROM generate_series(1, 20000) g;
ANALYZE rc;

-- rc_check and rc_plan (include/helpers.sql): the node's rows against
-- Sort's as sets, and the plan's lines that hold on every machine
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all

-- the plan: the node under the WindowAgg, with the run condition's bound
SELECT rc_plan($$SELECT * FROM (SELECT a, x, rank() OVER (ORDER BY a) r FROM rc) w WHERE r <= 100$$);
-- 100 rows of rank up to 100 and their peers, then the next peer group:
-- the rows the node keeps
SELECT rc_plan('SELECT * FROM (SELECT a, x, rank() OVER (ORDER BY a) r FROM rc) w WHERE r <= 100', true);

-- k at the cut, inside a run of peers, 0, 1 and past the row count; each
-- query with a sum over the default RANGE frame (the current row's peers)
CREATE TEMP TABLE rc_ks (k int8);
INSERT INTO rc_ks VALUES (0), (1), (2), (32), (33), (34), (1000), (4096), (19999), (20000), (30000);
CREATE TEMP TABLE rc_queries (n int, q text);
INSERT INTO rc_queries VALUES
	-- rank(), NULLS LAST and FIRST, DESC, <= and <, commuted
	(1, 'SELECT * FROM (SELECT a, x, rank() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY a)) w WHERE r <= %s'),
	(2, 'SELECT * FROM (SELECT a, x, rank() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY a NULLS FIRST)) w WHERE r < %s'),
	(3, 'SELECT * FROM (SELECT a, x, rank() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY a DESC)) w WHERE %s >= r'),
	(4, 'SELECT * FROM (SELECT a, x, rank() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY a DESC NULLS LAST)) w WHERE %s > r'),
	-- row_number(): the keys and numbers (peers at the cut may be any of them under Sort)
	(5, 'SELECT a, r, sx FROM (SELECT a, row_number() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY a)) w WHERE r <= %s'),
	(6, 'SELECT a, r, sx FROM (SELECT a, row_number() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY a DESC NULLS LAST)) w WHERE r < %s'),
	-- composite keys, dense_rank() beside rank()
	(7, 'SELECT * FROM (SELECT a, b, x, rank() OVER w r, dense_rank() OVER w d, count(*) OVER w c FROM rc WINDOW w AS (ORDER BY b DESC, a NULLS FIRST)) w WHERE r <= %s'),
	-- float8 (-0 = 0, NaN last, NULLs): a NULL bit past 64 bits
	(8, 'SELECT * FROM (SELECT f, x, rank() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY f)) w WHERE r <= %s'),
	(9, 'SELECT * FROM (SELECT f, x, rank() OVER w r, max(x) OVER w mx FROM rc WINDOW w AS (ORDER BY f DESC NULLS LAST, a)) w WHERE r <= %s'),
	-- a string (its first bytes, then the tie pass), a key after it
	(10, 'SELECT * FROM (SELECT s, b, x, rank() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY s COLLATE "C", b DESC)) w WHERE r <= %s'),
	(11, 'SELECT s, r, sx FROM (SELECT s, row_number() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY s COLLATE "C" DESC NULLS LAST)) w WHERE r <= %s'),
	-- two conditions: the least bound; dense_rank()'s gives none
	(12, 'SELECT a, r, d FROM (SELECT a, x, rank() OVER w r, row_number() OVER w rn, dense_rank() OVER w d FROM rc WINDOW w AS (ORDER BY a)) w WHERE r <= %s AND rn < 2000 AND d <= 50');

-- every query and every k: the node took the bound, and its rows are Sort's
CREATE TEMP TABLE rc_results AS
SELECT n, k, rc_check(format(q, k)) AS result FROM rc_queries, rc_ks;
SELECT n, k, result FROM rc_results WHERE result <> 'bound' ORDER BY n, k;
SELECT count(*) AS checked FROM rc_results;

-- the cuts fall inside runs of peers: k = 33 ends inside a run of a's peers
SELECT count(*) > 33 AS peers_past_33
FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc) w WHERE r <= 33;

-- k NULL: the condition is false at the first row, no rows (an initplan's
-- k gives no bound; the rescans below bound with a NULL k from the outer row)
SELECT rc_check('SELECT * FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc) w WHERE r <= (SELECT NULL::int4)');
SELECT count(*) FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc) w WHERE r <= (SELECT NULL::int4);

-- k from a parameter of a generic plan, evaluated at each execution
SET plan_cache_mode = force_generic_plan;
PREPARE rc_node(int8) AS
SELECT count(*) c, sum(r) sr, sum(sx) ssx FROM (
	SELECT a, rank() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY a)) w
WHERE r <= $1;
SELECT rc_plan('EXECUTE rc_node(10)');
CREATE TEMP TABLE rc_node_results (k int8, c int8, sr numeric, ssx numeric);
CREATE TEMP TABLE rc_one AS EXECUTE rc_node(0);
INSERT INTO rc_node_results SELECT 0, * FROM rc_one;
DROP TABLE rc_one;
CREATE TEMP TABLE rc_one AS EXECUTE rc_node(1);
INSERT INTO rc_node_results SELECT 1, * FROM rc_one;
DROP TABLE rc_one;
CREATE TEMP TABLE rc_one AS EXECUTE rc_node(33);
INSERT INTO rc_node_results SELECT 33, * FROM rc_one;
DROP TABLE rc_one;
CREATE TEMP TABLE rc_one AS EXECUTE rc_node(-3);
INSERT INTO rc_node_results SELECT -3, * FROM rc_one;
DROP TABLE rc_one;
CREATE TEMP TABLE rc_one AS EXECUTE rc_node(NULL);
INSERT INTO rc_node_results SELECT NULL, * FROM rc_one;
DROP TABLE rc_one;
CREATE TEMP TABLE rc_one AS EXECUTE rc_node(5000);
INSERT INTO rc_node_results SELECT 5000, * FROM rc_one;
DROP TABLE rc_one;
CREATE TEMP TABLE rc_one AS EXECUTE rc_node(30000);
INSERT INTO rc_node_results SELECT 30000, * FROM rc_one;
DROP TABLE rc_one;
DEALLOCATE rc_node;
RESET plan_cache_mode;
SELECT * FROM rc_node_results ORDER BY k NULLS FIRST;
-- the same k with Sort
SET gpusort.enable_sort = off;
SELECT count(*) AS differing FROM rc_node_results n
WHERE (n.c, n.sr, n.ssx) IS DISTINCT FROM
	  (SELECT (count(*), sum(r), sum(sx))::record FROM (
		   SELECT a, rank() OVER w r, sum(x) OVER w sx FROM rc WINDOW w AS (ORDER BY a)) w
	   WHERE r <= n.k);
RESET gpusort.enable_sort;

-- rescans: k from the outer row, in a LATERAL subquery and in a subplan
CREATE TEMP TABLE rc_outer (k int4);
INSERT INTO rc_outer VALUES (3), (0), (150), (NULL), (3), (1000), (-1), (25000), (34);
SELECT rc_plan($$SELECT o.k, l.* FROM rc_outer o,
	LATERAL (SELECT count(*) c, sum(r) sr FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc) w WHERE r <= o.k) l$$);
SELECT rc_check('SELECT o.k, l.* FROM rc_outer o,
	LATERAL (SELECT count(*) c, sum(r) sr, sum(sx) ssx FROM (SELECT a, rank() OVER w r, sum(x) OVER w sx
	FROM rc WINDOW w AS (ORDER BY a)) w WHERE r <= o.k) l');
SELECT rc_check('SELECT o.k, (SELECT count(*) || '' '' || sum(r) FROM (SELECT a, row_number() OVER (ORDER BY a DESC) r
	FROM rc) w WHERE r < o.k) FROM rc_outer o');
SELECT o.k, l.* FROM rc_outer o,
	LATERAL (SELECT count(*) c, sum(r) sr FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc) w WHERE r <= o.k) l
ORDER BY 1, 2;

-- Under a Gather Merge each worker keeps its own rows of rank up to k and
-- its next peer group, whose union holds the rows the WindowAgg reads; a
-- constant k only (the workers cannot evaluate the leader's parameters)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT rc_plan($$SELECT * FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc) w WHERE r <= 100$$);
SELECT k, rc_check(format('SELECT * FROM (SELECT a, x, rank() OVER w r, sum(x) OVER w sx FROM rc
	WINDOW w AS (ORDER BY a NULLS FIRST)) w WHERE r <= %s', k)) AS rank_result,
	rc_check(format('SELECT a, r FROM (SELECT a, row_number() OVER (ORDER BY a DESC) r FROM rc) w WHERE r < %s', k))
		AS row_number_result
FROM rc_ks ORDER BY k;
SET plan_cache_mode = force_generic_plan;
PREPARE rc_parallel(int8) AS SELECT count(*) FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc) w WHERE r <= $1;
SELECT rc_plan('EXECUTE rc_parallel(10)');
DEALLOCATE rc_parallel;
RESET plan_cache_mode;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- The first row past the condition is computed, its target list and its
-- window functions (whose frame reaches its peers): a division by zero
-- there fails under Sort and under the node alike.  a = 3 is the fourth
-- group of two rows (ranks 1, 3, 5, 7).
CREATE TABLE rc_div AS
SELECT g AS a, CASE WHEN g = 4 THEN 0 ELSE 1 END AS x FROM generate_series(1, 2000) g, generate_series(1, 2) d;
ANALYZE rc_div;
SELECT sum(y) FROM (SELECT a, 1 / x AS y, rank() OVER (ORDER BY a) r FROM rc_div) w WHERE r <= 3;
SELECT sum(y) FROM (SELECT a, 1 / x AS y, rank() OVER (ORDER BY a) r FROM rc_div) w WHERE r <= 5;
SELECT sum(y) FROM (SELECT a, row_number() OVER (ORDER BY a) r, sum(1 / x) OVER (ORDER BY a) y FROM rc_div) w WHERE r <= 5;
SELECT sum(y) FROM (SELECT a, row_number() OVER (ORDER BY a) r, sum(1 / x) OVER (ORDER BY a) y FROM rc_div) w WHERE r <= 6;
SET gpusort.enable_sort = off;
SELECT sum(y) FROM (SELECT a, 1 / x AS y, rank() OVER (ORDER BY a) r FROM rc_div) w WHERE r <= 3;
SELECT sum(y) FROM (SELECT a, 1 / x AS y, rank() OVER (ORDER BY a) r FROM rc_div) w WHERE r <= 5;
SELECT sum(y) FROM (SELECT a, row_number() OVER (ORDER BY a) r, sum(1 / x) OVER (ORDER BY a) y FROM rc_div) w WHERE r <= 5;
SELECT sum(y) FROM (SELECT a, row_number() OVER (ORDER BY a) r, sum(1 / x) OVER (ORDER BY a) y FROM rc_div) w WHERE r <= 6;
RESET gpusort.enable_sort;

-- k is evaluated by the WindowAgg at its first row only: over no rows an
-- expression k that fails (10 / $1 at 0) is never evaluated.  The node
-- takes a Const or a Param as k, not such an expression: no bound, and no
-- error where Sort has none.
SET plan_cache_mode = force_generic_plan;
PREPARE rc_expr_k(int4) AS
SELECT * FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc WHERE x > 1000) w WHERE r <= 10 / $1;
SELECT rc_plan('EXECUTE rc_expr_k(0)');
EXECUTE rc_expr_k(0);
DEALLOCATE rc_expr_k;
SET gpusort.enable_sort = off;
PREPARE rc_expr_k(int4) AS
SELECT * FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc WHERE x > 1000) w WHERE r <= 10 / $1;
EXECUTE rc_expr_k(0);
DEALLOCATE rc_expr_k;
RESET gpusort.enable_sort;
RESET plan_cache_mode;
-- nor a parameter an initplan sets, which runs when k is first evaluated
SELECT rc_plan($$SELECT * FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc WHERE x > 1000) w
				 WHERE r <= (SELECT 10 / count(*)::int4 FROM rc WHERE x > 1000)$$);
SELECT * FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc WHERE x > 1000) w
WHERE r <= (SELECT 10 / count(*)::int4 FROM rc WHERE x > 1000);
SET gpusort.enable_sort = off;
SELECT * FROM (SELECT a, rank() OVER (ORDER BY a) r FROM rc WHERE x > 1000) w
WHERE r <= (SELECT 10 / count(*)::int4 FROM rc WHERE x > 1000);
RESET gpusort.enable_sort;

-- No bound where the WindowAgg needs rows past its condition or the node's
-- ties are not its peers; the rows are Sort's all the same.
-- ntile and percent_rank need the partition's size
SELECT rc_plan($$SELECT * FROM (SELECT a, rank() OVER w r, ntile(4) OVER w t FROM rc WINDOW w AS (ORDER BY a)) w WHERE r <= 10$$);
SELECT rc_check('SELECT * FROM (SELECT a, rank() OVER w r, ntile(4) OVER w t FROM rc WINDOW w AS (ORDER BY a, id)) w WHERE r <= 10');
SELECT rc_check('SELECT * FROM (SELECT a, rank() OVER w r, percent_rank() OVER w p FROM rc WINDOW w AS (ORDER BY a)) w WHERE r <= 10');
-- a frame that reaches FOLLOWING rows
SELECT rc_plan($$SELECT * FROM (SELECT a, rank() OVER w r, sum(x) OVER w sx FROM rc
			   WINDOW w AS (ORDER BY id ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING)) w WHERE r <= 10$$);
SELECT rc_check('SELECT * FROM (SELECT id, rank() OVER w r, sum(x) OVER w sx FROM rc
	WINDOW w AS (ORDER BY id ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING)) w WHERE r <= 10');
SELECT rc_check('SELECT * FROM (SELECT id, rank() OVER w r, sum(x) OVER w sx FROM rc
	WINDOW w AS (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)) w WHERE r <= 10');
-- a frame that ends before the current row takes it
SELECT rc_check('SELECT * FROM (SELECT a, rank() OVER w r, sum(x) OVER w sx FROM rc
	WINDOW w AS (ORDER BY a RANGE BETWEEN 5 PRECEDING AND 1 PRECEDING)) w WHERE r <= 100');
-- PARTITION BY: the WindowAgg goes on to the next partition
SELECT rc_plan($$SELECT * FROM (SELECT a, b, rank() OVER (PARTITION BY b ORDER BY a) r FROM rc) w WHERE r <= 10$$);
SELECT rc_check('SELECT * FROM (SELECT a, b, rank() OVER (PARTITION BY b ORDER BY a) r FROM rc) w WHERE r <= 10');
-- dense_rank() <= k bounds no count of rows
SELECT rc_plan($$SELECT * FROM (SELECT a, dense_rank() OVER (ORDER BY a) d FROM rc) w WHERE d <= 10$$);
SELECT rc_check('SELECT * FROM (SELECT a, dense_rank() OVER (ORDER BY a) d FROM rc) w WHERE d <= 10');
-- The node takes the bound only where its keys are the window's: not under
-- a window whose rows another WindowAgg between them passes on (sorted by
-- a, b for it), nor under a window that orders by a column a WHERE fixes
-- (the sort leaves that key out).
SELECT rc_plan($$SELECT * FROM (SELECT a, b, rank() OVER (ORDER BY a, b) r, rank() OVER (ORDER BY a) r2 FROM rc) w
				 WHERE r2 <= 10$$);
SELECT rc_check('SELECT * FROM (SELECT a, b, rank() OVER (ORDER BY a, b) r, rank() OVER (ORDER BY a) r2 FROM rc) w
	WHERE r2 <= 10');
SELECT rc_plan($$SELECT * FROM (SELECT a, b, rank() OVER (ORDER BY b, a) r FROM rc WHERE b = 3) w WHERE r <= 10$$);
SELECT rc_check('SELECT * FROM (SELECT a, b, rank() OVER (ORDER BY b, a) r FROM rc WHERE b = 3) w WHERE r <= 10');

DROP TABLE rc_div;
DROP TABLE rc;
