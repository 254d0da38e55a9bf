-- gpusort_info, gpusort_devices and gpusort_last_run.  What they report
-- depends on the machine, so this checks how they agree with each other.

-- a new session has run no sort yet: no row
\c
SELECT count(*) AS rows_before_any_sort FROM gpusort_last_run();

SELECT gpu_usable = (reason IS NULL) AS reason_iff_unusable,
	   device_count >= 0 AS count_ok,
	   NOT gpu_usable OR device_count > 0 AS usable_has_device,
	   built_with_cuda OR (device_count = 0 AND NOT gpu_usable) AS no_cuda_no_gpu,
	   built_with_cuda OR cuda_runtime_version IS NULL AS no_cuda_no_version
FROM gpusort_info();

SELECT (SELECT count(*) FROM gpusort_devices()) = device_count AS one_row_per_device
FROM gpusort_info();
SELECT coalesce(bool_and(id >= 0 AND name <> '' AND compute_capability ~ '^\d+\.\d+$'
						 AND memory_total_mb > 0 AND memory_free_mb BETWEEN 0 AND memory_total_mb
						 AND multiprocessors > 0), true) AS devices_sane,
	   count(DISTINCT id) = count(*) AS ids_distinct
FROM gpusort_devices();

-- the last sort (elements: the non-NULL ones), on the CPU here (gpusort.device = cpu) so that it prints the same everywhere
SET gpusort.device = cpu;
SELECT cardinality(gpu_sort(array(SELECT i::int4 FROM generate_series(1000, 1, -1) i) || NULL::int4));
SELECT elements, type, device, algorithm,
	   copy_in_ms >= 0 AND sort_ms >= 0 AND copy_out_ms >= 0 AS times_set,
	   total_ms >= sort_ms AS total_covers_sort
FROM gpusort_last_run();
SELECT cardinality(gpu_argsort('{1.5,0.5,NULL}'::float8[]));
SELECT elements, type, device, algorithm FROM gpusort_last_run();
SELECT count(*) FROM gpu_sort_rows('{3,2,1}'::int2[], true);
SELECT elements, type, device, algorithm FROM gpusort_last_run();
SELECT cardinality(gpu_sort_agg(x)) FROM (VALUES (2::float4), (1), (NULL)) v(x);
SELECT elements, type, device, algorithm FROM gpusort_last_run();
-- no element to sort (empty, only NULLs): nothing recorded
SELECT cardinality(gpu_sort('{}'::int8[])), cardinality(gpu_sort('{NULL}'::int8[]));
SELECT elements, type, device, algorithm FROM gpusort_last_run();
RESET gpusort.device;
