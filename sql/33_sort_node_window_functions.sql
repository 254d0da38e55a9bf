--
-- 33_sort_node_window_functions: where a WindowAgg over the sort node
-- computes only ranking functions (row_number, rank, dense_rank,
-- percent_rank, cume_dist, ntile) of a window whose
-- PARTITION BY and ORDER BY are the node's leading keys, the node computes
-- them as it returns its rows and the WindowAgg goes (EXPLAIN: "Window
-- Functions").  Partitions and peers by the packed words (integers,
-- float8 with -0, NaN and NULLs, over 64 bits) and by PostgreSQL's
-- comparators (strings, a nondeterministic collation); functions inside
-- expressions, errors and volatile functions in the target list, stacked
-- windows, windows that keep the WindowAgg (an aggregate, ntile of an
-- expression, a frame offset, a run condition, other keys), rescans, a
-- cursor, a sort past work_mem (a tuplesort, compared row by row with the
-- one before) and gpusort.enable_window_functions.  percent_rank(),
-- cume_dist() and ntile() of a constant count each partition's rows and
-- each peer group's ahead of its first row.  Each query's rows are
-- compared with
-- PostgreSQL's (gpusort.enable_sort off) as a set: peers come in input
-- order from the node and in any order from Sort, so row_number() is
-- compared with the keys only.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
SET gpusort.sort_node_min_rows = 0;
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 0;

-- 20,000 rows: an int4 of about 600 values with NULLs, an int8 of 7 values,
-- a float8 with NULLs, -0, NaN and Infinity, a string with NULLs, an int4
-- to sum and the row's number
SELECT setseed(0.33);
CREATE TABLE wf (id int4, a int4, b int8, f float8, s text, x int4);
INSERT INTO wf
SELECT g,
	   CASE WHEN g % 41 = 0 THEN NULL ELSE floor(random() * 600)::int4 END,
	   floor(random() * 7)::int8,
	   CASE WHEN g % 37 = 0 THEN NULL
			WHEN g % 101 = 0 THEN (ARRAY['-0', '0', 'NaN', 'Infinity', '-Infinity'])[1 + g % 5]::float8
			ELSE round((random() * 20)::numeric, 1)::float8 END,
	   CASE WHEN g % 29 = 0 THEN NULL ELSE 'key-' || floor(random() * 300)::text END,
	   floor(random() * 100)::int4
FROM generate_series(1, 20000) g;
ANALYZE wf;

-- The node's rows against Sort's as sets: 'computed' where the node
-- computes the window functions (and no WindowAgg is left), 'WindowAgg'
-- where a WindowAgg computes them, else what differs.
CREATE FUNCTION wf_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
	got text;
	want text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	EXECUTE 'SELECT count(*) || '':'' || coalesce(md5(string_agg(wf_row::text, '','' ORDER BY wf_row::text)), '''') FROM ('
		|| q || ') wf_row' INTO got;
	SET LOCAL gpusort.enable_sort = off;
	EXECUTE 'SELECT count(*) || '':'' || coalesce(md5(string_agg(wf_row::text, '','' ORDER BY wf_row::text)), '''') FROM ('
		|| q || ') wf_row' INTO want;
	IF got IS DISTINCT FROM want THEN
		RETURN 'differs: ' || got || ' vs ' || want;
	END IF;
	IF plan LIKE '%WindowAgg%' THEN
		RETURN 'WindowAgg';
	END IF;
	IF plan LIKE '%Window Functions:%' THEN
		RETURN 'computed';
	END IF;
	RETURN 'neither: ' || plan;
END $$;

-- the plan: the node alone, its target list the WindowAgg's
EXPLAIN (COSTS OFF, VERBOSE)
SELECT id, a, row_number() OVER w, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (ORDER BY a);
EXPLAIN (COSTS OFF)
SELECT b, a, rank() OVER w FROM wf WINDOW w AS (PARTITION BY b ORDER BY a DESC NULLS LAST);
EXPLAIN (COSTS OFF)
SELECT b, rank() OVER (PARTITION BY b) FROM wf;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT b, a, rank() OVER (PARTITION BY b ORDER BY a) * 10 AS r10, row_number() OVER (PARTITION BY b ORDER BY a, id), dense_rank() OVER (ORDER BY b) FROM wf;

