-- Property test of the sort node on keys of every type with a btree order:
-- the node orders rows by the leading bits of their keys (exact packings,
-- abbreviated keys) and puts rows with equal bits in order with PostgreSQL's
-- comparators.  Random tables (1 to 4 columns of numeric, text, varchar,
-- char(n), name, uuid, bool, interval, time, timetz, money, oid, inet, a
-- domain, int4 and float8; random NULL fractions, few or many distinct
-- values, shared long prefixes, empty strings, NaN and infinities) and random
-- ORDER BY clauses (1 to 4 keys, columns or expressions, each ASC or DESC,
-- NULLS FIRST or LAST, text keys under one of the collations the server has:
-- C, C.utf8, en_US.utf8, ICU's root and a nondeterministic ICU collation),
-- sometimes under a LIMIT.  Each result is compared with PostgreSQL's Sort on
-- the same rows with the row's place in the table (ctid) as the last key:
-- the node keeps peers in input order.
--
-- Each case has a seed of its own, derived from the base seed printed below;
-- a failing case is listed with it, and SELECT skp_case(<seed>) runs it
-- again.  The base seed is fixed so that the output is stable; another one:
--   PGOPTIONS='-c gpusort_test.seed=12345' make installcheck REGRESS=24_sort_node_keys
LOAD 'gpusort';
SET max_parallel_workers_per_gather = 0;
SET work_mem = '256MB';
SET gpusort.sort_node_min_rows = 0;
SET lc_monetary = 'C';

CREATE DOMAIN skp_dom AS text CHECK (VALUE <> 'forbidden');

-- the collations of this server among those the test tries (ICU's only
-- where PostgreSQL was built with ICU)
DO $$
BEGIN
	CREATE COLLATION skp_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
EXCEPTION WHEN feature_not_supported THEN
	NULL;
END $$;
CREATE TEMP TABLE skp_collations AS
SELECT array_agg(quote_ident(collname) ORDER BY collname) AS names
FROM pg_collation
WHERE collname IN ('C', 'POSIX', 'C.utf8', 'C.UTF-8', 'en_US.utf8', 'en_US.UTF-8', 'und-x-icu',
				   'en-x-icu', 'skp_ci', 'ucs_basic', 'pg_c_utf8');

-- One column's values: an SQL expression of type typ over random(), with
-- about distinct_values different values and NULLs in a fraction nulls of
-- the rows.
CREATE FUNCTION skp_column(typ text, distinct_values float8, nulls float8) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r text := format('floor(random() * %s)', distinct_values);
	half text := format('floor(%s / 2)', distinct_values);
	strings text := format('(ARRAY['''', ''a'', ''A'', ''ä'', ''Ä'', ''b'', '' '', ''aa'', ''Zz''])[1 + floor(random() * 9)::int]'
						   ' || CASE WHEN random() < 0.5 THEN repeat(''a shared prefix '', 1 + floor(random() * 2)::int) ELSE '''' END'
						   ' || CASE WHEN random() < 0.8 THEN %s::text ELSE '''' END', r);
	v text;
BEGIN
	v := CASE typ
		WHEN 'int4' THEN format('(%s - %s)::int4', r, half)
		WHEN 'float8' THEN format('CASE WHEN random() < 0.05 THEN ''NaN''::float8 ELSE (%s - %s) / 3.0 END::float8', r, half)
		WHEN 'numeric' THEN format('CASE WHEN random() < 0.06 THEN (ARRAY[''NaN'', ''Infinity'', ''-Infinity''])[1 + floor(random() * 3)::int]::numeric'
								   ' WHEN random() < 0.3 THEN 123456789012345678901234 + %s / 1e9'
								   ' ELSE (%s - %s) * 10::numeric ^ (floor(random() * 6)::int * 7 - 21) END', r, r, half)
		WHEN 'numeric(15,2)' THEN format('CASE WHEN random() < 0.03 THEN ''NaN''::numeric ELSE (%s - %s) * 1.37 END::numeric(15,2)', r, half)
		WHEN 'text' THEN strings
		WHEN 'varchar' THEN format('(%s)::varchar(60)', strings)
		WHEN 'char(12)' THEN format('(%s)::char(12)', strings)
		WHEN 'name' THEN format('(%s)::name', strings)
		WHEN 'skp_dom' THEN format('(%s)::skp_dom', strings)
		WHEN 'uuid' THEN format('CASE WHEN random() < 0.5 THEN md5(%s::text)::uuid'
								' ELSE (''00000000-0000-0000-0000-'' || lpad(%s::text, 12, ''0''))::uuid END', r, r)
		WHEN 'bool' THEN 'random() < 0.5'
		WHEN 'interval' THEN format('make_interval(0, floor(random() * 3)::int, 0, floor(random() * 40)::int) + %s * interval ''1 hour''', r)
		WHEN 'time' THEN format('time ''00:00'' + %s * interval ''1 second''', r)
		WHEN 'timetz' THEN format('format(''%%s%%s'', time ''00:00'' + %s * interval ''1 minute'', (ARRAY[''+00'', ''+01'', ''-02''])[1 + floor(random() * 3)::int])::timetz', r)
		WHEN 'money' THEN format('((%s - %s) / 100.0)::numeric::money', r, half)
		WHEN 'oid' THEN format('CASE WHEN random() < 0.5 THEN %s ELSE 4294967295 - %s END::int8::oid', r, r)
		WHEN 'inet' THEN format('CASE WHEN random() < 0.2 THEN format(''::%%s/%%s'', to_hex(%s::int %% 65536), 64 + floor(random() * 65)::int)'
								' ELSE format(''10.%%s.%%s.%%s/%%s'', floor(random() * 3)::int, floor(%s / 256)::int %% 256, %s::int %% 256,'
								' 8 + floor(random() * 25)::int) END::inet', r, r, r)
	END;
	RETURN format('CASE WHEN random() < %s THEN NULL ELSE %s END', nulls, v);
END $$;

-- node_check (include/helpers.sql) compares the node's rows with Sort's
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all

-- One case: 'ok', 'not used' (the plan has no node: a first key that gives
-- no leading bits, e.g. text under a libc collation other than C), or what
-- differs.
CREATE FUNCTION skp_case(seed int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	types text[] := ARRAY['numeric', 'numeric(15,2)', 'text', 'varchar', 'char(12)', 'name', 'skp_dom', 'uuid',
						  'bool', 'interval', 'time', 'timetz', 'money', 'oid', 'inet', 'int4', 'float8'];
	collations text[] := (SELECT names FROM skp_collations);
	coltypes text[] := '{}';
	ncols int;
	nkeys int;
	nrows int;
	cols text := '';
	gen text := '';
	keys text := '';
	lim text := '';
	q text;
	result text;
BEGIN
	PERFORM setseed((seed % 1000003) / 1000003.0);
	ncols := 1 + floor(random() * 4)::int;
	nrows := (ARRAY[0, 1, 500, 3000, 3000])[1 + floor(random() * 5)::int];
	FOR c IN 1 .. ncols LOOP
		DECLARE
			typ text := types[1 + floor(random() * array_length(types, 1))::int];
		BEGIN
			coltypes := coltypes || typ;
			cols := cols || format(', c%s %s', c, typ);
			gen := gen || ', ' || skp_column(typ, (ARRAY[3, 100, 1e6])[1 + floor(random() * 3)::int],
											 (ARRAY[0, 0, 0.1, 0.5])[1 + floor(random() * 4)::int]);
		END;
	END LOOP;
	nkeys := 1 + floor(random() * 4)::int;
	FOR k IN 1 .. nkeys LOOP
		DECLARE
			c int := 1 + floor(random() * ncols)::int;
			typ text := coltypes[c];
			key text := format('c%s', c);
		BEGIN
			IF random() < 0.25 THEN
				key := CASE
					WHEN typ IN ('text', 'varchar', 'char(12)', 'name', 'skp_dom') THEN format('lower(%s)', key)
					WHEN typ IN ('numeric', 'numeric(15,2)', 'int4', 'float8') THEN format('(%s * 3)', key)
					WHEN typ = 'interval' THEN format('(%s + interval ''1 mon'')', key)
					ELSE key END;
			END IF;
			IF typ IN ('text', 'varchar', 'char(12)', 'name', 'skp_dom') AND random() < 0.8 THEN
				key := format('%s COLLATE %s', key, collations[1 + floor(random() * array_length(collations, 1))::int]);
			END IF;
			keys := keys || format('%s%s%s, ', key,
								   (ARRAY['', ' DESC'])[1 + floor(random() * 2)::int],
								   (ARRAY['', ' NULLS FIRST', ' NULLS LAST'])[1 + floor(random() * 3)::int]);
		END;
	END LOOP;
	IF random() < 0.3 THEN
		lim := format(' LIMIT %s', 1 + floor(random() * nrows)::int);
	END IF;

	DROP TABLE IF EXISTS skp_t;
	EXECUTE format('CREATE TEMP TABLE skp_t (id int4%s)', cols);
	EXECUTE format('INSERT INTO skp_t SELECT g%s FROM generate_series(1, %s) g', gen, nrows);
	ANALYZE skp_t;

	q := 'SELECT * FROM skp_t ORDER BY ' || keys;
	result := node_check(rtrim(q, ', '), ', ctid', lim);
	SET LOCAL gpusort.enable_sort = on;
	IF result LIKE 'differs%' THEN
		RETURN format('differs: %s rows%s ORDER BY %s%s', nrows, cols, rtrim(keys, ', '), lim);
	END IF;
	RETURN result;
END $$;

SELECT coalesce(nullif(current_setting('gpusort_test.seed', true), '')::int, 2424) AS base_seed \gset
SELECT :base_seed AS base_seed;

CREATE TEMP TABLE skp_results AS
SELECT i, :base_seed * 1000 + i AS seed, skp_case(:base_seed * 1000 + i) AS result
FROM generate_series(1, 120) i;

-- no case differs; most cases ran in the node
SELECT seed, result FROM skp_results WHERE result NOT IN ('ok', 'not used') ORDER BY i;
SELECT count(*) AS cases, count(*) FILTER (WHERE result = 'ok') >= 70 AS most_in_node
FROM skp_results;

-- The node in the other places of a plan on such keys (node_check): a
-- window partitioned by text and ordered by numeric, GROUP BY and DISTINCT
-- on text and numeric, a merge join on text.
SELECT setseed(0.24);
CREATE TABLE skp_w AS
SELECT g AS id, (ARRAY['books', 'Books', 'music', 'garden', ''])[1 + floor(random() * 5)::int] ||
	   floor(random() * 40)::text AS category,
	   round((random() * 1000)::numeric, 2) AS amount,
	   md5(floor(random() * 3000)::text) AS name
FROM generate_series(1, 6000) g;
ANALYZE skp_w;
SET enable_hashagg = off;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT q, node_check(q, '') FROM unnest(ARRAY[
	'SELECT id, sum(amount) OVER (PARTITION BY category ORDER BY amount, id) FROM skp_w ORDER BY id',
	'SELECT category, count(*), sum(amount) FROM skp_w GROUP BY category ORDER BY 1',
	'SELECT amount, count(*) FROM skp_w GROUP BY amount ORDER BY 1',
	'SELECT DISTINCT category FROM skp_w ORDER BY 1',
	'SELECT a.id, b.id FROM skp_w a JOIN skp_w b ON a.name = b.name WHERE a.id < 300 ORDER BY 1, 2'
]) q;
SELECT q, node_check(q) FROM unnest(ARRAY[
	'SELECT id, category FROM skp_w ORDER BY category DESC, amount NULLS FIRST',
	'SELECT id FROM skp_w ORDER BY name, category'
]) q;
RESET enable_hashagg;
RESET enable_hashjoin;
RESET enable_nestloop;

-- Strings of 7, 8 and 9 bytes under C: those shorter than 8 bytes are whole
-- in their bits, and the later keys' bits order them; longer ones go to the
-- tie pass with all their later keys.
CREATE TABLE skp_len AS
SELECT i, (ARRAY['abcdefg', 'abcdefgh', 'abcdefghi', 'abcdefgha', 'abc', '', 'b', NULL])[1 + (i * 7919) % 8] ||
	   CASE WHEN i % 3 = 0 THEN 'z' ELSE '' END AS s, (i * 31) % 17 AS x, md5(i::text) AS m
FROM generate_series(1, 5000) i;
SELECT q, node_check(q) FROM unnest(ARRAY[
	'SELECT * FROM skp_len ORDER BY s COLLATE "C", x',
	'SELECT * FROM skp_len ORDER BY s COLLATE "C" DESC NULLS LAST, x DESC',
	'SELECT * FROM skp_len ORDER BY s::char(12) COLLATE "C", x, m',
	'SELECT * FROM skp_len ORDER BY s::name, m, x',
	'SELECT * FROM skp_len ORDER BY x, s COLLATE "C", m DESC'
]) q;
DROP TABLE skp_len;

-- Each string type as the first key under each collation of the server
SELECT count(*) FILTER (WHERE r NOT IN ('ok', 'not used')) AS differ
FROM (SELECT node_check(format('SELECT id, name FROM skp_w ORDER BY category::%s COLLATE %s%s, name',
							   t, c, d)) AS r
	  FROM unnest((SELECT names FROM skp_collations)) c,
		   unnest(ARRAY['text', 'varchar', 'char(6)', 'name']) t,
		   unnest(ARRAY['', ' DESC']) d) x;

-- Text under a libc collation other than C gives strxfrm's first bytes, which
-- PostgreSQL does not trust: the node checks the sorted rows with strcoll
-- and sorts by it alone on any inversion.  A build with injection points
-- (INJECTION_POINTS=1) inverts those bits under gpusort_test.invert_strxfrm,
-- so that the check finds every order wrong.
SELECT coalesce((SELECT quote_ident(collname) FROM pg_collation
				 WHERE collname IN ('C.utf8', 'C.UTF-8', 'en_US.utf8') AND collprovider = 'c'
				 ORDER BY collname LIMIT 1), '"default"') AS libc_collation \gset
SELECT node_check(format('SELECT id, name FROM skp_w ORDER BY category COLLATE %s DESC, name COLLATE %s',
						 :'libc_collation', :'libc_collation')) AS libc_text;
SET gpusort_test.invert_strxfrm = on;
SELECT node_check(format('SELECT id, name FROM skp_w ORDER BY category COLLATE %s DESC, name COLLATE %s',
						 :'libc_collation', :'libc_collation')) AS libc_text_inverted;
RESET gpusort_test.invert_strxfrm;

-- A LIMIT and OFFSET that add up to near the int64 maximum: the node keeps
-- every row, as Sort does.
SELECT node_check('SELECT id, amount FROM skp_w ORDER BY amount, id LIMIT 9223372036854775000 OFFSET 700', '');
SELECT node_check('SELECT id FROM skp_w ORDER BY id DESC LIMIT 9223372036854775000 OFFSET 100', '');

-- EXPLAIN VERBOSE says why the node left a Sort whose first key gives no
-- leading bits (an array, a record); a later key of that kind is the tie
-- pass's.  Its lines, wherever the server's version prints them.
CREATE FUNCTION skp_declined(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
		IF line LIKE '%gpusort: %' THEN
			RETURN NEXT btrim(line);
		END IF;
	END LOOP;
END $$;
SELECT skp_declined('SELECT id FROM skp_w ORDER BY ARRAY[id], name');
SELECT skp_declined('SELECT id FROM skp_w ORDER BY (id, name) DESC');
SELECT skp_declined('SELECT id FROM skp_w ORDER BY name, ARRAY[id]');
SELECT node_check('SELECT id FROM skp_w ORDER BY category, ARRAY[id] DESC');
SET gpusort.enable_sort = off;
SELECT skp_declined('SELECT id FROM skp_w ORDER BY ARRAY[id], name');
RESET gpusort.enable_sort;
DROP FUNCTION skp_declined(text);

DROP TABLE skp_w;
DROP TABLE skp_results;
DROP TABLE IF EXISTS skp_t;
DROP FUNCTION skp_case(int);
DROP FUNCTION skp_column(text, float8, float8);
DROP TABLE skp_collations;
DROP DOMAIN skp_dom;
DO $$
BEGIN
	IF EXISTS (SELECT FROM pg_collation WHERE collname = 'skp_ci') THEN
		DROP COLLATION skp_ci;
	END IF;
END $$;
