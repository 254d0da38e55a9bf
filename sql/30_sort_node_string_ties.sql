--
-- 30_sort_node_string_ties: the sort node on strings whose first 8 bytes
-- are equal in many rows.  The words order rows by a string's first bytes
-- (its own under C, strxfrm's under libc, its ICU sort key's); the runs of
-- rows that the words leave tied are ordered by rounds over the next bytes
-- of their byte strings; rows whose byte strings are equal, by the later
-- keys' bits (exact: int4, int8, numeric(p,s), bool, float8; a prefix:
-- numeric; none: a second string) where the comparator finds the strings
-- equal, else by PostgreSQL's comparators over that key and the later
-- ones.  Strings that share long prefixes, that are prefixes of one another,
-- empty strings,
-- duplicates, multibyte UTF-8 and NULLs; ASC and DESC, NULLS FIRST and LAST,
-- composite keys, a LIMIT; text, varchar, char(n) and name (under C); under C and the
-- other collations of the server (C.UTF-8 and en_US.UTF-8 where the system
-- has them, ICU's root and a nondeterministic ICU collation where the server
-- has ICU).  Each query's rows are compared with Sort's on the same rows with
-- the row's place in the table (ctid) as the last key: the node keeps peers
-- in input order.  Under a LIMIT whose rows tie on their leading bits past
-- the bound, the node gives them to tuplesort's bounded heap, whose peers
-- come in its own order: those queries end with the row's id.
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
CREATE COLLATION st_nd (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
\endif
CREATE TEMP TABLE st_collations AS
SELECT quote_ident(collname) AS coll
FROM pg_collation
WHERE collname IN ('C', 'C.utf8', 'C.UTF-8', 'en_US.utf8', 'en_US.UTF-8', 'und-x-icu', 'st_nd')
  AND collencoding IN (-1, pg_char_to_encoding('UTF8'));

-- 20,000 rows: a prefix (none, 7, 8, 9, 15, 16, 17 and 24 bytes, some
-- multibyte, some of one another) and a tail of 0 to 20 characters of a
-- small alphabet (duplicates and deep shared prefixes), empty strings and
-- NULLs; an int4 of few values, an int8 with NULLs (with its NULL bit, the
-- words then hold the string's first 63 bits), the row's number.
SELECT setseed(0.30);
CREATE TABLE st (id int4, s text, i int4, b int8);
INSERT INTO st
SELECT g,
	   CASE WHEN g % 23 = 0 THEN NULL
			WHEN g % 19 = 0 THEN ''
			ELSE (ARRAY['', 'abcdefg', 'abcdefgh', 'abcdefghi', 'shared-prefix-0', 'shared-prefix-01',
						'shared-prefix-012', 'shared-prefix-012345678', 'äöü-präfix-', 'Shared-Prefix-01'])
					 [1 + floor(random() * 10)::int] ||
				 array_to_string(ARRAY(SELECT (ARRAY['a', 'b', 'A', 'ä', ' ', '-', '日', 'é', 'z', '0'])
												 [1 + floor(random() * 10)::int]
									   FROM generate_series(1, (g * 7919) % 21) WHERE g > 0), '')
	   END,
	   floor(random() * 4)::int4,
	   CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 3)::int8 END
FROM generate_series(1, 20000) g;
ANALYZE st;

-- One query, the node's rows against Sort's, ctid last for Sort (node_check,
-- include/helpers.sql): 'ok', 'not used' (the plan has no node), or what
-- differs.
CREATE FUNCTION st_check(keys text, lim text DEFAULT '', tab text DEFAULT 'st') RETURNS text LANGUAGE sql
	RETURN node_check(format('SELECT * FROM %I ORDER BY ', tab) || keys, ', ctid', lim);

CREATE TEMP TABLE st_queries (n int, keys text, lim text);
INSERT INTO st_queries VALUES
	(1, 's COLLATE %s', ''),
	(2, 's COLLATE %s DESC', ''),
	(3, 's COLLATE %s NULLS FIRST', ''),
	(4, 's COLLATE %s DESC NULLS LAST', ''),
	(5, 's COLLATE %s, i', ''),
	(6, 's COLLATE %s DESC, i DESC NULLS FIRST', ''),
	(7, 'i, s COLLATE %s', ''),
	(8, 'i DESC, s COLLATE %s DESC', ''),
	(9, 'b, s COLLATE %s, i', ''),
	(10, 's::varchar COLLATE %s, i', ''),
	(11, 's::char(20) COLLATE %s, i', ''),
	(12, 's::name DESC, i', ''),
	(13, 'lower(s) COLLATE %s, s COLLATE "C"', ''),
	(14, 's COLLATE %s, id', ' LIMIT 7000'),
	(15, 's COLLATE %s DESC, i, id', ' LIMIT 300 OFFSET 100'),
	(16, 's COLLATE %s, (b * 1.25)::numeric(8,2) DESC NULLS LAST, i', ''),
	(17, 's COLLATE %s DESC, b::numeric / 3, id %% 5', ''),
	(18, 's COLLATE %1$s, lower(s) COLLATE %1$s DESC, i', ''),
	(19, 's COLLATE %s, i DESC, b NULLS FIRST, id %% 7', ''),
	(20, 's COLLATE %s, (id %% 3)::bool, (id %% 11)::float8 DESC, id', ' LIMIT 9000');

CREATE TEMP TABLE st_results AS
SELECT q.n, c.coll, st_check(format(q.keys, c.coll), q.lim) AS result
FROM st_queries q, st_collations c;

-- the collations checked: C and at least one more
SELECT count(DISTINCT coll) >= 2 AS collations, bool_or(coll = '"C"') AS c,
	   count(*) FILTER (WHERE coll = '"C"' AND result = 'ok') AS c_ok
FROM st_results;

-- every query under every collation: the node ran, and its rows are Sort's
SELECT n, coll, result FROM st_results WHERE result <> 'ok' ORDER BY n, coll;

-- the data has what the test is about: long runs of rows whose first 8
-- bytes are equal, strings that are prefixes of others, duplicates
SELECT max(c) > 1000 AS long_runs FROM (SELECT count(*) c FROM st GROUP BY substr(s, 1, 8)) r;
SELECT count(*) > 100 AS prefixes FROM st a JOIN st b ON a.s = left(b.s, -9);
SELECT count(*) - count(DISTINCT s) > 1000 AS duplicates FROM st;

-- Strings of 242 bytes sharing 210: their byte strings in a work_mem that
-- holds the rows but not them (6MB: the runs go to the comparators), and
-- in one that holds both (8MB); under C, and ICU's root where the server
-- has it
CREATE TABLE st_long AS
SELECT g AS id, repeat('a long shared prefix ', 10) || md5(g::text) AS s FROM generate_series(1, 5000) g;
ANALYZE st_long;
SET work_mem = '6MB';
SELECT string_agg(DISTINCT r, ', ') AS work_mem_6mb
FROM st_collations, LATERAL (VALUES (st_check(format('s COLLATE %s', coll), '', 'st_long')),
								   (st_check(format('s COLLATE %s DESC', coll), '', 'st_long'))) v(r)
WHERE coll IN ('"C"', '"und-x-icu"');
SET work_mem = '8MB';
SELECT string_agg(DISTINCT r, ', ') AS work_mem_8mb
FROM st_collations, LATERAL (VALUES (st_check(format('s COLLATE %s', coll), '', 'st_long')),
								   (st_check(format('s COLLATE %s DESC', coll), '', 'st_long'))) v(r)
WHERE coll IN ('"C"', '"und-x-icu"');
RESET work_mem;

DROP FUNCTION st_check(text, text, text);
DROP TABLE st_long;
DROP TABLE st;
\if :have_icu
DROP COLLATION st_nd;
\endif
