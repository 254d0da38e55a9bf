--
-- 18_declarations: what the SQL declarations promise.
--   1. Every gpusort function and aggregate, called with an element type
--      gpusort does not pack (numeric, text, interval), gives PostgreSQL's
--      answer in that type: numeric is never cast to real or double
--      precision behind the caller's back.  As PostgreSQL's own
--      percentile_cont, gpu_percentile_cont, gpu_percentile_cont_agg and
--      gpu_median take numeric (and an unknown-typed literal) through double
--      precision and find no function for the types without that cast.
--      Once by hand, once generated from pg_proc, so a function added later
--      cannot skip it.
--   2. The WITHIN GROUP aggregates get a parallel plan where PostgreSQL's
--      percentile_cont, percentile_disc and mode get one.
--   3. The planner's view of a sort: gpu_sort_rows' row estimate, the cost
--      of a sort against ORDER BY's, and constant arguments sorted at plan
--      time.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;

-- A statement's outcome: its error message, or its result as text.
CREATE FUNCTION pg_temp.outcome(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE query INTO result;
	RETURN 'result ' || coalesce(result, 'NULL');
EXCEPTION WHEN OTHERS THEN
	RETURN SQLERRM;
END $$;

-- 1. By hand: every function and aggregate over numeric, text and interval
-- (interval has no cast to a gpusort type, so only the polymorphic
-- overloads take it).
CREATE TEMP TABLE calls (name text, query text);
INSERT INTO calls VALUES
	('gpu_sort', 'SELECT gpu_sort(a)::text FROM src'),
	('gpu_sort desc', 'SELECT gpu_sort(a, true, false)::text FROM src'),
	('gpu_argsort', 'SELECT gpu_argsort(a)::text FROM src'),
	('gpu_sort_rows', 'SELECT r::text FROM src, gpu_sort_rows(a) r LIMIT 1'),
	('gpu_topk', 'SELECT gpu_topk(a, 1)::text FROM src'),
	('gpu_topk desc', 'SELECT gpu_topk(a, 1, true)::text FROM src'),
	('gpu_sort_agg', 'SELECT gpu_sort_agg(x)::text FROM src, unnest(a) x'),
	('gpu_sort_agg desc', 'SELECT gpu_sort_agg(x, true)::text FROM src, unnest(a) x'),
	('gpu_topk_agg', 'SELECT gpu_topk_agg(x, 1)::text FROM src, unnest(a) x'),
	('gpu_topk_agg desc', 'SELECT gpu_topk_agg(x, 1, true)::text FROM src, unnest(a) x'),
	('gpu_percentile_disc', 'SELECT gpu_percentile_disc(0.5) WITHIN GROUP (ORDER BY x)::text FROM src, unnest(a) x'),
	('gpu_percentile_disc[]', 'SELECT gpu_percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY x)::text FROM src, unnest(a) x'),
	('gpu_mode', 'SELECT gpu_mode() WITHIN GROUP (ORDER BY x)::text FROM src, unnest(a) x'),
	('gpu_percentile_disc_agg', 'SELECT gpu_percentile_disc_agg(x, 0.5)::text FROM src, unnest(a) x'),
	('gpu_percentile_disc_agg[]', 'SELECT gpu_percentile_disc_agg(x, ARRAY[0.5])::text FROM src, unnest(a) x'),
	('gpu_mode_agg', 'SELECT gpu_mode_agg(x)::text FROM src, unnest(a) x'),
	('gpu_percentile_cont', 'SELECT gpu_percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::text FROM src, unnest(a) x'),
	('gpu_percentile_cont[]', 'SELECT gpu_percentile_cont(ARRAY[0.5]) WITHIN GROUP (ORDER BY x)::text FROM src, unnest(a) x'),
	('gpu_percentile_cont_agg', 'SELECT gpu_percentile_cont_agg(x, 0.5)::text FROM src, unnest(a) x'),
	('gpu_percentile_cont_agg[]', 'SELECT gpu_percentile_cont_agg(x, ARRAY[0.5])::text FROM src, unnest(a) x'),
	('gpu_median', 'SELECT gpu_median(x)::text FROM src, unnest(a) x');

CREATE TEMP TABLE src_numeric AS SELECT '{2, 1, 1.5}'::numeric[] AS a;
CREATE TEMP TABLE src_text AS SELECT '{b, a, c}'::text[] AS a;
CREATE TEMP TABLE src_interval AS SELECT '{2 days, 1 day, 3 days}'::interval[] AS a;

-- the answers in the element type; percentile_cont and median take numeric
-- through double precision as percentile_cont does (same answer), and for
-- text and interval find no function, as percentile_cont does
SELECT c.name, pg_temp.outcome(replace(c.query, 'src', 'src_numeric')) AS numeric,
	   pg_temp.outcome(replace(c.query, 'src', 'src_text')) AS text,
	   pg_temp.outcome(replace(c.query, 'src', 'src_interval')) AS interval
FROM calls c ORDER BY c.name;

-- dates and timestamps, which gpusort sorts but percentile_cont does not
-- interpolate: no interpolating aggregate takes them, as percentile_cont
-- does not
CREATE TEMP TABLE src_date AS SELECT '{2024-01-02, 2024-01-01}'::date[] AS a;
CREATE TEMP TABLE src_timestamptz AS SELECT '{2024-01-02, 2024-01-01}'::timestamptz[] AS a;
SELECT c.name, pg_temp.outcome(replace(c.query, 'src', 'src_date')) AS date,
	   pg_temp.outcome(replace(c.query, 'src', 'src_timestamptz')) AS timestamptz
FROM calls c WHERE c.name ~ 'cont|median' ORDER BY c.name;

-- percentile_cont over numeric, as PostgreSQL's: the same double precision
SELECT pg_typeof(gpu_percentile_cont(0.5) WITHIN GROUP (ORDER BY x)) AS gpusort_type,
	   gpu_percentile_cont(0.5) WITHIN GROUP (ORDER BY x)
		   = percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS same_cont,
	   gpu_median(x) = percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS same_median
FROM unnest('{12345678901234567.1, 12345678901234567.2, 5}'::numeric[]) x;

-- an unknown-typed literal and an untyped parameter resolve to double
-- precision, as for percentile_cont: the interpolating aggregates have no
-- polymorphic overload, which would make such a call ambiguous
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY '2.5') AS postgres,
	   gpu_percentile_cont(0.5) WITHIN GROUP (ORDER BY '2.5') AS cont,
	   gpu_percentile_cont_agg('2.5', 0.5) AS cont_agg, gpu_median('2.5') AS median;
