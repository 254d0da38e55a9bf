--
-- 27_any_type_functions: the functions and aggregates over element types that
-- gpusort does not pack (numeric, text under several collations, uuid, bool,
-- interval, time, money, inet, domains over numeric and text, a composite
-- type), each compared with PostgreSQL's own answer on the same random rows:
-- ORDER BY, array_agg(x ORDER BY x), percentile_disc and mode, ascending and
-- descending, with NULLs, per group and over the whole table (where
-- gpu_topk_agg's state prunes), serially and with parallel workers.
--
-- Equal values that print differently (numeric 1.0 and 1.00, interval 1 day
-- and 24 hours, strings a nondeterministic collation calls equal) may come
-- in any order, as they do from PostgreSQL's sort: for those keys the
-- results are compared with the type's = (under the key's collation), and
-- gpu_sort_agg's values are checked to be the input's, byte for byte.  For
-- the other keys the results are compared as text.  gpu_argsort is stable,
-- so its subscripts are compared exactly with ORDER BY key, position.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;

SELECT setseed(0.27);

CREATE DOMAIN any_amount AS numeric;
CREATE DOMAIN any_name AS text;
CREATE TYPE any_pair AS (a int, b text);

-- a value, or a NULL one time in twenty
CREATE FUNCTION pg_temp.nullif_random(v anyelement) RETURNS anyelement LANGUAGE sql VOLATILE AS $$
	SELECT CASE WHEN random() < 0.05 THEN NULL ELSE v END $$;

-- A string: often empty, often with one of a few long shared prefixes, in
-- random case, sometimes with an accent.
CREATE FUNCTION pg_temp.random_text() RETURNS text LANGUAGE sql VOLATILE AS $$
	SELECT CASE WHEN random() < 0.05 THEN ''
		ELSE (ARRAY['', '', 'shared-prefix-that-is-long-', 'Shared-Prefix-That-Is-Long-',
					'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz', 'a'])[1 + floor(random() * 6)::int]
			 || CASE WHEN random() < 0.5 THEN upper(s) ELSE s END
			 || CASE WHEN random() < 0.1 THEN 'é' ELSE '' END
		END
	FROM (SELECT substr(md5(random()::text), 1, floor(random() * 12)::int) AS s) r $$;

-- numeric of many scales and magnitudes, with NaN and the infinities
CREATE FUNCTION pg_temp.random_numeric() RETURNS numeric LANGUAGE sql VOLATILE AS $$
	SELECT CASE
		WHEN r < 0.03 THEN 'NaN'::numeric
		WHEN r < 0.05 THEN 'Infinity'::numeric
		WHEN r < 0.07 THEN '-Infinity'::numeric
		WHEN r < 0.2 THEN round((random() * 10)::numeric, floor(random() * 3)::int)
		ELSE round(((random() - 0.5) * 10 ^ floor(random() * 30))::numeric, floor(random() * 20)::int)
	END
	FROM (SELECT random() AS r) r $$;

CREATE TABLE any_rows AS
SELECT i, g,
	   row_number() OVER (PARTITION BY g ORDER BY i) AS gpos,
	   pg_temp.nullif_random(pg_temp.random_numeric()) AS n,
	   pg_temp.nullif_random(((floor(random() * 6) / 2)::numeric(10, 1))
					 * (ARRAY[1, 1.0, 1.00])[1 + floor(random() * 3)::int]) AS nl,
	   pg_temp.nullif_random(pg_temp.random_text()) AS t,
	   pg_temp.nullif_random((ARRAY['abc', 'ABC', 'Abc', 'b', 'B', '', 'é', 'e', 'E'])[1 + floor(random() * 9)::int]) AS w,
	   pg_temp.nullif_random(md5(floor(random() * 200)::text)::uuid) AS u,
	   pg_temp.nullif_random(random() < 0.5) AS b,
	   pg_temp.nullif_random((ARRAY['1 day', '24 hours', '1 mon', '30 days', '-2 hours', '1 year'])[1 + floor(random() * 6)::int]::interval
					 + floor(random() * 3) * interval '1 hour') AS iv,
	   pg_temp.nullif_random(time '00:00' + floor(random() * 86400) * interval '1 second') AS tm,
	   pg_temp.nullif_random((floor(random() * 2000000) / 100 - 10000)::numeric::money) AS m,
	   pg_temp.nullif_random(('10.' || floor(random() * 4) || '.' || floor(random() * 256) || '.0/' || (22 + floor(random() * 11)))::inet) AS ip,
	   pg_temp.nullif_random(round((random() * 20)::numeric, 1)::any_amount) AS d,
	   pg_temp.nullif_random(pg_temp.random_text()::any_name) AS dt,
	   pg_temp.nullif_random(ROW(floor(random() * 5)::int, pg_temp.random_text())::any_pair) AS p
