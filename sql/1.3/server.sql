-- The GPU server's own row gains the jobs that ended neither done nor
-- failed: cancelled for gpusort.server_job_timeout, and withdrawn by their
-- backends.  Its columns change, so the function is made again, as
-- pg_stat_statements' updates do with theirs (a view over it must be dropped
-- before the update; the module fills the columns the declaration has, so a
-- database still at 1.2 keeps its eight).
DROP FUNCTION gpusort_gpu_process();
CREATE FUNCTION gpusort_gpu_process(
	OUT state text, OUT server_pid int, OUT gpu_pid int, OUT gpu_started timestamptz,
	OUT restarts bigint, OUT last_exit text, OUT last_exit_at timestamptz, OUT reason text,
	OUT jobs_timed_out bigint, OUT jobs_withdrawn bigint)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'gpusort_gpu_process' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 1;
COMMENT ON FUNCTION gpusort_gpu_process() IS 'the GPU server and the GPU process it supervises: state, PIDs, restarts and how the last GPU process ended, jobs cancelled for the job timeout and jobs withdrawn by their backends (no row without shared_preload_libraries = ''gpusort'')';
