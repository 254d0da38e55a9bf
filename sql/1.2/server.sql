-- The GPU server's own row: its state, the GPU process it supervises, how
-- many times it started one again after one died, and how the last one ended.

CREATE FUNCTION gpusort_gpu_process(
	OUT state text, OUT server_pid int, OUT gpu_pid int, OUT gpu_started timestamptz,
	OUT restarts bigint, OUT last_exit text, OUT last_exit_at timestamptz, OUT reason text)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'gpusort_gpu_process' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 1;
COMMENT ON FUNCTION gpusort_gpu_process() IS 'the GPU server and the GPU process it supervises: state, PIDs, restarts and how the last GPU process ended (no row without shared_preload_libraries = ''gpusort'')';
