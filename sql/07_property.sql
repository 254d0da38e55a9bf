-- Property tests: random arrays of every type, size, NULL fraction,
-- distribution, float special and lower bound, each checked against ORDER BY:
--   gpu_sort       = ORDER BY x [DESC] NULLS FIRST/LAST, with -0 before +0
--                    (ORDER BY counts them equal: their text breaks the tie)
--   gpu_argsort    a permutation p of a's subscripts with a[p[i]] bit-equal
--                  to gpu_sort(a)[i], and equal neighbours in input order
--   gpu_sort_rows  the rows of gpu_sort(a), WITH ORDINALITY in that order
--   gpu_sort_agg   array_agg(x ORDER BY x [DESC]), one- and two-argument forms
--
-- Every case has a seed of its own; a failing case is listed with it, and
-- SELECT prop_case(<seed>) runs it again.  The base seed is printed; it is
-- 1 unless gpusort_test.seed sets another, which tries new cases, e.g.
--   PGOPTIONS='-c gpusort_test.seed=12345' make installcheck REGRESS=07_property
-- (whose output then differs from the expected one in the seed line alone, as
-- long as no case fails).  Nothing printed depends on the machine or
-- gpusort.device.  Under gpusort.device = gpu every case runs on the
-- GPU; the sizes reach 600,000 elements so that every GPU algorithm that
-- gpusort.algorithm = auto picks (bitonic, merge, radix) gets cases.

-- The bits of a value, so that -0, +0 and NaNs of several bit patterns are told
-- apart (float4 widens to float8 exactly, NaN payloads included).
CREATE FUNCTION prop_bits(int2) RETURNS bytea LANGUAGE sql IMMUTABLE AS 'SELECT int2send($1)';
CREATE FUNCTION prop_bits(int4) RETURNS bytea LANGUAGE sql IMMUTABLE AS 'SELECT int4send($1)';
CREATE FUNCTION prop_bits(int8) RETURNS bytea LANGUAGE sql IMMUTABLE AS 'SELECT int8send($1)';
CREATE FUNCTION prop_bits(float4) RETURNS bytea LANGUAGE sql IMMUTABLE AS 'SELECT float8send($1::float8)';
CREATE FUNCTION prop_bits(float8) RETURNS bytea LANGUAGE sql IMMUTABLE AS 'SELECT float8send($1)';
CREATE FUNCTION prop_bits(date) RETURNS bytea LANGUAGE sql IMMUTABLE AS 'SELECT date_send($1)';
CREATE FUNCTION prop_bits(timestamp) RETURNS bytea LANGUAGE sql IMMUTABLE AS 'SELECT timestamp_send($1)';
CREATE FUNCTION prop_bits(timestamptz) RETURNS bytea LANGUAGE sql IMMUTABLE AS 'SELECT timestamptz_send($1)';

-- Checks every function on one input.  shape: 0 as generated, 1 sorted
-- ascending, 2 descending, 3 sorted runs of 16 (presorted inputs are the
-- classic worst cases of sorts); lb: the lower bound to give the input.
-- Returns 'ok' or what failed.
CREATE FUNCTION prop_check(a anyarray, shape int, lb int, d bool, nf bool)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	nfe bool := coalesce(nf, d);	-- where the NULLs go: ORDER BY's default
	n int;
	lo int;
	r a%TYPE;
	s a%TYPE;
	p int4[];
	ref text[];
	bad text := '';
	c1 bigint;
	c2 bigint;
	c3 bigint;
	c4 bigint;
