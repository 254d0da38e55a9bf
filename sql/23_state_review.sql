--
-- 23_state_review: the plain aggregates with their gpusort_state transition
-- (an expanded object per group) in the executor's less common paths, each
-- answer compared with PostgreSQL's own aggregate over the same rows: one
-- transition state shared by several aggregates, window aggregates (the
-- final function called again on a growing state, and on restarted ones),
-- hash aggregation that spills, grouping sets, DISTINCT and FILTER,
-- partitionwise aggregation over more partitions than a state keeps sorted
-- runs, percentiles across int2 runs some of which are empty, and row counts
-- that a crafted initial state brings to the edge of int64.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;
SELECT setseed(0.23);

CREATE TABLE rv (i int, g int, x int4, f float8, s int2);
INSERT INTO rv
SELECT i, i % 37, CASE WHEN i % 19 = 0 THEN NULL ELSE (random() * 500)::int4 END,
	   CASE WHEN i % 23 = 0 THEN NULL WHEN i % 97 = 0 THEN 'NaN' ELSE random() * 100 - 50 END,
	   (random() * 65535 - 32768)::int2
FROM generate_series(1, 6000) i;
ANALYZE rv;
-- the lines of a query's plan (EXPLAIN options in opts), for checks on its shape
CREATE FUNCTION rv_plan(opts text, q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	l text;
BEGIN
	FOR l IN EXECUTE format('EXPLAIN (%s) %s', opts, q) LOOP
		RETURN NEXT l;
	END LOOP;
END $$;

-- One transition state shared by gpu_median and gpu_mode_agg (the same
-- transition function and argument), and by the two percentiles: each final
-- function reads the state the other one sorted.
SELECT count(*) AS groups,
	   count(*) FILTER (WHERE a.med IS DISTINCT FROM b.med OR a.mo IS DISTINCT FROM b.mo
						OR a.disc IS DISTINCT FROM b.disc OR a.cont IS DISTINCT FROM b.cont) AS mismatches
FROM (SELECT g, gpu_median(x) med, gpu_mode_agg(x) mo, gpu_percentile_disc_agg(x, 0.3) disc,
			 gpu_percentile_cont_agg(x, 0.3) cont
	  FROM rv GROUP BY g) a
JOIN (SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY x) med, mode() WITHIN GROUP (ORDER BY x) mo,
			 percentile_disc(0.3) WITHIN GROUP (ORDER BY x) disc, percentile_cont(0.3) WITHIN GROUP (ORDER BY x) cont
	  FROM rv GROUP BY g) b USING (g);

-- The same in parallel workers: the leader combines the workers' sorted
-- partial states as runs; gpu_median reads its ranks across the runs, then
-- gpu_mode_agg merges them in the shared state, then the percentiles read it
-- merged.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT count(*) FILTER (WHERE l ~ 'Partial') > 0 AS partial_plan
FROM rv_plan('COSTS OFF', 'SELECT g, gpu_median(x) FROM rv GROUP BY g') l;
SELECT count(*) AS groups,
	   count(*) FILTER (WHERE a.med IS DISTINCT FROM b.med OR a.mo IS DISTINCT FROM b.mo
						OR a.disc IS DISTINCT FROM b.disc OR a.cont IS DISTINCT FROM b.cont) AS mismatches
FROM (SELECT g, gpu_median(x) med, gpu_mode_agg(x) mo, gpu_percentile_disc_agg(x, 0.3) disc,
			 gpu_percentile_cont_agg(x, 0.3) cont
	  FROM rv GROUP BY g) a
JOIN (SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY x) med, mode() WITHIN GROUP (ORDER BY x) mo,
			 percentile_disc(0.3) WITHIN GROUP (ORDER BY x) disc, percentile_cont(0.3) WITHIN GROUP (ORDER BY x) cont
	  FROM rv GROUP BY g) b USING (g);
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- Running window aggregates: the final function runs once per row on a state
-- that grows between the calls (and that an earlier call sorted).
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE w.srt IS DISTINCT FROM r.srt) AS sort_mismatches,
	   count(*) FILTER (WHERE w.med IS DISTINCT FROM r.med) AS median_mismatches,
	   count(*) FILTER (WHERE w.mo IS DISTINCT FROM r.mo) AS mode_mismatches,
	   count(*) FILTER (WHERE w.disc IS DISTINCT FROM r.disc) AS disc_mismatches,
	   count(*) FILTER (WHERE w.topk IS DISTINCT FROM r.topk) AS topk_mismatches