-- every query, computed by the node, gives Sort's rows
CREATE TEMP TABLE wf_queries (n int, q text);
INSERT INTO wf_queries VALUES
	-- one key, NULLs last and first, DESC
	(1, 'SELECT id, a, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (ORDER BY a)'),
	(2, 'SELECT a, row_number() OVER w FROM wf WINDOW w AS (ORDER BY a NULLS FIRST)'),
	(3, 'SELECT id, a, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (ORDER BY a DESC)'),
	-- partitions: an int8, a nullable int4 (the NULLs one partition)
	(4, 'SELECT id, b, a, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (PARTITION BY b ORDER BY a DESC NULLS LAST)'),
	(5, 'SELECT b, a, row_number() OVER w FROM wf WINDOW w AS (PARTITION BY b ORDER BY a)'),
	(6, 'SELECT id, a, f, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (PARTITION BY a ORDER BY f)'),
	-- float8 peers: -0 = 0, NaN = NaN, NULLs
	(7, 'SELECT id, f, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (ORDER BY f DESC NULLS LAST)'),
	-- keys over 64 bits, over 128 bits
	(8, 'SELECT id, b, a, f, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (PARTITION BY b, a ORDER BY f)'),
	(9, 'SELECT id, a, f, x, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (PARTITION BY a ORDER BY f, x::int8 * 1000000000, id::int8)'),
	-- a partition and no order: every row a peer
	(10, 'SELECT id, b, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (PARTITION BY b)'),
	(11, 'SELECT b, row_number() OVER (PARTITION BY b) FROM wf'),
	-- strings: the first bytes, then the comparators
	(12, 'SELECT id, s, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (ORDER BY s COLLATE "C" DESC)'),
	(13, 'SELECT id, s, b, rank() OVER w, dense_rank() OVER w FROM wf WINDOW w AS (PARTITION BY s COLLATE "C" ORDER BY b)'),
	(14, 'SELECT id, b, s, rank() OVER w FROM wf WINDOW w AS (PARTITION BY b ORDER BY s COLLATE "C" NULLS FIRST)'),
	-- the functions inside expressions, with the input's columns
	(15, 'SELECT id, rank() OVER w * 1000 + x AS rx, CASE WHEN dense_rank() OVER w % 2 = 0 THEN s END AS even FROM wf WINDOW w AS (PARTITION BY b ORDER BY a)'),
	-- two windows: each WindowAgg over its own node
	(16, 'SELECT id, a, b, rank() OVER (ORDER BY a), dense_rank() OVER (PARTITION BY b ORDER BY f) FROM wf'),
	-- the window's keys a prefix of the sort's (the query's ORDER BY after them)
	(17, 'SELECT id, b, a, rank() OVER (PARTITION BY b ORDER BY a) FROM wf ORDER BY b, a, id'),
	-- a subquery's window under a join
	(18, 'SELECT w.id, w.r, v.x FROM (SELECT id, rank() OVER (ORDER BY a) r FROM wf) w JOIN wf v ON v.id = w.id WHERE w.r % 7 = 3'),
	-- three windows over one sort (each a prefix of the next): one node computes them all
	(19, 'SELECT b, a, f, rank() OVER (PARTITION BY b ORDER BY a), dense_rank() OVER (PARTITION BY b), row_number() OVER (PARTITION BY b ORDER BY a, id), rank() OVER (ORDER BY b) FROM wf'),
	(20, 'SELECT b, s, rank() OVER (PARTITION BY b ORDER BY s COLLATE "C"), dense_rank() OVER (PARTITION BY b, s COLLATE "C" ORDER BY id), id FROM wf'),
	-- percent_rank, cume_dist and ntile: each partition's size and each peer group's end
	(21, 'SELECT id, a, percent_rank() OVER w, cume_dist() OVER w FROM wf WINDOW w AS (ORDER BY a)'),
	(22, 'SELECT id, b, a, percent_rank() OVER w, cume_dist() OVER w, rank() OVER w FROM wf WINDOW w AS (PARTITION BY b ORDER BY a DESC NULLS FIRST)'),
	(23, 'SELECT id, b, a, ntile(4) OVER w, ntile(3000) OVER w, ntile(7) OVER (PARTITION BY b, a ORDER BY id) FROM wf WINDOW w AS (PARTITION BY b ORDER BY a, id)'),
	(24, 'SELECT id, a, ntile(1) OVER (ORDER BY a), ntile(5) OVER (ORDER BY a), cume_dist() OVER (PARTITION BY a), percent_rank() OVER (PARTITION BY a ORDER BY f) FROM wf'),
	(25, 'SELECT id, s, f, cume_dist() OVER w, percent_rank() OVER w FROM wf WINDOW w AS (PARTITION BY s COLLATE "C" ORDER BY f)');
CREATE TEMP TABLE wf_results AS SELECT n, wf_check(q) AS result FROM wf_queries;
SELECT n, result FROM wf_results WHERE result <> 'computed' ORDER BY n;
SELECT count(*) AS checked FROM wf_results;

-- a nondeterministic collation: case-insensitive partitions and peers
-- (where PostgreSQL has ICU)
SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') AS have_icu \gset
DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
		CREATE COLLATION wf_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
		CREATE TABLE wf_ci_t AS SELECT i, (ARRAY['a', 'A', 'b', 'B', 'c'])[1 + i % 5] || (i % 3)::text AS t, i % 4 AS m
		FROM generate_series(1, 3000) i;
	END IF;
END $$;
SELECT CASE WHEN :'have_icu'::bool THEN wf_check('SELECT i, t, m, rank() OVER w, dense_rank() OVER w FROM wf_ci_t
	WINDOW w AS (PARTITION BY t COLLATE wf_ci ORDER BY m)') ELSE 'computed' END AS ci_partition;
SELECT CASE WHEN :'have_icu'::bool THEN wf_check('SELECT i, rank() OVER w, dense_rank() OVER w FROM wf_ci_t
	WINDOW w AS (ORDER BY t COLLATE wf_ci)') ELSE 'computed' END AS ci_peers;

-- Windows the WindowAgg keeps: their rows are Sort's all the same
-- an aggregate over a frame
SELECT wf_check('SELECT id, a, rank() OVER w, sum(x) OVER w FROM wf WINDOW w AS (ORDER BY a)');
-- ntile of anything but a positive constant: the WindowAgg evaluates it
-- at each partition (and fails there for 0, as here)
SELECT wf_check('SELECT id, a, ntile(x + 1) OVER w FROM wf WINDOW w AS (PARTITION BY b ORDER BY a, id)');
SELECT wf_check('SELECT id, a, ntile(NULL) OVER w FROM wf WINDOW w AS (PARTITION BY b ORDER BY a, id)');
SELECT wf_check('SELECT id, a, ntile(0) OVER w FROM wf WINDOW w AS (PARTITION BY b ORDER BY a, id)');
-- a frame with an offset: the WindowAgg evaluates it at the first row,
-- and fails there for a negative or NULL one (PostgreSQL 16 and later
-- drop a ranking function's frame before: then neither fails).  The
-- outcome, a result or an error, with the node and with Sort:
CREATE FUNCTION wf_outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	setting text;
	outcome text;
	outcomes text[] := '{}';
BEGIN
	FOREACH setting IN ARRAY ARRAY['on', 'off'] LOOP
		PERFORM set_config('gpusort.enable_sort', setting, true);
		BEGIN
			EXECUTE q INTO outcome;
		EXCEPTION WHEN others THEN
			outcome := 'error: ' || SQLERRM;
		END;
		outcomes := outcomes || outcome;
	END LOOP;
	RETURN CASE WHEN outcomes[1] IS NOT DISTINCT FROM outcomes[2] THEN 'same'
		ELSE 'differs: ' || outcomes[1] || ' vs ' || outcomes[2] END;
END $$;
SELECT CASE WHEN r IN ('WindowAgg', 'computed') THEN 'same rows' ELSE r END AS frame_offset
FROM wf_check('SELECT id, a, rank() OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM wf') r;
SELECT wf_outcome('SELECT sum(r) FROM (SELECT id, rank() OVER (ORDER BY a ROWS BETWEEN -1 PRECEDING AND CURRENT ROW) r FROM wf) w');
SELECT wf_outcome('SELECT sum(c) FROM (SELECT id, cume_dist() OVER (ORDER BY a ROWS BETWEEN CURRENT ROW AND NULL FOLLOWING) c FROM wf) w');
-- a frame without offsets changes nothing for the ranking functions
SELECT wf_check('SELECT id, a, rank() OVER (ORDER BY a ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM wf');
-- a run condition: the node keeps the rows up to it instead (Rank Bound)
SELECT wf_check('SELECT * FROM (SELECT id, a, rank() OVER (ORDER BY a) r FROM wf) w WHERE r <= 10');
-- a window over other keys than the sort's
SELECT wf_check('SELECT a, rank() OVER (ORDER BY a), lag(a) OVER (ORDER BY a) FROM wf');
-- switched off
SET gpusort.enable_window_functions = off;
SELECT wf_check('SELECT id, a, rank() OVER (ORDER BY a) FROM wf');
RESET gpusort.enable_window_functions;

-- The target list's errors and volatile functions, row by row as the
-- WindowAgg computed them: 1 / (row_number() - 2) fails at the second row,
-- nextval() is called once a row
SELECT count(*) FROM (SELECT id, 1 / (row_number() OVER (ORDER BY a) - 2) FROM wf) w;
SET gpusort.enable_sort = off;
SELECT count(*) FROM (SELECT id, 1 / (row_number() OVER (ORDER BY a) - 2) FROM wf) w;
RESET gpusort.enable_sort;
CREATE SEQUENCE wf_seq;
SELECT count(*), max(n) FROM (SELECT nextval('wf_seq') n, rank() OVER (ORDER BY a) FROM wf) w;
SET gpusort.enable_sort = off;
SELECT count(*), max(n) FROM (SELECT nextval('wf_seq') n, rank() OVER (ORDER BY a) FROM wf) w;
RESET gpusort.enable_sort;

-- rescans: the node read again for each outer row, whose column filters its input
SET enable_hashjoin = off;
SET enable_mergejoin = off;
CREATE TEMP TABLE wf_outer (k int4);
INSERT INTO wf_outer VALUES (1), (40), (0), (95), (2);
SELECT wf_check('SELECT o.k, w.* FROM wf_outer o, LATERAL (SELECT b, a, rank() OVER (PARTITION BY b ORDER BY a) r
	FROM wf WHERE x > o.k) w');
SELECT wf_check('SELECT o.k, w.* FROM wf_outer o, LATERAL (SELECT a, row_number() OVER (ORDER BY a) r
	FROM wf WHERE x > o.k) w WHERE w.r % 100 = 7');
RESET enable_hashjoin;
RESET enable_mergejoin;

-- a cursor: forwards, then backwards (the planner puts a Material over a
-- node that, as the WindowAgg, cannot scan backwards)
BEGIN;
DECLARE wf_cur SCROLL CURSOR FOR SELECT a, rank() OVER (ORDER BY a) FROM wf WHERE a IS NOT NULL;
FETCH 3 FROM wf_cur;
MOVE FORWARD 10000 IN wf_cur;
FETCH BACKWARD 2 FROM wf_cur;
FETCH ABSOLUTE 1 FROM wf_cur;
COMMIT;

-- past work_mem: the plan's node, made with room, reads its rows into a
-- tuplesort and compares each with the row before; for a partition's size
-- or its peers' count it reads ahead and goes back
SET plan_cache_mode = force_generic_plan;
PREPARE wf_big AS SELECT count(*) || ':' || sum(hashtext(wf_row::text)) AS rows
FROM (SELECT b, s, a, rank() OVER w, dense_rank() OVER w, row_number() OVER (PARTITION BY b, s COLLATE "C" ORDER BY a, id),
	  percent_rank() OVER w, cume_dist() OVER w, ntile(3) OVER (PARTITION BY b, s COLLATE "C" ORDER BY a, id), cume_dist() OVER (ORDER BY b)
	  FROM wf WINDOW w AS (PARTITION BY b, s COLLATE "C" ORDER BY a)) wf_row;
EXECUTE wf_big \gset want_
SET work_mem = '64kB';
CREATE FUNCTION wf_methods() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE wf_big LOOP
		IF line ~ '(Custom Scan|Window Functions|WindowAgg|Sort Method)' THEN
			RETURN NEXT regexp_replace(regexp_replace(line, ' \(actual .*\)', ''), 'Sort Method: .*', 'Sort Method');
		END IF;
	END LOOP;
END $$;
SELECT wf_methods();
EXECUTE wf_big \gset got_
SELECT :'want_rows' = :'got_rows' AS same_past_work_mem;
SET gpusort.enable_sort = off;
EXECUTE wf_big \gset off_
SELECT :'want_rows' = :'off_rows' AS same_as_sort;
RESET gpusort.enable_sort;
DEALLOCATE wf_big;
RESET plan_cache_mode;
SET work_mem = '64MB';

DROP TABLE wf, wf_queries, wf_results, wf_outer;
DROP SEQUENCE wf_seq;
DROP FUNCTION wf_check(text);
DROP FUNCTION wf_outcome(text);
DROP FUNCTION wf_methods();
SET client_min_messages = warning;
DROP TABLE IF EXISTS wf_ci_t;
DROP COLLATION IF EXISTS wf_ci;
RESET client_min_messages;