PREPARE decl_untyped AS
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY $1) AS postgres,
	   gpu_percentile_cont(0.5) WITHIN GROUP (ORDER BY $2) AS cont,
	   gpu_percentile_cont_agg($3, 0.5) AS cont_agg, gpu_median($4) AS median;
EXECUTE decl_untyped('2.5', '2.5', '2.5', '2.5');
DEALLOCATE decl_untyped;

-- the values a cast to double precision would have confused: the mode is 7,
-- the median 12345678901234567.1
SELECT pg_temp.outcome($$SELECT gpu_mode() WITHIN GROUP (ORDER BY x)::text
	FROM unnest('{0.30000000000000001, 0.3, 0.30000000000000002, 7, 7}'::numeric[]) x$$) AS mode,
	   pg_temp.outcome($$SELECT gpu_percentile_disc(0.5) WITHIN GROUP (ORDER BY x)::text
	FROM unnest('{12345678901234567.1, 12345678901234567.2, 5}'::numeric[]) x$$) AS percentile_disc;

-- 1, generated: every function of the extension whose element argument (the
-- first, after an aggregate's direct arguments) is an element type or an
-- array of one, called with numeric and then text in its place; the other
-- arguments get a value of their type.  Overloads that differ only in the
-- element type make the same call.  Each call must give the outcome of
-- PostgreSQL's counterpart (pg_temp.postgres_query): ORDER BY,
-- array_agg(... ORDER BY), percentile_disc, mode, percentile_cont; where
-- that finds no function (percentile_cont over text), so must gpusort's.
CREATE TEMP TABLE generated AS
WITH members AS (
	SELECT p.oid, p.proname, ARRAY(SELECT unnest(p.proargtypes::oid[])) AS args,
		   coalesce(a.aggkind, 'f') AS kind, coalesce(a.aggnumdirectargs, 0) AS elem
	FROM pg_depend d
	JOIN pg_proc p ON p.oid = d.objid
	LEFT JOIN pg_aggregate a ON a.aggfnoid = p.oid
	WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpusort')
	  AND NOT 'internal'::regtype = ANY (p.proargtypes::oid[])
	  AND p.pronargs > 0
),
element_members AS (
	SELECT m.*, t.typcategory = 'A' OR t.oid = 'anyarray'::regtype AS elem_is_array
	FROM members m JOIN pg_type t ON t.oid = m.args[m.elem + 1]
	WHERE coalesce(nullif(t.typelem, 0), t.oid) IN
		('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'float4'::regtype, 'float8'::regtype,
		 'date'::regtype, 'timestamp'::regtype, 'timestamptz'::regtype,
		 'numeric'::regtype, 'anyelement'::regtype)
	   OR t.oid = 'anyarray'::regtype
),
calls AS (
	SELECT m.proname, input,
		   (SELECT string_agg(CASE
					WHEN i = m.elem + 1 AND m.kind = 'f' AND m.elem_is_array THEN format('%L::%s[]', '{2,1}', input)
					WHEN i = m.elem + 1 AND m.kind = 'f' THEN format('%L::%s', '2', input)
					WHEN i = m.elem + 1 THEN 'x'
					WHEN t = 'bool'::regtype THEN 'false'
					WHEN t = 'int4'::regtype THEN '1'
					WHEN t = 'float8'::regtype THEN '0.5::float8'
					WHEN t = 'float8[]'::regtype THEN '''{0.5}''::float8[]'
					ELSE format('NULL::%s', format_type(t, NULL)) END, ', ' ORDER BY i)
			FROM unnest(m.args) WITH ORDINALITY u(t, i)
			WHERE m.kind <> 'o' OR i <= m.elem) AS direct,
		   m.kind
	FROM element_members m, unnest('{numeric,text}'::text[]) input
)
SELECT DISTINCT proname, input,
	   CASE kind
		   WHEN 'f' THEN format('SELECT r::text FROM %s(%s) r LIMIT 1', proname, direct)
		   WHEN 'o' THEN format('SELECT (%s(%s) WITHIN GROUP (ORDER BY x))::text FROM unnest(%L::%s[]) x',
								proname, direct, '{2,1}', input)
		   ELSE format('SELECT (%s(%s))::text FROM unnest(%L::%s[]) x', proname, direct, '{2,1}', input)
	   END AS query
FROM calls;

-- the functions with an element argument, and their calls
SELECT proname, count(*) AS calls FROM generated GROUP BY 1 ORDER BY 1;

-- A generated call written with PostgreSQL's own functions: the WITHIN GROUP
-- aggregates without gpu_, the plain forms as WITHIN GROUP calls, the sorts
-- as array_agg(... ORDER BY) (descending is false, k is 1).
CREATE FUNCTION pg_temp.postgres_query(q text) RETURNS text LANGUAGE sql AS $$
	SELECT regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
		   regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(q,
		'gpu_(percentile_disc|percentile_cont|mode)\(', '\1('),
		'gpu_(percentile_disc|percentile_cont)_agg\(x, (.*)\)\)::text', '\1(\2) WITHIN GROUP (ORDER BY x))::text'),
		'gpu_mode_agg\(x\)', 'mode() WITHIN GROUP (ORDER BY x)'),
		'gpu_median\(x\)', 'percentile_cont(0.5) WITHIN GROUP (ORDER BY x)'),
		'gpu_sort_agg\(x(, false)?\)', 'array_agg(x ORDER BY x)'),
		'gpu_topk_agg\(x, 1(, false)?\)', '(array_agg(x ORDER BY x))[1:1]'),
		'FROM gpu_sort\((.*), false, false\) r', 'FROM (SELECT array_agg(y ORDER BY y) FROM unnest(\1) y) s(r)'),
		'FROM gpu_topk\((.*), 1, false\) r', 'FROM (SELECT (array_agg(y ORDER BY y))[1:1] FROM unnest(\1) y) s(r)'),
		'FROM gpu_sort_rows\((.*), false, false\) r', 'FROM (SELECT y FROM unnest(\1) y ORDER BY y) s(r)'),
		'FROM gpu_argsort\((.*), false, false\) r',
		'FROM (SELECT array_agg(i ORDER BY y, i) FROM unnest(\1) WITH ORDINALITY u(y, i)) s(r)') $$;

CREATE TEMP TABLE outcomes AS
SELECT g.*, pg_temp.outcome(g.query) AS outcome,
	   pg_temp.outcome(pg_temp.postgres_query(g.query)) AS postgres
FROM generated g;

-- how many calls answered, as PostgreSQL's counterpart did, per input type
SELECT input, count(*) FILTER (WHERE outcome LIKE 'result %') AS answers,
	   count(*) FILTER (WHERE postgres LIKE 'result %') AS postgres_answers, count(*) AS calls
FROM outcomes GROUP BY 1 ORDER BY 1;

-- the calls whose outcome is not PostgreSQL's (none); a call that finds no
-- function is PostgreSQL's outcome where PostgreSQL's finds none either
SELECT proname, input, query, outcome, postgres
FROM outcomes
WHERE outcome IS DISTINCT FROM postgres
  AND NOT (outcome ~ '^function gpu_\w+\(.*\) does not exist$'
		   AND postgres ~ '^function \w+\(.*\) does not exist$')
ORDER BY 1, 2, 3;

-- 2. Parallel plans: each WITHIN GROUP aggregate and PostgreSQL's own over
-- a table whose scan parallel workers could share; whether each plan has a
-- Gather (PostgreSQL's do, so gpusort's must).
CREATE TABLE decl_par AS SELECT (g % 1000)::int4 AS x FROM generate_series(1, 20000) g;
ANALYZE decl_par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;

CREATE FUNCTION pg_temp.has_gather(query text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
	RETURN plan::text ~ '"Node Type": "Gather"' AND plan::text ~ '"Parallel Aware": true';
END $$;

SELECT agg,
	   pg_temp.has_gather(format('SELECT %s WITHIN GROUP (ORDER BY x) FROM decl_par', agg)) AS postgres_gather,
	   pg_temp.has_gather(format('SELECT gpu_%s WITHIN GROUP (ORDER BY x) FROM decl_par', agg)) AS gpusort_gather
FROM unnest(ARRAY['percentile_disc(0.5)', 'percentile_disc(ARRAY[0.25, 0.5])', 'mode()',
				  'percentile_cont(0.5)', 'percentile_cont(ARRAY[0.25, 0.5])']) agg
ORDER BY 1;

-- and the catalog says so for every WITHIN GROUP aggregate of the extension
SELECT p.proname, p.proparallel, count(*) AS signatures
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpusort')
WHERE a.aggkind = 'o'
GROUP BY 1, 2 ORDER BY 1, 2;

RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE decl_par;

-- 3. The planner.  A plan's top node as JSON.
CREATE FUNCTION pg_temp.plan_of(query text) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
	RETURN plan -> 0 -> 'Plan';
END $$;

-- gpu_sort_rows returns as many rows as its array has: exactly for a
-- constant, and what the planner guesses for unnest over a column
CREATE TEMP TABLE decl_arrays AS SELECT array[3, 1, 2]::int4[] AS a FROM generate_series(1, 10);
ANALYZE decl_arrays;
SELECT (pg_temp.plan_of($$SELECT * FROM gpu_sort_rows('{5,3,1,4,2}'::int4[])$$) ->> 'Plan Rows')::float8 AS constant_rows,
	   (pg_temp.plan_of($$SELECT * FROM gpu_sort_rows(ARRAY(SELECT generate_series(1, 50000)))$$) ->> 'Plan Rows')::float8
		   = (pg_temp.plan_of($$SELECT * FROM unnest(ARRAY(SELECT generate_series(1, 50000)))$$) ->> 'Plan Rows')::float8
		   AS subquery_rows_as_unnest,
	   (pg_temp.plan_of('SELECT gpu_sort_rows(a) FROM decl_arrays') ->> 'Plan Rows')::float8
		   = (pg_temp.plan_of('SELECT unnest(a) FROM decl_arrays') ->> 'Plan Rows')::float8 AS column_rows_as_unnest;

-- the cost of sorting a constant of 10^5 elements is at least ORDER BY's
-- sort of its elements, and grows with the array
CREATE TEMP TABLE decl_costs AS
SELECT n,
	   (pg_temp.plan_of(format('SELECT * FROM gpu_sort_rows(%L::int4[])', a)) ->> 'Total Cost')::float8 AS gpusort,
	   (pg_temp.plan_of(format('SELECT x FROM unnest(%L::int4[]) x ORDER BY x', a)) ->> 'Total Cost')::float8 AS order_by
FROM (SELECT n, (SELECT array_agg(g) FROM generate_series(1, n) g) AS a FROM unnest('{10,100000}'::int[]) n) s;
SELECT n, gpusort >= 0.99 * order_by AS not_below_order_by FROM decl_costs ORDER BY n;
SELECT (SELECT gpusort FROM decl_costs WHERE n = 100000) > 1000 * (SELECT gpusort FROM decl_costs WHERE n = 10)
	AS grows_with_length;

-- constant arguments are sorted when the plan is made: the plan holds the result
EXPLAIN (VERBOSE, COSTS OFF) SELECT gpu_sort('{3,1,2}'::int4[]), gpu_argsort('{3,1,2}'::int4[], true);