BEGIN
	IF shape = 1 THEN
		a := array(SELECT x FROM unnest(a) x ORDER BY x);
	ELSIF shape = 2 THEN
		a := array(SELECT x FROM unnest(a) x ORDER BY x DESC);
	ELSIF shape = 3 THEN
		a := array(SELECT x FROM unnest(a) WITH ORDINALITY u(x, o) ORDER BY (o - 1) / 16, x);
	END IF;
	n := cardinality(a);
	IF lb <> 1 AND n > 0 THEN
		r[lb:lb + (n - 1)] := a;		-- a slice assigned to a NULL array sets its bounds
		a := r;
	END IF;
	lo := coalesce(array_lower(a, 1), 1);

	-- the reference: PostgreSQL's ORDER BY, ties of -0/+0 broken by their text
	-- (the output column is named t so that ORDER BY x means the element)
	IF NOT d AND NOT nfe THEN
		ref := array(SELECT x::text AS t FROM unnest(a) x ORDER BY x ASC NULLS LAST, x::text COLLATE "C" ASC);
	ELSIF NOT d THEN
		ref := array(SELECT x::text AS t FROM unnest(a) x ORDER BY x ASC NULLS FIRST, x::text COLLATE "C" ASC);
	ELSIF NOT nfe THEN
		ref := array(SELECT x::text AS t FROM unnest(a) x ORDER BY x DESC NULLS LAST, x::text COLLATE "C" DESC);
	ELSE
		ref := array(SELECT x::text AS t FROM unnest(a) x ORDER BY x DESC NULLS FIRST, x::text COLLATE "C" DESC);
	END IF;

	s := gpu_sort(a, d, nf);
	IF s::text[] IS DISTINCT FROM ref OR coalesce(array_lower(s, 1), 1) <> 1 OR array_ndims(s) > 1 THEN
		bad := bad || ' gpu_sort';
	END IF;

	-- a permutation of the subscripts (from lo), picking gpu_sort's elements
	-- bit for bit, equal elements (NULLs too) in the order of the input
	p := gpu_argsort(a, d, nf);
	SELECT count(DISTINCT x), coalesce(min(x), lo), coalesce(max(x), lo + (n - 1))
	INTO c1, c2, c3 FROM unnest(p) x;
	IF cardinality(p) <> n OR c1 <> n OR c2 <> lo OR c3 <> lo + (n - 1) OR coalesce(array_lower(p, 1), 1) <> 1 THEN
		bad := bad || ' gpu_argsort(not a permutation)';
	ELSE
		-- (a loop: a[i] of an array variable costs O(1), in a query O(i) with NULLs)
		c1 := 0;
		c4 := 0;
		FOR i IN 1..n LOOP
			IF prop_bits(a[p[i]]) IS DISTINCT FROM prop_bits(s[i]) THEN
				c1 := c1 + 1;
			END IF;
			-- equal bits are neighbours in gpu_sort's output (the ordered
			-- keys keep every bit), so stability is about neighbours
			IF i > 1 AND p[i] < p[i - 1] AND prop_bits(s[i]) IS NOT DISTINCT FROM prop_bits(s[i - 1]) THEN
				c4 := c4 + 1;
			END IF;
		END LOOP;
		IF c1 > 0 THEN
			bad := bad || ' gpu_argsort(a[p[i]] <> gpu_sort(a)[i])';
		END IF;
		IF c4 > 0 THEN
			bad := bad || ' gpu_argsort(not stable)';
		END IF;
	END IF;

	IF array(SELECT x::text FROM gpu_sort_rows(a, d, nf) WITH ORDINALITY w(x, o) ORDER BY o)
	   IS DISTINCT FROM ref THEN
		bad := bad || ' gpu_sort_rows';
	END IF;

	-- the aggregate puts NULLs where array_agg(x ORDER BY x [DESC]) does; no rows give NULL
	IF nfe = d THEN
		IF n = 0 THEN
			ref := NULL;
		END IF;
		IF (SELECT gpu_sort_agg(x, d) FROM unnest(a) x)::text[] IS DISTINCT FROM ref THEN
			bad := bad || ' gpu_sort_agg(x, descending)';
		END IF;
		IF NOT d AND (SELECT gpu_sort_agg(x) FROM unnest(a) x)::text[] IS DISTINCT FROM ref THEN
			bad := bad || ' gpu_sort_agg(x)';
		END IF;
	END IF;

	RETURN coalesce(nullif(ltrim(bad), ''), 'ok');
END $$;

-- One case, all drawn from its seed: type, size, NULL fraction, distribution,
-- shape, lower bound, direction and NULL placement.  Returns the case and its
-- result ('ok', what failed, or the error it raised).
CREATE TYPE prop_result AS (seed bigint, type text, n int, null_frac float8, dist text,
							shape int, lb int, descending bool, nulls_first bool, result text);

