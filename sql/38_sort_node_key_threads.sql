--
-- 38_sort_node_key_threads: the sort node's string transformations on
-- several threads.  Under an ICU collation (in a UTF-8 database) and a libc
-- collation other than C, the node transforms the strings it reads in
-- batches, and the tied rows' whole strings in the tie pass, on up to
-- gpusort.key_threads threads.  Each query's rows are compared with Sort's
-- (ctid last for Sort: the node keeps peers in input order) at 1, 2, 4 and
-- 64 threads: strings of a shared prefix, NULLs, duplicates, strings whose
-- strxfrm is longer than a word's buffer (1,500 bytes), and strings whose
-- ICU sort key is many times their bytes (U+FDFA expands to 18
-- characters), which the backend transforms again after the threads.
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

SELECT EXISTS (SELECT FROM pg_collation WHERE collname = 'und-x-icu') AS have_icu \gset
\if :have_icu
CREATE COLLATION kt_nd (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
\endif
CREATE TEMP TABLE kt_collations AS
SELECT quote_ident(collname) AS coll
FROM pg_collation
WHERE collname IN ('C.utf8', 'C.UTF-8', 'en_US.utf8', 'en_US.UTF-8', 'und-x-icu', 'kt_nd')
  AND collencoding IN (-1, pg_char_to_encoding('UTF8'));

-- 30,000 rows: a third share a 24-byte prefix, some are long, some are of
-- U+FDFA, some NULL or empty; a few values in i
SELECT setseed(0.38);
CREATE TABLE kt (id int4, s text, i int4);
INSERT INTO kt
SELECT g,
	   CASE WHEN g % 29 = 0 THEN NULL
			WHEN g % 31 = 0 THEN ''
			WHEN g % 97 = 0 THEN repeat('long-', 300) || (g % 50)::text
			WHEN g % 89 = 0 THEN repeat(U&'\FDFA', 1 + g % 20) || (g % 7)::text
			WHEN g % 3 = 0 THEN 'shared-prefix-0123456789' || substr(md5(g::text), 1, g % 9)
			ELSE substr(md5(random()::text), 1, 1 + g % 17) || (ARRAY['', 'Ä', 'é', 'a', 'B'])[1 + g % 5]
	   END,
	   g % 4
FROM generate_series(1, 30000) g;
ANALYZE kt;

CREATE FUNCTION kt_check(keys text, lim text DEFAULT '') RETURNS text LANGUAGE sql
	RETURN node_check('SELECT * FROM kt ORDER BY ' || keys, ', ctid', lim);

CREATE TEMP TABLE kt_queries (n int, keys text, lim text);
INSERT INTO kt_queries VALUES
	(1, 's COLLATE %s', ''),
	(2, 's COLLATE %s DESC NULLS LAST', ''),
	(3, 's COLLATE %s, i DESC', ''),
	(4, 'i, s COLLATE %s DESC', ''),
	(5, 's COLLATE %1$s, lower(s) COLLATE %1$s DESC, id', ''),
	(6, 's COLLATE %s, id', ' LIMIT 5000');

CREATE TEMP TABLE kt_results (threads int, n int, coll text, result text);
DO $$
DECLARE
	t int;
BEGIN
	FOREACH t IN ARRAY ARRAY[1, 2, 4, 64] LOOP
		PERFORM set_config('gpusort.key_threads', t::text, true);
		INSERT INTO kt_results SELECT t, q.n, c.coll, kt_check(format(q.keys, c.coll), q.lim)
		FROM kt_queries q, kt_collations c;
	END LOOP;
END $$;
RESET gpusort.key_threads;

-- the collations checked: at least one where the server has ICU or C.utf8
SELECT count(DISTINCT coll) >= 1 AS collations, count(*) FILTER (WHERE result = 'ok') > 0 AS some_ok
FROM kt_results;

-- every query under every collation and thread count: the node ran, and
-- its rows are Sort's
SELECT threads, n, coll, result FROM kt_results WHERE result <> 'ok' ORDER BY 1, 2, 3;

-- 6,000 strings of U+FDFA alone, tied in their first bytes: their sort
-- keys outgrow the room a share sets aside for them, so the backend makes
-- most of them again after the threads
CREATE TABLE kt_fdfa AS
SELECT g AS id, repeat(U&'\FDFA', 2 + g % 5) || (g % 97)::text AS s FROM generate_series(1, 6000) g;
ANALYZE kt_fdfa;
SELECT string_agg(DISTINCT r, ', ') AS expanding_keys
FROM kt_collations,
	 LATERAL (VALUES (node_check(format('SELECT * FROM kt_fdfa ORDER BY s COLLATE %s', coll), ', ctid')),
					 (node_check(format('SELECT * FROM kt_fdfa ORDER BY s COLLATE %s DESC, id', coll), ', ctid'))) v(r);
DROP TABLE kt_fdfa;

-- the data has what the test is about: long strings, U+FDFA's, a long
-- run of rows sharing their first 8 bytes
SELECT count(*) FILTER (WHERE length(s) > 1024) > 100 AS long_strings,
	   count(*) FILTER (WHERE s LIKE U&'\FDFA%') > 100 AS expanding,
	   count(*) FILTER (WHERE s LIKE 'shared-prefix%') > 5000 AS shared
FROM kt;

-- EXPLAIN ANALYZE names the most threads that made a batch's keys: 2 to 4
-- at the default (30,000 strings; never more than the CPUs online, and the
-- machine has 2 or more), none at 1
CREATE FUNCTION kt_threads(q text) RETURNS text LANGUAGE sql
	RETURN coalesce(plan_value(q, 'Sort Key Threads', 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF'), 'none');
SELECT min(coll) AS kt_coll FROM kt_collations \gset
SELECT kt_threads(format('SELECT * FROM kt ORDER BY s COLLATE %s', :'kt_coll')) IN ('2', '3', '4')
	AS default_threads;
SET gpusort.key_threads = 1;
SELECT kt_threads(format('SELECT * FROM kt ORDER BY s COLLATE %s', :'kt_coll')) AS one_thread;
RESET gpusort.key_threads;
DROP FUNCTION kt_threads(text);
-- a batch of strings waiting for their transformation grows with the rows
-- read and counts in work_mem: ten rows under work_mem = 64kB take no
-- batch of megabytes (the node's context, its rows read, at a cursor's
-- first row)
SET work_mem = '64kB';
SET gpusort.key_threads = 4;
CREATE TEMP TABLE kt_small AS SELECT g AS id, md5(g::text) AS s FROM generate_series(1, 10) g;
SELECT coll FROM kt_collations ORDER BY coll = '"und-x-icu"' DESC, coll LIMIT 1 \gset kt_
BEGIN;
DECLARE kt_cursor CURSOR FOR SELECT s FROM kt_small ORDER BY s COLLATE :kt_coll;
FETCH 1 FROM kt_cursor \gset kt_first_
SELECT count(*) = 1 AS node_context, sum(total_bytes) < 1024 * 1024 AS within_work_mem
FROM pg_backend_memory_contexts WHERE name = 'gpusort sort node';
COMMIT;
RESET gpusort.key_threads;
SET work_mem = '64MB';

-- more keys with bits than SORT_NODE_MAX_BITS (every leading key with bits
-- is valued, 200 booleans here): read_input's keys' batching flags
SET gpusort.key_threads = 4;
CREATE TEMP TABLE kt_wide AS SELECT g FROM generate_series(1, 100) g;
SELECT node_check('SELECT g FROM kt_wide ORDER BY ' ||
				  (SELECT string_agg(format('(g %% %s = 0)', k), ', ') FROM generate_series(2, 201) k),
				  ', g') AS wide;
RESET gpusort.key_threads;

-- the setting's bounds
SET gpusort.key_threads = 0;
SET gpusort.key_threads = 65;
SHOW gpusort.key_threads;

DROP FUNCTION kt_check(text, text);
DROP TABLE kt;
\if :have_icu
DROP COLLATION kt_nd;
\endif
