--
-- 20_topk_agg_bounded: gpu_topk_agg keeps at most about 2k values per group
-- as it collects and ships at most k in a partial state, and its answers stay
-- those of (array_agg(x ORDER BY x [DESC]))[1:k], and bit for bit those of
-- (gpu_sort_agg(x, descending))[1:k]: many groups of random size, arrival
-- order (random, ascending, descending, one value, few values) and NULL
-- share, k from 0 and 1 to past the group's size, both directions, every
-- type with NaN, -0 and the infinities, serial and under a forced parallel
-- plan (partial states serialized and combined).  Then the bound itself: the
-- partial state of 10^6 rows holds k values, a hash aggregate over groups
-- of 125,000 rows stays within a small memory, and so does one over 2,000
-- groups of 200 rows, whose rows after the first few are dropped; a window
-- aggregate reads its state between rows.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;

-- Property: random groups.  The seed is fixed unless gpusort_test.seed is
-- set; a failing group is listed with its number.
SELECT coalesce(nullif(current_setting('gpusort_test.seed', true), ''), '2020')::int AS seed \gset
SELECT :seed AS seed, setseed(:seed / 2147483648.0) IS NOT NULL AS seeded;

-- per group: size n, arrival order, NULL share, k (0, 1, 2 to 60, n - 1, n,
-- n + 3, or 500 to 2500, where the state prunes at 2k) and direction
CREATE TABLE bounded_groups AS
SELECT g, n,
	   (ARRAY['random', 'ascending', 'descending', 'constant', 'few'])[1 + g % 5] AS arrival,
	   CASE WHEN g % 4 = 0 THEN 0 ELSE random() * 0.1 END AS null_share,
	   CASE g % 7 WHEN 0 THEN 1 WHEN 1 THEN n WHEN 2 THEN n + 3 WHEN 3 THEN greatest(n - 1, 0)
				  WHEN 4 THEN 0 WHEN 5 THEN 2 + (random() * 58)::int
				  ELSE 500 + (random() * 2000)::int END AS k,
	   random() < 0.5 AS d
FROM (SELECT g, CASE WHEN random() < 0.2 THEN 1 + (random() * 20)::int
					 ELSE 1 + (random() * 8000)::int END AS n
	  FROM generate_series(1, 160) g) s;
-- v in [0, 1] in the group's arrival order, then one column per type; 2% of
-- the floats are NaN, -0, +0 or an infinity
CREATE TABLE bounded_rows AS
SELECT g, k, d,
	   (v * 60000 - 30000)::int2 AS i2,
	   (v * 4e9 - 2e9)::int4 AS i4,
	   (v * 1e18 - 5e17)::int8 AS i8,
	   coalesce(special::float4, (v * 200 - 100)::float4) AS f4,
	   coalesce(special::float8, (v - 0.5) * 1e10) AS f8,
	   date '2000-01-01' + (v * 20000)::int AS dt,
	   timestamp '2000-01-01' + v * interval '9000 days' AS ts,
	   timestamptz '2000-01-01 UTC' + v * interval '9000 days' AS tz
FROM (SELECT b.g, b.k, b.d,
			 CASE WHEN random() < b.null_share THEN NULL
				  WHEN b.arrival = 'random' THEN random()
				  WHEN b.arrival = 'ascending' THEN i::float8 / b.n
				  WHEN b.arrival = 'descending' THEN 1 - i::float8 / b.n
				  WHEN b.arrival = 'constant' THEN 0.5
				  ELSE (random() * 4)::int / 4.0 END AS v,
			 CASE WHEN random() < 0.02 THEN (ARRAY['NaN', '-0', '0', 'Infinity', '-Infinity'])[1 + (random() * 4)::int] END
				 AS special
	  FROM bounded_groups b, generate_series(1, b.n) i
	  ORDER BY b.g, i) s;
ANALYZE bounded_rows;
SELECT count(*) AS groups, sum(n) AS rows, count(*) FILTER (WHERE k > 2 * n) AS k_past_2n,
	   count(*) FILTER (WHERE n > greatest(2 * k, 1024)) AS pruning
