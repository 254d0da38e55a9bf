-- The comments of the functions 1.0 had, as a fresh install of 1.1 sets them
-- (the update from 1.0 to 1.1 kept 1.0's wording).

-- @each int2 int4 int8 float4 float8
COMMENT ON FUNCTION gpu_sort(@T@[], bool, bool) IS 'sorted copy of an array of @T@ (GPU or CPU)';
COMMENT ON FUNCTION gpu_argsort(@T@[], bool, bool) IS 'subscripts of an array of @T@ in sorted order, stable';
COMMENT ON FUNCTION gpu_sort_rows(@T@[], bool, bool) IS 'elements of an array of @T@ in sorted order, one row each';
-- @end
