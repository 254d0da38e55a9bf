--
-- 15_ordered_set_order: the WITHIN GROUP aggregates (gpu_percentile_disc,
-- gpu_percentile_cont, gpu_mode) under every sort order of their ORDER BY
-- (ASC, DESC, USING <, USING >, NULLS FIRST / LAST), and the plain forms
-- (gpu_percentile_disc_agg, gpu_percentile_cont_agg, gpu_mode_agg,
-- gpu_median), each compared with PostgreSQL's percentile_disc,
-- percentile_cont and mode on the same groups: every element type, NULLs,
-- float specials, many ties, one fraction and arrays of fractions.  A sort
-- operator other than the type's default < and > is an error.
--
-- The data are random from a seed printed below, fixed unless
-- gpusort_test.seed is set, e.g.
--   PGOPTIONS='-c gpusort_test.seed=12345' make installcheck REGRESS=15_ordered_set_order
-- (the output then differs in the seed line alone).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;

-- PostgreSQL's answer first, then gpusort's
SELECT percentile_disc(0.1) WITHIN GROUP (ORDER BY x DESC),
	   gpu_percentile_disc(0.1) WITHIN GROUP (ORDER BY x DESC) FROM generate_series(1, 10) x;
SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY x DESC),
	   gpu_percentile_cont(0.25) WITHIN GROUP (ORDER BY x DESC) FROM generate_series(1, 10) x;
SELECT mode() WITHIN GROUP (ORDER BY x DESC),
	   gpu_mode() WITHIN GROUP (ORDER BY x DESC) FROM unnest(ARRAY[1, 1, 2, 2, 3]) x;
SELECT percentile_disc(0.1) WITHIN GROUP (ORDER BY x USING >),
	   gpu_percentile_disc(0.1) WITHIN GROUP (ORDER BY x USING >) FROM generate_series(1, 10) x;
-- arrays of fractions keep their shape; NULL fractions give NULL
SELECT percentile_disc('{{0.1,0.5},{NULL,1}}'::float8[]) WITHIN GROUP (ORDER BY x DESC NULLS LAST),
	   gpu_percentile_disc('{{0.1,0.5},{NULL,1}}'::float8[]) WITHIN GROUP (ORDER BY x DESC NULLS LAST)
FROM unnest(ARRAY[4, NULL, 1, 3, 2]) x;
SELECT percentile_cont('{0.1,0.25}'::float8[]) WITHIN GROUP (ORDER BY x USING >),
	   gpu_percentile_cont('{0.1,0.25}'::float8[]) WITHIN GROUP (ORDER BY x USING >) FROM generate_series(1, 10) x;
-- ties for mode: the first of the sort order, the largest descending
SELECT mode() WITHIN GROUP (ORDER BY x USING >), gpu_mode() WITHIN GROUP (ORDER BY x USING >),
	   mode() WITHIN GROUP (ORDER BY x NULLS FIRST), gpu_mode() WITHIN GROUP (ORDER BY x NULLS FIRST)
FROM unnest(ARRAY[date '2001-01-01', NULL, '2003-01-01', '2001-01-01', NULL, '2003-01-01', '2002-01-01']) x;

-- The data: groups of a few hundred rows (narrow ranges, so ties, in the
-- groups g % 3 = 0), 10% NULLs, float specials; then fixed small groups: one
-- row, only NULLs, two rows, ties.
SELECT coalesce(nullif(current_setting('gpusort_test.seed', true), ''), '1515')::int AS seed \gset
SELECT :seed AS seed, setseed(:seed / 2147483648.0) IS NOT NULL AS seeded;
CREATE TABLE osa (g int, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, d date, ts timestamp, tz timestamptz);
INSERT INTO osa
SELECT g, v::int2, v * 65537, v * 400000000000001, special::float4 + v / 3.0, special + v / 7.0,
	   date '2000-01-01' + v::int4, timestamp '2000-01-01' + v * interval '37 minutes',
	   timestamptz '2000-01-01 00:00+00' + v * interval '1 second'