FROM (SELECT i, i % 7 AS g FROM generate_series(1, 3000) i) s
ORDER BY i;
ANALYZE any_rows;

-- The checks: a gpusort expression and PostgreSQL's, @K@ standing for the
-- key and @P@ for a row's position in its group's array_agg(@K@ ORDER BY i).
-- exact_only: compared as text whatever the key.
CREATE TABLE any_checks (name text, gpusort text, postgres text, exact_only bool);
INSERT INTO any_checks VALUES
	('gpu_sort_agg', 'gpu_sort_agg(@K@)', 'array_agg(@K@ ORDER BY @K@)', false),
	('gpu_sort_agg desc', 'gpu_sort_agg(@K@, true)', 'array_agg(@K@ ORDER BY @K@ DESC)', false),
	('gpu_sort_agg keeps the values',
	 'array(SELECT x FROM unnest(gpu_sort_agg(@K@)::text[]) x ORDER BY x COLLATE "C")',
	 'array_agg(@K@::text ORDER BY @K@::text COLLATE "C")', true),
	('gpu_sort', 'gpu_sort(array_agg(@K@))', 'array_agg(@K@ ORDER BY @K@)', false),
	('gpu_sort desc', 'gpu_sort(array_agg(@K@), true)', 'array_agg(@K@ ORDER BY @K@ DESC)', false),
	('gpu_sort nulls first', 'gpu_sort(array_agg(@K@), false, true)', 'array_agg(@K@ ORDER BY @K@ NULLS FIRST)', false),
	('gpu_sort desc nulls last', 'gpu_sort(array_agg(@K@), true, false)', 'array_agg(@K@ ORDER BY @K@ DESC NULLS LAST)', false),
	('gpu_argsort', 'gpu_argsort(array_agg(@K@ ORDER BY i))', 'array_agg(@P@ ORDER BY @K@, i)', true),
	('gpu_argsort desc', 'gpu_argsort(array_agg(@K@ ORDER BY i), true)', 'array_agg(@P@ ORDER BY @K@ DESC, i)', true),
	('gpu_argsort nulls first', 'gpu_argsort(array_agg(@K@ ORDER BY i), false, true)',
	 'array_agg(@P@ ORDER BY @K@ NULLS FIRST, i)', true),
	('gpu_sort_rows',
	 'array(SELECT gpu_sort_rows(array_agg(@K@), true))',
	 'array_agg(@K@ ORDER BY @K@ DESC)', false),
	('gpu_topk', 'gpu_topk(array_agg(@K@), 5)', '(array_agg(@K@ ORDER BY @K@))[1:5]', false),
	('gpu_topk desc', 'gpu_topk(array_agg(@K@), 5, true)', '(array_agg(@K@ ORDER BY @K@ DESC))[1:5]', false),
	('gpu_topk_agg', 'gpu_topk_agg(@K@, 5)', '(array_agg(@K@ ORDER BY @K@))[1:5]', false),
	('gpu_topk_agg desc', 'gpu_topk_agg(@K@, 5, true)', '(array_agg(@K@ ORDER BY @K@ DESC))[1:5]', false),
	('gpu_topk_agg 700', 'gpu_topk_agg(@K@, 700)', '(array_agg(@K@ ORDER BY @K@))[1:700]', false),
	('gpu_topk_agg 700 desc', 'gpu_topk_agg(@K@, 700, true)', '(array_agg(@K@ ORDER BY @K@ DESC))[1:700]', false),
	('gpu_topk_agg 0', 'gpu_topk_agg(@K@, 0)', '(array_agg(@K@ ORDER BY @K@))[1:0]', false),
	('gpu_percentile_disc',
	 'gpu_percentile_disc(0.37) WITHIN GROUP (ORDER BY @K@)', 'percentile_disc(0.37) WITHIN GROUP (ORDER BY @K@)', false),
	('gpu_percentile_disc[]',
	 'gpu_percentile_disc(''{0, 0.1, NULL, 0.5, 0.999, 1}''::float8[]) WITHIN GROUP (ORDER BY @K@)',
	 'percentile_disc(''{0, 0.1, NULL, 0.5, 0.999, 1}''::float8[]) WITHIN GROUP (ORDER BY @K@)', false),
	('gpu_percentile_disc[] desc',
	 'gpu_percentile_disc(''{0, 0.1, 0.5, 0.999, 1}''::float8[]) WITHIN GROUP (ORDER BY @K@ DESC)',
	 'percentile_disc(''{0, 0.1, 0.5, 0.999, 1}''::float8[]) WITHIN GROUP (ORDER BY @K@ DESC)', false),
	('gpu_percentile_disc_agg', 'gpu_percentile_disc_agg(@K@, 0.5)', 'percentile_disc(0.5) WITHIN GROUP (ORDER BY @K@)', false),
	('gpu_percentile_disc_agg[]', 'gpu_percentile_disc_agg(@K@, ''{0, 0.25, 1}''::float8[])',
	 'percentile_disc(''{0, 0.25, 1}''::float8[]) WITHIN GROUP (ORDER BY @K@)', false),
	('gpu_mode', 'gpu_mode() WITHIN GROUP (ORDER BY @K@)', 'mode() WITHIN GROUP (ORDER BY @K@)', false),
	('gpu_mode desc', 'gpu_mode() WITHIN GROUP (ORDER BY @K@ DESC)', 'mode() WITHIN GROUP (ORDER BY @K@ DESC)', false),
	('gpu_mode_agg', 'gpu_mode_agg(@K@)', 'mode() WITHIN GROUP (ORDER BY @K@)', false);

