--
-- 25_state_hash_groups: the gpusort_state aggregates under a hash
-- aggregation of many small groups, the plan PostgreSQL picks by default for
-- them.  The states of an aggregate context share one memory context: a hash
-- aggregation adds up the memory of its context and of every child context
-- each time it adds a group, so a context per group made it quadratic in the
-- groups.  Checked here through pg_backend_memory_contexts, read while the
-- aggregation runs, and every answer compared with PostgreSQL's own
-- aggregates over the same groups: in one batch, spilling to disk, with
-- grouping sets (several hash tables in one context) and in parallel
-- workers (partial states combined in a hash aggregation).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;
SET max_parallel_workers_per_gather = 0;
SET enable_sort = off;			-- a hash aggregation, not a sort and a group aggregation
SET work_mem = '64MB';

-- 3,000 groups of 1 to 4 rows, rows of a group apart, the last row last
CREATE TABLE hg (i int, g int, h int, x int4, f float8);
INSERT INTO hg
SELECT i, i % 3000, i % 300, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7919) % 1009 END, ((i * 104729) % 2003) / 7.0
FROM generate_series(1, 3000 * 5 / 2) i;
INSERT INTO hg VALUES (1000000, 2999, 299, 5, 0.5);
ANALYZE hg;

-- the memory contexts of this backend that hold gpusort aggregate states
CREATE FUNCTION hg_state_contexts() RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM pg_backend_memory_contexts WHERE name LIKE 'gpusort aggregate state%'
$$;

-- the answers of every gpusort_state aggregate per group, and, at the last
-- row, when every group has its states, how many contexts hold them
CREATE VIEW hg_got AS
SELECT g, gpu_sort_agg(x) AS srt, gpu_sort_agg(f, true) AS srt_desc, gpu_median(f) AS med,
	   gpu_percentile_cont_agg(x, 0.25) AS cont, gpu_percentile_disc_agg(f, '{0.5,0.9}'::float8[]) AS disc,
	   gpu_mode_agg(x) AS mo, gpu_topk_agg(x, 2) AS topk,
	   max(CASE WHEN i = 1000000 THEN hg_state_contexts() END) AS contexts
FROM hg GROUP BY g;

-- the lines of a query's plan
CREATE FUNCTION hg_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	l text;
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		RETURN NEXT l;
	END LOOP;
END $$;

-- PostgreSQL's answers over the same groups
CREATE TEMP TABLE hg_want AS
SELECT g, array_agg(x ORDER BY x) AS srt, array_agg(f ORDER BY f DESC) AS srt_desc,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY f) AS med,
	   percentile_cont(0.25) WITHIN GROUP (ORDER BY x) AS cont,
	   percentile_disc('{0.5,0.9}'::float8[]) WITHIN GROUP (ORDER BY f) AS disc,
	   mode() WITHIN GROUP (ORDER BY x) AS mo,
	   (array_agg(x ORDER BY x))[1:2] AS topk
FROM hg GROUP BY g;

SET check_function_bodies = off;	-- hg_got_now is made below
CREATE FUNCTION hg_mismatches() RETURNS TABLE (groups bigint, mismatches bigint, contexts bigint)
LANGUAGE sql AS $$
	SELECT count(*), count(*) FILTER (WHERE w.srt IS DISTINCT FROM o.srt OR w.srt_desc IS DISTINCT FROM o.srt_desc
									  OR w.med IS DISTINCT FROM o.med OR w.cont IS DISTINCT FROM o.cont
									  OR w.disc IS DISTINCT FROM o.disc OR w.mo IS DISTINCT FROM o.mo
									  OR w.topk IS DISTINCT FROM o.topk),
		   max(o.contexts)
	FROM hg_want w FULL JOIN hg_got_now o USING (g)
$$;
RESET check_function_bodies;

-- one batch: the plan, then one context for the states of 3,000 groups
EXPLAIN (COSTS OFF) SELECT * FROM hg_got;
CREATE TEMP TABLE hg_got_now AS SELECT * FROM hg_got;
SELECT * FROM hg_mismatches();

-- spilling: the hash table is emptied between batches, and the states with it
SET work_mem = '64kB';
DROP TABLE hg_got_now;
CREATE TEMP TABLE hg_got_now AS SELECT * FROM hg_got;
SELECT groups, mismatches FROM hg_mismatches();
SET work_mem = '64MB';

-- grouping sets: several hash tables whose states share the context
SET enable_hashagg = on;
SELECT count(*) AS groups,
	   count(*) FILTER (WHERE s.srt IS DISTINCT FROM w.srt) AS mismatches,
	   max(s.contexts) AS contexts
FROM (SELECT g, g % 7 AS h, gpu_sort_agg(x) AS srt,
			 max(CASE WHEN i = 1000000 THEN hg_state_contexts() END) AS contexts
	  FROM hg GROUP BY GROUPING SETS ((g), (g % 7))) s
