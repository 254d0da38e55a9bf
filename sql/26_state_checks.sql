--
-- 26_state_checks: what gpusort_state and its support functions accept.
-- The transition functions check an initial state's element type against
-- the values they are given (an aggregate of one's own with a hand-written
-- INITCOND); the text input takes exactly what the output writes; the final
-- functions run only in an aggregate.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;

-- An int2 initial state given int8 values, an int8 state given float8 ones:
-- errors, where the values would be stored as the state's type.
CREATE AGGREGATE pg_temp.sort_int8_in_int2(int8) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_int8,
	INITCOND = 'gpusort_state 1 le int2 asc sorted unlimited nulls=0 param=- n=0 values=');
SELECT pg_temp.sort_int8_in_int2(x) FROM (VALUES (100000::int8), (70000), (3)) v(x);
CREATE AGGREGATE pg_temp.median_float8_in_int8(float8) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state, FINALFUNC = gpu_median_final,
	INITCOND = 'gpusort_state 1 le int8 asc sorted unlimited nulls=0 param=- n=0 values=');
SELECT pg_temp.median_float8_in_int8(x) FROM (VALUES (1.5::float8), (2.5)) v(x);
-- the same aggregates with states of their own type answer as array_agg and percentile_cont
CREATE AGGREGATE pg_temp.sort_int8(int8) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_int8,
	INITCOND = 'gpusort_state 1 le int8 asc sorted unlimited nulls=1 param=- n=1 values=0500000000000000');
SELECT pg_temp.sort_int8(x) AS with_initial_5_and_null,
	   pg_temp.sort_int8(x) = (SELECT array_agg(y ORDER BY y) FROM (VALUES (100000::int8), (70000), (3), (5), (NULL)) w(y))
		   AS same_as_array_agg
FROM (VALUES (100000::int8), (70000), (3)) v(x);
CREATE AGGREGATE pg_temp.median_float8(float8) (
	SFUNC = gpu_collect_transfn, STYPE = gpusort_state, FINALFUNC = gpu_median_final,
	INITCOND = 'gpusort_state 1 le float8 asc sorted unlimited nulls=0 param=- n=0 values=');
SELECT pg_temp.median_float8(x) = percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS same_median
FROM (VALUES (1.5::float8), (2.5)) v(x);

-- The text form: what gpusort_state_out writes reads back; forms it never
-- writes are errors (tabs where hexadecimal digits belong, a sign or a
-- leading zero in a count, upper-case digits, a space at the end, an empty
-- constant argument, no values written as "-").
SELECT s::gpusort_state::text = s AS round_trip
FROM (VALUES ('gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=1 values=00000000'),
			 ('gpusort_state 1 le int4 asc sorted unlimited nulls=10 param=- n=0 values='),
			 ('gpusort_state 1 le float8 desc unsorted limited nulls=0 param=03000000 n=2 values=000000000000f03f0000000000000040')) v(s);
SELECT E'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=1 values=\t\t\t\t\t\t\t\t'::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=+0 values='::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=00 param=- n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=1 values=0A000000'::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=0 values= '::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param= n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=0 values=-'::gpusort_state;

-- Final functions called outside an aggregate
SELECT gpu_median_final('gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=3 values=010000000200000003000000'::gpusort_state);
SELECT gpu_topk_agg_final_int4('gpusort_state 1 le int4 asc unsorted limited nulls=0 param=02000000 n=1 values=00000000'::gpusort_state);
SELECT gpu_sort_agg_final_int4('gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=0 values='::gpusort_state);

-- An initial state whose constant argument says "an array of fractions" given
-- a single fraction: the fraction's kind comes from the argument's type, and
-- the kept one that differs is an error.
CREATE AGGREGATE pg_temp.pct_lying_state(int4, float8) (
	SFUNC = gpu_percentile_transfn, STYPE = gpusort_state, FINALFUNC = gpu_percentile_cont_agg_final,
	INITCOND = 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=6100000000000000 n=0 values=');
SELECT pg_temp.pct_lying_state(x, 0.5) FROM generate_series(1, 3) x;

-- A state of at most one value is written "sorted": "unsorted" is not its text.
SELECT 'gpusort_state 1 le int4 asc unsorted unlimited nulls=0 param=- n=1 values=01000000'::gpusort_state;

-- An aggregate over a domain takes an initial state of the domain's base type.
CREATE DOMAIN pg_temp.d4 AS int4;
CREATE AGGREGATE pg_temp.sort_d4(pg_temp.d4) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_int4,
	INITCOND = 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=1 values=07000000');
SELECT pg_temp.sort_d4(x::pg_temp.d4) FROM (VALUES (3), (9), (-1)) v(x);

-- A moving window aggregate that pairs gpusort's transition with an inverse
-- transition of one's own (which removes nothing, so each row's answer is
-- the sorted rows from the first): the window replaces (and deletes) the
-- state that the inverse returns, which deletes only that state's memory.
CREATE FUNCTION pg_temp.keep_state(s gpusort_state, x int4) RETURNS gpusort_state LANGUAGE sql AS 'SELECT s';
CREATE AGGREGATE pg_temp.moving_sort(int4) (
	SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state, FINALFUNC = gpu_sort_agg_final_int4,
	MSFUNC = gpu_sort_agg_transfn, MINVFUNC = pg_temp.keep_state, MSTYPE = gpusort_state,
	MFINALFUNC = gpu_sort_agg_final_int4);
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE got IS DISTINCT FROM want) AS mismatches
FROM (SELECT pg_temp.moving_sort(x) OVER w AS got,
			 (SELECT array_agg(y ORDER BY y) FROM generate_series(1, i) j, LATERAL (SELECT (j * 7919) % 1000 AS y) z)
				 AS want
	  FROM (SELECT i, (i * 7919) % 1000 AS x FROM generate_series(1, 300) i) s
	  WINDOW w AS (ORDER BY i ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)) t;
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE got IS DISTINCT FROM want) AS mismatches
FROM (SELECT gpu_sort_agg(x) OVER w AS got,
			 (SELECT array_agg(y ORDER BY y) FROM generate_series(greatest(i - 2, 1), i) j,
				 LATERAL (SELECT (j * 7919) % 1000 AS y) z) AS want
	  FROM (SELECT i, (i * 7919) % 1000 AS x FROM generate_series(1, 3000) i) s
	  WINDOW w AS (ORDER BY i ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)) t;
