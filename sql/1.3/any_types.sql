-- Element types that gpusort does not pack into sort keys (numeric, text,
-- uuid, interval, composite types, domains, every type with a default btree
-- ordering): the numeric and polymorphic overloads, which raised an error
-- naming the packed types, now sort on the CPU with PostgreSQL's comparator
-- for the type, under the collation of their argument, and give the answer
-- of ORDER BY, array_agg(x ORDER BY x), percentile_disc and mode.  Their
-- declarations stay as they were (the numeric ones keep numeric from an
-- implicit cast to real or double precision); only what they promise
-- changes.  A type without a default btree ordering (point, json) is still
-- an error, as ORDER BY's is.

-- @each numeric anyelement
COMMENT ON FUNCTION gpu_sort(@A@, bool, bool) IS 'sorted copy of an array, by the element type''s default ordering under the argument''s collation (CPU)';
COMMENT ON FUNCTION gpu_argsort(@A@, bool, bool) IS 'subscripts of an array in sorted order, by the element type''s default ordering under the argument''s collation, stable (CPU)';
COMMENT ON FUNCTION gpu_sort_rows(@A@, bool, bool) IS 'elements of an array in sorted order, one row each, by the element type''s default ordering under the argument''s collation (CPU)';
COMMENT ON FUNCTION gpu_topk(@A@, int, bool) IS 'the first k elements of gpu_sort(a, descending), NULLs placed as there';
COMMENT ON AGGREGATE gpu_sort_agg(@T@) IS 'the values as one array in ascending order, as array_agg(x ORDER BY x), under the input''s collation';
COMMENT ON AGGREGATE gpu_sort_agg(@T@, bool) IS 'the values as one array, descending when the second argument is true, as array_agg(x ORDER BY x [DESC]), under the input''s collation';
COMMENT ON AGGREGATE gpu_topk_agg(@T@, int) IS 'the k smallest values in ascending order, NULLs after them: the first k of array_agg(x ORDER BY x)';
COMMENT ON AGGREGATE gpu_topk_agg(@T@, int, bool) IS 'the first k of array_agg(x ORDER BY x [DESC]), descending when the third argument is true';
COMMENT ON AGGREGATE gpu_percentile_disc(float8 ORDER BY @T@) IS 'the first value whose position in the sort order is at least the fraction, as percentile_disc';
COMMENT ON AGGREGATE gpu_percentile_disc(float8[] ORDER BY @T@) IS 'percentile_disc of each fraction, an array of the fractions'' shape';
COMMENT ON AGGREGATE gpu_mode(ORDER BY @T@) IS 'the most frequent value, the first in the sort order of equally frequent ones, as mode';
COMMENT ON AGGREGATE gpu_percentile_disc_agg(@T@, float8) IS 'percentile_disc(fraction) WITHIN GROUP (ORDER BY x) as a plain aggregate that may run in parallel workers; the fraction is the same in every row';
COMMENT ON AGGREGATE gpu_percentile_disc_agg(@T@, float8[]) IS 'percentile_disc(fractions) WITHIN GROUP (ORDER BY x) as a plain aggregate that may run in parallel workers';
COMMENT ON AGGREGATE gpu_mode_agg(@T@) IS 'mode() WITHIN GROUP (ORDER BY x) as a plain aggregate that may run in parallel workers';
-- @end
