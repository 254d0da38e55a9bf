--
-- 34_sort_node_leader_sort: under a Gather Merge, where every sort key packs
-- exactly, the workers hand the rows they read to the leader, which sorts
-- them with its own at once (EXPLAIN ANALYZE: "Sort Device: leader" on each
-- worker that handed its rows, "Sort Rows From Workers" on the leader).
-- Each query's rows are compared with PostgreSQL's (gpusort.enable_sort off)
-- in order (helpers.sql's node_check), over keys that order every row (ties
-- come from the leader in the order it took its rows, from a Gather Merge
-- in any order).  Cases:
-- columns kept as arrays and rows kept as tuples; NULLs in keys and in
-- other columns; int2, int8, float4 and float8 with -0, NaN and infinities,
-- numeric(15,2), timestamptz, DESC and NULLS FIRST; a worker that keeps its
-- rows (no room in the DSA area, a test setting), the leader past work_mem
-- (a test setting: the handed rows then go to its tuplesort), every
-- participant past work_mem, the leader not taking part,
-- gpusort.enable_leader_sort off, a key that does not pack exactly (text:
-- each worker sorts its share), rescans of the Gather Merge inside a nested
-- loop, and an error raised in a worker.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
SET gpusort.sort_node_min_rows = 0;
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = on;
-- node_check (include/helpers.sql): the node's rows against Sort's
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all

-- 60,000 rows: keys of several types with duplicates, NULLs, -0, NaN and
-- infinities; id orders every row
CREATE TABLE ls (id int4, a int4, b int8, c int2, f float8, r float4, m numeric(15,2),
				 ts timestamptz, t text, n int4);
INSERT INTO ls
SELECT g, (g * 7919) % 1009,
	   CASE WHEN g % 13 = 0 THEN NULL ELSE ((g::int8 * 104729) % 5000000007) - 2500000000 END,
	   (g % 601 - 300)::int2,
	   CASE g % 11 WHEN 0 THEN NULL WHEN 1 THEN '-0'::float8 WHEN 2 THEN 0 WHEN 3 THEN 'NaN'
		   WHEN 4 THEN '-Infinity' WHEN 5 THEN 'Infinity' ELSE (g % 977) * 1.5 - 700 END,
	   CASE WHEN g % 17 = 0 THEN 'NaN'::float4 ELSE (g % 313)::float4 / 7 END,
	   ((g * 31) % 100003 - 50000) / 100.0,
	   '2026-01-01 00:00:00+00'::timestamptz + ((g * 37) % 86400) * interval '1 minute',
	   'row ' || (g % 4099),
	   CASE WHEN g % 5 = 0 THEN NULL ELSE g END
FROM generate_series(1, 60000) g;
ANALYZE ls;

