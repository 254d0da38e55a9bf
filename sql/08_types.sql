-- date, timestamp and timestamptz: sorted as their int4 days and int8
-- microseconds, whose extremes are -infinity and infinity, so every function
-- must give ORDER BY's order, infinities, NULLs and descending included.

\set ECHO none
\i sql/include/helpers.sql
\set ECHO all

-- small cases in full, against ORDER BY
SELECT gpu_sort(a) AS sorted, gpu_sort(a, true) AS descending, gpu_argsort(a) AS argsort,
	   gpu_sort(a) = array(SELECT x FROM unnest(a) x ORDER BY x) AS asc_ok,
	   gpu_sort(a, true, false) = array(SELECT x FROM unnest(a) x ORDER BY x DESC NULLS LAST) AS desc_ok
FROM (VALUES ('{2024-02-29,infinity,NULL,-infinity,1999-12-31,2000-01-01,4713-11-24 BC,infinity}'::date[])) v(a);

SELECT gpu_sort(a) AS sorted,
	   gpu_sort(a, false, true) = array(SELECT x FROM unnest(a) x ORDER BY x NULLS FIRST) AS nulls_first_ok,
	   gpu_argsort(a, true) = array(SELECT i::int4 FROM unnest(a) WITH ORDINALITY u(x, i) ORDER BY x DESC, i) AS argsort_desc_ok
FROM (VALUES ('{"2000-01-01 00:00:00.000001",-infinity,NULL,"1999-12-31 23:59:59.999999",infinity,"1970-01-01",'
			  '"294276-12-31 23:59:59.999999","4713-11-24 00:00:00 BC"}'::timestamp[])) v(a);

-- timestamptz sorts by the instant, whatever the time zone shows
SET TimeZone = 'Asia/Kolkata';
SELECT * FROM gpu_sort_rows('{"2024-01-01 10:00:00+05:30","2024-01-01 04:00:00+00",infinity,"2024-01-01 00:00:00-05",-infinity}'::timestamptz[]);
RESET TimeZone;

-- generated inputs of every distribution against ORDER BY: gpu_sort,
-- gpu_argsort (ORDER BY's stable order), gpu_sort_rows and gpu_sort_agg,
-- ascending and descending, NULLs default/last/first
SELECT typ, dist, run_checks(typ, dist, ARRAY[0, 1, 2, 3, 17, 257, 1009, 4099]) AS result
FROM unnest(ARRAY['date', 'timestamp', 'timestamptz']) typ,
	 unnest(ARRAY['uniform', 'sorted', 'reverse', 'equal', 'few', 'zero_one', 'nulls', 'all_nulls', 'extremes']) dist
ORDER BY 1, 2;

-- larger inputs (radix sort sizes), ORDER BY's NULL placement
SELECT typ, run_checks(typ, 'nulls', ARRAY[65537], true, true) AS result
FROM unnest(ARRAY['date', 'timestamp', 'timestamptz']) typ
ORDER BY 1;

-- the aggregate by group, in parallel workers too (states serialized and combined)
CREATE TABLE types_data AS
SELECT i % 5 AS g,
	   CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN 'infinity' WHEN i % 83 = 0 THEN '-infinity'
			ELSE date '2000-01-01' + ((i::int8 * 7919) % 100003)::int - 50000 END AS d,
	   CASE WHEN i % 101 = 0 THEN NULL WHEN i % 89 = 0 THEN 'infinity' WHEN i % 83 = 0 THEN '-infinity'
			ELSE timestamp '2000-01-01' + ((i::int8 * 7919) % 1000003) * interval '1 second' END AS ts
FROM generate_series(1, 200000) i;
ALTER TABLE types_data ADD COLUMN tstz timestamptz;
UPDATE types_data SET tstz = ts AT TIME ZONE 'UTC';
ANALYZE types_data;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT g,
	   gpu_sort_agg(d) = array_agg(d ORDER BY d) AS date_asc,
	   gpu_sort_agg(d, true) = array_agg(d ORDER BY d DESC) AS date_desc,
	   gpu_sort_agg(ts) = array_agg(ts ORDER BY ts) AS ts_asc,
	   gpu_sort_agg(tstz, true) = array_agg(tstz ORDER BY tstz DESC) AS tstz_desc
FROM types_data GROUP BY g ORDER BY g;
SELECT gpu_sort_agg(d) = (SELECT array_agg(d ORDER BY d) FROM types_data) AS date_all,
	   gpu_sort_agg(tstz) = (SELECT array_agg(tstz ORDER BY tstz) FROM types_data) AS tstz_all
FROM types_data;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE types_data;