JOIN (SELECT g, NULL::int AS h, array_agg(x ORDER BY x) AS srt FROM hg GROUP BY g
	  UNION ALL
	  SELECT NULL, g % 7, array_agg(x ORDER BY x) FROM hg GROUP BY g % 7) w
  ON s.g IS NOT DISTINCT FROM w.g AND s.h IS NOT DISTINCT FROM w.h;

-- parallel workers: partial states of 300 groups of 25 rows, combined in a
-- hash aggregation
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT count(*) FILTER (WHERE l LIKE '%Partial HashAggregate%') > 0 AS partial_hash,
	   count(*) FILTER (WHERE l LIKE '%Finalize HashAggregate%') > 0 AS finalize_hash
FROM (SELECT * FROM hg_plan('SELECT h, gpu_sort_agg(x), gpu_median(f), gpu_topk_agg(x, 2) FROM hg GROUP BY h')) p(l);
DROP TABLE hg_got_now, hg_want;
CREATE TEMP TABLE hg_want AS
SELECT h AS g, array_agg(x ORDER BY x) AS srt, array_agg(f ORDER BY f DESC) AS srt_desc,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY f) AS med,
	   percentile_cont(0.25) WITHIN GROUP (ORDER BY x) AS cont,
	   percentile_disc('{0.5,0.9}'::float8[]) WITHIN GROUP (ORDER BY f) AS disc,
	   mode() WITHIN GROUP (ORDER BY x) AS mo,
	   (array_agg(x ORDER BY x))[1:2] AS topk
FROM hg GROUP BY h;
CREATE TEMP TABLE hg_got_now AS
SELECT h AS g, gpu_sort_agg(x) AS srt, gpu_sort_agg(f, true) AS srt_desc, gpu_median(f) AS med,
	   gpu_percentile_cont_agg(x, 0.25) AS cont, gpu_percentile_disc_agg(f, '{0.5,0.9}'::float8[]) AS disc,
	   gpu_mode_agg(x) AS mo, gpu_topk_agg(x, 2) AS topk, NULL::bigint AS contexts
FROM hg GROUP BY h;
SELECT groups, mismatches FROM hg_mismatches();
RESET ALL;

-- A state keeps its first values in its own allocation (room for 8 int8,
-- 16 int4 or 32 int2), and a constant argument of a few bytes at the end of
-- that room while the values leave it free: groups of 1 to 40 rows of int2,
-- int8 and float8 outgrow the room with a fraction or a k at its end, or
-- with an array of fractions too large for it.
SET enable_sort = off;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE hr (g int, s int2, b int8, f float8);
INSERT INTO hr
SELECT g, ((r * 7919 + g) % 601 - 300)::int2,
	   CASE WHEN (r + g) % 13 = 0 THEN NULL ELSE (r * 104729 + g) % 100003 - 50000 END,
	   ((r * 31 + g) % 97) / 3.0
FROM generate_series(1, 400) g, generate_series(1, 1 + g % 40) r;
ANALYZE hr;
SELECT count(*) FILTER (WHERE l ~ '^HashAggregate') AS hash_aggregates
FROM hg_plan('SELECT g, gpu_sort_agg(b), gpu_percentile_disc_agg(b, 0.9) FROM hr GROUP BY g') l;
SELECT count(*) AS groups,
	   count(*) FILTER (WHERE (o.srt, o.srt_desc, o.disc, o.cont, o.discs, o.topk, o.topk_desc, o.mo) IS DISTINCT FROM
								(w.srt, w.srt_desc, w.disc, w.cont, w.discs, w.topk, w.topk_desc, w.mo)) AS mismatches
FROM (SELECT g, gpu_sort_agg(b) AS srt, gpu_sort_agg(s, true) AS srt_desc, gpu_percentile_disc_agg(b, 0.9) AS disc,
			 gpu_percentile_cont_agg(f, 0.3) AS cont,
			 gpu_percentile_disc_agg(s, '{0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9}'::float8[]) AS discs,
			 gpu_topk_agg(b, 5) AS topk, gpu_topk_agg(f, 3, true) AS topk_desc, gpu_mode_agg(s) AS mo
	  FROM hr GROUP BY g) o
JOIN (SELECT g, array_agg(b ORDER BY b) AS srt, array_agg(s ORDER BY s DESC) AS srt_desc,
			 percentile_disc(0.9) WITHIN GROUP (ORDER BY b) AS disc,
			 percentile_cont(0.3) WITHIN GROUP (ORDER BY f) AS cont,
			 percentile_disc('{0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9}'::float8[]) WITHIN GROUP (ORDER BY s) AS discs,
			 (array_agg(b ORDER BY b))[1:5] AS topk, (array_agg(f ORDER BY f DESC))[1:3] AS topk_desc,
			 mode() WITHIN GROUP (ORDER BY s) AS mo
	  FROM hr GROUP BY g) w USING (g);
DROP TABLE hr;
RESET ALL;

DROP VIEW hg_got;
DROP FUNCTION hg_mismatches(), hg_state_contexts(), hg_plan(text);
DROP TABLE hg;