FROM (SELECT i, gpu_sort_agg(x, true) OVER w srt, gpu_median(f) OVER w med, gpu_mode_agg(x) OVER w mo,
			 gpu_percentile_disc_agg(x, '{0.1,0.7}'::float8[]) OVER w disc, gpu_topk_agg(x, 3) OVER w topk
	  FROM rv WHERE i <= 600 WINDOW w AS (PARTITION BY g ORDER BY i)) w
JOIN (SELECT i,
			 (SELECT array_agg(x ORDER BY x DESC) FROM rv r2 WHERE r2.g = r.g AND r2.i <= r.i) srt,
			 (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f) FROM rv r2 WHERE r2.g = r.g AND r2.i <= r.i) med,
			 (SELECT mode() WITHIN GROUP (ORDER BY x) FROM rv r2 WHERE r2.g = r.g AND r2.i <= r.i) mo,
			 (SELECT percentile_disc('{0.1,0.7}'::float8[]) WITHIN GROUP (ORDER BY x) FROM rv r2
			  WHERE r2.g = r.g AND r2.i <= r.i) disc,
			 (SELECT (array_agg(x ORDER BY x))[1:3] FROM rv r2 WHERE r2.g = r.g AND r2.i <= r.i) topk
	  FROM rv r WHERE i <= 600) r USING (i);

-- A moving frame: each row's state is built again from its frame.
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE w.srt IS DISTINCT FROM r.srt OR w.med IS DISTINCT FROM r.med) AS mismatches
FROM (SELECT i, gpu_sort_agg(s) OVER w srt, gpu_median(s) OVER w med
	  FROM rv WHERE i <= 400 WINDOW w AS (ORDER BY i ROWS BETWEEN 4 PRECEDING AND 2 FOLLOWING)) w
JOIN (SELECT i, (SELECT array_agg(s ORDER BY s) FROM rv r2 WHERE r2.i BETWEEN r.i - 4 AND least(r.i + 2, 400)) srt,
			 (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FROM rv r2
			  WHERE r2.i BETWEEN r.i - 4 AND least(r.i + 2, 400)) med
	  FROM rv r WHERE i <= 400) r USING (i);

-- The planner sizes a hash aggregation by the aggregates' SSPACE: each
-- group counts as 8 kB, as array_agg's internal state (sql/1.3/state.sql).
SELECT count(*) AS aggregates, count(*) FILTER (WHERE aggtransspace = 8176) AS with_space
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
WHERE a.aggtranstype = 'gpusort_state'::regtype AND p.proname LIKE 'gpu\_%';

-- Hash aggregation that spills to disk, with a few thousand groups.
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SET enable_sort = off;
SET max_parallel_workers_per_gather = 0;
SELECT count(*) FILTER (WHERE l ~ 'HashAggregate') AS hash_aggregates,
	   count(*) FILTER (WHERE l ~ 'Batches: ([2-9]|[0-9]{2,})') AS spilled
FROM rv_plan('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF',
			 'SELECT i % 2000, gpu_sort_agg(x), gpu_median(f), gpu_topk_agg(s, 2, true) FROM rv GROUP BY i % 2000') l;
SELECT count(*) AS groups,
	   count(*) FILTER (WHERE a.srt IS DISTINCT FROM b.srt OR a.med IS DISTINCT FROM b.med
						OR a.topk IS DISTINCT FROM b.topk) AS mismatches
FROM (SELECT i % 2000 AS k, gpu_sort_agg(x) srt, gpu_median(f) med, gpu_topk_agg(s, 2, true) topk
	  FROM rv GROUP BY i % 2000) a
JOIN (SELECT i % 2000 AS k, array_agg(x ORDER BY x) srt, percentile_cont(0.5) WITHIN GROUP (ORDER BY f) med,
			 (array_agg(s ORDER BY s DESC))[1:2] topk
	  FROM rv GROUP BY i % 2000) b USING (k);
