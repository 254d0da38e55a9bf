-- Lower bounds other than 1, and the float order: -0 before +0, NaNs (any
-- sign bit) after +Infinity, denormals in place, bits kept exactly.

\set ECHO none
\i sql/include/helpers.sql
\set ECHO all


-- the result has lower bound 1; gpu_argsort gives the input's own subscripts
SELECT gpu_sort('[5:9]={30,10,NULL,20,10}'::int4[]) AS sorted,
	   array_lower(gpu_sort('[5:9]={30,10,NULL,20,10}'::int4[]), 1) AS lower,
	   gpu_argsort('[5:9]={30,10,NULL,20,10}'::int4[]) AS asc,
	   gpu_argsort('[5:9]={30,10,NULL,20,10}'::int4[], true) AS desc,
	   gpu_argsort('[5:9]={30,10,NULL,20,10}'::int4[], false, true) AS asc_nulls_first;
SELECT gpu_argsort('[-3:1]={2,-1,2,NULL,-1}'::int8[]), gpu_argsort('[-3:1]={2,-1,2,NULL,-1}'::int8[], true, false);
SELECT * FROM gpu_sort_rows('[0:3]={1.5,-2,NULL,0}'::float4[], true) WITH ORDINALITY;
SELECT gpu_sort('[2147483645:2147483646]={2,1}'::int2[]), gpu_argsort('[2147483645:2147483646]={2,1}'::int2[]);
SELECT gpu_argsort('[-2147483648:-2147483646]={3,NULL,1}'::float8[]);

-- generated inputs shifted to other lower bounds, every function
SELECT setseed(0.5);
SELECT check_sort(('[-500:' || (cardinality(a) - 501) || ']=' || a::text)::int4[]) AS int4_nulls,
	   check_sort(('[1000:' || (cardinality(a) + 999) || ']=' || a::text)::int4[]) AS int4_nulls_1000
FROM (SELECT array_agg(CASE WHEN random() < 0.2 THEN NULL ELSE (random() * 100)::int4 END) a
	  FROM generate_series(1, 3000)) s;
SELECT check_sort(('[-7:' || (cardinality(a) - 8) || ']=' || a::text)::float8[], false) AS float8_specials
FROM (SELECT array_agg(('{-0,0,Infinity,-Infinity,NaN,-NaN,5e-324,-5e-324,1,-1,NULL}'::float8[])[1 + (random() * 10)::int]) a
	  FROM generate_series(1, 2000)) s;

-- -0 sorts before +0 ascending (after it descending), in text
SELECT gpu_sort('{0,-0,1,-0,0,-1}'::float8[]) AS asc, gpu_sort('{0,-0,1,-0,0,-1}'::float8[], true) AS desc;
SELECT gpu_sort('{0,-0,1,-0,0,-1}'::float4[]) AS asc, gpu_sort('{0,-0,1,-0,0,-1}'::float4[], true) AS desc;
SELECT gpu_argsort('{0,-0,1,-0,0}'::float8[]) AS asc, gpu_argsort('{0,-0,1,-0,0}'::float8[], true) AS desc;
SELECT gpu_sort_agg(x) AS agg_asc, gpu_sort_agg(x, true) AS agg_desc
FROM unnest('{0,-0,1,-0,0,-1}'::float4[]) x;
SELECT array_agg(x ORDER BY o) FROM gpu_sort_rows('{0,-0,-0,0}'::float8[]) WITH ORDINALITY r(x, o);

-- Infinity, NaN and -NaN (sign bit set): every NaN after +Infinity, whatever its sign
SELECT gpu_sort('{NaN,1,-NaN,-Infinity,Infinity,-1}'::float8[]) AS asc,
	   gpu_sort('{NaN,1,-NaN,-Infinity,Infinity,-1}'::float8[], true) AS desc;
SELECT gpu_sort('{NaN,1,-NaN,-Infinity,Infinity,-1}'::float4[]) AS asc,
	   gpu_sort('{NaN,1,-NaN,-Infinity,Infinity,-1}'::float4[], true) AS desc;
SELECT (SELECT array_agg(float8send(x) ORDER BY float8send(x)) FROM unnest(s[5:6]) x) AS nan_bits_asc_end
FROM (SELECT gpu_sort('{NaN,1,-NaN,-Infinity,Infinity,-1}'::float8[]) s) t;
SELECT (SELECT array_agg(float4send(x) ORDER BY float4send(x)) FROM unnest(s[1:2]) x) AS nan_bits_desc_start
FROM (SELECT gpu_sort('{NaN,1,-NaN,-Infinity,Infinity,-1}'::float4[], true) s) t;

-- denormals between 0 and the smallest normal numbers
SELECT gpu_sort('{1e-310,-1e-310,0,5e-324,2.2250738585072014e-308,-5e-324,-0}'::float8[]);
SELECT gpu_sort('{1e-40,-1e-40,0,1e-45,1.17549435e-38,-1e-45,-0}'::float4[]);

-- the output is a bit-exact permutation of the input (no -0 or NaN made canonical)
SELECT setseed(0.75);
SELECT (SELECT array_agg(b ORDER BY b) FROM (SELECT float8send(x) b FROM unnest(gpu_sort(a)) x) s)
	 = (SELECT array_agg(b ORDER BY b) FROM (SELECT float8send(x) b FROM unnest(a) x) s) AS float8_bits_kept,
	   (SELECT array_agg(b ORDER BY b) FROM (SELECT float8send(x) b FROM unnest(gpu_sort(a, true)) x) s)
	 = (SELECT array_agg(b ORDER BY b) FROM (SELECT float8send(x) b FROM unnest(a) x) s) AS float8_desc_bits_kept
FROM (SELECT array_agg(('{-0,0,Infinity,-Infinity,NaN,-NaN,5e-324,-5e-324,1,-1}'::float8[])[1 + (random() * 9)::int]) a
	  FROM generate_series(1, 5000)) t;
SELECT (SELECT array_agg(b ORDER BY b) FROM (SELECT float4send(x) b FROM unnest(gpu_sort(a)) x) s)
	 = (SELECT array_agg(b ORDER BY b) FROM (SELECT float4send(x) b FROM unnest(a) x) s) AS float4_bits_kept
FROM (SELECT array_agg(('{-0,0,Infinity,-Infinity,NaN,-NaN,1e-45,-1e-45,1,-1}'::float4[])[1 + (random() * 9)::int]) a
	  FROM generate_series(1, 5000)) t;
