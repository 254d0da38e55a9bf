-- gpu_sort(array_agg(x)) is planned as gpu_sort_agg(x) only where the
-- rewritten query raises every error and makes every privilege check that
-- the query as written does.  The rewrite drops an ORDER BY inside
-- array_agg, so it is made only where evaluating and comparing its keys
-- cannot fail: each key a column or a constant (or one under a COLLATE) of
-- a built-in scalar type or an enum, with a collation where the type has
-- one, sorted by a built-in operator.  It drops the calls of gpu_sort and
-- array_agg, whose EXECUTE the executor checks as the role that runs the
-- plan, so it is made only where PUBLIC may execute both and gpu_sort runs
-- as called (no SET option, not SECURITY DEFINER), and a cached plan is
-- replanned when their rights or options change.  Each failing query is
-- run as written and in a form the planner cannot rewrite (array_agg in a
-- subquery, gpu_sort over its result): the two raise the same error.

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE g (k int, x int4, y float8);
INSERT INTO g VALUES (1, 3, 'NaN'), (1, NULL, '-0'), (1, 1, '0'), (2, NULL, NULL), (3, 5, 'Infinity'),
					 (3, 2, '-Infinity');

-- What a query's plan aggregates with: 'gpu_sort_agg' (rewritten) or
-- 'array_agg' (left alone).
CREATE FUNCTION plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	RETURN concat_ws(', ',
		CASE WHEN plan LIKE '%gpu\_sort\_agg(%' THEN 'gpu_sort_agg' END,
		CASE WHEN plan LIKE '%array\_agg(%' THEN 'array_agg' END);
END $$;

-- ORDER BY keys whose evaluation fails: a cast out of range, a division by
-- zero, a subquery (its division is folded when it is planned, only where
-- it is kept, and then even where FILTER leaves no row).  Not rewritten: the
-- error is raised.
SELECT gpu_sort(array_agg(x ORDER BY (y::int))) FROM g;
SELECT gpu_sort((SELECT array_agg(x ORDER BY (y::int)) FROM g));
SELECT gpu_sort(array_agg(x ORDER BY 1 / (x - 1))) FROM g;
SELECT gpu_sort((SELECT array_agg(x ORDER BY 1 / (x - 1)) FROM g));
SELECT gpu_sort(array_agg(x ORDER BY (SELECT 1 / 0))) FROM g;
SELECT gpu_sort((SELECT array_agg(x ORDER BY (SELECT 1 / 0)) FROM g));
SELECT gpu_sort(array_agg(x ORDER BY (SELECT 1 / 0)) FILTER (WHERE x > 100)) FROM g;

