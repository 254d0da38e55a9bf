--
-- 37_sort_node_prefix_bound: the sort node under a LIMIT whose keys do not
-- pack exactly (numeric without a small typmod, text, keys past 128 bits).
-- The rows read are pruned by the first key's leading bits: a pruning keeps
-- every row whose leading bits are at most the bound's last row's, and a
-- row read after it is passed over only where its bits are above those.
-- Rows that tie on those bits are kept whatever follows, so the rows
-- returned are Sort's.  strxfrm's bits (libc collations other than C),
-- whose order is only checked after the sort, prune nothing.  Each check
-- compares the node's rows with Sort's on a total order (the row's id the
-- last key), or on the keys alone where ties at the cut may come in any
-- order.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
-- node_check (include/helpers.sql): the node's rows against Sort's
\set ECHO none
\i sql/include/helpers.sql
\set ECHO all
SET gpusort.sort_node_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';

SELECT EXISTS (SELECT FROM pg_collation WHERE collname = 'und-x-icu') AS have_icu \gset

-- numeric values whose abbreviated keys tie (they differ past the first
-- digits it holds), the special values, NULLs; strings that share their
-- first 8 and 16 bytes; a column of few values
SELECT setseed(0.37);
CREATE TABLE pb (id int4, n numeric, w numeric(30,10), t text, c int4);
INSERT INTO pb
SELECT g,
	   CASE WHEN g % 97 = 0 THEN NULL
			WHEN g % 89 = 0 THEN 'NaN'
			WHEN g % 83 = 0 THEN 'Infinity'
			WHEN g % 79 = 0 THEN '-Infinity'
			WHEN g % 3 = 0 THEN 1.00000000000000000000 + floor(random() * 50)::numeric * 1e-20
			ELSE round((random() * 2e6 - 1e6)::numeric, floor(random() * 8)::int) END,
	   round((random() * 1e12)::numeric, 10),
	   CASE WHEN g % 101 = 0 THEN NULL
			WHEN g % 2 = 0 THEN 'shared prefix of sixteen ' || lpad(floor(random() * 400)::text, 4, '0')
			WHEN g % 5 = 0 THEN 'shared p' || floor(random() * 300)::text
			ELSE md5(g::text) END,
	   floor(random() * 5)::int4
FROM generate_series(1, 30000) g;
ANALYZE pb;

