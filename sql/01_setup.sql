-- The helpers the tests share (sql/include/helpers.sql), checked on small
-- cases.

\set ECHO none
\i sql/include/helpers.sql
\set ECHO all

-- the helpers themselves: the reference order on a small case, and a generated input
SELECT check_sort('{3,1,2}'::int4[]);
SELECT ref_argsort('[0:4]={3,NULL,1,3,2}'::int4[], false, NULL) AS asc_default,
	   ref_argsort('[0:4]={3,NULL,1,3,2}'::int4[], true, NULL) AS desc_default,
	   ref_argsort('[0:4]={3,NULL,1,3,2}'::int4[], false, true) AS asc_nulls_first;
SELECT gen_input('int4', 'few', 3);
