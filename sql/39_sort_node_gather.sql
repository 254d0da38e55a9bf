--
-- 39_sort_node_gather: after sorting 16,384 rows or more kept as tuples,
-- the node copies them in sorted order into one block (on 4 threads or
-- more, rows of 256 bytes or less on average, where work_mem holds both
-- copies) and frees the tuples as read.  Every query here runs with that
-- copy, on whatever threads the machine has (gpusort_test.gather_any_threads,
-- test builds), and without it (gpusort_test.no_gather; a small work_mem or
-- one thread does the same), and its rows are compared with Sort's:
-- strings short and long (toasted), numeric, NULLs, a bound that keeps
-- part of the rows, a window function, a merge join (mark and restore), a
-- scroll cursor read forward, backward and at absolute positions, rescans
-- in a nested loop, and the leader's sort of rows handed by workers.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
-- node_check (include/helpers.sql): the node's rows against Sort's
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all
SET gpusort.sort_node_min_rows = 0;
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 0;
SET gpusort_test.gather_any_threads = on;

-- 40,000 rows: strings of 0 to 60 bytes, some of 3,000 (compressed or
-- toasted), numeric amounts with duplicates, NULLs in each column
SELECT setseed(0.39);
CREATE TABLE ga (id int4, s text, m numeric(12,2), i int4);
ALTER TABLE ga ALTER COLUMN s SET STORAGE EXTERNAL;
INSERT INTO ga
SELECT g,
	   CASE WHEN g % 23 = 0 THEN NULL
			WHEN g % 101 = 0 THEN repeat(md5(g::text), 94)
			ELSE substr(repeat(md5(random()::text), 2), 1, g % 61)
	   END,
	   CASE WHEN g % 19 = 0 THEN NULL ELSE ((g * 7919) % 20011 - 10000) / 100.0 END,
	   g % 7
FROM generate_series(1, 40000) g;
ANALYZE ga;

CREATE TEMP TABLE ga_queries (n int, q text, lim text);
INSERT INTO ga_queries VALUES
	(1, 'SELECT * FROM ga ORDER BY s COLLATE "C"', ''),
	(2, 'SELECT * FROM ga ORDER BY m DESC NULLS FIRST, id', ''),
	(3, 'SELECT * FROM ga ORDER BY i, s COLLATE "C" DESC', ''),
	(4, 'SELECT * FROM ga ORDER BY m, id', ' LIMIT 20000'),
	(5, 'SELECT id, s, sum(m) OVER (PARTITION BY i ORDER BY m, id) FROM ga ORDER BY i, m, id', ''),
	(6, 'SELECT s, m FROM ga ORDER BY s COLLATE "C", m', ' OFFSET 39000');

SET gpusort_test.no_gather = off;
SELECT n, node_check(q, CASE WHEN n IN (2, 4, 5) THEN '' ELSE ', ctid' END, lim) AS gathered
FROM ga_queries ORDER BY n;
SET gpusort_test.no_gather = on;
SELECT n, node_check(q, CASE WHEN n IN (2, 4, 5) THEN '' ELSE ', ctid' END, lim) AS not_gathered
FROM ga_queries ORDER BY n;
-- Sort Memory counts both copies for the time of the copy, more than
-- without it; with work_mem that holds the rows as
-- read and 512kB more, too little for a second copy (the chunks' headers
-- differ between PostgreSQL versions: a fixed work_mem is not below both
-- copies in each), the rows stay as read, in memory, as without the copy
CREATE FUNCTION ga_memory(q text) RETURNS int LANGUAGE sql
	RETURN split_part(plan_value(q, 'Sort Memory', 'ANALYZE, COSTS OFF'), ' ', 1)::int;
CREATE FUNCTION ga_memory_at(q text, kb int, gather bool) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('work_mem', kb || 'kB', true);
	PERFORM set_config('gpusort_test.no_gather', (NOT gather)::text, true);
	RETURN ga_memory(q);