-- ORDER BY keys whose comparison fails: a user-defined ordering operator
-- (its comparison function divides by zero when it meets 3), on the
-- aggregated argument itself or on another column, and text whose
-- collation is indeterminate (two columns' implicit collations conflict).
CREATE FUNCTION rc_cmp(int4, int4) RETURNS int4 LANGUAGE sql IMMUTABLE STRICT
AS 'SELECT CASE WHEN $1 = 3 OR $2 = 3 THEN 1 / 0 ELSE btint4cmp($1, $2) END';
CREATE FUNCTION rc_lt(int4, int4) RETURNS bool LANGUAGE sql IMMUTABLE STRICT AS 'SELECT rc_cmp($1, $2) < 0';
CREATE OPERATOR <<< (LEFTARG = int4, RIGHTARG = int4, FUNCTION = rc_lt);
CREATE OPERATOR CLASS rc_int4_ops FOR TYPE int4 USING btree AS OPERATOR 1 <<<, OPERATOR 3 =,
	FUNCTION 1 rc_cmp(int4, int4);
\set VERBOSITY terse
SELECT gpu_sort(array_agg(x ORDER BY x USING <<<)) FROM g;
SELECT gpu_sort((SELECT array_agg(x ORDER BY x USING <<<) FROM g));
SELECT gpu_sort(array_agg(k ORDER BY x USING <<<)) FROM g;
SELECT gpu_sort((SELECT array_agg(k ORDER BY x USING <<<) FROM g));
\set VERBOSITY default
CREATE TABLE gc (x int4, a text COLLATE "C", b text COLLATE "POSIX");
INSERT INTO gc VALUES (1, 'a', 'b'), (2, 'c', 'd');
SELECT gpu_sort(array_agg(x ORDER BY t)) FROM (SELECT x, a || b AS t FROM gc OFFSET 0) s;
SELECT gpu_sort((SELECT array_agg(x ORDER BY t) FROM (SELECT x, a || b AS t FROM gc OFFSET 0) s));
-- the same key under a COLLATE compares, but it is a column of a subquery
-- that is not pulled up, an expression there, so it is not rewritten
SELECT plan_of('SELECT gpu_sort(array_agg(x ORDER BY t COLLATE "C")) FROM (SELECT x, a || b AS t FROM gc OFFSET 0) s');
SELECT gpu_sort(array_agg(x ORDER BY t COLLATE "C"), true) FROM (SELECT x, a || b AS t FROM gc OFFSET 0) s;

-- A key that is a column of a subquery the planner keeps (OFFSET, LIMIT, a
-- view with them, UNION ALL, LATERAL) stands for an expression there, which
-- the planner would replace by NULL once the rewrite dropped the key: not
-- rewritten, the error and the privilege check are made.
SELECT gpu_sort(array_agg(x ORDER BY d)) FROM (SELECT x, 1 / (x - 1) AS d FROM g OFFSET 0) s;
SELECT gpu_sort((SELECT array_agg(x ORDER BY d) FROM (SELECT x, 1 / (x - 1) AS d FROM g OFFSET 0) s));
SELECT gpu_sort(array_agg(x ORDER BY d)) FROM (SELECT x, (y::int) AS d FROM g LIMIT 100) s;
CREATE VIEW gv AS SELECT x, 1 / (x - 1) AS d FROM g OFFSET 0;
SELECT gpu_sort(array_agg(x ORDER BY d)) FROM gv;
SELECT gpu_sort(array_agg(x ORDER BY d)) FROM (SELECT x, 1 / (x - 1) AS d FROM g UNION ALL SELECT x, 0 FROM g) s;
SELECT gpu_sort(array_agg(x ORDER BY d)) FROM g, LATERAL (SELECT 1 / (x - 1) AS d OFFSET 0) l;
DROP VIEW gv;

-- Keys that are rewritten and keys that are left alone: each query grouped
-- by k, its plan, and how many groups' arrays differ (as text: -0 and +0
-- told apart) from the form the planner cannot rewrite.
CREATE TYPE rc_mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN rc_digit AS int2 CHECK (VALUE BETWEEN 0 AND 9);
CREATE TYPE rc_pair AS (a int4, b text);
CREATE TABLE gk AS
SELECT i AS id, i % 5 AS k, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7919 % 2001) - 1000 END::int4 AS x,
	   CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 31 % 1000) / 10.0)::float8 END AS y,
	   (ARRAY['sad', 'ok', 'happy'])[1 + i % 3]::rc_mood AS m, (i % 10)::rc_digit AS d, md5(i::text) AS t,
	   md5(i::text)::varchar(40) AS v, ARRAY[i % 7, i] AS arr, ROW(i % 3, md5(i::text))::rc_pair AS pair
FROM generate_series(1, 3000) i;
ANALYZE gk;

CREATE FUNCTION rc_compare(order_by text, descending bool, OUT plan text, OUT groups int, OUT mismatches int)
LANGUAGE plpgsql AS $$
DECLARE
	rewritten text := format('SELECT k, gpu_sort(array_agg(x ORDER BY %s), %s) AS s FROM gk GROUP BY k',
							 order_by, descending::text);
	unrewritten text := format('SELECT k, gpu_sort(a, %s) AS s FROM (SELECT k, array_agg(x ORDER BY %s) AS a'
							   ' FROM gk GROUP BY k OFFSET 0) u', descending::text, order_by);
