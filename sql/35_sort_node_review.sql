--
-- 35_sort_node_review: the sort node where its key's column is of a type
-- other than its operator's input type.  The planner sorts by a target
-- list entry that is a binary-coercible relabeling of the key (text read
-- by bpchar's operator for ORDER BY t::bpchar when t is in the target
-- list); the node reads the value as the operator's type (bpchar: without
-- its trailing spaces), as the operator compares it.  Rows compared with
-- Sort's, the row's number the last key.
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

SELECT EXISTS (SELECT FROM pg_collation WHERE collname = 'und-x-icu') AS have_icu \gset

-- strings that differ in trailing spaces only, shorter and longer than 8 bytes
CREATE TABLE rv_sp AS
SELECT g AS id,
	   (ARRAY['a', 'a ', 'a  ', '', '  ', ' ', 'ab', 'ab ', 'a b',
			  'abcdefghij', 'abcdefghij ', 'abcdefghij  '])[1 + g % 12]::text AS t
FROM generate_series(1, 600) g;

-- the key is the text column t under bpchar's operator
EXPLAIN (VERBOSE, COSTS OFF) SELECT t, id FROM rv_sp ORDER BY t::bpchar, id;

SELECT node_check('SELECT t, id FROM rv_sp ORDER BY t::bpchar, id', '') AS bpchar_c,
	   node_check('SELECT t, id FROM rv_sp ORDER BY t::bpchar DESC, id', '') AS bpchar_c_desc,
	   node_check('SELECT t, id FROM rv_sp ORDER BY t::bpchar COLLATE "C", id', '') AS bpchar_c_explicit;
SELECT node_check('SELECT t, id FROM rv_sp ORDER BY t::bpchar, id', '', ' LIMIT 100') AS bpchar_c_limit;
-- under ICU's root collation where the server has ICU (the same output without)
SELECT CASE WHEN :'have_icu'::bool THEN node_check('SELECT t, id FROM rv_sp ORDER BY t::bpchar COLLATE "und-x-icu", id', '')
			ELSE 'ok' END AS bpchar_icu,
	   CASE WHEN :'have_icu'::bool THEN node_check('SELECT t, id FROM rv_sp ORDER BY t::bpchar COLLATE "und-x-icu" DESC, id', '')
			ELSE 'ok' END AS bpchar_icu_desc;

-- under C, 'a', 'a ' and 'a  ' are equal: ordered by id
SET gpusort.enable_sort = on;
SELECT t, length(t), id FROM rv_sp WHERE t LIKE 'a%' ORDER BY t::bpchar, id LIMIT 8;
RESET gpusort.enable_sort;

-- a varchar column, and a domain over varchar, under bpchar's operator:
-- varchar to bpchar is a binary-coercible relabeling too
CREATE DOMAIN rv_dvc AS varchar;
CREATE TABLE rv_vc AS SELECT id, t::varchar AS v, t::rv_dvc AS dv FROM rv_sp;
EXPLAIN (VERBOSE, COSTS OFF) SELECT v, id FROM rv_vc ORDER BY v::bpchar, id;
SELECT node_check('SELECT v, id FROM rv_vc ORDER BY v::bpchar, id', '') AS varchar_c,
	   node_check('SELECT v, id FROM rv_vc ORDER BY v::bpchar DESC, id', '') AS varchar_c_desc,
	   node_check('SELECT v, id FROM rv_vc ORDER BY v::bpchar, id', '', ' LIMIT 100') AS varchar_c_limit,
	   node_check('SELECT dv, id FROM rv_vc ORDER BY dv::bpchar, id', '') AS domain_c,
	   node_check('SELECT dv, id FROM rv_vc ORDER BY dv::bpchar COLLATE "C", id', '', ' LIMIT 100') AS domain_c_limit;
SELECT CASE WHEN :'have_icu'::bool THEN node_check('SELECT v, id FROM rv_vc ORDER BY v::bpchar COLLATE "und-x-icu", id', '')
			ELSE 'ok' END AS varchar_icu;
DROP TABLE rv_vc;
DROP DOMAIN rv_dvc;

DROP TABLE rv_sp;
