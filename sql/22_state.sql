--
-- 22_state: gpusort_state, the plain aggregates' transition type, as Citus
-- uses it: a partial state per group of rows, turned into text by its output
-- function and back by its input function, then combined and finalized.
-- Test aggregates built from gpusort's own transition, combine and final
-- functions do each step; every answer is compared with PostgreSQL's own
-- aggregate over the same rows.  Then malformed text and the binary form.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;
SELECT setseed(0.22);

-- A worker's partial state: the transition function alone (no final function).
CREATE AGGREGATE state_sort(int4) (SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state);
CREATE AGGREGATE state_sort(float8, bool) (SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state);
CREATE AGGREGATE state_sort(timestamptz) (SFUNC = gpu_sort_agg_transfn, STYPE = gpusort_state);
CREATE AGGREGATE state_collect(float8) (SFUNC = gpu_collect_transfn, STYPE = gpusort_state);
CREATE AGGREGATE state_collect(int8) (SFUNC = gpu_collect_transfn, STYPE = gpusort_state);
CREATE AGGREGATE state_percentile(float8, float8[]) (SFUNC = gpu_percentile_transfn, STYPE = gpusort_state);
CREATE AGGREGATE state_topk(int4, int, bool) (SFUNC = gpu_topk_agg_transfn, STYPE = gpusort_state);
-- The coordinator: combine the partial states, then the final function.
CREATE AGGREGATE merge_sort_int4(gpusort_state) (SFUNC = gpu_sort_agg_combine, STYPE = gpusort_state,
	FINALFUNC = gpu_sort_agg_final_int4);
CREATE AGGREGATE merge_sort_float8(gpusort_state) (SFUNC = gpu_sort_agg_combine, STYPE = gpusort_state,
	FINALFUNC = gpu_sort_agg_final_float8);
CREATE AGGREGATE merge_sort_timestamptz(gpusort_state) (SFUNC = gpu_sort_agg_combine, STYPE = gpusort_state,
	FINALFUNC = gpu_sort_agg_final_timestamptz);
CREATE AGGREGATE merge_median(gpusort_state) (SFUNC = gpu_sort_agg_combine, STYPE = gpusort_state,
	FINALFUNC = gpu_median_final);
CREATE AGGREGATE merge_cont_multi(gpusort_state) (SFUNC = gpu_sort_agg_combine, STYPE = gpusort_state,
	FINALFUNC = gpu_percentile_cont_multi_agg_final);
-- (gpu_mode_final reads no extra argument: as Citus calls it, it has none)
CREATE FUNCTION mode_final_int8(gpusort_state) RETURNS int8
AS '$libdir/gpusort', 'gpu_mode_final' LANGUAGE C;
CREATE AGGREGATE merge_mode_int8(gpusort_state) (SFUNC = gpu_sort_agg_combine, STYPE = gpusort_state,
	FINALFUNC = mode_final_int8);
CREATE AGGREGATE merge_topk_int4(gpusort_state) (SFUNC = gpu_sort_agg_combine, STYPE = gpusort_state,
	FINALFUNC = gpu_topk_agg_final_int4);

-- Rows in 5 "shards" of unequal sizes, one of them NULLs only, with NULLs,
-- duplicates, and the awkward floats (both zeros, NaN, infinities).  Arrays
-- of floats are compared with =, as ORDER BY sees -0 and 0 as equal and
-- may put them in either order.
CREATE TABLE rows (shard int, i4 int4, f8 float8, i8 int8, ts timestamptz);
INSERT INTO rows
SELECT (i * i) % 6, CASE WHEN i % 17 = 0 THEN NULL ELSE (random() * 2000 - 1000)::int4 END,
	   CASE WHEN i % 13 = 0 THEN NULL WHEN i % 101 = 0 THEN 'NaN' WHEN i % 103 = 0 THEN '-0'
			WHEN i % 107 = 0 THEN '0' WHEN i % 109 = 0 THEN '-Infinity' WHEN i % 113 = 0 THEN 'Infinity'
			ELSE random() * 100 - 50 END,
	   (random() * 50)::int8,
	   timestamptz '2026-01-01' + random() * interval '300 days'
FROM generate_series(1, 20000) i;
INSERT INTO rows VALUES (6, NULL, NULL, NULL, NULL), (6, NULL, NULL, NULL, NULL);

-- Each shard's state, through text and back, as Citus moves it.
CREATE TABLE states AS
SELECT shard,
	   state_sort(i4)::text::gpusort_state AS sort_i4,
	   state_sort(f8, true)::text::gpusort_state AS sort_f8_desc,
	   state_sort(ts)::text::gpusort_state AS sort_ts,
	   state_collect(f8)::text::gpusort_state AS collect_f8,
	   state_collect(i8)::text::gpusort_state AS collect_i8,
	   state_percentile(f8, '{0,0.1,0.5,0.999,1}')::text::gpusort_state AS percentile_f8,
	   state_topk(i4, 25, true)::text::gpusort_state AS topk_i4
FROM rows GROUP BY shard;

-- a partial state leaves its process sorted (or, limited, cut to its k)
SELECT count(*) AS shards,
	   count(*) FILTER (WHERE sort_i4::text LIKE 'gpusort_state 1 __ int4 asc sorted unlimited %') AS sorted_i4,
	   count(*) FILTER (WHERE sort_f8_desc::text LIKE 'gpusort_state 1 __ float8 desc sorted unlimited %') AS sorted_f8,
	   count(*) FILTER (WHERE topk_i4::text LIKE 'gpusort_state 1 __ int4 desc unsorted limited %') AS limited_topk,
	   max(length(topk_i4::text)) < 400 AS topk_at_most_k