-- The checks of key over any_rows, per group and over the whole table:
-- how many groups each check saw and in how many its answer was not
-- PostgreSQL's.  exact: equal answers print the same (else they are compared
-- with the type's =); aggregates_only: leave out the functions of arrays.
CREATE FUNCTION pg_temp.check_key(key text, exact bool, aggregates_only bool DEFAULT false)
RETURNS TABLE (name text, groups bigint, mismatches bigint) LANGUAGE plpgsql AS $$
DECLARE
	c record;
	grouping text;
	q text;
	n bigint;
	bad bigint;
BEGIN
	FOR c IN SELECT * FROM any_checks
			 WHERE NOT (aggregates_only AND any_checks.gpusort ~ '^(array\(SELECT )?gpu_(sort|argsort|sort_rows|topk)\(')
			 ORDER BY any_checks.name LOOP
		name := c.name;
		groups := 0;
		mismatches := 0;
		FOREACH grouping IN ARRAY ARRAY['g', ''] LOOP
			q := format('SELECT count(*), count(*) FILTER (WHERE %s) FROM (SELECT %s AS x, %s AS y FROM any_rows %s) r',
						CASE WHEN exact OR c.exact_only THEN 'x::text IS DISTINCT FROM y::text'
							 ELSE 'x IS DISTINCT FROM y' END,
						c.gpusort, c.postgres, CASE WHEN grouping = 'g' THEN 'GROUP BY g' END);
			q := replace(replace(q, '@K@', '(' || key || ')'),
						 '@P@', CASE WHEN grouping = 'g' THEN 'gpos' ELSE 'i' END);
			EXECUTE q INTO n, bad;
			groups := groups + n;
			mismatches := mismatches + bad;
		END LOOP;
		RETURN NEXT;
	END LOOP;
END $$;

