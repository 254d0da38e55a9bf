-- Helpers of the pg_regress tests, included by the tests that use them
-- (\ir): inputs of every distribution for every type, PostgreSQL's own
-- ORDER BY as the reference, and one check of every function against it.
-- Results print as booleans or 'ok', never as where a sort ran.  CREATE OR
-- REPLACE: a test includes them whether or not an earlier test did.

-- The stable order ORDER BY gives: subscripts of a (from its lower bound).
CREATE OR REPLACE FUNCTION ref_argsort(a anyarray, d bool, nf bool) RETURNS int4[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	f bool := coalesce(nf, d);			-- ORDER BY's default: NULLs last ascending
	shift int := coalesce(array_lower(a, 1), 1) - 1;
	r int4[];
BEGIN
	IF NOT d AND NOT f THEN
		r := (SELECT array_agg((i + shift)::int4 ORDER BY x ASC NULLS LAST, i) FROM unnest(a) WITH ORDINALITY u(x, i));
	ELSIF NOT d THEN
		r := (SELECT array_agg((i + shift)::int4 ORDER BY x ASC NULLS FIRST, i) FROM unnest(a) WITH ORDINALITY u(x, i));
	ELSIF NOT f THEN
		r := (SELECT array_agg((i + shift)::int4 ORDER BY x DESC NULLS LAST, i) FROM unnest(a) WITH ORDINALITY u(x, i));
	ELSE
		r := (SELECT array_agg((i + shift)::int4 ORDER BY x DESC NULLS FIRST, i) FROM unnest(a) WITH ORDINALITY u(x, i));
	END IF;
	RETURN coalesce(r, '{}');
END $$;

-- a[p[1]], a[p[2]], ...: by a join on the subscripts, since a[i] on a flat
-- array with NULLs walks the NULL bitmap from the start (quadratic at 10^6)
CREATE OR REPLACE FUNCTION pick(a anyarray, p int4[]) RETURNS anyarray
LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(array_agg(u.x ORDER BY q.o), '{}')
	FROM unnest(p) WITH ORDINALITY q(s, o)
	LEFT JOIN unnest(a) WITH ORDINALITY u(x, i) ON u.i + coalesce(array_lower(a, 1), 1) - 1 = q.s
$$;

-- Checks gpu_sort, gpu_argsort, gpu_sort_rows and gpu_sort_agg on a against
-- ORDER BY, ascending and descending, NULLs default/last/first (quick: default
-- only).  gpu_argsort must give a permutation of a's subscripts that picks the
-- sorted elements and, when exact, ORDER BY's stable order itself (not for
-- -0/+0 or NaNs of several bit patterns, which ORDER BY counts as ties).
-- Returns 'ok' or what failed.
CREATE OR REPLACE FUNCTION check_sort(a anyarray, exact bool DEFAULT true, quick bool DEFAULT false)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d bool;
	nf bool;
	ref_pos int4[];
	pos int4[];
	ref a%TYPE;
	got a%TYPE;
	subscripts int4[] := CASE WHEN NOT exact THEN
		coalesce((SELECT array_agg(i) FROM generate_series(array_lower(a, 1), array_upper(a, 1)) i), '{}') END;
	bad text := '';
	what text;
BEGIN
	FOREACH d IN ARRAY ARRAY[false, true] LOOP
		FOREACH nf IN ARRAY CASE WHEN quick THEN ARRAY[NULL]::bool[] ELSE ARRAY[NULL, false, true] END LOOP
			what := format('(desc %s, nulls_first %s)', d, coalesce(nf::text, 'default'));
			ref_pos := ref_argsort(a, d, nf);
			ref := pick(a, ref_pos);

			got := gpu_sort(a, d, nf);
			IF got IS DISTINCT FROM ref THEN
				bad := bad || ' gpu_sort' || what;
			END IF;

			pos := gpu_argsort(a, d, nf);
			IF (exact AND pos IS DISTINCT FROM ref_pos)
			   OR (NOT exact AND
				   (pick(a, pos) IS DISTINCT FROM ref
					OR coalesce((SELECT array_agg(p ORDER BY p) FROM unnest(pos) p), '{}') IS DISTINCT FROM subscripts)) THEN
				bad := bad || ' gpu_argsort' || what;
			END IF;

			IF coalesce((SELECT array_agg(x ORDER BY o) FROM gpu_sort_rows(a, d, nf) WITH ORDINALITY r(x, o)), '{}')
			   IS DISTINCT FROM ref THEN
				bad := bad || ' gpu_sort_rows' || what;
			END IF;

			-- the aggregate places NULLs as array_agg(x ORDER BY x [DESC]) does
			IF nf IS NULL THEN
				IF coalesce((SELECT gpu_sort_agg(x, d) FROM unnest(a) x), '{}') IS DISTINCT FROM ref
				   OR (NOT d AND coalesce((SELECT gpu_sort_agg(x) FROM unnest(a) x), '{}') IS DISTINCT FROM ref) THEN
					bad := bad || ' gpu_sort_agg' || what;
				END IF;
			END IF;
		END LOOP;
	END LOOP;
	RETURN coalesce(nullif(bad, ''), 'ok');
