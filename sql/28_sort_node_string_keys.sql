--
-- 28_sort_node_string_keys: the sort node under a GroupAggregate on a
-- char(10) key of exactly 8 characters, a longer varchar and an int4 (the
-- shape of TPC-H's Q16): every group comes out once, as with Sort.  A
-- string's first bytes end the keys packed into the sort's bits; the keys
-- after it are ordered by the tie pass.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
RESET client_min_messages;
SET enable_hashagg = off;
SET gpusort.sort_node_min_rows = 0;
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 0;

SELECT setseed(0.28);
CREATE TABLE sk (brand char(10), kind varchar(25), size int4, c char(3));
INSERT INTO sk
SELECT 'Brand#' || (1 + (random() * 4)::int) || (1 + (random() * 4)::int),
	   (ARRAY['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'])[1 + (random() * 5)::int] || ' ' ||
	   (ARRAY['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'])[1 + (random() * 4)::int] || ' ' ||
	   (ARRAY['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'])[1 + (random() * 4)::int],
	   1 + (random() * 49)::int, (ARRAY['a', 'ab', 'abc'])[1 + (random() * 2)::int]
FROM generate_series(1, 20000) i;
ANALYZE sk;

CREATE FUNCTION sk_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	l text;
	p text := '';
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		p := p || l || E'\n';
	END LOOP;
	RETURN p;
END $$;

CREATE FUNCTION sk_groups(q text, OUT node bool, OUT groups_on bigint, OUT groups_off bigint, OUT same bool)
LANGUAGE plpgsql AS $$
DECLARE
	on_rows text;
	off_rows text;
BEGIN
	SET LOCAL gpusort.enable_sort = on;
	node := sk_plan(q) LIKE '%Custom Scan (gpusort)%';
	EXECUTE format('SELECT count(*), string_agg(r::text, '','' ORDER BY r::text) FROM (%s) r', q)
		INTO groups_on, on_rows;
	SET LOCAL gpusort.enable_sort = off;
	EXECUTE format('SELECT count(*), string_agg(r::text, '','' ORDER BY r::text) FROM (%s) r', q)
		INTO groups_off, off_rows;
	same := on_rows = off_rows;
END $$;

SELECT q, g.*
FROM unnest(ARRAY['SELECT brand, kind, size, count(*) FROM sk GROUP BY 1, 2, 3',
				  'SELECT kind, size, count(*) FROM sk GROUP BY 1, 2',
				  'SELECT brand, size, count(*) FROM sk GROUP BY 1, 2',
				  'SELECT c, size, brand, count(*) FROM sk GROUP BY 1, 2, 3',
				  'SELECT size, kind, brand, count(*) FROM sk GROUP BY 1, 2, 3']) q,
	 LATERAL sk_groups(q) g;

DROP FUNCTION sk_groups(text), sk_plan(text);
DROP TABLE sk;
