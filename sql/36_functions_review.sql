--
-- 36_functions_review: the functions and aggregates over element types that
-- other tests leave out (char(n) with its trailing spaces, varchar, name,
-- oid, timetz, an enum with values added out of OID order, a range, a
-- composite with NULL fields, "char", bytea, pg_lsn, jsonb), each compared
-- with PostgreSQL's own answer on the same rows, per group; and the error of
-- an element type that ORDER BY cannot sort, raised whatever the data: for a
-- NULL array and for an aggregate over no rows too, as ORDER BY raises it
-- when the query is parsed.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;

SELECT setseed(0.36);

CREATE TYPE review_mood AS ENUM ('sad', 'ok', 'happy');
ALTER TYPE review_mood ADD VALUE 'meh' BEFORE 'ok';
ALTER TYPE review_mood ADD VALUE 'great' AFTER 'happy';
CREATE TYPE review_pair AS (a int, b text);

-- a value, or a NULL one time in ten
CREATE FUNCTION pg_temp.sometimes_null(v anyelement) RETURNS anyelement LANGUAGE sql VOLATILE AS $$
	SELECT CASE WHEN random() < 0.1 THEN NULL ELSE v END $$;

CREATE TABLE review_rows AS
SELECT i, i % 5 AS g,
	   pg_temp.sometimes_null((ARRAY['b', 'a ', 'a', '', 'B ', 'é'])[1 + floor(random() * 6)::int]::char(4)) AS bc,
	   pg_temp.sometimes_null((ARRAY['b', 'a ', 'a', '', 'B ', 'é'])[1 + floor(random() * 6)::int]::varchar(5)) AS vc,
	   pg_temp.sometimes_null((ARRAY['b', 'a ', 'a', '', 'B ', 'é', 'Z'])[1 + floor(random() * 7)::int]::name) AS nm,
	   pg_temp.sometimes_null(floor(random() * 4294967295)::bigint::oid) AS o,
	   pg_temp.sometimes_null(((floor(random() * 24) || ':00+' || floor(random() * 3))::timetz)) AS ttz,
	   pg_temp.sometimes_null((enum_range(NULL::review_mood))[1 + floor(random() * 5)::int]) AS e,
	   pg_temp.sometimes_null(int4range(floor(random() * 5)::int, floor(random() * 5 + 5)::int,
								 (ARRAY['[)', '(]', '[]'])[1 + floor(random() * 3)::int])) AS rg,
	   pg_temp.sometimes_null(ROW(floor(random() * 3)::int, (ARRAY['x', 'X', NULL])[1 + floor(random() * 3)::int])::review_pair) AS rc,
	   pg_temp.sometimes_null(chr(60 + floor(random() * 60)::int)::"char") AS ch,
	   pg_temp.sometimes_null(decode(md5(floor(random() * 20)::text), 'hex')) AS by,
	   pg_temp.sometimes_null((floor(random() * 3) || '/' || floor(random() * 1000))::pg_lsn) AS lsn,
	   pg_temp.sometimes_null(jsonb_build_object('a', floor(random() * 3))) AS jb
FROM generate_series(1, 500) i;

-- Each check of key @K@ per group: gpusort's answer and PostgreSQL's, as
-- text (these types print equal values alike); @P@ is a row's position in
-- its group's array_agg(@K@ ORDER BY i).
CREATE FUNCTION pg_temp.review_key(k text) RETURNS TABLE (key text, mismatches bigint[]) LANGUAGE plpgsql AS $$
DECLARE
	q text;
	bad bigint;
