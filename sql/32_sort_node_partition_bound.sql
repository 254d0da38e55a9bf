--
-- 32_sort_node_partition_bound: a run condition bounds the sort node in each
-- partition.  rank() or row_number() OVER (PARTITION BY ... ORDER BY ...)
-- <= k or < k, in a WHERE over the window's subquery, makes the top
-- WindowAgg pass over the rest of a partition once the condition is false
-- there; the node then keeps, in each partition, the rows of rank at most k
-- (k - 1 for <) and the peer group after them.  Partitions of one row, of
-- a few rows and of thousands; partition keys of int4, int8, float8 (-0 and
-- 0 one partition, NaN, NULLs), strings under C and a nondeterministic ICU
-- collation (told apart by PostgreSQL's comparators), composite partition
-- keys; ties at the cut, NULLs first and last, DESC; k of 0, 1, NULL, inside
-- runs of peers and past every partition's size; k from a parameter,
-- rescans, parallel workers, a sort past work_mem, and the windows that take
-- no bound.  Each query's rows are compared with PostgreSQL's
-- (gpusort.enable_sort off) as a set: peers come in input order from the
-- node and in any order from Sort.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
-- rc_check and rc_plan (include/helpers.sql): the node's rows against
-- Sort's as sets, and the plan's lines that hold on every machine
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all
SET gpusort.sort_node_min_rows = 0;
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 0;

-- 12,000 rows: g int4 of about 150 values with NULLs (partitions of about
-- 80 rows), h int8 of 5 values (partitions of thousands), the row's id
-- (partitions of one row), f float8 of 40 values with -0, 0, NaN,
-- Infinity and NULLs, s a string of 40 values with NULLs, written in upper
-- or lower case at random, a int4 of 30 values with NULLs (runs of peers),
-- x an int4 to sum
SELECT setseed(0.32);
CREATE TABLE pb (id int4, g int4, h int8, f float8, s text, a int4, x int4);
INSERT INTO pb
SELECT i,
	   CASE WHEN i % 53 = 0 THEN NULL ELSE floor(random() * 150)::int4 END,
	   floor(random() * 5)::int8,
	   CASE WHEN i % 47 = 0 THEN NULL
			WHEN i % 31 = 0 THEN (ARRAY['-0', '0', 'NaN', 'Infinity', '-Infinity'])[1 + i % 5]::float8
			ELSE floor(random() * 40)::float8 / 4 END,
	   CASE WHEN i % 43 = 0 THEN NULL
			WHEN random() < 0.5 THEN 'part-' || floor(random() * 40)::text
			ELSE 'PART-' || floor(random() * 40)::text END,
	   CASE WHEN i % 29 = 0 THEN NULL ELSE floor(random() * 30)::int4 END,
	   floor(random() * 100)::int4
FROM generate_series(1, 12000) i;
ANALYZE pb;

-- the plan: the node under the WindowAgg, bounded in each partition
SELECT rc_plan($$SELECT * FROM (SELECT g, a, x, rank() OVER (PARTITION BY g ORDER BY a) r FROM pb) w WHERE r <= 3$$);
-- each partition's rows of rank up to 3 and its next peer group: the rows the node keeps
SELECT rc_plan('SELECT * FROM (SELECT g, a, x, rank() OVER (PARTITION BY g ORDER BY a) r FROM pb) w WHERE r <= 3', true);

-- k at the cut, inside runs of peers, 0, 1 and past the partitions' sizes;
-- each query with an aggregate over the default RANGE frame (the current
-- row's peers)
CREATE TEMP TABLE pb_ks (k int8);
INSERT INTO pb_ks VALUES (0), (1), (2), (3), (10), (40), (41), (100), (3000), (20000);
CREATE TEMP TABLE pb_queries (n int, q text);
INSERT INTO pb_queries VALUES
	-- rank() in partitions of about 80 rows: NULLS LAST and FIRST, DESC, <= and <, commuted
	(1, 'SELECT * FROM (SELECT g, a, x, rank() OVER w r, sum(x) OVER w sx FROM pb WINDOW w AS (PARTITION BY g ORDER BY a)) w WHERE r <= %s'),
	(2, 'SELECT * FROM (SELECT g, a, x, rank() OVER w r, sum(x) OVER w sx FROM pb WINDOW w AS (PARTITION BY g ORDER BY a DESC NULLS LAST)) w WHERE r < %s'),
	(3, 'SELECT * FROM (SELECT g, a, x, rank() OVER w r, count(*) OVER w c FROM pb WINDOW w AS (PARTITION BY g ORDER BY a NULLS FIRST)) w WHERE %s >= r'),
	-- row_number() in partitions of thousands: the keys and numbers (peers at
	-- the cut may be any of them under Sort), and whole rows under a unique order
	(4, 'SELECT h, a, r FROM (SELECT h, a, row_number() OVER w r FROM pb WINDOW w AS (PARTITION BY h ORDER BY a DESC)) w WHERE r <= %s'),
	(5, 'SELECT * FROM (SELECT h, a, id, x, row_number() OVER w r, sum(x) OVER w sx FROM pb WINDOW w AS (PARTITION BY h ORDER BY a, id)) w WHERE %s > r'),
	-- partitions of one row
	(6, 'SELECT * FROM (SELECT id, a, x, rank() OVER w r FROM pb WINDOW w AS (PARTITION BY id ORDER BY a)) w WHERE r <= %s'),
	-- float8 partitions: -0 and 0 are one, NaN is one, NULLs are one
	(7, 'SELECT * FROM (SELECT f, a, x, rank() OVER w r, max(x) OVER w mx FROM pb WINDOW w AS (PARTITION BY f ORDER BY a DESC NULLS FIRST)) w WHERE r <= %s'),
	-- a string partition (its first bytes, then the comparators)
	(8, 'SELECT * FROM (SELECT s, a, x, rank() OVER w r, sum(x) OVER w sx FROM pb WINDOW w AS (PARTITION BY s COLLATE "C" ORDER BY a)) w WHERE r <= %s'),
	-- composite partition keys, past 64 bits of words
	(9, 'SELECT * FROM (SELECT h, g, f, x, rank() OVER w r, dense_rank() OVER w d FROM pb WINDOW w AS (PARTITION BY h, g ORDER BY f NULLS FIRST)) w WHERE r <= %s'),
	-- a string ordering key: the peers by the comparators
	(10, 'SELECT * FROM (SELECT g, s, x, rank() OVER w r, sum(x) OVER w sx FROM pb WINDOW w AS (PARTITION BY g ORDER BY s COLLATE "C" DESC)) w WHERE r <= %s'),
	-- PARTITION BY with no ORDER BY: every row of a partition is a peer
	(11, 'SELECT * FROM (SELECT g, x, rank() OVER w r, sum(x) OVER w sx FROM pb WINDOW w AS (PARTITION BY g)) w WHERE r <= %s'),
	-- two conditions: the least bound; dense_rank()'s gives none
	(12, 'SELECT g, a, r, d FROM (SELECT g, a, rank() OVER w r, row_number() OVER w rn, dense_rank() OVER w d FROM pb WINDOW w AS (PARTITION BY g ORDER BY a)) w WHERE r <= %s AND rn < 60 AND d <= 20');

-- every query and every k: the node took the bound, and its rows are Sort's
CREATE TEMP TABLE pb_results AS
SELECT n, k, rc_check(format(q, k)) AS result FROM pb_queries, pb_ks;
SELECT n, k, result FROM pb_results WHERE result <> 'bound' ORDER BY n, k;
SELECT count(*) AS checked FROM pb_results;

-- the cuts fall inside runs of peers: more rows than partitions times k
SELECT count(*) > 3 * count(DISTINCT g) AS peers_past_3
FROM (SELECT g, rank() OVER (PARTITION BY g ORDER BY a) r FROM pb) w WHERE r <= 3;

-- a nondeterministic collation: strings that differ in case are one partition
SELECT EXISTS (SELECT FROM pg_collation WHERE collname = 'und-x-icu') AS have_icu \gset
\if :have_icu
CREATE COLLATION pb_nd (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT count(DISTINCT s COLLATE pb_nd) < count(DISTINCT s COLLATE "C") AS case_folded FROM pb;
SELECT k, rc_check(format('SELECT s, a, r FROM (SELECT s, a, rank() OVER w r FROM pb
	WINDOW w AS (PARTITION BY s COLLATE pb_nd ORDER BY a)) w WHERE r <= %s', k)) AS result
FROM pb_ks WHERE k IN (0, 1, 3, 41);
DROP COLLATION pb_nd;
\else
SELECT 'no ICU: the nondeterministic collation is not checked' AS skipped;
\endif

-- k from a parameter of a generic plan, evaluated at each execution; a
-- NULL k makes the condition false at each partition's first row
SET plan_cache_mode = force_generic_plan;
PREPARE pb_node(int8) AS
SELECT count(*) c, sum(r) sr, sum(sx) ssx FROM (
	SELECT rank() OVER w r, sum(x) OVER w sx FROM pb WINDOW w AS (PARTITION BY g ORDER BY a)) w
WHERE r <= $1;
SELECT rc_plan('EXECUTE pb_node(5)');
EXECUTE pb_node(0);
EXECUTE pb_node(5);
EXECUTE pb_node(50);
EXECUTE pb_node(NULL);
SET gpusort.enable_sort = off;
EXECUTE pb_node(0);
EXECUTE pb_node(5);
EXECUTE pb_node(50);
EXECUTE pb_node(NULL);
RESET gpusort.enable_sort;
DEALLOCATE pb_node;
RESET plan_cache_mode;

-- rescans: the node read again for each outer row, whose column filters its input
SET enable_hashjoin = off;
SET enable_mergejoin = off;
CREATE TEMP TABLE pb_outer (k int4);
INSERT INTO pb_outer VALUES (1), (4), (0), (40), (2);
SELECT rc_plan($$SELECT o.k, w.* FROM pb_outer o, LATERAL (SELECT * FROM (SELECT g, a, x, rank() OVER (PARTITION BY g ORDER BY a) r
				 FROM pb WHERE x > o.k) s WHERE r <= 2) w$$);
SELECT rc_check('SELECT o.k, w.* FROM pb_outer o, LATERAL (SELECT * FROM (SELECT g, a, x, rank() OVER (PARTITION BY g ORDER BY a) r
	FROM pb WHERE x > o.k) s WHERE r <= 2) w');
RESET enable_hashjoin;
RESET enable_mergejoin;

-- parallel workers under a Gather Merge, each bounded in each partition
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SELECT rc_check('SELECT * FROM (SELECT g, a, x, rank() OVER w r, sum(x) OVER w sx FROM pb WINDOW w AS (PARTITION BY g ORDER BY a)) w WHERE r <= 3');
SELECT rc_check('SELECT h, a, r FROM (SELECT h, a, row_number() OVER w r FROM pb WINDOW w AS (PARTITION BY h ORDER BY a DESC)) w WHERE r <= 41');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;

-- past work_mem, the rows go to a tuplesort, uncut; the WindowAgg passes over them
SET work_mem = '64kB';
SELECT rc_check('SELECT * FROM (SELECT g, a, x, rank() OVER w r, sum(x) OVER w sx FROM pb WINDOW w AS (PARTITION BY g ORDER BY a)) w WHERE r <= 3');
SET work_mem = '64MB';

-- No bound where the WindowAgg needs a partition's rows past its condition;
-- the rows are Sort's all the same.
-- ntile needs the partition's size
SELECT rc_check('SELECT * FROM (SELECT g, a, id, rank() OVER w r, ntile(3) OVER w t FROM pb WINDOW w AS (PARTITION BY g ORDER BY a, id)) w WHERE r <= 3');
-- a frame to the partition's end
SELECT rc_check('SELECT * FROM (SELECT g, a, rank() OVER w r, sum(x) OVER w sx FROM pb
	WINDOW w AS (PARTITION BY g ORDER BY a RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)) w WHERE r <= 3');
-- dense_rank() <= k bounds no count of rows
SELECT rc_check('SELECT * FROM (SELECT g, a, dense_rank() OVER (PARTITION BY g ORDER BY a) d FROM pb) w WHERE d <= 3');
-- A second window over another partition is computed below the ranked one,
-- which stays the top WindowAgg: its node is bounded
SELECT rc_check('SELECT * FROM (SELECT g, h, a, rank() OVER (PARTITION BY g ORDER BY a) r, count(*) OVER (PARTITION BY h) c FROM pb) w
	WHERE r <= 3');

-- Once its run condition is false in a partition, the WindowAgg still
-- computes the target list of the rows it had read: the next peer group's,
-- whose first row's frame it ends at the row after them.  An error there
-- (1 / x at o = 3) or a side effect (nextval(), one a row) is PostgreSQL's
-- with the node too.  (PostgreSQL 18 reads no row past the group here: no
-- error, and fewer nextval() calls, with the node as without it.)
CREATE TABLE pz (p int4, o int4, x int4);
INSERT INTO pz VALUES (1, 1, 1), (1, 2, 1), (1, 2, 1), (1, 3, 0), (1, 4, 1), (1, 5, 0), (2, 1, 1), (2, 2, 1);
CREATE SEQUENCE pz_seq;
SET gpusort.enable_sort = off;
SELECT p, o, y FROM (SELECT p, o, 1 / x y, rank() OVER w r, sum(x) OVER w sx FROM pz
	WINDOW w AS (PARTITION BY p ORDER BY o)) w WHERE r <= 1;
SELECT p, o, v FROM (SELECT p, o, nextval('pz_seq') v, rank() OVER w r, sum(x) OVER w sx FROM pz
	WINDOW w AS (PARTITION BY p ORDER BY o)) w WHERE r <= 1 ORDER BY p, o;
SET gpusort.enable_sort = on;
SELECT rc_plan('SELECT p, o, y FROM (SELECT p, o, 1 / x y, rank() OVER w r, sum(x) OVER w sx FROM pz
	WINDOW w AS (PARTITION BY p ORDER BY o)) w WHERE r <= 1');
SELECT p, o, y FROM (SELECT p, o, 1 / x y, rank() OVER w r, sum(x) OVER w sx FROM pz
	WINDOW w AS (PARTITION BY p ORDER BY o)) w WHERE r <= 1;
SELECT setval('pz_seq', 1, false);
SELECT p, o, v FROM (SELECT p, o, nextval('pz_seq') v, rank() OVER w r, sum(x) OVER w sx FROM pz
	WINDOW w AS (PARTITION BY p ORDER BY o)) w WHERE r <= 1 ORDER BY p, o;
-- the same over 5,000 rows in 10 partitions, x = 0 at the row after
-- partition 8's next peer group
TRUNCATE pz;
INSERT INTO pz SELECT 1 + i / 500, i % 500, CASE WHEN i = 3503 THEN 0 ELSE 1 END FROM generate_series(0, 4999) i;
ANALYZE pz;
SET gpusort.enable_sort = off;
SELECT p, o, y FROM (SELECT p, o, 1 / x y, rank() OVER w r, sum(x) OVER w sx FROM pz
	WINDOW w AS (PARTITION BY p ORDER BY o)) w WHERE r <= 2;
SELECT setval('pz_seq', 1, false);
SELECT p, o, v FROM (SELECT p, o, nextval('pz_seq') v, rank() OVER w r, sum(x) OVER w sx FROM pz
	WINDOW w AS (PARTITION BY p ORDER BY o)) w WHERE r <= 1 AND p <= 3 ORDER BY p, o;
SET gpusort.enable_sort = on;
SELECT p, o, y FROM (SELECT p, o, 1 / x y, rank() OVER w r, sum(x) OVER w sx FROM pz
	WINDOW w AS (PARTITION BY p ORDER BY o)) w WHERE r <= 2;
SELECT setval('pz_seq', 1, false);
SELECT p, o, v FROM (SELECT p, o, nextval('pz_seq') v, rank() OVER w r, sum(x) OVER w sx FROM pz
	WINDOW w AS (PARTITION BY p ORDER BY o)) w WHERE r <= 1 AND p <= 3 ORDER BY p, o;
DROP SEQUENCE pz_seq;
DROP TABLE pz;

DROP TABLE pb;