END $$;
SET gpusort_test.no_gather = off;
CREATE TEMP TABLE ga_mem AS
SELECT n, ga_memory(q) AS gathered FROM ga_queries WHERE n IN (1, 2);
SET gpusort_test.no_gather = on;
ALTER TABLE ga_mem ADD not_gathered int;
UPDATE ga_mem m SET not_gathered = ga_memory(q) FROM ga_queries g WHERE g.n = m.n;
SET gpusort_test.no_gather = off;
ALTER TABLE ga_mem ADD small_gathered int, ADD small_not_gathered int;
UPDATE ga_mem m SET small_gathered = ga_memory_at(q, not_gathered + 512, true) FROM ga_queries g WHERE g.n = m.n;
UPDATE ga_mem m SET small_not_gathered = ga_memory_at(q, not_gathered + 512, false) FROM ga_queries g WHERE g.n = m.n;
-- on fewer than 4 threads the copy does not pay: the rows stay as read
-- (one thread; 40,000 rows would give at most one at any setting)
SET gpusort_test.gather_any_threads = off;
SET gpusort.key_threads = 1;
ALTER TABLE ga_mem ADD one_thread int, ADD four_threads int;
UPDATE ga_mem m SET one_thread = ga_memory(q) FROM ga_queries g WHERE g.n = m.n;
SET gpusort.key_threads = 4;
UPDATE ga_mem m SET four_threads = ga_memory(q) FROM ga_queries g WHERE g.n = m.n;
RESET gpusort.key_threads;
SET gpusort_test.gather_any_threads = on;
SELECT n, gathered > not_gathered AS both_copies_counted, small_gathered = small_not_gathered AS small_work_mem_as_read,
	   small_not_gathered IS NOT NULL AS small_work_mem_in_memory, one_thread = not_gathered AS one_thread_as_read,
	   four_threads = not_gathered AS few_rows_as_read
FROM ga_mem ORDER BY n;
-- rows of more than 256 bytes on average stay as read
SELECT ga_memory($$SELECT id, rpad(coalesce(s, ''), 300) w FROM ga ORDER BY 2, 1$$) AS wide_copy \gset
SET gpusort_test.no_gather = on;
SELECT ga_memory($$SELECT id, rpad(coalesce(s, ''), 300) w FROM ga ORDER BY 2, 1$$) AS wide_no_copy \gset
SET gpusort_test.no_gather = off;
SELECT :wide_copy = :wide_no_copy AS wide_rows_as_read;
-- under a bound of at most half the rows held the block holds the rows
-- returned alone: a run condition over a string key (whose rows are all
-- held, then cut) keeping 16,500 of 40,000 takes about half the block of
-- one keeping all 40,000
SELECT ga_memory($$SELECT * FROM (SELECT s, id, rank() OVER (ORDER BY s COLLATE "C", id) r FROM ga) w
				   WHERE r <= 16500$$) AS half_copy,
	   ga_memory($$SELECT * FROM (SELECT s, id, rank() OVER (ORDER BY s COLLATE "C", id) r FROM ga) w
				   WHERE r <= 40000$$) AS whole_copy \gset
SET gpusort_test.no_gather = on;
SELECT ga_memory($$SELECT * FROM (SELECT s, id, rank() OVER (ORDER BY s COLLATE "C", id) r FROM ga) w
				   WHERE r <= 16500$$) AS half_none,
	   ga_memory($$SELECT * FROM (SELECT s, id, rank() OVER (ORDER BY s COLLATE "C", id) r FROM ga) w
				   WHERE r <= 40000$$) AS whole_none \gset
SET gpusort_test.no_gather = off;
SELECT :half_copy > :half_none AS bound_copied,
	   (:half_copy - :half_none) * 3 < (:whole_copy - :whole_none) * 2 AS bound_block_of_its_rows;
SET work_mem = '8MB';
SELECT n, node_check(q, CASE WHEN n IN (2, 4, 5) THEN '' ELSE ', ctid' END, lim) AS small_work_mem
FROM ga_queries WHERE n IN (1, 2) ORDER BY n;
SET work_mem = '64MB';

-- a merge join of the node's outputs: the inner side is marked and restored
-- over runs of equal amounts
CREATE FUNCTION ga_join() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	got text;
	want text;
	plan text := '';
	line text;
	q text := 'SELECT count(*) || '':'' || md5(string_agg(a.id || ''/'' || b.id, '','' ORDER BY a.id, b.id))
			   FROM (SELECT id, m FROM ga WHERE id % 3 = 0) a JOIN (SELECT id, m, s FROM ga) b ON a.m = b.m';
