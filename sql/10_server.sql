--
-- 10_server: the GPU server (server mode, shared_preload_libraries = 'gpusort')
-- as backends see it.  The same statements run in both modes: this file's
-- expected output is for server mode, 10_server_1.out for per-backend mode.
-- In server mode the results do not depend on whether the server found a GPU:
-- each check compares what happened with what gpusort_info() says.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;

SELECT mode FROM gpusort_info();

-- one row per GPU (one row without a device when no GPU is usable); none per backend
SELECT count(*) > 0 AS has_rows,
       bool_and(state IN ('ready', 'no gpu', 'starting')) AS known_state,
       bool_and(transfer_area_mb = (SELECT setting::float8 FROM pg_settings WHERE name = 'gpusort.transfer_area')) AS area_as_set,
       bool_and((state = 'ready') = (SELECT gpu_usable FROM gpusort_info())) AS state_matches_info,
       bool_and((state = 'no gpu') = (reason IS NOT NULL)) AS reason_when_no_gpu
FROM gpusort_server();

-- the GPU server's own row and its GPU process (server mode); none per backend
SELECT count(*) = (SELECT count(*) FROM gpusort_info() WHERE mode = 'server') AS one_row_in_server_mode,
       coalesce(bool_and(state = (SELECT state FROM gpusort_server() LIMIT 1)), true) AS same_state,
       coalesce(bool_and((state = 'ready') = (gpu_pid IS NOT NULL)), true) AS gpu_pid_when_ready,
       coalesce(bool_and(restarts = 0 AND last_exit IS NULL), true) AS no_exit_yet
FROM gpusort_gpu_process();

-- the server's sizes are fixed at server start
SELECT name, context FROM pg_settings
WHERE name IN ('gpusort.transfer_area', 'gpusort.server_streams', 'gpusort.server_memory') ORDER BY name;
SET gpusort.server_memory = 100;
SET gpusort.transfer_area = 1024;

CREATE TEMP TABLE s (i int, x int4, f float8);
INSERT INTO s SELECT i, (i::int8 * 7919) % 100003 - 50000, ((i::int8 * 104729) % 99991) / 7.0 FROM generate_series(1, 120000) i;
UPDATE s SET x = NULL, f = NULL WHERE i % 1000 = 0;
UPDATE s SET f = 'NaN' WHERE i % 997 = 0;

-- under auto: the server's GPU when there is one, else the CPU; ORDER BY's answer either way
SET gpusort.gpu_min_elements = 1000;
SELECT gpu_sort(array_agg(x)) = array_agg(x ORDER BY x) AS int4_asc,
       gpu_sort(array_agg(f), true) = array_agg(f ORDER BY f DESC) AS float8_desc,
       gpu_argsort(array_agg(x ORDER BY i)) = (SELECT array_agg(i ORDER BY x, i) FROM s) AS argsort
FROM s;

-- larger than one chunk of the transfer area (8 MB), and than the ring (32 MB)
SELECT gpu_sort(a) = (SELECT array_agg(v ORDER BY v) FROM unnest(a) v) AS three_chunks
FROM (SELECT array_agg(((i::int8 * 2654435761) % 4294967291 - 2147483645)::int4) AS a FROM generate_series(1, 3000000) i) t;
SELECT gpu_sort(a, true) = (SELECT array_agg(v ORDER BY v DESC) FROM unnest(a) v) AS six_chunks
FROM (SELECT array_agg((i::int8 * 48271) % 2147483647) AS a FROM generate_series(1, 6000000) i) t;
SELECT queue_ms >= 0 AS queue_ms_known FROM gpusort_last_run();

-- under gpu: the GPU's answer where one is usable, else the error that says why
SET gpusort.device = gpu;
DO $$
DECLARE
	usable bool := (SELECT gpu_usable FROM gpusort_info());
BEGIN
	BEGIN
		IF (SELECT gpu_sort(array_agg(x)) <> array_agg(x ORDER BY x) FROM s) THEN
			RAISE EXCEPTION 'wrong answer';
		END IF;
		IF NOT usable THEN
			RAISE EXCEPTION 'sorted on the GPU though none is usable';
		END IF;
		IF (SELECT device FROM gpusort_last_run()) NOT LIKE 'gpu:%' THEN
			RAISE EXCEPTION 'not sorted on a GPU';
		END IF;
	EXCEPTION WHEN feature_not_supported THEN
		IF usable THEN
			RAISE;
		END IF;
	END;
	RAISE NOTICE 'device = gpu: as gpusort_info() says';
END
$$;

-- a session may lower its own device-memory limit: over it, gpu errors and auto uses the CPU
SET gpusort.max_device_memory = 1;
DO $$
BEGIN
	PERFORM gpu_sort(array_agg(i)) FROM generate_series(1, 1000000) i;
	RAISE EXCEPTION 'no error';
EXCEPTION WHEN program_limit_exceeded OR feature_not_supported THEN
	RAISE NOTICE 'over the session''s limit: error as expected';
END
$$;
SET gpusort.device = auto;
SELECT gpu_sort(array_agg(x)) = array_agg(x ORDER BY x) AS cpu_under_auto FROM generate_series(1000000, 1, -1) x;
SELECT device FROM gpusort_last_run();
RESET gpusort.max_device_memory;
RESET gpusort.gpu_min_elements;
RESET gpusort.device;