RESET enable_sort;
RESET hash_mem_multiplier;
RESET work_mem;

-- Grouping sets, hashed and sorted.
SELECT count(*) AS groups, count(*) FILTER (WHERE a.srt IS DISTINCT FROM b.srt OR a.disc IS DISTINCT FROM b.disc) AS mismatches
FROM (SELECT coalesce(g % 3, -1) AS p, coalesce(g % 5, -1) AS q, gpu_sort_agg(x) srt, gpu_percentile_disc_agg(f, 0.9) disc
	  FROM rv GROUP BY GROUPING SETS ((g % 3), (g % 5), ())) a
FULL JOIN (SELECT coalesce(g % 3, -1) AS p, coalesce(g % 5, -1) AS q, array_agg(x ORDER BY x) srt,
				  percentile_disc(0.9) WITHIN GROUP (ORDER BY f) disc
		   FROM rv GROUP BY GROUPING SETS ((g % 3), (g % 5), ())) b USING (p, q);

-- DISTINCT, ORDER BY and FILTER in the call.
SELECT gpu_sort_agg(DISTINCT x) = array_agg(DISTINCT x ORDER BY x) AS sort_distinct,
	   gpu_sort_agg(x ORDER BY i DESC) = array_agg(x ORDER BY x) AS sort_ordered,
	   gpu_sort_agg(f, true) FILTER (WHERE i % 3 = 0) = array_agg(f ORDER BY f DESC) FILTER (WHERE i % 3 = 0) AS sort_filter,
	   gpu_topk_agg(DISTINCT s, 5) = (array_agg(DISTINCT s ORDER BY s))[1:5] AS topk_distinct,
	   gpu_median(DISTINCT x) = (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM (SELECT DISTINCT x FROM rv) d)
		   AS median_distinct
FROM rv;

-- Partitionwise aggregation over 80 partitions: the finalize step combines
-- 80 partial states, more runs than a state keeps (they are merged down).
CREATE TABLE rvp (g int, x int4, f float8) PARTITION BY HASH (x);
DO $$
BEGIN
	FOR r IN 0..79 LOOP
		EXECUTE format('CREATE TABLE rvp_%s PARTITION OF rvp FOR VALUES WITH (MODULUS 80, REMAINDER %s)', r, r);
	END LOOP;
END $$;
INSERT INTO rvp SELECT g % 3, x, f FROM rv;
ANALYZE rvp;
SET enable_partitionwise_aggregate = on;
SELECT count(*) FILTER (WHERE l ~ 'Partial') AS partial_aggregates
FROM rv_plan('COSTS OFF', 'SELECT g, gpu_median(x) FROM rvp GROUP BY g') l;
SELECT count(*) AS groups,
	   count(*) FILTER (WHERE a.srt IS DISTINCT FROM b.srt OR a.med IS DISTINCT FROM b.med OR a.mo IS DISTINCT FROM b.mo
						OR a.disc IS DISTINCT FROM b.disc OR a.topk IS DISTINCT FROM b.topk
						OR a.fd IS DISTINCT FROM b.fd) AS mismatches
FROM (SELECT g, gpu_sort_agg(x) srt, gpu_median(x) med, gpu_mode_agg(x) mo,
			 gpu_percentile_disc_agg(x, '{0,0.01,0.5,0.77,1}'::float8[]) disc, gpu_topk_agg(x, 7) topk,
			 gpu_sort_agg(f, true) fd
	  FROM rvp GROUP BY g) a
JOIN (SELECT g, array_agg(x ORDER BY x) srt, percentile_cont(0.5) WITHIN GROUP (ORDER BY x) med,
			 mode() WITHIN GROUP (ORDER BY x) mo,
			 percentile_disc('{0,0.01,0.5,0.77,1}'::float8[]) WITHIN GROUP (ORDER BY x) disc,
			 (array_agg(x ORDER BY x))[1:7] topk, array_agg(f ORDER BY f DESC) fd
	  FROM rvp GROUP BY g) b USING (g);