BEGIN
	SET LOCAL enable_hashjoin = off;
	SET LOCAL enable_nestloop = off;
	SET LOCAL gpusort.enable_sort = on;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	IF plan NOT LIKE '%Merge Join%' OR plan NOT LIKE '%Custom Scan (gpusort)%' THEN
		RETURN 'no merge join over the node';
	END IF;
	EXECUTE q INTO got;
	SET LOCAL gpusort.enable_sort = off;
	EXECUTE q INTO want;
	RETURN CASE WHEN got = want THEN 'ok' ELSE 'differs: ' || got || ' vs ' || want END;
END $$;
SET gpusort_test.no_gather = off;
SELECT ga_join() AS gathered;
SET gpusort_test.no_gather = on;
SELECT ga_join() AS not_gathered;

-- a scroll cursor: forward, backward, absolute and relative moves, and
-- past both ends, compared with Sort's cursor on the same moves
CREATE FUNCTION ga_cursor(node bool) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	c refcursor;
	r record;
	out text := '';
BEGIN
	PERFORM set_config('gpusort.enable_sort', node::text, true);
	OPEN c SCROLL FOR SELECT id, s, m FROM ga ORDER BY m, id;
	FOR step IN 1..13 LOOP
		CASE step
			WHEN 1, 2, 7, 11 THEN FETCH NEXT FROM c INTO r;
			WHEN 3 THEN FETCH ABSOLUTE 20000 FROM c INTO r;
			WHEN 4, 8, 10 THEN FETCH PRIOR FROM c INTO r;
			WHEN 5 THEN FETCH RELATIVE -5000 FROM c INTO r;
			WHEN 6 THEN FETCH LAST FROM c INTO r;
			WHEN 9 THEN FETCH ABSOLUTE 1 FROM c INTO r;
			WHEN 12 THEN FETCH ABSOLUTE -3 FROM c INTO r;
			ELSE FETCH FIRST FROM c INTO r;
		END CASE;
		out := out || step || '=' || CASE WHEN FOUND THEN r.id || ',' || coalesce(r.m::text, 'null') || ',' ||
			coalesce(md5(r.s), 'null') ELSE 'none' END || E'\n';
	END LOOP;
	CLOSE c;
	RETURN out;
END $$;
SET gpusort_test.no_gather = off;
SELECT ga_cursor(true) = ga_cursor(false) AS cursor_gathered,
	   (SELECT count(*) FROM regexp_matches(ga_cursor(true), '=none', 'g')) AS past_ends;
SET gpusort_test.no_gather = on;
SELECT ga_cursor(true) = ga_cursor(false) AS cursor_not_gathered;

-- rescans: the node sorted again for each of three outer rows (a lateral
-- subquery, and a subplan whose filter above the node changes)
SET gpusort_test.no_gather = off;
SELECT node_check($$SELECT g, x.* FROM generate_series(1, 3) g,
	LATERAL (SELECT count(*), md5(string_agg(s, ',' ORDER BY o)) FROM
		(SELECT s, row_number() OVER () o FROM (SELECT s FROM ga WHERE id % 3 <> g - 1 ORDER BY s COLLATE "C", id OFFSET 0) y) z) x$$,
	'') AS lateral_rescans;
SELECT node_check($$SELECT g, (SELECT count(*) || ':' || md5(string_agg(s, ',')) FROM
	(SELECT s FROM ga ORDER BY s COLLATE "C", id OFFSET 0) y WHERE y.s < g) FROM (VALUES ('4'), ('8'), ('c')) v(g)$$,
	'') AS subplan_rescans;

-- the leader's sort of its own rows and the workers' (handed in the DSA
-- area): every key packs exactly, the rows are tuples (a text column)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT node_check('SELECT m, id, s FROM ga ORDER BY m, id', '') AS leader_gathered;
SET gpusort_test.no_gather = on;
SELECT node_check('SELECT m, id, s FROM ga ORDER BY m, id', '') AS leader_not_gathered;
RESET gpusort_test.no_gather;
RESET gpusort_test.gather_any_threads;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP FUNCTION ga_memory_at(text, int, bool);
DROP FUNCTION ga_memory(text);
DROP FUNCTION ga_join();
DROP FUNCTION ga_cursor(bool);
DROP TABLE ga;