END $$;

-- An SQL expression for an array of n elements of type typ with the given
-- distribution (random ones depend on setseed).
CREATE OR REPLACE FUNCTION gen_input(typ text, dist text, n int) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	r text;				-- one random element over the type's range
	extremes text;		-- the type's awkward values
	small text;			-- format of the element for a small integer (%s)
	x text;
BEGIN
	small := '(%s)::' || typ;
	CASE typ
		WHEN 'int2' THEN
			r := '(floor(random() * 65536) - 32768)::int2';
			extremes := $e$'{-32768,32767,0,-1,1,-32767,32766}'$e$;
		WHEN 'int4' THEN
			r := '(floor(random() * 4294967296) - 2147483648)::int4';
			extremes := $e$'{-2147483648,2147483647,0,-1,1,-2147483647,2147483646}'$e$;
		WHEN 'int8' THEN
			r := '((floor(random() * 4294967296) - 2147483648)::int8 * 4294967296 + floor(random() * 4294967296)::int8)';
			extremes := $e$'{-9223372036854775808,9223372036854775807,0,-1,1,-9223372036854775807,9223372036854775806,4294967296,-4294967296}'$e$;
		WHEN 'float4' THEN
			r := '((random() * 2 - 1) * 10 ^ (random() * 76 - 38))::float4';
			extremes := $e$'{-0,0,Infinity,-Infinity,NaN,-NaN,1e-45,-1e-45,1.1754942e-38,-1.1754942e-38,3.4028235e38,-3.4028235e38,1,-1}'$e$;
		WHEN 'float8' THEN
			r := '((random() * 2 - 1) * 10 ^ (random() * 600 - 300))::float8';
			extremes := $e$'{-0,0,Infinity,-Infinity,NaN,-NaN,5e-324,-5e-324,2.2250738585072e-308,-2.2250738585072e-308,1.7976931348623157e308,-1.7976931348623157e308,1,-1}'$e$;
		WHEN 'date' THEN
			-- 4713 BC to 5874897 AD: days from 2000-01-01
			r := '(date ''2000-01-01'' + (floor(random() * 2147483493) - 2451545)::int4)';
			small := '(date ''2000-01-01'' + (%s)::int4)';
			extremes := $e$'{-infinity,infinity,4713-11-24 BC,5874897-12-31,2000-01-01,1999-12-31,2000-01-02,1970-01-01}'$e$;
		WHEN 'timestamp', 'timestamptz' THEN
			-- 4572 BC to 285,600 AD: days from 2000-01-01 and microseconds
			r := format('(%s ''2000-01-01 00:00:00+00'' + (floor(random() * 106000000) - 2400000) * interval ''1 day'''
						' + floor(random() * 86400000000) * interval ''1 microsecond'')', typ);
			small := format('(%s ''2000-01-01 00:00:00+00'' + (%%s) * interval ''1 microsecond'')', typ);
			extremes := $e$'{-infinity,infinity,"4713-11-25 00:00:00+00 BC","294276-12-30 23:59:59.999999+00","2000-01-01 00:00:00+00",
							 "1999-12-31 23:59:59.999999+00","2000-01-01 00:00:00.000001+00","1970-01-01 00:00:00+00"}'$e$;
	END CASE;

	x := CASE dist
		WHEN 'uniform' THEN r
		WHEN 'sorted' THEN r
		WHEN 'reverse' THEN r
		WHEN 'equal' THEN format(small, '42')
		WHEN 'few' THEN format(small, 'floor(random() * 5) - 2')
		WHEN 'zero_one' THEN format(small, 'floor(random() * 2)')
		WHEN 'nulls' THEN format('CASE WHEN random() < 0.2 THEN NULL ELSE %s END', r)
		WHEN 'all_nulls' THEN format('NULL::%s', typ)
		WHEN 'extremes' THEN format('(%s::%s[])[1 + floor(random() * cardinality(%s::%s[]))::int]', extremes, typ, extremes, typ)
	END;
	IF x IS NULL THEN
		RAISE EXCEPTION 'unknown distribution %', dist;
	END IF;

	RETURN format('coalesce((SELECT array_agg(x ORDER BY %s) FROM (SELECT %s AS x, i FROM generate_series(1, %s) i) s), %L::%s[])',
				  CASE dist WHEN 'sorted' THEN 'x' WHEN 'reverse' THEN 'x DESC' ELSE 'i' END,
				  x, n, '{}', typ);
END $$;

-- check_sort over inputs of each size; 'ok' or the failures by size.
CREATE OR REPLACE FUNCTION run_checks(typ text, dist text, sizes int[], exact bool DEFAULT true, quick bool DEFAULT false)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n int;
	r text;
	bad text := '';