-- (ISO dates in UTC: every date and timestamp the generator writes as text
-- reads back as the same value)
CREATE FUNCTION prop_case(seed bigint) RETURNS prop_result
LANGUAGE plpgsql SET DateStyle = 'ISO, MDY' SET TimeZone = 'UTC' AS $$
DECLARE
	c prop_result;
	u float8;
	lit text;
	val text;			-- the SQL expression of one non-NULL element
	specials text;		-- the type's extremes and specials, as an array literal
	bits int;			-- int types: width; floats: exponent range
BEGIN
	c.seed := seed;
	PERFORM setseed((seed % 2147483647)::float8 / 2147483647);
	c.type := (ARRAY['int2', 'int4', 'int8', 'float4', 'float8', 'date', 'timestamp', 'timestamptz'])[1 + floor(random() * 8)::int];

	-- mostly small arrays, some of every GPU algorithm's sizes, a few large
	u := random();
	c.n := CASE
		WHEN u < 0.03 THEN floor(random() * 3)::int					-- 0, 1, 2
		WHEN u < 0.60 THEN 3 + floor(random() * 62)::int
		WHEN u < 0.88 THEN 65 + floor(random() * 1100)::int			-- around bitonic's 1024
		WHEN u < 0.985 THEN 1165 + floor(random() * 15000)::int
		WHEN u < 0.998 THEN 16384 + floor(random() * 120000)::int		-- merge and radix
		ELSE 140000 + floor(random() * 460000)::int
	END;

	u := random();
	c.null_frac := CASE WHEN u < 0.55 THEN 0 ELSE (ARRAY[0.01, 0.1, 0.5, 0.9, 1.0])[1 + floor(random() * 5)::int] END;
	c.dist := (ARRAY['uniform', 'narrow', 'few', 'specials', 'equal'])[1 + floor(random() * 5)::int];
	c.shape := CASE WHEN random() < 0.7 THEN 0 ELSE 1 + floor(random() * 3)::int END;
	u := random();
	c.lb := CASE
		WHEN u < 0.6 THEN 1
		WHEN u < 0.85 THEN floor(random() * 2001)::int - 1000
		WHEN u < 0.93 THEN -2147483648
		ELSE 2147483646 - greatest(c.n, 1) + 1	-- the upper bound at its limit
	END;
	c.descending := random() < 0.5;
	c.nulls_first := (ARRAY[NULL, false, true])[1 + floor(random() * 3)::int];

	CASE c.type
		WHEN 'int2' THEN
			specials := '{-32768,32767,0,-1,1,-32767,32766}';
			bits := 16;
		WHEN 'int4' THEN
			specials := '{-2147483648,2147483647,0,-1,1,-2147483647,2147483646}';
			bits := 32;
		WHEN 'int8' THEN
			specials := '{-9223372036854775808,9223372036854775807,0,-1,1,-4294967296,4294967296}';
			bits := 64;
		WHEN 'date' THEN
			specials := '{-infinity,infinity,4713-11-24 BC,5874897-12-31,2000-01-01,1999-12-31,1970-01-01}';
		WHEN 'timestamp', 'timestamptz' THEN
			specials := '{-infinity,infinity,"4713-11-25 00:00:00+00 BC","294276-12-30 23:59:59.999999+00",'
						'"2000-01-01 00:00:00+00","1999-12-31 23:59:59.999999+00","1970-01-01 00:00:00+00"}';
		WHEN 'float4' THEN
			-- NaNs of several bit patterns (sign, payload), infinities, zeros,
			-- the smallest denormal, the smallest normal, the largest finite
			specials := '{NaN,-NaN,nan(0x1),-nan(0x3ff),nan(0x3fffff),Infinity,-Infinity,0,-0,'
						'1.4e-45,-1.4e-45,1.1754944e-38,-1.1754944e-38,3.4028235e+38,-3.4028235e+38,1,-1}';
			bits := 127;
		ELSE
			specials := '{NaN,-NaN,nan(0x1),-nan(0x123),nan(0x7ffffffffffff),Infinity,-Infinity,0,-0,'
						'5e-324,-5e-324,2.2250738585072014e-308,-2.2250738585072014e-308,'
						'1.7976931348623157e+308,-1.7976931348623157e+308,1,-1}';
			bits := 1023;
	END CASE;

	-- one element, by distribution: a SQL expression over random()
	IF c.type = 'date' THEN
		-- days from 2000-01-01 over the whole range, 4713 BC to 5874897 AD
		val := CASE c.dist
			WHEN 'uniform' THEN '(date ''2000-01-01'' + (floor(random() * 2147483493) - 2451545)::int4)::text'
			WHEN 'narrow' THEN '(date ''2000-01-01'' + (floor(random() * 21) - 10)::int4)::text'
			WHEN 'few' THEN '(ARRAY[''1999-12-31'', ''2000-01-01'', ''2024-02-29'', ''1970-01-01'', ''0044-03-15 BC''])[1 + floor(random() * 5)::int]'
			WHEN 'specials' THEN format('CASE WHEN random() < 0.5 THEN (%L::text[])[1 + floor(random() * 7)::int]'
										' ELSE (date ''2000-01-01'' + (floor(random() * 200) - 100)::int4)::text END', specials)
			ELSE '''2000-01-01'''
		END;
		val := format('''"'' || %s || ''"''', val);
	ELSIF c.type LIKE 'timestamp%' THEN
		-- whole days from 2000-01-01 (4572 BC to 285,600 AD) and microseconds
		val := CASE c.dist
			WHEN 'uniform' THEN format('(%s ''2000-01-01 00:00:00+00'' + (floor(random() * 106000000) - 2400000) * interval ''1 day'''
									   ' + floor(random() * 86400000000) * interval ''1 microsecond'')::text', c.type)
			WHEN 'narrow' THEN format('(%s ''2000-01-01 00:00:00+00'' + (floor(random() * 21) - 10) * interval ''1 microsecond'')::text', c.type)
			WHEN 'few' THEN '(ARRAY[''1999-12-31 23:59:59.999999+00'', ''2000-01-01 00:00:00+00'', ''2024-02-29 12:00:00+00'','
							' ''1970-01-01 00:00:00+00'', ''0044-03-15 12:00:00+00 BC''])[1 + floor(random() * 5)::int]'
			WHEN 'specials' THEN format('CASE WHEN random() < 0.5 THEN (%L::text[])[1 + floor(random() * 7)::int]'
										' ELSE (%s ''2000-01-01 00:00:00+00'' + (floor(random() * 200) - 100) * interval ''1 second'')::text END',
										specials, c.type)
			ELSE '''2000-01-01 00:00:00+00'''
		END;
		val := format('''"'' || %s || ''"''', val);
	ELSIF c.type LIKE 'int%' THEN
		val := CASE c.dist
			WHEN 'uniform' THEN CASE bits
				WHEN 16 THEN '(floor(random() * 65536) - 32768)::int8::text'
				WHEN 32 THEN '(floor(random() * 4294967296)::int8 - 2147483648)::text'
				ELSE '((floor(random() * 4294967296)::int8 - 2147483648) * 4294967296'
					 ' + floor(random() * 4294967296)::int8)::text' END
			WHEN 'narrow' THEN '(floor(random() * 21) - 10)::int8::text'
			WHEN 'few' THEN '(ARRAY[-7, 0, 3, 1000, -30000])[1 + floor(random() * 5)::int]::text'
			WHEN 'specials' THEN format('CASE WHEN random() < 0.5 THEN (%L::text[])[1 + floor(random() * 7)::int]'
										' ELSE (floor(random() * 200) - 100)::int8::text END', specials)
			ELSE '''42'''
		END;
	ELSE
		-- uniform: sign * (1 + r) * 2^e over the whole exponent range, some
		-- denormals, some plain values; cast to the type, shown exactly
		val := CASE c.dist
			WHEN 'uniform' THEN format(
				'(CASE WHEN random() < 0.1 THEN (random() - 0.5) * 2000'
				'      WHEN random() < 0.1 THEN (random() - 0.5) * %s'
				'      ELSE (CASE WHEN random() < 0.5 THEN -1 ELSE 1 END) * (1 + random() * 0.99)'
				'           * power(2::float8, floor(random() * %s)::int - %s) END)::%s::text',
				CASE WHEN bits = 127 THEN '2.3e-38' ELSE '4.4e-308' END, 2 * bits, bits - 1, c.type)
			WHEN 'narrow' THEN format('((floor(random() * 21) - 10) / 4)::%s::text', c.type)
			WHEN 'few' THEN format('(ARRAY[-7.5, 0, 3.25, 1e10, -1e-3])[1 + floor(random() * 5)::int]::%s::text', c.type)
			WHEN 'specials' THEN format('CASE WHEN random() < 0.6 THEN (%L::text[])[1 + floor(random() * 17)::int]'
										' ELSE ((random() - 0.5) * 8)::%s::text END', specials, c.type)
			ELSE '''-0'''
		END;
	END IF;

	EXECUTE format('SELECT ''{'' || coalesce(string_agg(CASE WHEN random() < $1 THEN ''NULL'' ELSE %s END, '',''), '''') || ''}'''
				   ' FROM generate_series(1, $2)', val)
	INTO lit USING c.null_frac, c.n;

	BEGIN
		EXECUTE format('SELECT prop_check($1::%s[], $2, $3, $4, $5)', c.type)
		INTO c.result USING lit, c.shape, c.lb, c.descending, c.nulls_first;
	EXCEPTION WHEN OTHERS THEN
		c.result := 'error: ' || SQLERRM;
	END;
	RETURN c;