SELECT gpu_sort_agg(x) = (SELECT array_agg(x ORDER BY x) FROM rvp) AS sort_all,
	   gpu_median(x) = (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM rvp) AS median_all
FROM rvp;
RESET enable_partitionwise_aggregate;
RESET max_parallel_workers_per_gather;

-- Percentiles across the sorted runs of int2 partial states (moved as text),
-- two of them with NULLs only and two with the type's extremes only.
CREATE AGGREGATE rv_state(int2, float8[]) (SFUNC = gpu_percentile_transfn, STYPE = gpusort_state);
CREATE AGGREGATE rv_merge_cont(gpusort_state) (SFUNC = gpu_sort_agg_combine, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_cont_multi_agg_final);
CREATE FUNCTION rv_disc_final_int2(gpusort_state, gpusort_state) RETURNS int2[]
AS '$libdir/gpusort', 'gpu_percentile_disc_final' LANGUAGE C;
CREATE AGGREGATE rv_merge_disc(gpusort_state) (SFUNC = gpu_sort_agg_combine, STYPE = gpusort_state,
	FINALFUNC = rv_disc_final_int2, FINALFUNC_EXTRA);
CREATE TABLE rv_src AS
SELECT i % 7 AS shard, CASE WHEN i % 7 IN (2, 5) THEN NULL ELSE s END AS s FROM rv
UNION ALL SELECT 7, (-32768)::int2 FROM generate_series(1, 3)
UNION ALL SELECT 8, 32767::int2 FROM generate_series(1, 3);
CREATE TABLE rv_runs AS
SELECT shard, rv_state(s, '{0,0.001,0.25,0.5,0.75,0.999,1}')::text::gpusort_state AS st
FROM rv_src GROUP BY shard;
SELECT count(*) FILTER (WHERE st::text LIKE '% n=0 values=') AS empty_runs FROM rv_runs;
SELECT (SELECT rv_merge_cont(st) FROM rv_runs)
		   = (SELECT percentile_cont('{0,0.001,0.25,0.5,0.75,0.999,1}'::float8[]) WITHIN GROUP (ORDER BY s)
			  FROM rv_src) AS cont_int2,
	   (SELECT rv_merge_disc(st) FROM rv_runs)
		   = (SELECT percentile_disc('{0,0.001,0.25,0.5,0.75,0.999,1}'::float8[]) WITHIN GROUP (ORDER BY s)
			  FROM rv_src) AS disc_int2;

-- A crafted initial state that counts nearly PG_INT64_MAX NULLs: the rows
-- after it must not wrap the row count (an error, never a wrong array).
CREATE AGGREGATE rv_edge_sort(int4) (SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_sort_agg_final_int4,
	INITCOND = 'gpusort_state 1 le int4 asc sorted unlimited nulls=9223372036854775806 param=- n=0 values=');
CREATE AGGREGATE rv_edge_topk(int4, int) (SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state,
	FINALFUNC = gpu_topk_agg_final_int4,
	INITCOND = 'gpusort_state 1 le int4 asc sorted unlimited nulls=9223372036854775806 param=- n=0 values=');
SELECT rv_edge_sort(x) FROM (VALUES (NULL::int4), (NULL), (1)) v(x);
SELECT rv_edge_sort(x) FROM (VALUES (1), (2)) v(x);
SELECT rv_edge_topk(x, 3) FROM (VALUES (1), (2)) v(x);
-- one row less is still counted (k = 0: an empty array)
SELECT rv_edge_topk(x, 0) FROM (VALUES (NULL::int4)) v(x);
SELECT rv_edge_topk(x, 0) FROM (VALUES (NULL::int4), (NULL)) v(x);

DROP AGGREGATE rv_edge_sort(int4);
DROP AGGREGATE rv_edge_topk(int4, int);
DROP TABLE rv_runs;
DROP TABLE rv_src;
DROP AGGREGATE rv_merge_disc(gpusort_state);
DROP FUNCTION rv_disc_final_int2(gpusort_state, gpusort_state);
DROP AGGREGATE rv_merge_cont(gpusort_state);
DROP AGGREGATE rv_state(int2, float8[]);
DROP TABLE rvp;
DROP TABLE rv;
DROP FUNCTION rv_plan(text, text);