-- The keys of every type but text, and their checks: every check saw the 7
-- groups and the whole table, and none found an answer that is not
-- PostgreSQL's.
-- The domain over numeric: d::numeric here, as an array of the domain
-- matches several overloads of the functions of arrays; its aggregates
-- below.  The domain over text (of the database's collation) goes to the
-- polymorphic overloads, arrays too.
CREATE TABLE any_keys (key text, exact bool, aggregates_only bool);
INSERT INTO any_keys VALUES
	('n', false, false), ('nl', false, false), ('u', true, false), ('b', true, false),
	('iv', false, false), ('tm', true, false), ('m', true, false), ('ip', true, false),
	('d::numeric', false, false), ('dt', true, false), ('p', true, false), ('w COLLATE "C"', true, false);

SELECT k.key, count(*) AS checks, min(c.groups) AS min_groups, sum(c.mismatches) AS mismatches
FROM any_keys k, LATERAL pg_temp.check_key(k.key, k.exact, k.aggregates_only) c
GROUP BY k.key ORDER BY k.key;

-- The aggregates over the domain resolve to numeric's, and answer in
-- numeric: PostgreSQL's answer in the domain's base type.
SELECT count(*) AS groups,
	   count(*) FILTER (WHERE NOT (srt AND srt_desc AND topk AND disc AND mode)) AS mismatches
FROM (SELECT g,
			 gpu_sort_agg(d) = array_agg(d ORDER BY d)::numeric[] AS srt,
			 gpu_sort_agg(d, true) = array_agg(d ORDER BY d DESC)::numeric[] AS srt_desc,
			 gpu_topk_agg(d, 5, true) = (array_agg(d ORDER BY d DESC))[1:5]::numeric[] AS topk,
			 gpu_percentile_disc_agg(d, '{0, 0.5, 1}'::float8[])
				 = (percentile_disc('{0, 0.5, 1}'::float8[]) WITHIN GROUP (ORDER BY d))::numeric[] AS disc,
			 gpu_mode() WITHIN GROUP (ORDER BY d) = mode() WITHIN GROUP (ORDER BY d) AS mode
	  FROM any_rows GROUP BY g) r;

-- The result types are the key's (numeric stays numeric), and the plain
-- aggregates over a domain answer in its base type, as array_agg does.
SELECT pg_typeof(gpu_sort_agg(n)) AS sort_agg, pg_typeof(gpu_topk_agg(n, 1)) AS topk_agg,
	   pg_typeof(gpu_percentile_disc(0.5) WITHIN GROUP (ORDER BY n)) AS disc,
	   pg_typeof(gpu_mode_agg(t)) AS mode_agg, pg_typeof(gpu_sort(array_agg(u))) AS sort,
	   pg_typeof(gpu_sort_agg(d)) AS domain_agg, pg_typeof(array_agg(d)) AS postgres_domain_agg
FROM any_rows;

-- Text under every collation of the system that sorts differently: "C",
-- C.UTF-8 and en_US.UTF-8 (libc) where the system has them, ICU's root
-- collation, and a nondeterministic ICU collation that ignores case and
-- accents (its equal strings differ in their bytes).  The long random
-- strings and the few short ones, both with NULLs and empty strings.
-- (ICU's part only where the server has ICU: PostgreSQL built without it
-- has no ICU collation; expected/27_any_type_functions_1.out is that case)
SELECT EXISTS (SELECT FROM pg_collation WHERE collname = 'und-x-icu') AS have_icu \gset
\if :have_icu
CREATE COLLATION any_nd (provider = icu, locale = 'und-u-ks-level1', deterministic = false);
\endif
CREATE TABLE any_collations AS
SELECT c.collname, c.collisdeterministic
FROM pg_collation c
WHERE c.collname IN ('C', 'C.utf8', 'C.UTF-8', 'en_US.utf8', 'en_US.UTF-8', 'und-x-icu', 'any_nd')
  AND c.collencoding IN (-1, pg_char_to_encoding('UTF8'));
SELECT count(*) >= 3 AS three_or_more, bool_or(NOT collisdeterministic) AS a_nondeterministic_one,
	   bool_or(collname = 'und-x-icu') AS icu
FROM any_collations;

SELECT col.column_name, count(*) / (SELECT count(*) FROM any_collations) AS checks,
	   min(c.groups) AS min_groups, sum(c.mismatches) AS mismatches
FROM any_collations l, (VALUES ('t'), ('w')) col(column_name),
	 LATERAL pg_temp.check_key(format('%s COLLATE %I', col.column_name, l.collname), l.collisdeterministic) c
GROUP BY 1 ORDER BY 1;

\if :have_icu
-- The nondeterministic collation does make equal strings of different bytes:
-- gpu_mode counts them as one value, as mode() does.
SELECT count(DISTINCT w COLLATE "C") AS byte_values, count(DISTINCT w COLLATE any_nd) AS equal_values,
	   gpu_mode() WITHIN GROUP (ORDER BY w COLLATE any_nd)
		   = mode() WITHIN GROUP (ORDER BY w COLLATE any_nd) COLLATE any_nd AS same_mode,
	   gpu_mode() WITHIN GROUP (ORDER BY w COLLATE any_nd) COLLATE "C" IN
		   (SELECT w FROM any_rows WHERE w IS NOT NULL) AS an_input_value
FROM any_rows;

-- A COLLATE clause, a column's collation and an argument's: the ordering
-- follows each.  ("a" < "B" under ICU, "B" < "a" under "C".)
CREATE TABLE any_collated (s text COLLATE "und-x-icu");
INSERT INTO any_collated VALUES ('a'), ('B'), (NULL), ('c'), ('');
SELECT gpu_sort_agg(s) AS column_collation, gpu_sort_agg(s COLLATE "C") AS collate_c,
	   gpu_sort(array_agg(s)) AS sort_column, gpu_sort(array_agg(s) COLLATE "C") AS sort_c,
	   gpu_topk_agg(s, 2, true) AS topk_desc
FROM any_collated;
DROP TABLE any_collated;
DROP COLLATION any_nd;
\endif

-- A window aggregate: its final function runs on a growing state.
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE w.srt::text IS DISTINCT FROM r.srt::text OR w.med IS DISTINCT FROM r.med) AS mismatches
FROM (SELECT i, gpu_sort_agg(t COLLATE "C") OVER o AS srt, gpu_percentile_disc_agg(n, 0.5) OVER o AS med
	  FROM any_rows WHERE i <= 300 WINDOW o AS (ORDER BY i)) w
