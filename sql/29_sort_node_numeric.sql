--
-- 29_sort_node_numeric: the sort node on numeric keys whose typmod bounds
-- them to 18 digits (numeric(p,s), p <= 18, and domains over it) packs each
-- value exactly, as an integer of the scale's units: equal bits are equal
-- keys and no tie pass runs.  EXPLAIN VERBOSE says how each key orders the
-- rows; the node's rows must be Sort's (the node keeps ties in input order:
-- Sort gets ctid as the last key).  Covered: DESC, NULLS FIRST and LAST,
-- NaN, negative values, the edges of each precision, a negative scale and a
-- scale above the precision, composite keys with text and int4 on either
-- side, LIMIT, an unbounded numeric (its abbreviated key, a prefix), and a
-- value that its column's typmod does not bound, which goes to Sort's way.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
-- node_check (include/helpers.sql): the node's rows against Sort's
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all
SET gpusort.sort_node_min_rows = 0;
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 0;

CREATE DOMAIN nn_amount AS numeric(15,2);
CREATE DOMAIN nn_positive AS nn_amount CHECK (VALUE >= 0);

SELECT setseed(0.29);
CREATE TABLE nn (
	id int4,
	a numeric(15,2),			-- 51 bits
	b numeric(18,4),			-- 61 bits, the widest exact packing
	c numeric(5,-2),			-- hundreds
	d numeric(3,5),				-- below 0.001
	m numeric(9,2),				-- 31 bits: with an int4, one 64-bit word
	e nn_amount,
	p nn_positive,
	w numeric(19,2),			-- 19 digits: its abbreviated key
	u numeric,					-- unbounded: its abbreviated key
	t text,
	i int4
);
INSERT INTO nn
SELECT g,
	   CASE WHEN random() < 0.05 THEN NULL
			WHEN random() < 0.03 THEN 'NaN'
			WHEN random() < 0.05 THEN (ARRAY[9999999999999.99, -9999999999999.99, 0.01, -0.01, 0])[1 + floor(random() * 5)::int]
			WHEN random() < 0.3 THEN floor(random() * 50) - 25
			ELSE round(((random() - 0.5) * 10 ^ (floor(random() * 14)))::numeric, 2) END,
	   CASE WHEN random() < 0.05 THEN NULL
			WHEN random() < 0.03 THEN 'NaN'
			WHEN random() < 0.05 THEN (ARRAY[99999999999999.9999, -99999999999999.9999, 0.0001, -0.0001])[1 + floor(random() * 4)::int]
			ELSE round(((random() - 0.5) * 10 ^ (floor(random() * 15)))::numeric, 4) END,
	   CASE WHEN random() < 0.05 THEN NULL
			ELSE round(((random() - 0.5) * 10 ^ (floor(random() * 8)))::numeric, -2) END,
	   CASE WHEN random() < 0.05 THEN 'NaN'
			ELSE round(((random() - 0.5) * 0.002)::numeric, 5) END,
	   round(((random() - 0.5) * 10 ^ (floor(random() * 8)))::numeric, 2),
	   CASE WHEN random() < 0.05 THEN NULL
			ELSE round(((random() - 0.5) * 10 ^ (floor(random() * 14)))::numeric, 2) END,
	   round((random() * 10 ^ (floor(random() * 6)))::numeric, 2),
	   CASE WHEN random() < 0.05 THEN (ARRAY[99999999999999999.99, -99999999999999999.99])[1 + floor(random() * 2)::int]
			ELSE round(((random() - 0.5) * 10 ^ (floor(random() * 18)))::numeric, 2) END,
	   CASE WHEN random() < 0.05 THEN NULL
			WHEN random() < 0.06 THEN (ARRAY['NaN', 'Infinity', '-Infinity'])[1 + floor(random() * 3)::int]::numeric
			WHEN random() < 0.2 THEN 123456789012345678901234 + floor(random() * 10) / 1e9
			ELSE round(((random() - 0.5) * 10 ^ (floor(random() * 10)))::numeric, floor(random() * 5)::int) END,
	   (ARRAY['', 'a', 'b', 'a shared prefix x', 'a shared prefix y'])[1 + floor(random() * 5)::int],
	   CASE WHEN random() < 0.05 THEN NULL ELSE floor(random() * 20)::int4 - 10 END
