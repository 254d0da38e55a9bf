-- Every error path, the settings and their validation, and the fallbacks to
-- the CPU that gpusort.device = auto takes (silently) where the GPU cannot.

-- multidimensional arrays
SELECT gpu_sort('{{1,2},{3,4}}'::int4[]);
SELECT gpu_argsort('{{1.5},{2.5}}'::float8[]);
SELECT * FROM gpu_sort_rows('{{{1}}}'::int2[]);
-- ... but an empty array or a NULL one is fine
SELECT gpu_sort('{}'::int4[]) AS empty, gpu_sort(NULL::int4[]) IS NULL AS null_array,
	   gpu_argsort('{}'::float8[]) AS empty_argsort, gpu_argsort(NULL::int8[]) IS NULL AS null_argsort,
	   (SELECT count(*) FROM gpu_sort_rows('{}'::int2[])) AS empty_rows,
	   (SELECT count(*) FROM gpu_sort_rows(NULL::int2[])) AS null_rows;
SELECT gpu_sort('{NULL}'::int4[]) AS one_null, gpu_argsort('{NULL,NULL}'::float4[]) AS two_nulls,
	   gpu_sort('{7}'::int8[], true) AS one;

-- descending has no NULL meaning
SELECT gpu_sort('{1,2}'::int4[], NULL);
SELECT gpu_argsort('{1,2}'::int2[], NULL, true);
SELECT * FROM gpu_sort_rows('{1,2}'::float4[], NULL);
SELECT gpu_sort(NULL::int4[], NULL);
SELECT gpu_sort_agg(x, NULL) FROM (VALUES (1::int4), (2)) v(x);
-- the direction of gpu_sort_agg is one per aggregate
SELECT gpu_sort_agg(x, x > 1) FROM (VALUES (1::int4), (2)) v(x);

-- types gpusort does not pack sort with PostgreSQL's comparator, in every
-- function, a NULL array too
SELECT gpu_sort('{b,a}'::text[]);
SELECT gpu_sort('{1.5,0.5}'::numeric[]);
SELECT gpu_argsort('{t,f}'::bool[], true);
SELECT * FROM gpu_sort_rows('{1.5,0.5}'::numeric[]);
SELECT gpu_sort(NULL::interval[]);
SELECT gpu_sort_agg(x) FROM (VALUES ('a'::text)) v(x);
SELECT gpu_sort_agg(x, true) FROM (VALUES (1.5::numeric)) v(x);
-- a type without a default btree ordering, which ORDER BY cannot sort either,
-- is an error that says so, in every function, for a NULL array too;
-- untyped literals that fit several types stay ambiguous
SELECT gpu_sort('{"(1,2)"}'::point[]);
SELECT gpu_argsort(ARRAY['{}'::json]);
SELECT * FROM gpu_sort_rows(ARRAY['{}'::json]);
SELECT gpu_topk(ARRAY['(1,2)'::point], 1);
SELECT gpu_sort(NULL::point[]);
SELECT gpu_sort_agg(x) FROM (VALUES ('{}'::json)) v(x);
SELECT gpu_topk_agg(x, 1) FROM (VALUES ('(1,2)'::point)) v(x);
SELECT gpu_mode() WITHIN GROUP (ORDER BY x) FROM (VALUES ('{}'::json)) v(x);
SELECT gpu_percentile_disc_agg(x, 0.5) FROM (VALUES ('<(0,0),1>'::circle)) v(x);
SELECT gpu_sort('{2,1}');

-- the settings as defined (boot values, so this does not depend on PGOPTIONS)
SELECT name, boot_val, unit, min_val, max_val, enumvals, vartype, context
FROM pg_settings WHERE name LIKE 'gpusort.%' AND context <> 'postmaster' ORDER BY name;

-- their validation
SET gpusort.device = 'tpu';
SET gpusort.algorithm = 'heap';
SET gpusort.gpu_min_elements = -1;
SET gpusort.device_id = 1024;
SET gpusort.device_id = -2;
-- (PostgreSQL 18 writes the range of this one with its unit: the SQLSTATE alone)
\set VERBOSITY sqlstate
SET gpusort.max_device_memory = -1;
\set VERBOSITY default
SET gpusort.max_device_memory = '3GB';
SHOW gpusort.max_device_memory;
RESET gpusort.max_device_memory;
SET gpusort.no_such_setting = 1;
SET gpusort.device = 'CPU';
SHOW gpusort.device;
SET gpusort.algorithm = merge;
SHOW gpusort.algorithm;
RESET gpusort.algorithm;
RESET gpusort.device;

-- auto falls back to the CPU when the GPU cannot take the sort: a device that
-- does not exist, or a device memory limit the sort exceeds
SET gpusort.device = auto;
SET gpusort.gpu_min_elements = 0;
SET gpusort.device_id = 1023;
SELECT gpu_sort('{3,NULL,1,2}'::int4[]) AS no_such_device;
RESET gpusort.device_id;
SET gpusort.max_device_memory = 1;
SELECT gpu_sort(a) = (SELECT array_agg(x ORDER BY x) FROM unnest(a) x) AS over_memory_limit,
	   gpu_argsort(a, true) = (SELECT array_agg(i::int4 ORDER BY x DESC, i) FROM unnest(a) WITH ORDINALITY u(x, i)) AS argsort_over_limit
FROM (SELECT array_agg(((i::int8 * 7919) % 1000003)::int4) a FROM generate_series(1, 1000000) i) s;
RESET gpusort.max_device_memory;
RESET gpusort.gpu_min_elements;
RESET gpusort.device;

-- gpu errors where the GPU cannot take the sort; which error depends on the
-- machine (no CUDA, no driver, no such device, over the limit), so only its
-- class is shown
CREATE FUNCTION gpu_error_class(setting text, value text, n int) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('gpusort.device', 'gpu', true);
	PERFORM set_config(setting, value, true);
	PERFORM gpu_sort(array(SELECT i::int4 FROM generate_series(n, 1, -1) i));
	RETURN 'no error';
EXCEPTION
	WHEN feature_not_supported OR invalid_parameter_value OR program_limit_exceeded THEN
		RETURN 'error';
END $$;
SELECT gpu_error_class('gpusort.device_id', '1023', 10) AS no_such_device,
	   gpu_error_class('gpusort.max_device_memory', '1', 1000000) AS over_memory_limit;
SHOW gpusort.device_id;
DROP FUNCTION gpu_error_class(text, text, int);

-- a cancel (here a statement timeout) stops a sort with the usual error
CREATE TABLE big AS SELECT array_agg(((i::int8 * 7919) % 1000003)::int4) a FROM generate_series(1, 3000000) i;
SET statement_timeout = '5ms';
SELECT cardinality(gpu_sort(a || a)) FROM big;
RESET statement_timeout;
SELECT cardinality(gpu_sort(a)) FROM big;
DROP TABLE big;