FROM bounded_groups;

-- PostgreSQL's answers (NULLs last ascending, first descending), and for
-- the floats gpusort's bit-exact order (-0 before +0 ascending)
CREATE TABLE bounded_expected AS
SELECT g,
	   (array_agg(i2 ORDER BY CASE WHEN d THEN NULL ELSE i2 END, CASE WHEN d THEN i2 END DESC))[1:k] AS i2,
	   (array_agg(i4 ORDER BY CASE WHEN d THEN NULL ELSE i4 END, CASE WHEN d THEN i4 END DESC))[1:k] AS i4,
	   (array_agg(i8 ORDER BY CASE WHEN d THEN NULL ELSE i8 END, CASE WHEN d THEN i8 END DESC))[1:k] AS i8,
	   (array_agg(f4 ORDER BY CASE WHEN d THEN NULL ELSE f4 END, CASE WHEN d THEN f4 END DESC))[1:k] AS f4,
	   (array_agg(f8 ORDER BY CASE WHEN d THEN NULL ELSE f8 END, CASE WHEN d THEN f8 END DESC))[1:k] AS f8,
	   (array_agg(dt ORDER BY CASE WHEN d THEN NULL ELSE dt END, CASE WHEN d THEN dt END DESC))[1:k] AS dt,
	   (array_agg(ts ORDER BY CASE WHEN d THEN NULL ELSE ts END, CASE WHEN d THEN ts END DESC))[1:k] AS ts,
	   (array_agg(tz ORDER BY CASE WHEN d THEN NULL ELSE tz END, CASE WHEN d THEN tz END DESC))[1:k] AS tz,
	   ((gpu_sort_agg(f4, d))[1:k])::text AS f4_bits,
	   ((gpu_sort_agg(f8, d))[1:k])::text AS f8_bits
FROM bounded_rows GROUP BY g, k, d;

CREATE VIEW bounded_got AS
SELECT g, gpu_topk_agg(i2, k, d) AS i2, gpu_topk_agg(i4, k, d) AS i4, gpu_topk_agg(i8, k, d) AS i8,
	   gpu_topk_agg(f4, k, d) AS f4, gpu_topk_agg(f8, k, d) AS f8, gpu_topk_agg(dt, k, d) AS dt,
	   gpu_topk_agg(ts, k, d) AS ts, gpu_topk_agg(tz, k, d) AS tz
FROM bounded_rows GROUP BY g, k, d;

-- failures per type (the floats also bit for bit)
CREATE VIEW bounded_check AS
SELECT t, count(*) AS groups, count(*) FILTER (WHERE NOT ok) AS failed,
	   array_agg(g ORDER BY g) FILTER (WHERE NOT ok) AS failing_groups
FROM bounded_got a JOIN bounded_expected e USING (g),
	 LATERAL (VALUES ('int2', a.i2 IS NOT DISTINCT FROM e.i2),
					 ('int4', a.i4 IS NOT DISTINCT FROM e.i4),
					 ('int8', a.i8 IS NOT DISTINCT FROM e.i8),
					 ('float4', a.f4 IS NOT DISTINCT FROM e.f4 AND a.f4::text IS NOT DISTINCT FROM e.f4_bits),
					 ('float8', a.f8 IS NOT DISTINCT FROM e.f8 AND a.f8::text IS NOT DISTINCT FROM e.f8_bits),
					 ('date', a.dt IS NOT DISTINCT FROM e.dt),
					 ('timestamp', a.ts IS NOT DISTINCT FROM e.ts),
					 ('timestamptz', a.tz IS NOT DISTINCT FROM e.tz)) v(t, ok)
GROUP BY t ORDER BY t;

-- serial: one state per group, pruned as it collects
SET max_parallel_workers_per_gather = 0;
SELECT * FROM bounded_check;

