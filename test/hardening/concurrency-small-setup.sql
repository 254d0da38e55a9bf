-- test/hardening/concurrency-small-setup.sql: the checking function of
-- test/hardening/concurrency-small.sh.  Nothing is stored: each call makes
-- its own array.
--
-- conc_small_check(i, max_n, corrupt): case number i (from a sequence that
-- every pgbench client shares) picks
--   the size n:        1 .. max_n, scattered (1597 * i mod max_n), so clients
--                      running at once sort different sizes with the same
--                      type and algorithm;
--   the type:          int2, int4, int8, float4, float8, date, timestamp,
--                      timestamptz, changing every max_n cases;
--   gpusort.algorithm: auto, radix, merge, bitonic, quick, changing every
--                      8 * max_n cases;
--   the call:          gpu_sort ascending, gpu_sort descending, gpu_argsort;
--   the data:          random values (floats and dates with NaN and the
--                      infinities sprinkled in), every fifth case 20
--                      distinct values (ties).
-- So 40 * max_n consecutive cases cover every size, type and algorithm.  The
-- answer is compared with PostgreSQL's own sort of the same array (ORDER BY,
-- with the gpusort sort node off); the argsort must equal the stable order
-- exactly (ties in input order).  No -0 and one NaN bit pattern, so that
-- PostgreSQL's order and gpusort's are the same list.  It raises on a
-- difference; corrupt = true rotates the expected answer by one place, so
-- that the check can be seen to fail.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
DROP SEQUENCE IF EXISTS conc_small_seq;
CREATE SEQUENCE conc_small_seq MINVALUE 0 START 0;

CREATE OR REPLACE FUNCTION conc_small_check(i bigint, max_n int, corrupt bool DEFAULT false) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	types text[] := ARRAY['int2', 'int4', 'int8', 'float4', 'float8', 'date', 'timestamp', 'timestamptz'];
	algorithms text[] := ARRAY['auto', 'radix', 'merge', 'bitonic', 'quick'];
	calls text[] := ARRAY['gpu_sort asc', 'gpu_sort desc', 'gpu_argsort'];
	n int := (i % max_n * 1597 % max_n) + 1;
	typ text := types[1 + (i / max_n) % 8];
	alg text := algorithms[1 + (i / max_n / 8) % 5];
	variant int := (i % 3)::int;
	ties bool := i % 5 = 0;
	gen text;
	expected text;
	got text;
	q text;
	same bool;
BEGIN
	gen := CASE WHEN ties THEN
		CASE typ
			WHEN 'date' THEN 'date ''2000-01-01'' + floor(random() * 20)::int'
			WHEN 'timestamp' THEN 'timestamp ''2000-01-01'' + floor(random() * 20) * interval ''1 hour'''
			WHEN 'timestamptz' THEN 'timestamptz ''2000-01-01 00:00+00'' + floor(random() * 20) * interval ''1 hour'''
			ELSE format('(floor(random() * 20) - 10)::%s', typ)
		END
	ELSE
		CASE typ
			WHEN 'int2' THEN '(floor(random() * 65536) - 32768)::int2'
			WHEN 'int4' THEN '(floor(random() * 4294967296) - 2147483648)::int4'
			WHEN 'int8' THEN '((floor(random() * 4294967296) - 2147483648)::int8 * 4294967296 + floor(random() * 4294967296)::int8)'
			WHEN 'float4' THEN 'CASE WHEN random() < 0.02 THEN (ARRAY[''NaN'', ''Infinity'', ''-Infinity'', ''0''])[1 + floor(random() * 4)::int]::float4 ELSE ((random() - 0.5) * 2e6)::float4 END'
			WHEN 'float8' THEN 'CASE WHEN random() < 0.02 THEN (ARRAY[''NaN'', ''Infinity'', ''-Infinity'', ''0''])[1 + floor(random() * 4)::int]::float8 ELSE (random() - 0.5) * 1e12 END'
			WHEN 'date' THEN 'CASE WHEN random() < 0.01 THEN (ARRAY[''infinity'', ''-infinity''])[1 + floor(random() * 2)::int]::date ELSE date ''2000-01-01'' + (floor(random() * 2000000) - 1000000)::int END'
			WHEN 'timestamp' THEN 'CASE WHEN random() < 0.01 THEN (ARRAY[''infinity'', ''-infinity''])[1 + floor(random() * 2)::int]::timestamp ELSE timestamp ''2000-01-01'' + (random() - 0.5) * interval ''200000 days'' END'
			ELSE 'CASE WHEN random() < 0.01 THEN (ARRAY[''infinity'', ''-infinity''])[1 + floor(random() * 2)::int]::timestamptz ELSE timestamptz ''2000-01-01 00:00+00'' + (random() - 0.5) * interval ''200000 days'' END'
		END
	END;
	expected := CASE variant
		WHEN 0 THEN 'array(SELECT x FROM unnest(a) x ORDER BY x)::text'
		WHEN 1 THEN 'array(SELECT x FROM unnest(a) x ORDER BY x DESC)::text'
		ELSE 'array(SELECT o::int4 FROM unnest(a) WITH ORDINALITY u(x, o) ORDER BY x, o)::text'
	END;
	IF corrupt THEN
		expected := format('(SELECT (e[2:] || e[1:1])::text FROM (SELECT %s::%s[] AS e) r)', expected,
						   CASE variant WHEN 2 THEN 'int4' ELSE typ END);
	END IF;
	got := CASE variant
		WHEN 0 THEN 'gpu_sort(a)::text'
		WHEN 1 THEN 'gpu_sort(a, true)::text'
		ELSE 'gpu_argsort(a)::text'
	END;

	-- the reference is PostgreSQL's tuplesort, not gpusort's sort node
	PERFORM set_config('gpusort.enable_sort', 'off', true);
	PERFORM set_config('gpusort.algorithm', alg, true);
	q := format('SELECT %s = %s FROM (SELECT array(SELECT %s FROM generate_series(1, $1)) AS a) d',
				got, expected, gen);
	EXECUTE q INTO same USING n;
	IF same IS NOT TRUE THEN
		RAISE EXCEPTION 'concurrency-small: wrong answer for case % (% x %, algorithm %, %)',
			i, typ, n, alg, calls[variant + 1];
	END IF;
	RETURN 1;
END
$$;

SELECT 'ready';
