-- bench/median.sql: the timing helper of the SQL benchmarks (\i it in psql).
-- pg_temp.median_ms(q, runs, in_function): median milliseconds of runs runs of
-- query q after one warm-up; with in_function, also the median of
-- gpusort_last_run().total_ms over the same runs (the time inside gpu_sort).
CREATE FUNCTION pg_temp.median_ms(q text, runs int, in_function bool DEFAULT false,
								  OUT sql_ms float8, OUT fn_ms float8) LANGUAGE plpgsql AS $$
DECLARE
	t timestamptz;
	sql_times float8[] := '{}';
	fn_times float8[] := '{}';
BEGIN
	EXECUTE q;
	FOR i IN 1 .. runs LOOP
		t := clock_timestamp();
		EXECUTE q;
		sql_times := sql_times || extract(epoch FROM clock_timestamp() - t)::float8 * 1000;
		IF in_function THEN
			fn_times := fn_times || (SELECT total_ms FROM gpusort_last_run());
		END IF;
	END LOOP;
	sql_ms := (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(sql_times) x);
	fn_ms := (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(fn_times) x);
END $$;
