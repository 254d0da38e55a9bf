--
-- 12_topk: gpu_topk and gpu_topk_agg against ORDER BY ... LIMIT k and
-- array_agg(x ORDER BY x)[1:k] on the same data: every element type, NULLs,
-- NaN, infinities, duplicates, k from 0 past the length, arrays large enough
-- for the selection (rather than a full sort), empty groups, serial, grouped
-- and parallel, then random arrays and k.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;

-- gpu_topk(a, k, descending) holds the elements of ORDER BY x [DESC] LIMIT k;
-- for floats, whose -0 and +0 ORDER BY counts equal, it is also
-- gpu_sort(a, descending)[1:k] bit for bit
CREATE FUNCTION topk_check(a anyarray, k int, d bool) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	ok bool;
BEGIN
	SELECT gpu_topk(a, k, d) = coalesce(array_agg(x ORDER BY o), '{}') INTO ok
	FROM (SELECT x, row_number() OVER () AS o
		  FROM (SELECT x FROM unnest(a) x
				ORDER BY CASE WHEN d THEN NULL ELSE x END, CASE WHEN d THEN x END DESC
				LIMIT k) l) s;
	IF ok AND pg_typeof(a) IN ('real[]'::regtype, 'double precision[]'::regtype) THEN
		ok := gpu_topk(a, k, d)::text = (gpu_sort(a, d))[1:k]::text;
	END IF;
	RETURN ok;
END
$$;

SELECT setseed(0.5);
CREATE TABLE topk_data AS
SELECT i, i % 5 AS g,
	   CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 600 - 300)::int2 END AS i2,
	   CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 4e9 - 2e9)::int4 END AS i4,
	   CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 1e18 - 5e17)::int8 END AS i8,
	   CASE WHEN random() < 0.05 THEN NULL WHEN random() < 0.01 THEN 'NaN' ELSE (random() * 200 - 100)::float4 END AS f4,
	   CASE WHEN random() < 0.05 THEN NULL WHEN random() < 0.01 THEN 'Infinity' ELSE (random() - 0.5) * 1e10 END AS f8,
	   CASE WHEN random() < 0.05 THEN NULL ELSE date '2000-01-01' + (random() * 20000)::int END AS d,
	   CASE WHEN random() < 0.05 THEN NULL ELSE timestamp '2000-01-01' + random() * interval '9000 days' END AS ts,
	   CASE WHEN random() < 0.05 THEN NULL ELSE timestamptz '2000-01-01 UTC' + random() * interval '9000 days' END AS tz
FROM generate_series(1, 100000) i;
INSERT INTO topk_data VALUES
	(0, 0, -32768, -2147483648, -9223372036854775808, '-Infinity', '-Infinity', '-infinity', '-infinity', '-infinity'),
	(0, 0, 32767, 2147483647, 9223372036854775807, 'Infinity', 'NaN', 'infinity', 'infinity', 'infinity'),
	(0, 0, 0, 0, 0, '-0', '-0', NULL, NULL, NULL);
CREATE TABLE topk_arrays AS
SELECT array_agg(i2 ORDER BY i) i2, array_agg(i4 ORDER BY i) i4, array_agg(i8 ORDER BY i) i8,
	   array_agg(f4 ORDER BY i) f4, array_agg(f8 ORDER BY i) f8, array_agg(d ORDER BY i) d,
	   array_agg(ts ORDER BY i) ts, array_agg(tz ORDER BY i) tz
FROM topk_data;

-- every type, both directions, k from 0 to past the length (100,003 elements:
-- k up to an eighth of them selects, larger k sort everything)
SELECT k, dir,
	   topk_check(i2, k, dir) AS i2, topk_check(i4, k, dir) AS i4, topk_check(i8, k, dir) AS i8,
	   topk_check(f4, k, dir) AS f4, topk_check(f8, k, dir) AS f8, topk_check(d, k, dir) AS date,
	   topk_check(ts, k, dir) AS ts, topk_check(tz, k, dir) AS tz