JOIN (SELECT r.i,
			 (SELECT array_agg(t COLLATE "C" ORDER BY t COLLATE "C") FROM any_rows r2 WHERE r2.i <= r.i) AS srt,
			 (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY n) FROM any_rows r2 WHERE r2.i <= r.i) AS med
	  FROM any_rows r WHERE r.i <= 300) r USING (i);

-- Parallel workers: the plain aggregates' partial states of these types
-- (their values serialized with their collation) are combined into the
-- same answers.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE FUNCTION pg_temp.partial_plan(query text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	plan text;
BEGIN
	FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		IF plan ~ 'Partial Aggregate' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END $$;
\if :have_icu
CREATE COLLATION any_nd (provider = icu, locale = 'und-u-ks-level1', deterministic = false);
SELECT pg_temp.partial_plan('SELECT gpu_sort_agg(n), gpu_topk_agg(t COLLATE any_nd, 5, true), gpu_mode_agg(w COLLATE "und-x-icu"), gpu_percentile_disc_agg(iv, 0.5) FROM any_rows') AS partial_aggregate;
SELECT k.key, count(*) AS checks, min(c.groups) AS min_groups, sum(c.mismatches) AS mismatches
FROM (VALUES ('n', false), ('iv', false), ('p', true), ('t COLLATE "C"', true),
			 ('t COLLATE "und-x-icu"', true), ('t COLLATE any_nd', false), ('w COLLATE any_nd', false)) k(key, exact),
	 LATERAL pg_temp.check_key(k.key, k.exact, true) c
WHERE c.name !~ 'percentile_disc($|\[)|^gpu_mode( |$)'
GROUP BY k.key ORDER BY k.key;
DROP COLLATION any_nd;
\else
SELECT pg_temp.partial_plan('SELECT gpu_sort_agg(n), gpu_topk_agg(t COLLATE "C", 5, true), gpu_mode_agg(w COLLATE "C"), gpu_percentile_disc_agg(iv, 0.5) FROM any_rows') AS partial_aggregate;
SELECT k.key, count(*) AS checks, min(c.groups) AS min_groups, sum(c.mismatches) AS mismatches
FROM (VALUES ('n', false), ('iv', false), ('p', true), ('t COLLATE "C"', true)) k(key, exact),
	 LATERAL pg_temp.check_key(k.key, k.exact, true) c
WHERE c.name !~ 'percentile_disc($|\[)|^gpu_mode( |$)'
GROUP BY k.key ORDER BY k.key;
\endif
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

DROP TABLE any_collations, any_keys, any_checks, any_rows;
DROP TYPE any_pair;
DROP DOMAIN any_amount;
DROP DOMAIN any_name;
