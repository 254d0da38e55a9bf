-- EXPLAIN ANALYZE's figures of the ORDER BY node: each parallel worker's
-- under a Gather Merge (with and without the leader taking part), and the
-- memory of its row arrays, which grow within work_mem as tuplesort's array
-- does.  Which worker reads which pages varies from run to run, so the test
-- prints checks on the figures, not the figures.

-- The planner offers the node once the module is loaded in the session:
-- preloaded in server mode, else by LOAD (or a first call of a gpusort function).
LOAD 'gpusort';
SET work_mem = '64MB';

-- EXPLAIN ANALYZE of q, without costs, timing and summary
CREATE FUNCTION fg_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		RETURN NEXT line;
	END LOOP;
END $$;

-- Whether q returns the same rows in the same order with the node and with
-- Sort (q's keys order every row)
CREATE FUNCTION fg_same(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	got text;
	want text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	EXECUTE 'SELECT count(*) || md5(string_agg(s::text, '','')) FROM (' || q || ') s' INTO got;
	SET LOCAL gpusort.enable_sort = off;
	EXECUTE 'SELECT count(*) || md5(string_agg(s::text, '','')) FROM (' || q || ') s' INTO want;
	SET LOCAL gpusort.enable_sort = on;
	RETURN got = want;
END $$;

-- The node's figures in q's plan under a Gather Merge: the workers launched,
-- the workers whose figures are shown ("Worker N:  Sort Device: ..."),
-- whether the leader's own are, the rows that all of them sorted in memory,
-- and whether any handed its rows to a tuplesort.
CREATE FUNCTION fg_parallel(q text, OUT launched int, OUT worker_lines int, OUT leader_line bool,
							OUT sorted_rows int8, OUT past_work_mem bool)
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	m text[];
BEGIN
	launched := 0;
	worker_lines := 0;
	leader_line := false;
	sorted_rows := 0;
	past_work_mem := false;
	FOR line IN SELECT fg_explain(q) LOOP
		m := regexp_match(line, 'Workers Launched: (\d+)');
		IF m IS NOT NULL THEN
			launched := m[1]::int;
		END IF;
		IF line ~ '^\s*Worker \d+:  Sort Device: ' THEN
			worker_lines := worker_lines + 1;
		ELSIF line ~ '^\s*Sort Device: ' THEN
			leader_line := true;
		END IF;
		m := regexp_match(line, 'Sort Rows: (\d+)');
		IF m IS NOT NULL THEN
			sorted_rows := sorted_rows + m[1]::int8;
		END IF;
		past_work_mem := past_work_mem OR line ~ 'Sort Device: tuplesort';
	END LOOP;
END $$;

-- Whether the JSON form of q's plan (a Gather Merge over the node) has an
-- entry for each worker launched
CREATE FUNCTION fg_json_workers(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
	RETURN coalesce(json_array_length(plan -> 0 -> 'Plan' -> 'Plans' -> 0 -> 'Sort Workers'), 0) =
		(plan -> 0 -> 'Plan' ->> 'Workers Launched')::int;
END $$;

CREATE TABLE fg (id int4, k int4);
INSERT INTO fg SELECT g, (g * 7919) % 10007 FROM generate_series(1, 200000) g;
ANALYZE fg;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;

EXPLAIN (COSTS OFF) SELECT id, k FROM fg ORDER BY k, id;
-- the leader takes part: its figures, then each worker's
SELECT launched > 0 AS workers_launched, worker_lines = launched AS each_worker_shown, leader_line,
	   sorted_rows = 200000 AS all_rows_counted, past_work_mem
FROM fg_parallel('SELECT id, k FROM fg ORDER BY k, id');
-- the leader does not: only the workers' (the leader's where none was launched)
SET parallel_leader_participation = off;
SELECT launched > 0 AS workers_launched, worker_lines = launched AS each_worker_shown,
	   leader_line = (launched = 0) AS leader_shown_alone, sorted_rows = 200000 AS all_rows_counted,
	   past_work_mem
FROM fg_parallel('SELECT id, k FROM fg ORDER BY k, id');
SELECT fg_json_workers('SELECT id, k FROM fg ORDER BY k, id') AS each_worker_in_json;
SELECT fg_same('SELECT id, k FROM fg ORDER BY k, id');
-- past work_mem in the workers: a filter whose selectivity the planner puts
-- at 1.5% passes every row
SET work_mem = '128kB';
SELECT launched > 0 AS workers_launched, worker_lines = launched AS each_worker_shown, past_work_mem
FROM fg_parallel('SELECT id, k FROM fg WHERE k + 0 = k OR id + 0 = id OR k - 0 = k ORDER BY k, id');
SELECT fg_same('SELECT id, k FROM fg WHERE k + 0 = k OR id + 0 = id OR k - 0 = k ORDER BY k, id');
SET work_mem = '64MB';
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- The row arrays within work_mem.  fg_rows(n) and fg_rows_text(n) return n
-- rows where the planner expects 4,000 (by-value columns, kept as arrays)
-- and 2,000 (rows with a text column, kept as tuples).  With n past the
-- estimate the arrays grow: doubling while that fits, then to what work_mem
-- holds, then the rows go to a tuplesort.  Either way the memory the node
-- shows stays within work_mem and the rows are Sort's.
SET max_parallel_workers_per_gather = 0;
CREATE FUNCTION fg_rows(n int) RETURNS TABLE (a int4, b int4) LANGUAGE plpgsql ROWS 4000
AS $$ BEGIN RETURN QUERY SELECT g, (g * 7919) % 100003 FROM generate_series(1, n) g; END $$;
CREATE FUNCTION fg_rows_text(n int) RETURNS TABLE (a int4, t text) LANGUAGE plpgsql ROWS 2000
AS $$ BEGIN RETURN QUERY SELECT g, repeat('x', g % 40) FROM generate_series(1, n) g; END $$;

-- Where q's node sorted (in memory, or in a tuplesort past work_mem) and the memory it shows
CREATE FUNCTION fg_memory(q text, OUT in_memory bool, OUT memory_kb int) LANGUAGE plpgsql AS $$
DECLARE
	line text;
	m text[];
BEGIN
	FOR line IN SELECT fg_explain(q) LOOP
		IF line ~ 'Sort Device: (cpu|gpu)' THEN
			in_memory := true;
		ELSIF line ~ 'Sort Device: tuplesort' THEN
			in_memory := false;
		END IF;
		m := regexp_match(line, 'Sort Memory: (\d+) kB');
		IF m IS NOT NULL THEN
			memory_kb := m[1]::int;
		END IF;
	END LOOP;
END $$;

SET work_mem = '256kB';
-- one row past the estimate: in memory, within work_mem
SELECT in_memory, memory_kb <= 256 AS within_work_mem
FROM fg_memory('SELECT a, b FROM fg_rows(4001) ORDER BY b');
SELECT in_memory, memory_kb <= 256 AS within_work_mem
FROM fg_memory('SELECT a, t FROM fg_rows_text(2001) ORDER BY a % 100, a');
-- up to twice the estimate and more: in memory within work_mem, or past it
-- in a tuplesort (both happen); the rows are Sort's
SELECT f, count(*) AS runs,
	   bool_and(NOT m.in_memory OR m.memory_kb <= 256) AS within_work_mem,
	   bool_or(m.in_memory) AND bool_or(NOT m.in_memory) AS both_ways,
	   bool_and(fg_same(format(q, n))) AS rows_right
FROM (VALUES ('fg_rows', 'SELECT a, b FROM fg_rows(%s) ORDER BY b', 4001, 12001, 400),
			 ('fg_rows_text', 'SELECT a, t FROM fg_rows_text(%s) ORDER BY a %% 100, a', 2001, 6001, 200))
	 v(f, q, lo, hi, step),
	 generate_series(lo, hi, step) n,
	 fg_memory(format(q, n)) m
GROUP BY f ORDER BY f;
SET work_mem = '64MB';

-- Sort Device is the sort's: rows whose strings are equal, ordered after it
-- by the next key in sorts of their own (which a few rows leave on the CPU),
-- do not change it.  The same rows sorted with and without that key show
-- the same device, the node's in memory.
SET gpusort.sort_node_min_rows = 0;
CREATE TABLE fg_strings AS
SELECT g AS id, CASE WHEN g <= 5000 THEN 'same' || g % 100 ELSE md5(g::text) END AS s, g % 7 AS i
FROM generate_series(1, 30000) g;
ANALYZE fg_strings;
SELECT bool_and(l ~ 'Sort Device: (cpu|gpu)') AS in_memory, count(DISTINCT l) AS devices
FROM (VALUES ('SELECT * FROM fg_strings ORDER BY s COLLATE "C", i'),
			 ('SELECT * FROM fg_strings ORDER BY s COLLATE "C"')) v(q),
	 fg_explain(q) l
WHERE l ~ 'Sort Device';
DROP TABLE fg_strings;
RESET gpusort.sort_node_min_rows;

DROP FUNCTION fg_memory(text);
DROP FUNCTION fg_rows_text(int);
DROP FUNCTION fg_rows(int);
DROP TABLE fg;
DROP FUNCTION fg_json_workers(text);
DROP FUNCTION fg_parallel(text);
DROP FUNCTION fg_same(text);
DROP FUNCTION fg_explain(text);
