-- The GPU server (server mode, with shared_preload_libraries = 'gpusort'),
-- and the columns 1.1 adds to gpusort_info() and gpusort_last_run().

DROP FUNCTION gpusort_info();
CREATE FUNCTION gpusort_info(
	OUT built_with_cuda bool, OUT cuda_runtime_version text, OUT driver_version text,
	OUT device_count int, OUT gpu_usable bool, OUT reason text,
	OUT mode text, OUT mode_reason text)
RETURNS record AS 'MODULE_PATHNAME', 'gpusort_info' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION gpusort_info() IS 'whether gpusort was built with CUDA, the CUDA versions, the GPUs it sees, why none is usable when none is, and whether the GPU server or each backend sorts';

DROP FUNCTION gpusort_last_run();
CREATE FUNCTION gpusort_last_run(
	OUT elements bigint, OUT type text, OUT device text, OUT algorithm text,
	OUT copy_in_ms float8, OUT sort_ms float8, OUT copy_out_ms float8, OUT total_ms float8,
	OUT queue_ms float8, OUT device_memory_mb float8)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'gpusort_last_run' LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1;
COMMENT ON FUNCTION gpusort_last_run() IS 'this backend''s last sort: elements, type, where it ran, algorithm and milliseconds (queue_ms: waiting for the GPU server), device memory used; no row before the first';

CREATE FUNCTION gpusort_server(
	OUT state text, OUT pid int, OUT device int, OUT name text, OUT streams int,
	OUT jobs_running int, OUT jobs_queued int, OUT jobs_done bigint, OUT jobs_failed bigint,
	OUT memory_reserved_mb float8, OUT memory_budget_mb float8,
	OUT transfer_area_mb float8, OUT transfer_used_mb float8, OUT reason text)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'gpusort_server_status' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 8;
COMMENT ON FUNCTION gpusort_server() IS 'the GPU server: one row per GPU with its jobs and memory (no rows without shared_preload_libraries = ''gpusort'')';