END $$;

-- The run: 10,000 cases from a base seed (gpusort_test.seed, else 1).
SELECT coalesce(nullif(current_setting('gpusort_test.seed', true), '')::bigint, 1) AS seed \gset
SELECT :seed AS seed;
CREATE TEMP TABLE prop_results AS
SELECT c.*
FROM generate_series(0, 9999) i,
	 LATERAL prop_case(:seed * 100000 + i) c;	-- in FROM: (prop_case(s)).* would run it once per column

-- failing cases, with the seed that reproduces each: SELECT prop_case(seed)
SELECT seed, type, n, null_frac, dist, shape, lb, descending, nulls_first, result
FROM prop_results WHERE result <> 'ok' ORDER BY seed;

SELECT count(*) AS cases, count(*) FILTER (WHERE result = 'ok') AS ok FROM prop_results;

-- the generator covers what it should (true, except by a freak of the dice)
SELECT type, count(*) > 1000 AS many,
	   count(*) FILTER (WHERE n = 0) > 0 AS empty,
	   count(*) FILTER (WHERE n > 1024) > 100 AS over_1024,
	   count(*) FILTER (WHERE n > 16384) > 5 AS over_16384,
	   count(*) FILTER (WHERE null_frac = 1) > 20 AS all_null,
	   count(*) FILTER (WHERE lb = -2147483648) > 20 AS lb_min,
	   count(*) FILTER (WHERE lb > 1 AND lb::int8 + n - 1 = 2147483646) > 20 AS lb_max,
	   count(*) FILTER (WHERE dist = 'specials' AND descending) > 50 AS specials_desc,
	   count(*) FILTER (WHERE shape > 0 AND nulls_first) > 50 AS shaped_nulls_first
FROM prop_results GROUP BY type ORDER BY type;
SELECT count(*) FILTER (WHERE n >= 140000) > 0 AS large FROM prop_results;

-- a case runs again from its seed alone, the same every time
SELECT c1 = c2 AS reproducible, c1.result FROM prop_case(42) c1, prop_case(42) c2;

DROP TABLE prop_results;
DROP FUNCTION prop_case(bigint);
DROP TYPE prop_result;
DROP FUNCTION prop_check(anyarray, int, int, bool, bool);
DROP FUNCTION prop_bits(int2), prop_bits(int4), prop_bits(int8), prop_bits(float4), prop_bits(float8),
	prop_bits(date), prop_bits(timestamp), prop_bits(timestamptz);
