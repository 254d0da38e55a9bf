-- The installed package's check: every install and update script it ships
-- runs, the module loads (preloaded or not), and its sorts give PostgreSQL's
-- own ORDER BY results on the same data.  Prints TAP lines (psql -XqtA);
-- debian/tests/smoke and scripts/package-check.sh run it in a throwaway
-- cluster.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;

SELECT '1..11';

-- the scripts of every release, through the updates to the default version
DROP EXTENSION IF EXISTS gpusort;
CREATE EXTENSION gpusort VERSION '1.0';
SELECT CASE WHEN extversion = '1.0' THEN 'ok' ELSE 'not ok' END
	|| ' 1 - CREATE EXTENSION gpusort VERSION ''1.0'''
FROM pg_extension WHERE extname = 'gpusort';
ALTER EXTENSION gpusort UPDATE;
SELECT CASE WHEN e.extversion = a.default_version THEN 'ok' ELSE 'not ok' END
	|| ' 2 - ALTER EXTENSION gpusort UPDATE from 1.0 reaches ' || a.default_version
FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname
WHERE e.extname = 'gpusort';
DROP EXTENSION gpusort;
CREATE EXTENSION gpusort;
SELECT CASE WHEN e.extversion = a.default_version THEN 'ok' ELSE 'not ok' END
	|| ' 3 - CREATE EXTENSION gpusort installs ' || a.default_version
FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname
WHERE e.extname = 'gpusort';

SELECT '# module: ' || coalesce((regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/maps'),
										  '\S*gpusort\.so'))[1], 'not loaded');
SELECT '# built with CUDA: ' || built_with_cuda || ', mode: ' || mode
	|| ', GPU usable: ' || gpu_usable || coalesce(' (' || reason || ')', '')
FROM gpusort_info();
SELECT CASE WHEN mode = CASE WHEN current_setting('shared_preload_libraries') ~ 'gpusort'
						THEN 'server' ELSE 'backend' END
	THEN 'ok' ELSE 'not ok' END
	|| ' 4 - gpusort_info() says ' || mode || ' mode'
FROM gpusort_info();

-- 100,000 rows: random int4 and float8 with NULLs, infinities and NaN
SELECT '# setseed(0.25)' FROM (SELECT setseed(0.25)) s;
CREATE TEMP TABLE smoke AS
SELECT g AS id,
	(random() * 4e9 - 2e9)::int4 AS i,
	CASE WHEN g % 97 = 0 THEN NULL
		 WHEN g % 101 = 0 THEN 'NaN'::float8
		 WHEN g % 103 = 0 THEN '-Infinity'::float8
		 WHEN g % 107 = 0 THEN '-0'::float8
		 ELSE (random() - 0.5) * 1e6 END AS f
FROM generate_series(1, 100000) g;
ANALYZE smoke;

SELECT CASE WHEN (SELECT gpu_sort(array_agg(i)) FROM smoke)
			   = (SELECT array_agg(i ORDER BY i) FROM smoke)
	THEN 'ok' ELSE 'not ok' END || ' 5 - gpu_sort(array_agg(x)) of int4 equals ORDER BY';
SELECT CASE WHEN (SELECT gpu_sort(array_agg(f), true) FROM smoke)
			   = (SELECT array_agg(f ORDER BY f DESC) FROM smoke)
	THEN 'ok' ELSE 'not ok' END || ' 6 - gpu_sort(array_agg(x), true) of float8 equals ORDER BY DESC';
SELECT CASE WHEN (SELECT array_agg(i ORDER BY k) FROM smoke
				  JOIN unnest((SELECT gpu_argsort(array_agg(i ORDER BY id)) FROM smoke))
					   WITH ORDINALITY AS p(pos, k) ON smoke.id = p.pos)
			   = (SELECT array_agg(i ORDER BY i, id) FROM smoke)
	THEN 'ok' ELSE 'not ok' END || ' 7 - gpu_argsort of int4 is the stable ORDER BY permutation';
SELECT CASE WHEN (SELECT gpu_sort_agg(f) FROM smoke)
			   = (SELECT array_agg(f ORDER BY f) FROM smoke)
	THEN 'ok' ELSE 'not ok' END || ' 8 - gpu_sort_agg(x) of float8 equals array_agg(x ORDER BY x)';
SELECT CASE WHEN (SELECT gpu_percentile_disc(0.3) WITHIN GROUP (ORDER BY i DESC) FROM smoke)
			   = (SELECT percentile_disc(0.3) WITHIN GROUP (ORDER BY i DESC) FROM smoke)
	THEN 'ok' ELSE 'not ok' END || ' 9 - gpu_percentile_disc WITHIN GROUP (ORDER BY x DESC) equals percentile_disc';

-- ORDER BY through the planner: the sort node against PostgreSQL's Sort
SET work_mem = '64MB';
CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
	plan text := '';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	RETURN plan;
END $$;
SET gpusort.enable_sort = on;
SELECT CASE WHEN pg_temp.plan_of('SELECT f FROM smoke ORDER BY f NULLS FIRST, i DESC')
				 LIKE '%Custom Scan (gpusort)%'
	THEN 'ok' ELSE 'not ok' END || ' 10 - the planner sorts ORDER BY with gpusort''s node';
CREATE TEMP TABLE by_node AS SELECT array_agg(f) AS a FROM (SELECT f FROM smoke ORDER BY f NULLS FIRST, i DESC) s;
SET gpusort.enable_sort = off;
CREATE TEMP TABLE by_sort AS SELECT array_agg(f) AS a FROM (SELECT f FROM smoke ORDER BY f NULLS FIRST, i DESC) s;
RESET gpusort.enable_sort;
SELECT CASE WHEN (SELECT a FROM by_node) = (SELECT a FROM by_sort)
	THEN 'ok' ELSE 'not ok' END || ' 11 - ORDER BY with gpusort.enable_sort on equals off';

DROP EXTENSION gpusort;