FROM generate_series(1, 6000) g;
ANALYZE nn;

-- How the node orders by each key (EXPLAIN VERBOSE's Sort Key Packing), or
-- 'not used'.
CREATE FUNCTION nn_packing(keys text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM nn ORDER BY ' || keys LOOP
		IF line LIKE '%Sort Key Packing:%' THEN
			RETURN btrim(line);
		END IF;
	END LOOP;
	RETURN 'not used';
END $$;

-- The node's rows against Sort's, ctid last for Sort (node_check,
-- include/helpers.sql): 'ok', 'not used' or what differs.
CREATE FUNCTION nn_check(keys text, lim text DEFAULT '') RETURNS text LANGUAGE sql
	RETURN node_check('SELECT * FROM nn ORDER BY ' || keys, ', ctid', lim);

-- exact where the typmod bounds the precision to 18 digits, domains
-- included; a prefix for numeric(19,2), an unbounded numeric and an
-- expression (its typmod is -1), and the keys after a prefix by their
-- comparator alone
SELECT k, nn_packing(k)
FROM unnest(ARRAY['a', 'a DESC NULLS LAST', 'b', 'c', 'd', 'm', 'e', 'p', 'w', 'u', 'a * 2',
				  'm, i', 'i, a', 'a, t', 'u, a', 't COLLATE "C", a']) k;

-- the node's rows are Sort's
SELECT k, nn_check(k)
FROM unnest(ARRAY['a', 'a DESC', 'a NULLS FIRST', 'a DESC NULLS LAST',
				  'b', 'b DESC', 'b DESC NULLS LAST', 'c', 'c DESC NULLS LAST', 'd', 'd DESC',
				  'm', 'm DESC', 'e', 'e DESC NULLS LAST', 'p DESC', 'w', 'w DESC', 'u', 'u DESC NULLS LAST',
				  'a, t', 'a DESC, t DESC', 't COLLATE "C", a DESC', 'i, a', 'i DESC NULLS FIRST, a NULLS FIRST',
				  'm, i', 'm DESC, i NULLS FIRST', 'a, b, c', 'e, u', 'u, a']) k;

-- bounded sorts: the rows pruned to the bound as they are read
SELECT k, lim, nn_check(k, lim)
FROM unnest(ARRAY['a', 'a DESC NULLS LAST', 'b DESC', 'm, i']) k,
	 unnest(ARRAY[' LIMIT 1', ' LIMIT 100', ' LIMIT 2500 OFFSET 10']) lim
ORDER BY 1, 2;

-- the node under a GroupAggregate and a window, on a numeric(15,2) key
SET enable_hashagg = off;
SELECT count(*) AS groups, sum(n) AS rows, md5(string_agg(a::text || ':' || n, ',')) AS group_rows
FROM (SELECT a, count(*) AS n FROM nn GROUP BY a) s \gset
SET gpusort.enable_sort = off;
SELECT :groups AS groups, :rows AS rows, md5(string_agg(a::text || ':' || n, ',')) = :'group_rows' AS groups_same_as_sort
FROM (SELECT a, count(*) AS n FROM nn GROUP BY a) s;
RESET gpusort.enable_sort;
SELECT md5(string_agg(r::text, ',')) AS window_rows
FROM (SELECT id, sum(i) OVER (PARTITION BY t ORDER BY a, id) FROM nn ORDER BY id) r \gset
SET gpusort.enable_sort = off;
SELECT md5(string_agg(r::text, ',')) = :'window_rows' AS window_same_as_sort
FROM (SELECT id, sum(i) OVER (PARTITION BY t ORDER BY a, id) FROM nn ORDER BY id) r;
RESET gpusort.enable_sort;
RESET enable_hashagg;

-- Under a LIMIT the planner counts on the pruning of an exact key of at
-- most 64 bits (its NULL bit included): the rows it keeps fit in work_mem
-- where the whole input would not.  An expression of the column has no
-- typmod, so no exact packing and no pruning: Sort.
SET work_mem = '2MB';
RESET gpusort.sort_node_min_rows;
CREATE TABLE nn_big AS
SELECT g AS id, round((random() * 1e6)::numeric, 2)::numeric(15,2) AS a FROM generate_series(1, 100000) g;
ANALYZE nn_big;
CREATE FUNCTION nn_big_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line LIKE '%Custom Scan (gpusort)%' THEN
			RETURN 'node';
		END IF;
	END LOOP;
	RETURN 'Sort';
END $$;
SELECT nn_big_plan('SELECT * FROM nn_big ORDER BY a LIMIT 10000') AS exact_key,
	   nn_big_plan('SELECT * FROM nn_big ORDER BY a + 0 LIMIT 10000') AS expression;
SELECT md5(string_agg(r::text, ',')) AS limit_rows FROM (SELECT * FROM nn_big ORDER BY a LIMIT 10000) r \gset
SET gpusort.enable_sort = off;
SELECT md5(string_agg(r::text, ',')) = :'limit_rows' AS limit_same_as_sort
FROM (SELECT * FROM nn_big ORDER BY a, ctid LIMIT 10000) r;
RESET gpusort.enable_sort;
RESET work_mem;
SET gpusort.sort_node_min_rows = 0;
DROP TABLE nn_big;

-- A column whose typmod says numeric(15,2) over values that it does not
-- bound (a catalog changed under the data): the values past the packing go
-- to Sort's way (a tuplesort, which leaves peers in any order), and the
-- keys still come out in Sort's order.
CREATE TABLE nn_loose (id int4, v numeric);
INSERT INTO nn_loose
SELECT g, CASE g % 4 WHEN 0 THEN g * 1.25 WHEN 1 THEN -g * 0.0001 WHEN 2 THEN 123456789012345.5 - g ELSE g END
FROM generate_series(1, 3000) g;
UPDATE pg_attribute SET atttypmod = ((15 << 16) | 2) + 4
WHERE attrelid = 'nn_loose'::regclass AND attname = 'v';
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'nn_loose'::regclass AND attname = 'v';
-- The keys in the node's order against Sort's, without their display
-- scales (5 and 5.00 are peers, which a tuplesort leaves in any order), and
-- where the node's rows were sorted.
CREATE FUNCTION nn_loose_check(cond text, OUT same_as_sort bool, OUT sorted_by text) LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT * FROM nn_loose WHERE ' || cond || ' ORDER BY v';
	line text;
	got text;
	want text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	sorted_by := 'Sort';
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF line LIKE '%Sort Device:%' THEN
			sorted_by := CASE WHEN line LIKE '%tuplesort%' THEN 'a tuplesort' ELSE 'the node''s own sort' END;
		END IF;
	END LOOP;
	EXECUTE format('SELECT md5(string_agg(trim_scale(v)::text, '','')) FROM (%s) s', q) INTO got;
	SET LOCAL gpusort.enable_sort = off;
	EXECUTE format('SELECT md5(string_agg(trim_scale(v)::text, '','')) FROM (%s) s', q) INTO want;
	same_as_sort := got IS NOT DISTINCT FROM want;
END $$;
-- values of four decimals, values of 15 digits, both, and values that fit
-- at the column's display scale (the node keeps the columns as arrays and
-- the numeric as its bits, which give back that scale alone)
SELECT cond, c.*
FROM unnest(ARRAY['id % 4 <> 2', 'id % 4 <> 1', 'true', 'v = round(v, 2) AND abs(v) < 1e13 AND scale(v) = 2']) cond,
	 LATERAL nn_loose_check(cond) c;
DROP TABLE nn_loose;
