-- gpu_sort_agg: the same result as array_agg(x ORDER BY x [DESC]), NULLs
-- included, serial, grouped, as a window aggregate and in a parallel plan.
SELECT setseed(0.125);
CREATE TABLE agg_data AS
SELECT i, i % 7 AS g,
	   CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 60000 - 30000)::int2 END AS i2,
	   CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 4e9 - 2e9)::int4 END AS i4,
	   CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 1e18 - 5e17)::int8 END AS i8,
	   CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 200 - 100)::float4 END AS f4,
	   CASE WHEN random() < 0.1 THEN NULL ELSE (random() - 0.5) * 1e10 END AS f8
FROM generate_series(1, 20000) i;

SELECT gpu_sort_agg(i2) = array_agg(i2 ORDER BY i2) AS int2,
	   gpu_sort_agg(i4) = array_agg(i4 ORDER BY i4) AS int4,
	   gpu_sort_agg(i8) = array_agg(i8 ORDER BY i8) AS int8,
	   gpu_sort_agg(f4) = array_agg(f4 ORDER BY f4) AS float4,
	   gpu_sort_agg(f8) = array_agg(f8 ORDER BY f8) AS float8
FROM agg_data;
SELECT gpu_sort_agg(i2, true) = array_agg(i2 ORDER BY i2 DESC) AS int2,
	   gpu_sort_agg(i4, true) = array_agg(i4 ORDER BY i4 DESC) AS int4,
	   gpu_sort_agg(i8, true) = array_agg(i8 ORDER BY i8 DESC) AS int8,
	   gpu_sort_agg(f4, true) = array_agg(f4 ORDER BY f4 DESC) AS float4,
	   gpu_sort_agg(f8, true) = array_agg(f8 ORDER BY f8 DESC) AS float8,
	   gpu_sort_agg(f8, false) = array_agg(f8 ORDER BY f8) AS float8_false
FROM agg_data;

-- grouped
SELECT count(*) AS groups,
	   bool_and(a = b) AS asc_same, bool_and(c = d) AS desc_same
FROM (SELECT g, gpu_sort_agg(i4) a, array_agg(i4 ORDER BY i4) b,
			 gpu_sort_agg(f8, true) c, array_agg(f8 ORDER BY f8 DESC) d
	  FROM agg_data GROUP BY g) s;

-- no rows: NULL, as array_agg; only NULLs: an array of NULLs
SELECT gpu_sort_agg(i4) IS NULL AS no_rows, array_agg(i4 ORDER BY i4) IS NULL AS array_agg_no_rows
FROM agg_data WHERE false;
SELECT gpu_sort_agg(x) AS asc, gpu_sort_agg(x, true) AS desc
FROM (VALUES (NULL::int8), (NULL)) v(x);
SELECT gpu_sort_agg(x) AS asc, gpu_sort_agg(x, true) AS desc
FROM (VALUES (2::float8), (NULL), (-1), (NULL), ('NaN'), (-0.0::float8)) v(x);

-- as a window aggregate the final function runs again on a growing state
SELECT i, gpu_sort_agg(x) OVER (ORDER BY i) AS running, gpu_sort_agg(x, true) OVER (ORDER BY i) AS running_desc
FROM (VALUES (1, 3::int4), (2, NULL), (3, 1), (4, 2)) v(i, x);

-- a parallel plan: partial states are serialized, combined and finalized
ANALYZE agg_data;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT gpu_sort_agg(i4) FROM agg_data;
SELECT gpu_sort_agg(i4) = (SELECT array_agg(i4 ORDER BY i4) FROM agg_data) AS int4,
	   gpu_sort_agg(f8, true) = (SELECT array_agg(f8 ORDER BY f8 DESC) FROM agg_data) AS float8_desc,
	   gpu_sort_agg(i2) = (SELECT array_agg(i2 ORDER BY i2) FROM agg_data) AS int2,
	   gpu_sort_agg(i8, true) = (SELECT array_agg(i8 ORDER BY i8 DESC) FROM agg_data) AS int8_desc,
	   gpu_sort_agg(f4) = (SELECT array_agg(f4 ORDER BY f4) FROM agg_data) AS float4
FROM agg_data;
WITH par AS (SELECT g, gpu_sort_agg(i4) s, gpu_sort_agg(f4, true) t FROM agg_data GROUP BY g),
	 ref AS (SELECT g, array_agg(i4 ORDER BY i4) s, array_agg(f4 ORDER BY f4 DESC) t FROM agg_data GROUP BY g)
SELECT count(*) AS groups, bool_and(par.s = ref.s) AS int4_same, bool_and(par.t = ref.t) AS float4_desc_same
FROM par JOIN ref USING (g);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

DROP TABLE agg_data;