BEGIN
	key := k;
	mismatches := '{}';
	FOREACH q IN ARRAY ARRAY[
		'gpu_sort(array_agg(@K@)), array_agg(@K@ ORDER BY @K@)',
		'gpu_sort(array_agg(@K@), true), array_agg(@K@ ORDER BY @K@ DESC)',
		'gpu_sort(array_agg(@K@), false, true), array_agg(@K@ ORDER BY @K@ NULLS FIRST)',
		'gpu_sort_agg(@K@), array_agg(@K@ ORDER BY @K@)',
		'gpu_sort_agg(@K@, true), array_agg(@K@ ORDER BY @K@ DESC)',
		'gpu_topk(array_agg(@K@), 3), (array_agg(@K@ ORDER BY @K@))[1:3]',
		'gpu_topk(array_agg(@K@), 3, true), (array_agg(@K@ ORDER BY @K@ DESC))[1:3]',
		'gpu_topk_agg(@K@, 3), (array_agg(@K@ ORDER BY @K@))[1:3]',
		'gpu_topk_agg(@K@, 3, true), (array_agg(@K@ ORDER BY @K@ DESC))[1:3]',
		'gpu_argsort(array_agg(@K@ ORDER BY i)), array_agg(@P@ ORDER BY @K@, i)',
		'gpu_argsort(array_agg(@K@ ORDER BY i), true), array_agg(@P@ ORDER BY @K@ DESC, i)',
		'gpu_percentile_disc(ARRAY[0, 0.2, 0.5, 0.9, 1]) WITHIN GROUP (ORDER BY @K@),
		 percentile_disc(ARRAY[0, 0.2, 0.5, 0.9, 1]) WITHIN GROUP (ORDER BY @K@)',
		'gpu_percentile_disc(ARRAY[0, 0.2, 0.5, 0.9, 1]) WITHIN GROUP (ORDER BY @K@ DESC),
		 percentile_disc(ARRAY[0, 0.2, 0.5, 0.9, 1]) WITHIN GROUP (ORDER BY @K@ DESC)',
		'gpu_percentile_disc_agg(@K@, 0.7), percentile_disc(0.7) WITHIN GROUP (ORDER BY @K@)',
		'gpu_mode() WITHIN GROUP (ORDER BY @K@), mode() WITHIN GROUP (ORDER BY @K@)',
		'gpu_mode() WITHIN GROUP (ORDER BY @K@ DESC), mode() WITHIN GROUP (ORDER BY @K@ DESC)',
		'gpu_mode_agg(@K@), mode() WITHIN GROUP (ORDER BY @K@)'] LOOP
		EXECUTE format('SELECT count(*) FILTER (WHERE x::text IS DISTINCT FROM y::text)
						FROM (SELECT g, %s FROM (SELECT *, row_number() OVER (PARTITION BY g ORDER BY i) AS p
												 FROM review_rows) r GROUP BY g) q(g, x, y)',
					   replace(replace(q, '@K@', k), '@P@', 'p')) INTO bad;
		mismatches := mismatches || bad;
	END LOOP;
	RETURN NEXT;
END $$;

-- every check of every key: no answer that is not PostgreSQL's
SELECT c.* FROM unnest(ARRAY['bc', 'vc', 'vc COLLATE "C"', 'nm', 'o', 'ttz', 'e', 'rg', 'rc', 'ch', 'by',
							 'lsn', 'jb']) k, LATERAL pg_temp.review_key(k) c;

-- An element type without a default btree ordering: ORDER BY refuses it
-- when the query is parsed, whatever the rows.
\set VERBOSITY terse
SELECT array_agg(p ORDER BY p) FROM (SELECT point(1, 2) AS p WHERE false) s;
-- gpusort refuses it for every array, a NULL one too ...
SELECT gpu_sort(NULL::point[]);
SELECT gpu_argsort(NULL::point[]);
SELECT gpu_topk(NULL::point[], 1);
SELECT gpu_topk('{}'::point[], 1);
-- ... and in every aggregate, over rows, over NULLs only, and over no rows
SELECT gpu_sort_agg(p) FROM (SELECT point(1, 2) AS p) s;
SELECT gpu_sort_agg(p) FROM (SELECT NULL::point AS p) s;
SELECT gpu_sort_agg(p) FROM (SELECT point(1, 2) AS p WHERE false) s;
SELECT gpu_sort_agg(p, true) FROM (SELECT point(1, 2) AS p WHERE false) s;
SELECT gpu_topk_agg(p, 1) FROM (SELECT point(1, 2) AS p WHERE false) s;
SELECT gpu_mode_agg(p) FROM (SELECT point(1, 2) AS p WHERE false) s;
SELECT gpu_percentile_disc_agg(p, 0.5) FROM (SELECT point(1, 2) AS p WHERE false) s;
SELECT gpu_percentile_disc_agg(p, '{0.5}'::float8[]) FROM (SELECT point(1, 2) AS p WHERE false) s;
\set VERBOSITY default
-- a sortable type over no rows is NULL, as array_agg and mode are
SELECT gpu_sort_agg(x) IS NULL AS sort_agg, gpu_topk_agg(x, 1) IS NULL AS topk_agg,
	   gpu_mode_agg(x) IS NULL AS mode_agg, gpu_percentile_disc_agg(x, 0.5) IS NULL AS disc_agg,
	   gpu_sort_agg(e) IS NULL AS enum_agg, gpu_topk(NULL::text[], 1) IS NULL AS topk,
	   array_agg(x ORDER BY x) IS NULL AS array_agg, mode() WITHIN GROUP (ORDER BY x) IS NULL AS mode
FROM (SELECT 'a'::text AS x, 'ok'::review_mood AS e WHERE false) s;

DROP TABLE review_rows;
DROP TYPE review_pair;
DROP TYPE review_mood;
