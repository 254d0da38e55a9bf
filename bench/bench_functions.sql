-- bench/bench_functions.sql: the timing and plan functions of the SQL
-- benchmarks (sql_keys_bench.sh, sql_run_condition_bench.sh,
-- sql_leader_sort_bench.sh), included by psql (\i) after CREATE EXTENSION.

-- q's time in ms and its answer (q returns one value)
CREATE FUNCTION ms(q text, OUT ms float8, OUT answer text) LANGUAGE plpgsql AS $$
DECLARE
	t timestamptz := clock_timestamp();
BEGIN
	EXECUTE q INTO answer;
	ms := extract(epoch FROM clock_timestamp() - t) * 1000;
END $$;

-- the same where q returns one row of any columns: the row as text
CREATE FUNCTION ms_row(q text, OUT ms float8, OUT answer text) LANGUAGE plpgsql AS $$
DECLARE
	t timestamptz := clock_timestamp();
BEGIN
	EXECUTE 'SELECT a::text FROM (' || q || ') a' INTO answer;
	ms := extract(epoch FROM clock_timestamp() - t) * 1000;
END $$;

-- q's plan under EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF), as one text
CREATE FUNCTION plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	l text;
	p text := '';
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ' || q LOOP
		p := p || l || E'\n';
	END LOOP;
	RETURN p;
END $$;

-- q's plan under EXPLAIN (ANALYZE, COSTS OFF), with the nodes' times, a line a row
CREATE FUNCTION plan_timed(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF) ' || q;
END $$;