FROM (SELECT g, v,
			 CASE WHEN s < 0.02 THEN 'NaN' WHEN s < 0.04 THEN 'Infinity' WHEN s < 0.06 THEN '-Infinity'
				  WHEN s < 0.08 THEN '-0' ELSE '0' END::float8 AS special
	  FROM (SELECT g, random() AS s,
				   CASE WHEN random() < 0.1 THEN NULL
						WHEN g % 3 = 0 THEN floor(random() * 12) - 6
						ELSE floor(random() * 30000) - 15000 END::int8 AS v
			FROM (SELECT floor(random() * 9)::int AS g FROM generate_series(1, 2500)) r) r2) r3;
INSERT INTO osa (g, i2, i4, i8, f4, f8, d, ts, tz)
SELECT g, v, v, v, v, v, date '2000-01-01' + v, timestamp '2000-01-01' + v * interval '1 day',
	   timestamptz '2000-01-01 00:00+00' + v * interval '1 hour'
FROM (VALUES (10, 5), (11, NULL), (11, NULL), (12, -3), (12, 8),
			 (13, 1), (13, 1), (13, 2), (13, 2), (13, 3), (13, NULL)) v(g, v);

-- One comparison: the number of groups where gpusort's answer differs from
-- PostgreSQL's, for aggregate agg over column col with ORDER BY modifiers
-- ord.  One fraction differs between groups (a grouping expression), the
-- array of fractions is the same in all.
CREATE FUNCTION osa_mismatches(agg text, col text, ord text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	p text := '(''{0,0.05,0.1,0.25,0.3333333333333333,0.5,0.75,0.9,0.999,1}''::float8[])[g % 10 + 1]';
	ps text := '''{0.5,NULL,0,1,0.1,0.9,0.25,0.75,0.3333333333333333,0.999}''::float8[]';
	pair text;
	n bigint;
BEGIN
	pair := CASE agg
		WHEN 'percentile_disc' THEN 'gpu_percentile_disc(%1$s) WITHIN GROUP (ORDER BY %2$s %3$s), percentile_disc(%1$s) WITHIN GROUP (ORDER BY %2$s %3$s)'
		WHEN 'percentile_disc[]' THEN 'gpu_percentile_disc(%4$s) WITHIN GROUP (ORDER BY %2$s %3$s), percentile_disc(%4$s) WITHIN GROUP (ORDER BY %2$s %3$s)'
		WHEN 'percentile_cont' THEN 'gpu_percentile_cont(%1$s) WITHIN GROUP (ORDER BY %2$s %3$s), percentile_cont(%1$s) WITHIN GROUP (ORDER BY %2$s %3$s)'
		WHEN 'percentile_cont[]' THEN 'gpu_percentile_cont(%4$s) WITHIN GROUP (ORDER BY %2$s %3$s), percentile_cont(%4$s) WITHIN GROUP (ORDER BY %2$s %3$s)'
		WHEN 'mode' THEN 'gpu_mode() WITHIN GROUP (ORDER BY %2$s %3$s), mode() WITHIN GROUP (ORDER BY %2$s %3$s)'
		WHEN 'percentile_disc_agg' THEN 'gpu_percentile_disc_agg(%2$s, %1$s), percentile_disc(%1$s) WITHIN GROUP (ORDER BY %2$s %3$s)'
		WHEN 'percentile_disc_agg[]' THEN 'gpu_percentile_disc_agg(%2$s, %4$s), percentile_disc(%4$s) WITHIN GROUP (ORDER BY %2$s %3$s)'
		WHEN 'percentile_cont_agg' THEN 'gpu_percentile_cont_agg(%2$s, %1$s), percentile_cont(%1$s) WITHIN GROUP (ORDER BY %2$s %3$s)'
		WHEN 'percentile_cont_agg[]' THEN 'gpu_percentile_cont_agg(%2$s, %4$s), percentile_cont(%4$s) WITHIN GROUP (ORDER BY %2$s %3$s)'
		WHEN 'mode_agg' THEN 'gpu_mode_agg(%2$s), mode() WITHIN GROUP (ORDER BY %2$s %3$s)'
		WHEN 'median' THEN 'gpu_median(%2$s), percentile_cont(0.5) WITHIN GROUP (ORDER BY %2$s %3$s)'
	END;
	EXECUTE 'SELECT count(*) FILTER (WHERE a IS DISTINCT FROM b) FROM (SELECT g, '
				   || format(pair, p, col, ord, ps) || ' FROM osa GROUP BY g) r(g, a, b)'
		INTO n;
	RETURN n;
END $$;

-- Every WITHIN GROUP aggregate, type and order; the plain forms (ascending
-- by definition) against the ascending orders.
CREATE TABLE osa_cases AS
SELECT a.agg, c.col, o.ord
FROM unnest(ARRAY['percentile_disc', 'percentile_disc[]', 'percentile_cont', 'percentile_cont[]', 'mode',
				  'percentile_disc_agg', 'percentile_disc_agg[]', 'percentile_cont_agg',
				  'percentile_cont_agg[]', 'mode_agg', 'median']) a(agg)
CROSS JOIN unnest(ARRAY['i2', 'i4', 'i8', 'f4', 'f8', 'd', 'ts', 'tz']) c(col)
CROSS JOIN unnest(ARRAY['', 'ASC', 'DESC', 'USING <', 'USING >', 'NULLS FIRST', 'ASC NULLS LAST',
						'DESC NULLS FIRST', 'DESC NULLS LAST', 'USING < NULLS FIRST', 'USING > NULLS LAST']) o(ord)
WHERE (a.agg NOT LIKE '%cont%' AND a.agg <> 'median' OR c.col IN ('i2', 'i4', 'i8', 'f4', 'f8'))
  AND (a.agg NOT LIKE '%agg%' AND a.agg <> 'median' OR o.ord NOT LIKE '%DESC%' AND o.ord NOT LIKE '%>%');
CREATE TABLE osa_results AS
SELECT agg, col, ord, osa_mismatches(agg, col, ord) AS mismatches FROM osa_cases;

-- the number of cases (each compares the 13 groups) and of mismatches: none
SELECT agg, count(*) AS cases, sum(mismatches) AS mismatches FROM osa_results GROUP BY agg ORDER BY agg;
SELECT * FROM osa_results WHERE mismatches <> 0 ORDER BY agg, col, ord;

-- several orders in one query (the aggregates may share one transition state)
SELECT count(*) AS groups,
	   count(*) FILTER (WHERE a1 IS DISTINCT FROM b1 OR a2 IS DISTINCT FROM b2 OR a3 IS DISTINCT FROM b3
						OR a4 IS DISTINCT FROM b4) AS mismatches
FROM (SELECT g, gpu_percentile_disc(0.2) WITHIN GROUP (ORDER BY f8) a1, percentile_disc(0.2) WITHIN GROUP (ORDER BY f8) b1,
			 gpu_percentile_disc(0.2) WITHIN GROUP (ORDER BY f8 DESC) a2, percentile_disc(0.2) WITHIN GROUP (ORDER BY f8 DESC) b2,
			 gpu_mode() WITHIN GROUP (ORDER BY i4) a3, mode() WITHIN GROUP (ORDER BY i4) b3,
			 gpu_mode() WITHIN GROUP (ORDER BY i4 DESC) a4, mode() WITHIN GROUP (ORDER BY i4 DESC) b4
	  FROM osa GROUP BY g) r;

-- A sort operator that is neither the type's default < nor > (here the
-- "less than" of a second btree operator class): an error, not a silent
-- answer in another order.
CREATE OPERATOR <~< (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4lt);
CREATE OPERATOR CLASS osa_int4_other_ops FOR TYPE int4 USING btree AS
	OPERATOR 1 <~<, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btint4cmp(int4, int4);
SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x USING <~<) FROM generate_series(1, 10) x;
SELECT gpu_percentile_disc(0.5) WITHIN GROUP (ORDER BY x USING <~<) FROM generate_series(1, 10) x;
SELECT gpu_percentile_cont('{0.5}'::float8[]) WITHIN GROUP (ORDER BY x::int4 USING <~<) FROM generate_series(1, 10) x;
SELECT gpu_mode() WITHIN GROUP (ORDER BY x USING <~<) FROM generate_series(1, 10) x;
-- even without rows
SELECT gpu_mode() WITHIN GROUP (ORDER BY x USING <~<) FROM generate_series(1, 10) x WHERE false;

DROP OPERATOR FAMILY osa_int4_other_ops USING btree;
DROP OPERATOR <~< (int4, int4);
DROP FUNCTION osa_mismatches(text, text, text);
DROP TABLE osa_results;
DROP TABLE osa_cases;
DROP TABLE osa;
