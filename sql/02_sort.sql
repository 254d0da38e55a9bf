-- gpu_sort, gpu_argsort, gpu_sort_rows and gpu_sort_agg against ORDER BY:
-- every type, every distribution, ascending and descending, NULLs
-- default/last/first, sizes around powers of two and primes.

\set ECHO none
\i sql/include/helpers.sql
\set ECHO all

SELECT typ, dist, run_checks(typ, dist, ARRAY[0, 1, 2, 3, 17, 255, 256, 257, 1009, 4099]) AS result
FROM unnest(ARRAY['int2', 'int4', 'int8', 'float4', 'float8']) typ,
	 unnest(ARRAY['uniform', 'sorted', 'reverse', 'equal', 'few', 'zero_one', 'nulls', 'all_nulls']) dist
ORDER BY 1, 2;

-- type minimum/maximum and (floats) -0, +0, +-Infinity, NaN, -NaN, denormals:
-- ORDER BY counts -0 = +0 and every NaN as equal, so the argsort is checked
-- as a permutation that picks the sorted elements, not against ORDER BY's ties
SELECT typ, run_checks(typ, 'extremes', ARRAY[1, 7, 100, 3001], typ LIKE 'int%') AS result
FROM unnest(ARRAY['int2', 'int4', 'int8', 'float4', 'float8']) typ
ORDER BY 1;

-- larger inputs, ascending and descending with ORDER BY's NULL placement
SELECT typ, dist, run_checks(typ, dist, ARRAY[65537], true, true) AS result
FROM unnest(ARRAY['int2', 'int4', 'int8', 'float4', 'float8']) typ,
	 unnest(ARRAY['uniform', 'nulls']) dist
ORDER BY 1, 2;

SELECT typ, dist, run_checks(typ, dist, ARRAY[1000000], true, true) AS result
FROM (VALUES ('int4', 'uniform'), ('float8', 'nulls')) v(typ, dist)
ORDER BY 1, 2;
