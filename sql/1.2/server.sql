-- gpusort_server() gains the GPU process's columns: its PID, how many times
-- the server started it again after it died, and how the last one ended.
-- The new columns come last, so that the 1.1 declaration still reads the
-- module's rows until the update; a result that grows needs DROP and CREATE,
-- as contrib's pg_stat_statements does for its own.

DROP FUNCTION gpusort_server();
CREATE FUNCTION gpusort_server(
	OUT state text, OUT pid int, OUT device int, OUT name text, OUT streams int,
	OUT jobs_running int, OUT jobs_queued int, OUT jobs_done bigint, OUT jobs_failed bigint,
	OUT memory_reserved_mb float8, OUT memory_budget_mb float8,
	OUT transfer_area_mb float8, OUT transfer_used_mb float8, OUT reason text,
	OUT gpu_pid int, OUT restarts bigint, OUT last_exit text)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'gpusort_server_status' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 8;
COMMENT ON FUNCTION gpusort_server() IS 'the GPU server: one row per GPU with its jobs and memory, and the GPU process that runs them (no rows without shared_preload_libraries = ''gpusort'')';
