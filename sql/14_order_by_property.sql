-- Property test of the ORDER BY node: random tables (1 to 4 columns of the
-- supported types, random NULL fractions, few or many distinct values, float
-- specials) and random ORDER BY clauses (1 to 3 keys, each ASC or DESC, NULLS
-- FIRST or LAST), each result compared with PostgreSQL's Sort on the same
-- rows with the row's place in the table (ctid) as the last key (the
-- node's sort is stable).
--
-- Each case has a seed of its own, derived from the base seed printed below;
-- a failing case is listed with it, and SELECT obp_case(<seed>) runs it again.
-- The base seed is fixed so that the output is stable; another one:
--   PGOPTIONS='-c gpusort_test.order_by_seed=12345' make installcheck REGRESS=14_order_by_property

-- The planner offers the node once the module is loaded in the session:
-- preloaded in server mode, else by LOAD (or a first call of a gpusort function).
LOAD 'gpusort';
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';

-- One column's values: an SQL expression of type typ over random(), with
-- about distinct different values and NULLs in a fraction nulls of the rows.
CREATE FUNCTION obp_column(typ text, distinct_values float8, nulls float8) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	v text;
	special text := '';
BEGIN
	v := CASE typ
		WHEN 'int2' THEN format('(floor(random() * %s) - %s)::int2', least(distinct_values, 65535),
								floor(least(distinct_values, 65535) / 2))
		WHEN 'int4' THEN format('(floor(random() * %s) - %s)::int4', least(distinct_values, 4e9),
								floor(least(distinct_values, 4e9) / 2))
		WHEN 'int8' THEN format('((floor(random() * %s) - %s)::int8 * 4611686018427)', distinct_values,
								floor(distinct_values / 2))
		WHEN 'float4' THEN format('((floor(random() * %s) - %s) / 7)::float4', distinct_values,
								  floor(distinct_values / 2))
		WHEN 'float8' THEN format('((floor(random() * %s) - %s) * 1.5e200)::float8', distinct_values,
								  floor(distinct_values / 2))
		WHEN 'date' THEN format('date ''2000-01-01'' + (floor(random() * %s) - %s)::int', least(distinct_values, 1e6),
								floor(least(distinct_values, 1e6) / 2))
		WHEN 'timestamp' THEN format('timestamp ''2000-01-01'' + (floor(random() * %s) - %s) * interval ''1 second''',
									 distinct_values, floor(distinct_values / 2))
		WHEN 'timestamptz' THEN format('timestamptz ''2000-01-01 00:00+00'' + (floor(random() * %s) - %s) * interval ''1 second''',
									   distinct_values, floor(distinct_values / 2))
	END;
	IF typ IN ('float4', 'float8') THEN
		special := format('WHEN random() < 0.05 THEN (ARRAY[''NaN'', ''Infinity'', ''-Infinity'', ''-0'', ''0''])[1 + floor(random() * 5)::int]::%s ', typ);
	ELSIF typ IN ('date', 'timestamp', 'timestamptz') THEN
		special := format('WHEN random() < 0.02 THEN (ARRAY[''infinity'', ''-infinity''])[1 + floor(random() * 2)::int]::%s ', typ);
	END IF;
	RETURN format('CASE WHEN random() < %s THEN NULL %sELSE %s END', nulls, special, v);
END $$;

-- node_check (include/helpers.sql) compares the node's rows with Sort's
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all

-- One case: 'ok', 'not used' (the planner chose Sort, e.g. keys over 128
-- bits), or what differs.
CREATE FUNCTION obp_case(seed int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	types text[] := ARRAY['int2', 'int4', 'int8', 'float4', 'float8', 'date', 'timestamp', 'timestamptz'];
	ncols int;
	nkeys int;
	nrows int;
	cols text := '';
	gen text := '';
	keys text := '';
	q text;
	result text;
BEGIN
	PERFORM setseed((seed % 1000003) / 1000003.0);
	ncols := 1 + floor(random() * 4)::int;
	nrows := (ARRAY[0, 1, 10000, 10000, 20000])[1 + floor(random() * 5)::int];
	FOR c IN 1 .. ncols LOOP
		DECLARE
			typ text := types[1 + floor(random() * 8)::int];
		BEGIN
			cols := cols || format(', c%s %s', c, typ);
			gen := gen || ', ' || obp_column(typ, (ARRAY[3, 100, 1e6])[1 + floor(random() * 3)::int],
											 (ARRAY[0, 0, 0.1, 0.5])[1 + floor(random() * 4)::int]);
		END;
	END LOOP;
	nkeys := 1 + floor(random() * least(ncols, 3))::int;
	FOR k IN 1 .. nkeys LOOP
		keys := keys || format('c%s%s%s, ', 1 + floor(random() * ncols)::int,
							   (ARRAY['', ' DESC'])[1 + floor(random() * 2)::int],
							   (ARRAY['', ' NULLS FIRST', ' NULLS LAST'])[1 + floor(random() * 3)::int]);
	END LOOP;

	DROP TABLE IF EXISTS obp_t;
	EXECUTE format('CREATE TEMP TABLE obp_t (id int4%s)', cols);
	EXECUTE format('INSERT INTO obp_t SELECT g%s FROM generate_series(1, %s) g', gen, nrows);
	ANALYZE obp_t;

	q := 'SELECT * FROM obp_t ORDER BY ' || keys;
	result := node_check(rtrim(q, ', '));
	SET LOCAL gpusort.enable_sort = on;
	IF result LIKE 'differs%' THEN
		RETURN format('differs: %s rows%s ORDER BY %s', nrows, cols, rtrim(keys, ', '));
	END IF;
	RETURN result;
END $$;

SELECT coalesce(nullif(current_setting('gpusort_test.order_by_seed', true), '')::int, 1414) AS base_seed \gset
SELECT :base_seed AS base_seed;

CREATE TEMP TABLE obp_results AS
SELECT i, :base_seed * 1000 + i AS seed, obp_case(:base_seed * 1000 + i) AS result
FROM generate_series(1, 60) i;

-- no case differs; most cases ran in the node
SELECT seed, result FROM obp_results WHERE result NOT IN ('ok', 'not used') ORDER BY i;
SELECT count(*) AS cases, count(*) FILTER (WHERE result = 'ok') >= 25 AS most_in_node
FROM obp_results;

DROP TABLE obp_results;
DROP TABLE IF EXISTS obp_t;
DROP FUNCTION obp_case(int);
DROP FUNCTION obp_column(text, float8, float8);