-- parallel: partial states per worker, serialized (cut to k) and combined
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 4;
CREATE FUNCTION plan_lines(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		RETURN NEXT line;
	END LOOP;
END
$$;
SELECT bool_or(l ~ 'Partial (Hash|Group)?Aggregate') AS partial_aggregate, bool_or(l ~ 'Gather') AS gather,
	   bool_or(l ~ 'Finalize (Hash|Group)?Aggregate') AS finalize_aggregate
FROM plan_lines('SELECT * FROM bounded_got') l;
SELECT * FROM bounded_check;
-- one group over the whole table: every worker's state is cut, then merged
SELECT bool_or(l ~ 'Partial Aggregate') AS partial_aggregate
FROM plan_lines('SELECT gpu_topk_agg(i4, 37) FROM bounded_rows') l;
SELECT gpu_topk_agg(i4, 37) = (SELECT (array_agg(i4 ORDER BY i4))[1:37] FROM bounded_rows) AS i4_asc,
	   gpu_topk_agg(f8, 1500, true) = (SELECT (array_agg(f8 ORDER BY f8 DESC))[1:1500] FROM bounded_rows) AS f8_desc,
	   gpu_topk_agg(dt, 1) = (SELECT (array_agg(dt ORDER BY dt))[1:1] FROM bounded_rows) AS date_k1
FROM bounded_rows;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- A value that arrives after a prune and falls just before the k-th kept
-- one still enters: the first 1100 rows leave 10, 20, ..., 100 kept, then
-- 95 comes, then 1899 rows that cannot enter.  For floats the same with -0
-- after +0 (before it ascending, after it descending) and NaN after
-- Infinity, k = 1.
SELECT gpu_topk_agg(x, 10) AS asc_95, gpu_topk_agg(-x, 10, true) AS desc_95
FROM (SELECT CASE WHEN i <= 1100 THEN i * 10 WHEN i = 1101 THEN 95 ELSE 100000 + i END AS x
	  FROM generate_series(1, 3000) i) s;
SELECT gpu_topk_agg(a, 1) AS asc_minus_zero, gpu_topk_agg(b, 1, true) AS desc_plus_zero,
	   gpu_topk_agg(c, 1, true) AS desc_nan
FROM (SELECT CASE WHEN i = 1 THEN '0' WHEN i = 1500 THEN '-0' ELSE i::float8 END AS a,
			 CASE WHEN i = 1 THEN '-0' WHEN i = 1500 THEN '0' ELSE -i::float4 END AS b,
			 CASE WHEN i = 1 THEN 'Infinity' WHEN i = 1500 THEN 'NaN' ELSE i::float8 END AS c
	  FROM generate_series(1, 3000) i) s;

-- The bound.  The partial state of one group of 10^6 rows with k = 10, as
-- gpu_sort_agg_serialize writes it: a 32-byte header, the 4-byte k and 10
-- int4 values.
CREATE AGGREGATE topk_partial_state(int4, int) (
	SFUNC = gpu_topk_agg_transfn, STYPE = internal,
	FINALFUNC = gpu_sort_agg_serialize, FINALFUNC_MODIFY = READ_WRITE);
CREATE TABLE million AS
SELECT i, (i::int8 * 7919 % 1000003)::int4 AS x FROM generate_series(1, 1000000) i;
SELECT length(topk_partial_state(x, 10)) AS state_bytes, 32 + 4 + 10 * 4 AS expected_bytes FROM million;
SELECT length(topk_partial_state(x, 3000)) AS state_bytes, 32 + 4 + 3000 * 4 AS expected_bytes FROM million;
SELECT length(topk_partial_state(x, 0)) AS state_bytes, 32 + 4 AS expected_bytes FROM million;
-- and in a hash aggregate with a small work_mem: 8 groups of 125,000 rows,
-- k = 10, hold a few kB each (all their values would be 500 kB a group)
SET work_mem = '64kB';
SET enable_sort = off;
SET max_parallel_workers_per_gather = 0;
CREATE FUNCTION hash_aggregate_memory_kb(query text) RETURNS TABLE (strategy text, peak_kb int8)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || query INTO plan;
	RETURN QUERY SELECT plan -> 0 -> 'Plan' ->> 'Strategy', (plan -> 0 -> 'Plan' ->> 'Peak Memory Usage')::int8;
END
$$;
SELECT strategy, peak_kb < 512 AS under_512_kb
FROM hash_aggregate_memory_kb('SELECT i % 8, gpu_topk_agg(x, 10) FROM million GROUP BY i % 8');
SELECT count(*) AS groups, bool_and(t = e) AS same
FROM (SELECT i % 8 AS g, gpu_topk_agg(x, 10, true) AS t FROM million GROUP BY i % 8) a
JOIN (SELECT i % 8 AS g, (array_agg(x ORDER BY x DESC))[1:10] AS e FROM million GROUP BY i % 8) b USING (g);
RESET work_mem;
RESET enable_sort;
RESET max_parallel_workers_per_gather;

-- Once a group holds k values, a row that does not come before the k-th of
-- them is dropped by the transition without being stored: 2,000 groups of
-- 200 rows, k = 3 and 10, hold a few hundred bytes each (all their values
-- would be 1.6 kB a group, 3 MB in all), and their answers stay those of
-- array_agg.  The hash aggregation itself: not the GroupAggregate over the
-- sort node that the planner makes of a lone gpu_topk_agg.
SET work_mem = '32MB';
SET max_parallel_workers_per_gather = 0;
SET gpusort.enable_topk_groups = off;
CREATE TABLE small_groups AS
SELECT i % 2000 AS g, (i::int8 * 7919 % 1000003)::float8 AS x, (i::int8 * 7919 % 1000003)::int4 AS y
FROM generate_series(1, 400000) i;
ANALYZE small_groups;
SELECT strategy, peak_kb < 3072 AS under_3_mb
FROM hash_aggregate_memory_kb('SELECT g, gpu_topk_agg(x, 3) FROM small_groups GROUP BY g');
SELECT strategy, peak_kb < 3072 AS under_3_mb
FROM hash_aggregate_memory_kb('SELECT g, gpu_topk_agg(x, 10, true) FROM small_groups GROUP BY g');
SELECT count(*) AS groups, bool_and(a3 = e3) AS k3_same, bool_and(a10 = e10) AS k10_same,
	   bool_and(i3 = f3) AS int4_k3_same
FROM (SELECT g, gpu_topk_agg(x, 3) AS a3, gpu_topk_agg(x, 10, true) AS a10, gpu_topk_agg(y, 3, true) AS i3
	  FROM small_groups GROUP BY g) a
JOIN (SELECT g, (array_agg(x ORDER BY x))[1:3] AS e3, (array_agg(x ORDER BY x DESC))[1:10] AS e10,
			 (array_agg(y ORDER BY y DESC))[1:3] AS f3
	  FROM small_groups GROUP BY g) b USING (g);
RESET work_mem;
RESET max_parallel_workers_per_gather;
RESET gpusort.enable_topk_groups;

-- A window aggregate: the final function runs after each row while the
-- state keeps its bound and goes on dropping rows; ties at the k-th value
-- (x has 7 distinct values), NULLs, both directions.
CREATE TABLE window_rows AS
SELECT i, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37 % 7)::float8 END AS x
FROM generate_series(1, 300) i;
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE asc3 IS DISTINCT FROM
						(SELECT (array_agg(w.x ORDER BY w.x))[1:3] FROM window_rows w WHERE w.i <= r.i)) AS asc_failed,
	   count(*) FILTER (WHERE desc5 IS DISTINCT FROM
						(SELECT (array_agg(w.x ORDER BY w.x DESC))[1:5] FROM window_rows w WHERE w.i <= r.i)) AS desc_failed
FROM (SELECT i, gpu_topk_agg(x, 3) OVER (ORDER BY i) AS asc3, gpu_topk_agg(x, 5, true) OVER (ORDER BY i) AS desc5
	  FROM window_rows) r;

DROP FUNCTION hash_aggregate_memory_kb(text);
DROP AGGREGATE topk_partial_state(int4, int);
DROP FUNCTION plan_lines(text);
DROP VIEW bounded_check;
DROP VIEW bounded_got;
DROP TABLE bounded_groups, bounded_rows, bounded_expected, million, small_groups, window_rows;