FROM topk_arrays, unnest('{0,1,100,12500,12501,100003,200000}'::int[]) k, unnest('{f,t}'::bool[]) dir
ORDER BY k, dir;

-- small arrays: NULLs after the values ascending, before them descending
SELECT gpu_topk('{5,3,NULL,1,4}'::int4[], 3) AS asc3, gpu_topk('{5,3,NULL,1,4}'::int4[], 3, true) AS desc3,
	   gpu_topk('{5,3,NULL,1,4}'::int4[], 5) AS asc5, gpu_topk('{5,3,NULL,1,4}'::int4[], 9, true) AS desc9,
	   gpu_topk('{NULL,NULL}'::int8[], 1) AS nulls, gpu_topk('{}'::float4[], 3) AS empty,
	   gpu_topk('[7:9]={3,1,2}'::int2[], 2) AS lower_bound;
SELECT gpu_topk('{NaN,1,-Infinity,-0,0,Infinity,-1}'::float8[], 4) AS asc4,
	   gpu_topk('{NaN,1,-Infinity,-0,0,Infinity,-1}'::float8[], 4, true) AS desc4,
	   gpu_topk('{2001-01-01,infinity,-infinity}'::date[], 2, true) AS dates;
-- duplicates keep their input order (visible for -0 and +0 only)
SELECT gpu_topk('{0,-0,0,-0,1}'::float4[], 3) AS zeros_asc, gpu_topk('{0,-0,0,-0,1}'::float4[], 3, true) AS zeros_desc;
SELECT gpu_topk(NULL::int4[], 3) IS NULL AS null_array;