-- the rows the node kept of those it read, from EXPLAIN ANALYZE: 'pruned'
-- where the leading bits bounded them, 'read whole' where the node sorted
-- every row, 'not used' where Sort ran
CREATE FUNCTION pb_pruned(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	l text;
	p text := '';
	read bigint;
	kept bigint;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		p := p || l || E'\n';
	END LOOP;
	IF p NOT LIKE '%Custom Scan (gpusort)%' THEN
		RETURN 'not used';
	END IF;
	read := substring(p FROM 'Sort Rows: ([0-9]+)')::bigint;
	kept := substring(p FROM 'with ties of the leading key bits: ([0-9]+) rows')::bigint;
	IF kept IS NULL THEN
		RETURN 'read whole';
	END IF;
	RETURN CASE WHEN kept < read THEN 'pruned' ELSE 'kept all' END;
END $$;

-- numeric: ascending, descending, NULLs first and last, ties of the
-- abbreviated key at and around the cut, bounds below and past the pruning
-- size (4096 rows, twice the bound above that)
SELECT b, node_check('SELECT n, id FROM pb ORDER BY n, id', '', ' LIMIT ' || b) AS asc_,
	   node_check('SELECT n, id FROM pb ORDER BY n DESC, id', '', ' LIMIT ' || b) AS desc_,
	   node_check('SELECT n, id FROM pb ORDER BY n NULLS FIRST, id', '', ' LIMIT ' || b) AS nulls_first,
	   node_check('SELECT n, id FROM pb ORDER BY n DESC NULLS LAST, id', '', ' LIMIT ' || b) AS desc_nulls_last,
	   node_check('SELECT n FROM pb ORDER BY n', '', ' LIMIT ' || b) AS key_only
FROM unnest(ARRAY[1, 10, 100, 1000, 3000, 10000]) b;
-- the ones of 1 + k * 1e-20 sort after every negative and small value: a
-- cut inside their run, where every kept row has the same leading bits
SELECT node_check('SELECT n, id FROM pb WHERE n > 0.99 ORDER BY n, id', '', ' LIMIT 50') AS cut_in_ties,
	   node_check('SELECT n FROM pb WHERE n > 0.99 ORDER BY n', '', ' LIMIT 50') AS cut_in_ties_key_only,
	   node_check('SELECT n, id FROM pb WHERE n > 0.99 ORDER BY n, id', '', ' LIMIT 50 OFFSET 4000') AS offset_;
SELECT pb_pruned('SELECT n, id FROM pb ORDER BY n, id LIMIT 10') AS numeric_10,
	   pb_pruned('SELECT n, id FROM pb ORDER BY n DESC, id LIMIT 100') AS numeric_desc_100,
	   pb_pruned('SELECT w, id FROM pb ORDER BY w, id LIMIT 10') AS numeric_30_10;

-- EXPLAIN's count of the rows held, the bound's and their ties of the
-- leading bits, not the bound's rows returned: 100 strings of 10,000 share
-- their first 8 bytes, the least; read in order of id, the first pruning
-- (at 4096 rows) keeps the 40 read so far, and of the rows read after it
-- only the other 60 tie with them
CREATE TABLE pb_ties AS
SELECT g AS id, CASE WHEN g % 100 = 0 THEN 'aaaaaaaa' || g ELSE 'b' || md5(g::text) END AS t
FROM generate_series(1, 10000) g;
SELECT node_check('SELECT t, id FROM pb_ties ORDER BY t COLLATE "C", id', '', ' LIMIT 10') AS ties_rows;
CREATE FUNCTION pb_held(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	l text;
	p text := '';
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		p := p || l || E'\n';
	END LOOP;
	RETURN substring(p FROM 'Sort Bound: [^\n]*');
END $$;
SELECT pb_held('SELECT t, id FROM pb_ties ORDER BY t COLLATE "C", id LIMIT 10') AS held;
DROP TABLE pb_ties;
DROP FUNCTION pb_held(text);

-- numeric(30,10): too wide to pack exactly, abbreviated
SELECT node_check('SELECT w, id FROM pb ORDER BY w, id', '', ' LIMIT 10') AS wide_asc,
	   node_check('SELECT w, id FROM pb ORDER BY w DESC, id', '', ' LIMIT 500') AS wide_desc;

-- an exact key, then an abbreviated one: the second's leading bits fill
-- the word's rest
SELECT node_check('SELECT c, n, id FROM pb ORDER BY c, n, id', '', ' LIMIT 100') AS int_numeric,
	   node_check('SELECT c, n, id FROM pb ORDER BY c DESC, n DESC, id', '', ' LIMIT 100') AS int_numeric_desc,
	   node_check('SELECT c, t, id FROM pb ORDER BY c, t COLLATE "C", id', '', ' LIMIT 100') AS int_text,
	   pb_pruned('SELECT c, n, id FROM pb ORDER BY c, n, id LIMIT 100') AS int_numeric_pruned;

-- text under C: strings of shared first bytes, NULLs, descending
SELECT b, node_check('SELECT t, id FROM pb ORDER BY t COLLATE "C", id', '', ' LIMIT ' || b) AS c_asc,
	   node_check('SELECT t, id FROM pb ORDER BY t COLLATE "C" DESC, id', '', ' LIMIT ' || b) AS c_desc,
	   node_check('SELECT t FROM pb ORDER BY t COLLATE "C" NULLS FIRST', '', ' LIMIT ' || b) AS c_key_only
FROM unnest(ARRAY[1, 10, 300, 5000]) b;
SELECT node_check('SELECT t, id FROM pb WHERE t LIKE ''shared prefix%'' ORDER BY t COLLATE "C", id', '', ' LIMIT 20') AS c_long_prefix,
	   pb_pruned('SELECT t, id FROM pb ORDER BY t COLLATE "C", id LIMIT 10') AS c_pruned;
-- under ICU's root collation where the server has ICU (the same output without)
SELECT CASE WHEN :'have_icu'::bool THEN node_check('SELECT t, id FROM pb ORDER BY t COLLATE "und-x-icu", id', '', ' LIMIT 10')
			ELSE 'ok' END AS icu_asc,
	   CASE WHEN :'have_icu'::bool THEN node_check('SELECT t, id FROM pb ORDER BY t COLLATE "und-x-icu" DESC, id', '', ' LIMIT 300')
			ELSE 'ok' END AS icu_desc,
	   CASE WHEN :'have_icu'::bool THEN pb_pruned('SELECT t, id FROM pb ORDER BY t COLLATE "und-x-icu", id LIMIT 10')
			ELSE 'pruned' END AS icu_pruned;

-- leading bits that tie in most rows (every string's first 8 bytes the
-- same, numbers equal in their first 20 digits): pruning would keep most
-- rows, and the node gives them to a tuplesort's bounded heap instead, as
-- Sort's
CREATE TABLE pb_ties AS
SELECT g AS id, 'Customer#' || lpad((g * 7919 % 20011)::text, 9, '0') AS t,
	   123456789012345678901234567890 + (g * 7919 % 20011) AS n
FROM generate_series(1, 20000) g;
ANALYZE pb_ties;
SELECT node_check('SELECT t, id FROM pb_ties ORDER BY t COLLATE "C", id', '', ' LIMIT 10') AS ties_text,
	   node_check('SELECT n, id FROM pb_ties ORDER BY n DESC, id', '', ' LIMIT 10') AS ties_numeric,
	   node_check('SELECT t, id FROM pb_ties ORDER BY t COLLATE "C", id', '', ' LIMIT 3000') AS ties_text_3000;
CREATE FUNCTION pb_device(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	l text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF l LIKE '%Sort Device:%' THEN
			-- the node's own sort on either device, or tuplesort's
			RETURN regexp_replace(substring(l FROM 'Sort Device: (.*)$'), '^(cpu|gpu [0-9]+)$', 'words');
		END IF;
	END LOOP;
	RETURN 'not used';
END $$;
SELECT pb_device('SELECT t, id FROM pb_ties ORDER BY t COLLATE "C", id LIMIT 10') AS ties_text_device,
	   pb_device('SELECT n, id FROM pb_ties ORDER BY n, id LIMIT 10') AS ties_numeric_device;
DROP TABLE pb_ties;
-- rescans of a changing bound, the rows going to the heap on one scan and
-- pruned on the next: the first 100 rows' leading bits differ, the rest tie
CREATE TABLE pb_mixed AS
SELECT g AS id, CASE WHEN g <= 100 THEN g ELSE 1000 END AS st,
	   'Customer#' || lpad((g * 7919 % 20011)::text, 9, '0') AS t
FROM generate_series(1, 10000) g;
ANALYZE pb_mixed;
SELECT pb_device('SELECT st, t, id FROM pb_mixed ORDER BY st, t COLLATE "C", id LIMIT 50') AS mixed_50_device,
	   pb_device('SELECT st, t, id FROM pb_mixed ORDER BY st, t COLLATE "C", id LIMIT 500') AS mixed_500_device;
SELECT node_check('SELECT o, s.* FROM unnest(ARRAY[5, 500, 3, NULL, 2000, 0, 50, 1]) WITH ORDINALITY u(k, o),
						  LATERAL (SELECT st, t, id FROM pb_mixed ORDER BY st, t COLLATE "C", id LIMIT k) s', '') AS mixed_rescans,
	   node_check('SELECT o, s.* FROM unnest(ARRAY[500, 5, 2000, 3, 50]) WITH ORDINALITY u(k, o),
						  LATERAL (SELECT st, t, id FROM pb_mixed ORDER BY st, t COLLATE "C", id LIMIT 10 OFFSET k) s', '') AS mixed_offset_rescans;
DROP TABLE pb_mixed;

-- a libc collation other than C (strxfrm's bits, checked after the sort):
-- the node reads every row
-- (the same output where the server has none of these)
SELECT coalesce((SELECT collname FROM pg_collation
				 WHERE collprovider = 'c' AND collname IN ('C.utf8', 'C.UTF-8', 'en_US.utf8')
					   AND collencoding IN (-1, pg_char_to_encoding(getdatabaseencoding()))
				 ORDER BY collname LIMIT 1), '') AS libc_coll \gset
SELECT CASE WHEN :'libc_coll' <> '' THEN node_check(format('SELECT t, id FROM pb ORDER BY t COLLATE %I, id', :'libc_coll'), '', ' LIMIT 10')
			ELSE 'ok' END AS libc_limit,
	   CASE WHEN :'libc_coll' <> '' THEN pb_pruned(format('SELECT t, id FROM pb ORDER BY t COLLATE %I, id LIMIT 10', :'libc_coll'))
			ELSE 'read whole' END AS libc_pruned;
-- a first key of five values before a key of strxfrm's bits: the words are
-- the first key's, and the bound's last ties with a fifth of the rows; the
-- rows go to a tuplesort's bounded heap
CREATE TABLE pb_few AS SELECT g AS id, g % 5 AS st, md5(g::text) AS h FROM generate_series(1, 20000) g;
SELECT CASE WHEN :'libc_coll' <> '' THEN node_check(format('SELECT st, h, id FROM pb_few ORDER BY st, h COLLATE %I, id', :'libc_coll'), '', ' LIMIT 10')
			ELSE 'ok' END AS few_values_libc,
	   CASE WHEN :'libc_coll' <> '' THEN pb_device(format('SELECT st, h, id FROM pb_few ORDER BY st, h COLLATE %I, id LIMIT 10', :'libc_coll'))
			ELSE 'tuplesort (ties of the leading key bits)' END AS few_values_libc_device;
DROP TABLE pb_few;
DROP FUNCTION pb_device(text);

-- parallel workers, each pruning the rows it reads, under a Gather Merge
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT node_check('SELECT n, id FROM pb ORDER BY n DESC, id', '', ' LIMIT 10') AS parallel_numeric,
	   node_check('SELECT t, id FROM pb ORDER BY t COLLATE "C", id', '', ' LIMIT 2500') AS parallel_text;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- a bound from a parameter, different on each rescan; a scrollable cursor
SELECT node_check('SELECT k, s.n, s.id FROM generate_series(1, 4) k, LATERAL (SELECT n, id FROM pb ORDER BY n DESC, id LIMIT k * 7) s ORDER BY k, s.n DESC, s.id', '') AS lateral_bound;
PREPARE pb_q(int) AS SELECT n, id FROM pb ORDER BY n, id LIMIT $1;
SET plan_cache_mode = force_generic_plan;
SET gpusort.enable_sort = on;
CREATE TABLE pb_on AS SELECT b, (SELECT array_agg(n) FROM (SELECT n FROM pb ORDER BY n, id LIMIT b) s) AS a
FROM unnest(ARRAY[1, 5, 3000]) b;
EXECUTE pb_q(5);
SET gpusort.enable_sort = off;
SELECT b, a = (SELECT array_agg(n) FROM (SELECT n FROM pb ORDER BY n, id LIMIT b) s) AS same FROM pb_on ORDER BY b;
EXECUTE pb_q(5);
RESET gpusort.enable_sort;
RESET plan_cache_mode;
DEALLOCATE pb_q;
BEGIN;
SET LOCAL gpusort.enable_sort = on;
DECLARE pb_c SCROLL CURSOR FOR SELECT n, id FROM pb ORDER BY n DESC NULLS LAST, id LIMIT 6;
FETCH 4 FROM pb_c;
FETCH BACKWARD 2 FROM pb_c;
FETCH ALL FROM pb_c;
COMMIT;
SELECT n, id FROM pb ORDER BY n DESC NULLS LAST, id LIMIT 6;

-- with the default settings, a LIMIT over a numeric sum of many groups
-- (TPC-H's Q3 and Q10) takes the node, and an int4 key of one word under a
-- small LIMIT keeps Sort's heap
RESET gpusort.sort_node_min_rows;
EXPLAIN (COSTS OFF) SELECT id, sum(n) AS s FROM pb GROUP BY id ORDER BY s DESC, id LIMIT 10;
SELECT node_check('SELECT id, sum(n) AS s FROM pb GROUP BY id ORDER BY s DESC, id', '', ' LIMIT 10') AS sum_limit;
EXPLAIN (COSTS OFF) SELECT id FROM pb ORDER BY id LIMIT 10;
-- nor where the leading bits cost more than the heap's comparisons (an ICU
-- sort key for each row) or would prune nothing (strxfrm's)
CREATE FUNCTION pb_node(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	l text;
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF l LIKE '%Custom Scan (gpusort)%' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END $$;
SELECT pb_node('SELECT id, t FROM pb ORDER BY t COLLATE "C" LIMIT 10') AS c_node,
	   CASE WHEN :'have_icu'::bool THEN pb_node('SELECT id, t FROM pb ORDER BY t COLLATE "und-x-icu" LIMIT 10')
			ELSE false END AS icu_node,
	   CASE WHEN :'libc_coll' <> '' THEN pb_node(format('SELECT id, t FROM pb ORDER BY t COLLATE %I LIMIT 10', :'libc_coll'))
			ELSE false END AS libc_node;
-- nor where each value of the first key has more rows than the bound, by
-- the column's statistics: its leading bits would tie at the cut, and the
-- node would give its rows to a tuplesort's bounded heap, Sort's plan; a
-- first key that packs exactly prunes whatever its ties
CREATE TABLE pb_cat AS
SELECT lpad((g % 100)::text, 3, '0') || ' category' AS cat, (g * 7919 % 100003) / 100.0 AS m, g AS id
FROM generate_series(1, 100000) g;
ANALYZE pb_cat;
SELECT pb_node('SELECT cat, m FROM pb_cat ORDER BY cat COLLATE "C", m LIMIT 100') AS few_values_node,
	   pb_node('SELECT cat, m FROM pb_cat ORDER BY cat COLLATE "C", m LIMIT 2000') AS few_values_2000_node,
	   pb_node('SELECT cat, id FROM pb_cat ORDER BY id, cat LIMIT 100') AS exact_node;
DROP TABLE pb_cat;
DROP FUNCTION pb_node(text);

DROP TABLE pb, pb_on;
DROP FUNCTION pb_pruned(text);