-- From q's EXPLAIN ANALYZE: the workers launched, those that handed their
-- rows to the leader (or read none after the leader's reading was done),
-- those that sorted their own, whether the leader took rows from workers,
-- every row read counted once (unless some went to a tuplesort), and
-- whether any participant's rows went to a tuplesort
CREATE FUNCTION ls_figures(q text, OUT launched int, OUT handed int, OUT sorted_own int,
						   OUT leader_took bool, OUT all_rows bool, OUT tuplesort bool)
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	m text[];
	rows int8 := 0;
	total int8;
BEGIN
	launched := 0;
	handed := 0;
	sorted_own := 0;
	leader_took := false;
	tuplesort := false;
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		m := regexp_match(line, 'Workers Launched: (\d+)');
		IF m IS NOT NULL THEN
			launched := m[1]::int;
		END IF;
		IF line ~ '^\s*Worker \d+:  Sort Device: leader' THEN
			handed := handed + 1;
		ELSIF line ~ '^\s*Worker \d+:  Sort Device: ' THEN
			sorted_own := sorted_own + 1;
		END IF;
		leader_took := leader_took OR line ~ 'Sort Rows From Workers: [1-9]';
		tuplesort := tuplesort OR line ~ 'Sort Device: tuplesort';
		m := regexp_match(line, 'Sort Rows: (\d+)');
		IF m IS NOT NULL THEN
			rows := rows + m[1]::int8;
		END IF;
	END LOOP;
	EXECUTE 'SELECT count(*) FROM (' || q || ') s' INTO total;
	all_rows := tuplesort OR rows = total;
END $$;

-- the plan: a Gather Merge over the node, as before
EXPLAIN (COSTS OFF) SELECT a, id FROM ls ORDER BY a, id;

-- Which participant reads which rows depends on when each starts: a test
-- setting makes the leader read after every worker, which then reads every
-- row.  Every row sorted in the leader: by-value columns (arrays), then
-- tuples.
SET gpusort_test.leader_reads_last = on;
SELECT launched > 0 AS launched, handed = launched AS all_handed, sorted_own, leader_took, all_rows, tuplesort
FROM ls_figures('SELECT a, id FROM ls ORDER BY a, id');
SELECT launched > 0 AS launched, handed = launched AS all_handed, sorted_own, leader_took, all_rows, tuplesort
FROM ls_figures('SELECT t, m, id FROM ls ORDER BY m DESC, id');

-- the rows against Sort's
SELECT q, node_check(q, '') FROM (VALUES
	('SELECT a, id FROM ls ORDER BY a, id'),
	('SELECT * FROM ls ORDER BY a DESC, id'),
	('SELECT id, b, n FROM ls ORDER BY b NULLS FIRST, id DESC'),
	('SELECT id, c, f FROM ls ORDER BY f DESC NULLS LAST, c, id'),
	('SELECT id, f, r FROM ls ORDER BY r, f, id'),
	('SELECT id, m, t FROM ls ORDER BY m, id'),
	('SELECT id, ts, n FROM ls ORDER BY ts DESC, n NULLS FIRST, id'),
	('SELECT id, a + c AS s, n FROM ls ORDER BY a + c, id'),
	('SELECT id, n FROM ls WHERE id % 7 = 3 ORDER BY n NULLS FIRST, id')) v(q);
RESET gpusort_test.leader_reads_last;
-- the same with the participants reading as they start
SELECT q, node_check(q, '') FROM (VALUES
	('SELECT a, id FROM ls ORDER BY a, id'),
	('SELECT * FROM ls ORDER BY m DESC, id')) v(q);
SET gpusort_test.leader_reads_last = on;

-- a worker that finds no room in the DSA area sorts and returns its own
-- rows, which the Gather Merge merges with the leader's
SET gpusort_test.no_room_to_hand = on;
SELECT launched > 0 AS launched, sorted_own > 0 AS some_sorted_own, leader_took, all_rows, tuplesort
FROM ls_figures('SELECT a, id FROM ls ORDER BY a, id');
SELECT node_check('SELECT a, id FROM ls ORDER BY a, id', '') AS kept_by_workers,
	   node_check('SELECT t, m, id FROM ls ORDER BY m, id', '') AS kept_by_workers_tuples;
RESET gpusort_test.no_room_to_hand;

-- the leader past work_mem: the rows handed go to its tuplesort
SET gpusort_test.leader_past_work_mem = on;
SELECT launched > 0 AS launched, handed = launched AS all_handed, leader_took, tuplesort
FROM ls_figures('SELECT a, id FROM ls ORDER BY a, id');
-- the same in JSON: the leader shows the rows its tuplesort took from the
-- workers, and a worker that handed its rows shows no key bits
CREATE FUNCTION ls_json(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
	RETURN j::jsonb -> 0 -> 'Plan' -> 'Plans' -> 0;
END $$;
SELECT node ->> 'Sort Device' AS leader_device,
	   (node ->> 'Sort Rows From Workers')::int8 > 0 AS leader_took,
	   (SELECT count(*) FROM jsonb_array_elements(node -> 'Sort Workers') w
		WHERE w ->> 'Sort Device' = 'leader') > 0 AS some_handed,
	   (SELECT count(*) FROM jsonb_array_elements(node -> 'Sort Workers') w
		WHERE w ->> 'Sort Device' = 'leader' AND w ? 'Sort Key Bits') AS handed_with_key_bits
FROM ls_json('SELECT a, id FROM ls ORDER BY a, id') node;
SELECT node_check('SELECT a, id, n FROM ls ORDER BY a, id', '') AS leader_tuplesort_columns,
	   node_check('SELECT id, b, t FROM ls ORDER BY b DESC, id', '') AS leader_tuplesort_tuples;
RESET gpusort_test.leader_past_work_mem;

-- every participant past work_mem: each sorts its own in a tuplesort
SET work_mem = '64kB';
SELECT launched > 0 AS launched, sorted_own > 0 AS some_sorted_own, leader_took, tuplesort
FROM ls_figures('SELECT a, id FROM ls ORDER BY a, id');
SELECT node_check('SELECT a, id FROM ls ORDER BY a, id', '') AS past_work_mem,
	   node_check('SELECT * FROM ls ORDER BY m, id', '') AS past_work_mem_tuples;
SET work_mem = '64MB';

-- the leader not taking part, and the setting off: each worker sorts its share
SET parallel_leader_participation = off;
SELECT launched > 0 AS launched, handed, sorted_own = launched AS all_sorted_own, leader_took
FROM ls_figures('SELECT a, id FROM ls ORDER BY a, id');
SELECT node_check('SELECT a, id FROM ls ORDER BY a, id', '') AS leader_not_taking_part;
RESET parallel_leader_participation;
SET gpusort.enable_leader_sort = off;
SELECT launched > 0 AS launched, handed, sorted_own = launched AS all_sorted_own, leader_took
FROM ls_figures('SELECT a, id FROM ls ORDER BY a, id');
SELECT node_check('SELECT a, id FROM ls ORDER BY a, id', '') AS setting_off;
RESET gpusort.enable_leader_sort;

-- a text key under the database's collation does not pack exactly: each
-- worker sorts its share
SELECT launched > 0 AS launched, handed, sorted_own = launched AS all_sorted_own, leader_took
FROM ls_figures('SELECT t, id FROM ls ORDER BY t, id');
SELECT node_check('SELECT t, id FROM ls ORDER BY t, id', '') AS text_key;

-- the Gather Merge on a nested loop's inner side, rescanned for each outer
-- row: the rows handed before are freed, the workers hand them again
CREATE TABLE ls_outer AS SELECT g AS k FROM generate_series(1, 3) g;
ANALYZE ls_outer;
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
-- (PostgreSQL 18 names the window: that line left out)
CREATE FUNCTION ls_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line !~ '^\s*Window: ' THEN
			RETURN NEXT line;
		END IF;
	END LOOP;
END $$;
SELECT ls_plan('SELECT o.k, count(*) AS rows, count(*) FILTER (WHERE (s.pa, s.pid) > (s.a, s.id)) AS out_of_order
FROM ls_outer o,
	(SELECT a, id, lag(a) OVER () AS pa, lag(id) OVER () AS pid FROM (SELECT a, id FROM ls ORDER BY a, id) q) s
WHERE s.id % 3 = o.k - 1 GROUP BY o.k ORDER BY o.k');
SELECT o.k, count(*) AS rows, count(*) FILTER (WHERE (s.pa, s.pid) > (s.a, s.id)) AS out_of_order
FROM ls_outer o,
	(SELECT a, id, lag(a) OVER () AS pa, lag(id) OVER () AS pid FROM (SELECT a, id FROM ls ORDER BY a, id) q) s
WHERE s.id % 3 = o.k - 1 GROUP BY o.k ORDER BY o.k;
SELECT launched > 0 AS launched, handed = launched AS all_handed, leader_took
FROM ls_figures('SELECT o.k, s.a, s.id FROM ls_outer o, (SELECT a, id, lag(a) OVER () AS pa FROM (SELECT a, id FROM ls ORDER BY a, id) q) s WHERE s.id % 3 = o.k - 1');
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- an error in a worker's share is the query's error, as under Sort (where
-- it may come from the leader or a worker: terse, without the context)
\set VERBOSITY terse
SELECT a, id FROM ls ORDER BY 1 / (id - 45678), id;
SET gpusort.enable_sort = off;
SELECT a, id FROM ls ORDER BY 1 / (id - 45678), id;
RESET gpusort.enable_sort;
\set VERBOSITY default
RESET gpusort_test.leader_reads_last;

DROP TABLE ls_outer;
DROP TABLE ls;
DROP FUNCTION ls_figures(text);
DROP FUNCTION ls_plan(text);
DROP FUNCTION ls_json(text);