BEGIN
	FOREACH n IN ARRAY sizes LOOP
		PERFORM setseed(0.25);
		EXECUTE format('SELECT check_sort(%s, %L, %L)', gen_input(typ, dist, n), exact, quick) INTO r;
		IF r <> 'ok' THEN
			bad := bad || format(' [n=%s]%s', n, r);
		END IF;
	END LOOP;
	RETURN coalesce(nullif(bad, ''), 'ok');
END $$;

-- A query under gpusort's sort node against the same query under
-- PostgreSQL's Sort (gpusort.enable_sort off), with tiebreak appended to
-- Sort's ORDER BY (the node keeps ties in input order: ', ctid' makes Sort
-- do the same over a table read in order), and lim (a LIMIT or OFFSET
-- clause) after both.  'ok': the node ran and the rows are equal (count and
-- checksum, in order); 'not used': the plan has no node; else what differs.
CREATE OR REPLACE FUNCTION node_check(q text, tiebreak text DEFAULT ', ctid', lim text DEFAULT '') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
	got text;
	want text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q || lim LOOP
		plan := plan || line || E'\n';
	END LOOP;
	IF plan NOT LIKE '%Custom Scan (gpusort)%' THEN
		RETURN 'not used';
	END IF;
	EXECUTE 'SELECT count(*) || '':'' || coalesce(md5(string_agg(node_row::text, '','')), '''') FROM (' || q || lim || ') node_row'
		INTO got;
	SET LOCAL gpusort.enable_sort = off;
	EXECUTE 'SELECT count(*) || '':'' || coalesce(md5(string_agg(node_row::text, '','')), '''') FROM (' || q || tiebreak || lim || ') node_row'
		INTO want;
	IF got IS DISTINCT FROM want THEN
		RETURN 'differs: ' || got || ' vs ' || want;
	END IF;
	RETURN 'ok';
END $$;

-- The node's rows against Sort's as sets (count and checksum of the sorted
-- rows): 'bound' where the plan's node holds a run condition's bound,
-- 'no bound' where it does not, else what differs.
CREATE OR REPLACE FUNCTION rc_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
	got text;
	want text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	EXECUTE 'SELECT count(*) || '':'' || coalesce(md5(string_agg(rc_row::text, '','' ORDER BY rc_row::text)), '''') FROM ('
		|| q || ') rc_row' INTO got;
	SET LOCAL gpusort.enable_sort = off;
	EXECUTE 'SELECT count(*) || '':'' || coalesce(md5(string_agg(rc_row::text, '','' ORDER BY rc_row::text)), '''') FROM ('
		|| q || ') rc_row' INTO want;
	IF got IS DISTINCT FROM want THEN
		RETURN 'differs: ' || got || ' vs ' || want;
	END IF;
	RETURN CASE WHEN plan LIKE '%Rank Bound%' THEN 'bound' ELSE 'no bound' END;
END $$;

-- What the first line of q's plan that names a figure says of it (EXPLAIN
-- with options opts, the node on): the text after "name: ", or NULL where no
-- line names it.
CREATE OR REPLACE FUNCTION plan_value(q text, name text, opts text DEFAULT 'COSTS OFF') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	FOR line IN EXECUTE 'EXPLAIN (' || opts || ') ' || q LOOP
		IF position(name || ': ' IN line) > 0 THEN
			RETURN substring(line FROM position(name || ': ' IN line) + length(name) + 2);
		END IF;
	END LOOP;
	RETURN NULL;
END $$;

-- The plan's nodes, the node's keys and bounds (EXPLAIN (COSTS OFF)); with
-- with_analyze, the figures that depend on neither the machine nor the
-- version (PostgreSQL 18 shows windows by name, storage, buffers, and rows
-- with decimals; its WindowAgg reads fewer of the node's rows: rank()'s
-- frame becomes ROWS).
CREATE OR REPLACE FUNCTION rc_plan(q text, with_analyze bool DEFAULT false) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF' ||
		CASE WHEN with_analyze THEN ', ANALYZE, TIMING OFF, SUMMARY OFF) ' ELSE ') ' END || q LOOP
		-- how many rows the WindowAgg pulls differs by version; Sort Bound says how many the node kept
		IF line ~ 'Custom Scan' THEN
			line := regexp_replace(line, ' \(actual .*\)', '');
		END IF;
		-- PostgreSQL 17 and later leave out an initplan's "(returns $0)"
		line := regexp_replace(line, '^( *InitPlan \d+) \(returns \$\d+\)', '\1');
		IF line !~ '^ *(Window:|Run Condition|Storage|Buffers|Planning|Sort Device|Sort Key Bits|Sort Memory)' THEN
			RETURN NEXT regexp_replace(line, 'rows=(\d+)\.00 ', 'rows=\1 ');
		END IF;
	END LOOP;
END $$;