-- errors: k NULL or negative (LIMIT's SQLSTATE), descending NULL, two dimensions
SELECT gpu_topk('{1,2}'::int4[], NULL);
\set VERBOSITY sqlstate
SELECT gpu_topk('{1,2}'::int4[], -1);
\set VERBOSITY default
SELECT gpu_topk('{1,2}'::int4[], -1);
SELECT gpu_topk('{1,2}'::int4[], 1, NULL);
SELECT gpu_topk('{{1,2},{3,4}}'::int4[], 1);
SELECT gpu_topk_agg(x, -2) FROM (VALUES (1::int4)) v(x);
SELECT gpu_topk_agg(x, NULL) FROM (VALUES (1::int4)) v(x);
SELECT gpu_topk_agg(x, x) FROM (VALUES (1::int4), (2)) v(x);
SELECT gpu_topk_agg(x, 1, x > 1) FROM (VALUES (1::int4), (2)) v(x);

-- gpu_topk_agg is array_agg(x ORDER BY x [DESC])[1:k], NULL inputs included;
-- 100,003 rows make it cut its values down to the best k as it goes
SELECT k,
	   gpu_topk_agg(i2, k) = (array_agg(i2 ORDER BY i2))[1:k] AS i2,
	   gpu_topk_agg(i4, k, true) = (array_agg(i4 ORDER BY i4 DESC))[1:k] AS i4_desc,
	   gpu_topk_agg(i8, k) = (array_agg(i8 ORDER BY i8))[1:k] AS i8,
	   gpu_topk_agg(f4, k, true) = (array_agg(f4 ORDER BY f4 DESC))[1:k] AS f4_desc,
	   gpu_topk_agg(f8, k) = (array_agg(f8 ORDER BY f8))[1:k] AS f8,
	   gpu_topk_agg(d, k, true) = (array_agg(d ORDER BY d DESC))[1:k] AS date_desc,
	   gpu_topk_agg(ts, k) = (array_agg(ts ORDER BY ts))[1:k] AS ts,
	   gpu_topk_agg(tz, k, false) = (array_agg(tz ORDER BY tz))[1:k] AS tz
FROM topk_data, unnest('{0,1,10,1000,99000,100003,100010}'::int[]) k GROUP BY k ORDER BY k;
-- grouped, no rows, only NULLs
SELECT count(*) AS groups, bool_and(a = b) AS asc_same, bool_and(c = e) AS desc_same
FROM (SELECT g, gpu_topk_agg(f8, 7) a, (array_agg(f8 ORDER BY f8))[1:7] b,
			 gpu_topk_agg(i4, 50, true) c, (array_agg(i4 ORDER BY i4 DESC))[1:50] e
	  FROM topk_data GROUP BY g) s;
SELECT gpu_topk_agg(i4, 3) IS NULL AS no_rows FROM topk_data WHERE false;
SELECT gpu_topk_agg(x, 3) AS asc, gpu_topk_agg(x, 1, true) AS desc FROM (VALUES (NULL::int8), (NULL)) v(x);
-- as a window aggregate
SELECT i, gpu_topk_agg(x, 2) OVER (ORDER BY i) AS smallest, gpu_topk_agg(x, 2, true) OVER (ORDER BY i) AS largest
FROM (VALUES (1, 3::int4), (2, NULL), (3, 1), (4, 2)) v(i, x);

-- a parallel plan: partial states are cut, serialized and combined
ANALYZE topk_data;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT gpu_topk_agg(i4, 10) FROM topk_data;
SELECT gpu_topk_agg(i4, 10) = (SELECT (array_agg(i4 ORDER BY i4))[1:10] FROM topk_data) AS i4,
	   gpu_topk_agg(f8, 100, true) = (SELECT (array_agg(f8 ORDER BY f8 DESC))[1:100] FROM topk_data) AS f8_desc,
	   gpu_topk_agg(ts, 5) = (SELECT (array_agg(ts ORDER BY ts))[1:5] FROM topk_data) AS ts
FROM topk_data;
SELECT bool_and(a.t = b.t) AS grouped, count(*) AS groups
FROM (SELECT g, gpu_topk_agg(i8, 20, true) t FROM topk_data GROUP BY g) a
JOIN (SELECT g, (array_agg(i8 ORDER BY i8 DESC))[1:20] t FROM topk_data GROUP BY g) b USING (g);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- Property: random arrays (length, range, NULLs, float specials) and random
-- k and direction.  The seed is fixed unless gpusort_test.seed is set; a
-- failing case is listed with its number.
SELECT coalesce(nullif(current_setting('gpusort_test.seed', true), ''), '1212')::int AS seed \gset
SELECT :seed AS seed, setseed(:seed / 2147483648.0) IS NOT NULL AS seeded;
CREATE TABLE prop_cases AS
SELECT c, (random() * 3000)::int AS n, (10 ^ (random() * 6))::int AS range, random() * 0.2 AS null_share,
	   random() < 0.5 AS d
FROM generate_series(1, 150) c;
CREATE TABLE prop_arrays AS
SELECT c, d, n,
	   CASE WHEN random() < 0.3 THEN (random() * 10)::int ELSE (random() * n * 1.2)::int END AS k,
	   array_agg(CASE WHEN random() < null_share THEN NULL ELSE (random() * range)::int4 END) AS x,
	   array_agg(CASE WHEN random() < null_share THEN NULL
					  WHEN random() < 0.03 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '-0'])[1 + (random() * 3)::int]::float8
					  ELSE round((random() * range)::numeric, 1)::float8 END) AS f
FROM prop_cases, generate_series(1, n) i GROUP BY c, d, n;
SELECT count(*) AS cases, count(*) FILTER (WHERE NOT ok) AS failed,
	   array_agg(c ORDER BY c) FILTER (WHERE NOT ok) AS failing_cases
FROM (SELECT c, topk_check(x, k, d) AND topk_check(f, k, d)
			AND (SELECT gpu_topk_agg(v, p.k, p.d) = (array_agg(v ORDER BY CASE WHEN p.d THEN NULL ELSE v END,
																		  CASE WHEN p.d THEN v END DESC))[1:p.k]
				 FROM unnest(p.f) v) AS ok
	  FROM prop_arrays p) s;

DROP TABLE topk_data, topk_arrays, prop_cases, prop_arrays;
DROP FUNCTION topk_check(anyarray, int, bool);