BEGIN
	plan := plan_of(rewritten);
	EXECUTE format('SELECT count(*), count(*) FILTER (WHERE r.s::text IS DISTINCT FROM u.s::text)'
				   ' FROM (%s) r FULL JOIN (%s) u USING (k)', rewritten, unrewritten)
		INTO groups, mismatches;
END $$;

-- Rewritten: columns and constants of built-in scalar types, an enum, a
-- domain, text with its column's collation or a COLLATE, varchar (sorted as
-- text), several keys.
SELECT order_by, descending, c.*
FROM unnest(ARRAY['id', 'id DESC', 'y NULLS FIRST', 'x', 'x DESC', 'm', 'd DESC', 't', 't COLLATE "C"',
				  'v', '1', '''z''::text', 'm, t DESC, id']) order_by,
	 unnest(ARRAY[false, true]) descending,
	 LATERAL rc_compare(order_by, descending) c
ORDER BY descending, order_by;

-- Left alone: a function, an operator, a cast, a subquery, a record or an
-- array (their parts are compared with their types' own functions).  The
-- same answers.
SELECT order_by, c.*
FROM unnest(ARRAY['abs(x)', 'x + 1', 'y::int', 'id::int8', '(SELECT 1)', 'lower(t)', 'arr', 'pair', 'gk',
				  'ROW(k, id)']) order_by,
	 LATERAL rc_compare(order_by, false) c
ORDER BY order_by;

-- Privileges.  A role with only the right to read the table.
CREATE ROLE regress_rc_user;
GRANT SELECT ON g TO regress_rc_user;

-- Without EXECUTE on gpu_sort (this overload), the role may not sort an
-- array, nor one that array_agg gathered; not rewritten.
REVOKE EXECUTE ON FUNCTION gpu_sort(int4[], bool, bool) FROM PUBLIC;
SET ROLE regress_rc_user;
SELECT gpu_sort('{3,1,2}'::int4[]);
SELECT gpu_sort(array_agg(x)) FROM g;
SELECT gpu_sort(array_agg(x ORDER BY y), true) FROM g;
RESET ROLE;
SELECT plan_of('SELECT gpu_sort(array_agg(x)) FROM g');
-- another overload is not affected
SELECT plan_of('SELECT gpu_sort(array_agg(y)) FROM g');
GRANT EXECUTE ON FUNCTION gpu_sort(int4[], bool, bool) TO PUBLIC;

-- Without EXECUTE on array_agg(anynonarray): the same.
REVOKE EXECUTE ON FUNCTION array_agg(anynonarray) FROM PUBLIC;
SET ROLE regress_rc_user;
SELECT array_agg(x) FROM g;
SELECT gpu_sort(array_agg(x)) FROM g;
RESET ROLE;
SELECT plan_of('SELECT gpu_sort(array_agg(x)) FROM g');
GRANT EXECUTE ON FUNCTION array_agg(anynonarray) TO PUBLIC;

-- Without EXECUTE on a function used as an ORDER BY key inside array_agg.
CREATE FUNCTION rc_key(int4) RETURNS int4 LANGUAGE sql IMMUTABLE STRICT AS 'SELECT -$1';
REVOKE EXECUTE ON FUNCTION rc_key(int4) FROM PUBLIC;
SET ROLE regress_rc_user;
SELECT gpu_sort(array_agg(x ORDER BY rc_key(x))) FROM g;
-- the same function behind a column of a subquery that is not pulled up
SELECT gpu_sort(array_agg(x ORDER BY d)) FROM (SELECT x, rc_key(x) AS d FROM g OFFSET 0) s;
RESET ROLE;

-- Column privileges are the query's, rewritten or not: an ORDER BY key's
-- column that the role may not read is refused.
CREATE TABLE gp AS SELECT * FROM g;
GRANT SELECT (k, x) ON gp TO regress_rc_user;
SET ROLE regress_rc_user;
SELECT gpu_sort(array_agg(x ORDER BY k)) FROM gp;
SELECT gpu_sort(array_agg(x ORDER BY y)) FROM gp;
RESET ROLE;
REVOKE ALL ON gp FROM regress_rc_user;
DROP TABLE gp;

-- gpu_sort with a SET option runs with that setting, which a role may not
-- be allowed to make; SECURITY DEFINER runs it as its owner: not rewritten.
ALTER FUNCTION gpu_sort(int4[], bool, bool) SET zero_damaged_pages = off;
SET ROLE regress_rc_user;
SELECT gpu_sort('{3,1,2}'::int4[]);
SELECT gpu_sort(array_agg(x)) FROM g;
RESET ROLE;
SELECT plan_of('SELECT gpu_sort(array_agg(x)) FROM g');
ALTER FUNCTION gpu_sort(int4[], bool, bool) RESET ALL;
ALTER FUNCTION gpu_sort(int4[], bool, bool) SECURITY DEFINER;
SELECT plan_of('SELECT gpu_sort(array_agg(x)) FROM g');
ALTER FUNCTION gpu_sort(int4[], bool, bool) SECURITY INVOKER;

-- With the rights restored, rewritten again, and the role's answer is
-- PostgreSQL's.
SELECT plan_of('SELECT gpu_sort(array_agg(x)) FROM g');
SET ROLE regress_rc_user;
SELECT gpu_sort(array_agg(x ORDER BY y), true)::text = (SELECT array_agg(x ORDER BY x DESC)::text FROM g) AS same
FROM g;
RESET ROLE;

-- A plan cached before a REVOKE: the generic plan of a prepared statement,
-- rewritten while PUBLIC may execute both functions, is replanned after the
-- REVOKE, so that the role is refused as for the unrewritten query; after
-- the GRANT it is rewritten again.  The same after a SET option is added.
SET plan_cache_mode = force_generic_plan;
SET ROLE regress_rc_user;
PREPARE rc_cached AS SELECT gpu_sort(array_agg(x ORDER BY k)) FROM g;
SELECT plan_of('EXECUTE rc_cached');
EXECUTE rc_cached;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION array_agg(anynonarray) FROM PUBLIC;
SELECT plan_of('EXECUTE rc_cached');
SET ROLE regress_rc_user;
EXECUTE rc_cached;
RESET ROLE;
GRANT EXECUTE ON FUNCTION array_agg(anynonarray) TO PUBLIC;
SET ROLE regress_rc_user;
SELECT plan_of('EXECUTE rc_cached');
EXECUTE rc_cached;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION gpu_sort(int4[], bool, bool) FROM PUBLIC;
SET ROLE regress_rc_user;
EXECUTE rc_cached;
RESET ROLE;
GRANT EXECUTE ON FUNCTION gpu_sort(int4[], bool, bool) TO PUBLIC;
SET ROLE regress_rc_user;
EXECUTE rc_cached;
RESET ROLE;
ALTER FUNCTION gpu_sort(int4[], bool, bool) SET zero_damaged_pages = off;
SET ROLE regress_rc_user;
EXECUTE rc_cached;
RESET ROLE;
ALTER FUNCTION gpu_sort(int4[], bool, bool) RESET ALL;
SELECT plan_of('EXECUTE rc_cached');
DEALLOCATE rc_cached;
RESET plan_cache_mode;

DROP FUNCTION rc_key(int4);
REVOKE ALL ON g FROM regress_rc_user;
DROP ROLE regress_rc_user;
DROP TABLE g, gc, gk;
DROP FUNCTION rc_compare(text, bool), plan_of(text);
DROP TYPE rc_mood, rc_pair;
DROP DOMAIN rc_digit;
DROP OPERATOR FAMILY rc_int4_ops USING btree;
DROP OPERATOR <<< (int4, int4);
DROP FUNCTION rc_lt(int4, int4), rc_cmp(int4, int4);
RESET max_parallel_workers_per_gather;
