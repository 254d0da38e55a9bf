-- test/hardening/concurrency-setup.sql: the data and the checking function of
-- test/hardening/concurrency.sh.  psql variables: max_n (largest array size).
--
-- For each type, arrays of 10^2 .. max_n elements (random values with 2% NULLs
-- and, for floats, NaN, +-Infinity and -0 sprinkled in; plus low-cardinality
-- arrays full of ties), stored with their expected ascending and descending
-- orders computed by PostgreSQL's ORDER BY.  Each pgbench transaction picks one
-- case and one of six calls and raises when the answer differs.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
SELECT setseed(0.6);
SET conc.max_n = :'max_n';

CREATE TABLE conc_cases (id int PRIMARY KEY, typ text NOT NULL, n int NOT NULL, shape text NOT NULL);

DO $$
DECLARE
	typ text;
	n int;
	shape text;
	gen text;
	k int := 0;
	sizes int[] := ARRAY[100, 1000, 10000, 100000, 1000000];
	-- values with 2% NULLs; floats get specials (NaN, +-Infinity, -0, 0) 1% of the time
	rnd jsonb := jsonb_build_object(
		'int2', '(floor(random() * 65536) - 32768)::int2',
		'int4', '(floor(random() * 4294967296) - 2147483648)::int4',
		'int8', '((floor(random() * 4294967296) - 2147483648)::int8 * 4294967296 + floor(random() * 4294967296)::int8)',
		'float4', 'CASE WHEN random() < 0.01 THEN (ARRAY[''NaN'', ''Infinity'', ''-Infinity'', ''-0'', ''0''])[1 + floor(random() * 5)::int]::float4 ELSE ((random() - 0.5) * 2e6)::float4 END',
		'float8', 'CASE WHEN random() < 0.01 THEN (ARRAY[''NaN'', ''Infinity'', ''-Infinity'', ''-0'', ''0''])[1 + floor(random() * 5)::int]::float8 ELSE (random() - 0.5) * 1e12 END');
	-- 50 distinct values (floats: -0 and +0 both), many ties
	ties jsonb := jsonb_build_object(
		'int2', '(floor(random() * 50) - 25)::int2',
		'int4', '(floor(random() * 50) - 25)::int4',
		'int8', '(floor(random() * 50) - 25)::int8 * 1000000000000',
		'float4', '((floor(random() * 50) - 25) * CASE WHEN random() < 0.5 THEN -1 ELSE 1 END)::float4',
		'float8', '(floor(random() * 50) - 25) * CASE WHEN random() < 0.5 THEN -1 ELSE 1 END');
BEGIN
	FOREACH typ IN ARRAY ARRAY['int2', 'int4', 'int8', 'float4', 'float8']
	LOOP
		EXECUTE format('CREATE TABLE %I (id int PRIMARY KEY, a %s[], asc_expected %s[], desc_expected %s[])',
					   'conc_' || typ, typ, typ, typ);
		FOREACH n IN ARRAY sizes
		LOOP
			CONTINUE WHEN n > current_setting('conc.max_n')::int;
			FOREACH shape IN ARRAY ARRAY['random', 'ties']
			LOOP
				-- ties only at 10^3 and 10^5: enough to exercise equal keys
				CONTINUE WHEN shape = 'ties' AND n NOT IN (1000, 100000);
				k := k + 1;
				IF shape = 'random' THEN
					gen := format('CASE WHEN random() < 0.02 THEN NULL ELSE %s END', rnd ->> typ);
				ELSE
					gen := ties ->> typ;
				END IF;
				EXECUTE format('INSERT INTO %I (id, a) SELECT $1, array(SELECT %s FROM generate_series(1, $2))',
							   'conc_' || typ, gen) USING k, n;
				EXECUTE format('UPDATE %I SET asc_expected = array(SELECT x FROM unnest(a) x ORDER BY x), '
							   'desc_expected = array(SELECT x FROM unnest(a) x ORDER BY x DESC) WHERE id = $1',
							   'conc_' || typ) USING k;
				INSERT INTO conc_cases VALUES (k, typ, n, shape);
			END LOOP;
		END LOOP;
	END LOOP;
END
$$;

/*
 * conc_check(case, variant, corrupt): runs one call on one stored case and
 * raises unless the answer equals what ORDER BY gave.  corrupt = true rotates
 * the expected answer by one place, so that a check can be seen to fail.
 *   0 gpu_sort asc, 1 gpu_sort desc, 2 gpu_argsort (identity a[p[i]] = sorted[i]
 *   and p a permutation of 1..n), 3 gpu_sort_rows (ranked by ordinality),
 *   4 gpu_sort_agg asc, 5 gpu_sort_agg desc
 */
CREATE FUNCTION conc_check(k int, variant int, corrupt bool DEFAULT false) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	c conc_cases;
	q text;
	same bool;
BEGIN
	SELECT * INTO STRICT c FROM conc_cases WHERE id = k;
	q := CASE variant
		WHEN 0 THEN 'SELECT gpu_sort(a) = rot(asc_expected) FROM %1$I WHERE id = $1'
		WHEN 1 THEN 'SELECT gpu_sort(a, true) = rot(desc_expected) FROM %1$I WHERE id = $1'
		WHEN 2 THEN 'SELECT s.got = rot(t.asc_expected) AND gpu_sort(s.p) = array(SELECT generate_series(1, cardinality(t.a)))
					 FROM %1$I t, LATERAL (
						SELECT array_agg(e.x ORDER BY q.o) AS got, array_agg(q.p) AS p
						FROM unnest(gpu_argsort(t.a)) WITH ORDINALITY q(p, o)
						LEFT JOIN unnest(t.a) WITH ORDINALITY e(x, i) ON e.i = q.p) s
					 WHERE t.id = $1'
		WHEN 3 THEN 'SELECT array(SELECT x FROM gpu_sort_rows(a) WITH ORDINALITY r(x, o) ORDER BY o) = rot(asc_expected)
					 FROM %1$I WHERE id = $1'
		WHEN 4 THEN 'SELECT (SELECT gpu_sort_agg(x) FROM unnest(a) x) = rot(asc_expected) FROM %1$I WHERE id = $1'
		WHEN 5 THEN 'SELECT (SELECT gpu_sort_agg(x, true) FROM unnest(a) x) = rot(desc_expected) FROM %1$I WHERE id = $1'
		END;
	IF q IS NULL THEN
		RAISE EXCEPTION 'conc_check: no variant %', variant;
	END IF;
	IF corrupt THEN
		q := replace(q, 'rot(', 'conc_rotate(');
	ELSE
		q := replace(q, 'rot(', '(');
	END IF;
	EXECUTE format(q, 'conc_' || c.typ) INTO same USING k;
	IF same IS NOT TRUE THEN
		RAISE EXCEPTION 'concurrency: wrong answer for case % (% x %, %), variant %', k, c.typ, c.n, c.shape, variant;
	END IF;
	RETURN 1;
END
$$;

-- The array rotated left by one (a wrong answer whenever two elements differ).
CREATE FUNCTION conc_rotate(a anyarray) RETURNS anyarray LANGUAGE sql IMMUTABLE
AS 'SELECT a[2:] || a[1:1]';

ANALYZE;
SELECT count(*) AS cases, sum(n) AS elements FROM conc_cases;