FROM states;

-- the states' text is stable: output, input, output again gives the same text
SELECT count(*) FILTER (WHERE sort_f8_desc::text::gpusort_state::text <> sort_f8_desc::text) AS text_changed
FROM states;

-- the combined answers against PostgreSQL's own aggregates over every row
SELECT (SELECT merge_sort_int4(sort_i4) FROM states)::text
		   = (SELECT array_agg(i4 ORDER BY i4)::text FROM rows) AS sort_int4,
	   (SELECT merge_sort_float8(sort_f8_desc) FROM states)
		   = (SELECT array_agg(f8 ORDER BY f8 DESC) FROM rows) AS sort_float8_desc,
	   (SELECT merge_sort_timestamptz(sort_ts) FROM states)
		   = (SELECT array_agg(ts ORDER BY ts) FROM rows) AS sort_timestamptz,
	   (SELECT merge_median(collect_f8) FROM states)::text
		   = (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f8)::text FROM rows) AS median,
	   (SELECT merge_cont_multi(percentile_f8) FROM states)::text
		   = (SELECT percentile_cont('{0,0.1,0.5,0.999,1}'::float8[]) WITHIN GROUP (ORDER BY f8)::text FROM rows)
		   AS percentiles,
	   (SELECT merge_mode_int8(collect_i8) FROM states)
		   = (SELECT mode() WITHIN GROUP (ORDER BY i8) FROM rows) AS mode,
	   (SELECT merge_topk_int4(topk_i4) FROM states)
		   = (SELECT (array_agg(i4 ORDER BY i4 DESC))[1:25] FROM rows) AS topk;

-- the plain aggregates over the same rows in parallel workers (partial
-- states flattened in each worker, combined in the leader)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 3;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT gpu_median(f8) FROM rows;
SELECT gpu_sort_agg(f8) = (SELECT array_agg(f8 ORDER BY f8) FROM rows) AS parallel_sort_agg,
	   gpu_sort_agg(i4, true)::text = (SELECT array_agg(i4 ORDER BY i4 DESC)::text FROM rows) AS parallel_sort_agg_desc,
	   gpu_median(f8)::text = (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f8)::text FROM rows) AS parallel_median,
	   gpu_mode_agg(i8) = (SELECT mode() WITHIN GROUP (ORDER BY i8) FROM rows) AS parallel_mode
FROM rows;
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- A state written by hand: the text form's fields in order.
SELECT merge_sort_int4(s::gpusort_state) FROM (VALUES
	('gpusort_state 1 le int4 asc sorted unlimited nulls=1 param=- n=3 values=feffffff0300000007000000'),
	('gpusort_state 1 le int4 asc unsorted unlimited nulls=0 param=- n=2 values=0500000001000000')) v(s);
SELECT merge_topk_int4(s::gpusort_state) FROM (VALUES
	('gpusort_state 1 le int4 asc unsorted limited nulls=2 param=02000000 n=3 values=090000000100000005000000'),
	('gpusort_state 1 le int4 asc unsorted limited nulls=0 param=02000000 n=1 values=00000000')) v(s);

-- Malformed text: each a clean error.
\set VERBOSITY default
SELECT 'gpusort_state 2 le int4 asc sorted unlimited nulls=0 param=- n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 be int4 asc sorted unlimited nulls=0 param=- n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 le numeric asc sorted unlimited nulls=0 param=- n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 le int4 up sorted unlimited nulls=0 param=- n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=-1 param=- n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=x param=- n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=9223372036854775807 param=- n=1 values=01000000'::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=2 values=01000000'::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=2 values=010000000'::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=2 values=0100000zz0000000'::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=2 values=0200000001000000'::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted limited nulls=0 param=02000000 n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc unsorted limited nulls=0 param=- n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc unsorted limited nulls=0 param=ffffffff n=0 values='::gpusort_state;
SELECT 'gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=0 values= more'::gpusort_state;
SELECT 'gpusort_state 1 le int4'::gpusort_state;
-- states of two element types, or of two directions, do not combine
SELECT merge_sort_int4(s::gpusort_state) FROM (VALUES
	('gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=1 values=01000000'),
	('gpusort_state 1 le int8 asc sorted unlimited nulls=0 param=- n=1 values=0100000000000000')) v(s);
SELECT merge_sort_int4(s::gpusort_state) FROM (VALUES
	('gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=1 values=01000000'),
	('gpusort_state 1 le int4 desc sorted unlimited nulls=0 param=- n=1 values=02000000')) v(s);
-- a final function of another type
SELECT merge_sort_float8(s::gpusort_state) FROM (VALUES
	('gpusort_state 1 le int4 asc sorted unlimited nulls=0 param=- n=1 values=01000000')) v(s);
\set VERBOSITY terse

-- The binary form: COPY BINARY out and in keeps every state's text.
CREATE TEMP TABLE states_copy (shard int, state gpusort_state);
DO $$
DECLARE
	f text := format('/tmp/gpusort_22_state_%s.bin', pg_backend_pid());
BEGIN
	EXECUTE format('COPY (SELECT shard, sort_f8_desc FROM states) TO %L (FORMAT binary)', f);
	EXECUTE format('COPY states_copy FROM %L (FORMAT binary)', f);
	-- the program reads what COPY writes before it exits: no broken pipe
	EXECUTE format('COPY (SELECT) TO PROGRAM %L', format('cat > /dev/null; rm -f %s', f));
END $$;
SELECT count(*) AS copied, count(*) FILTER (WHERE c.state::text = s.sort_f8_desc::text) AS same_text
FROM states_copy c JOIN states s USING (shard);
