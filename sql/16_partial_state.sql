--
-- 16_partial_state: partial states of gpu_sort_agg's family (the bytea that
-- gpu_sort_agg_serialize writes and gpu_sort_agg_deserialize reads) crafted
-- by hand: well-formed ones give the aggregates' answers, and malformed ones
-- (truncated, huge or negative counts, lengths that wrap, a wrong element
-- type, a missing or malformed constant argument) a clean error.
--
-- The states reach the deserialize function as they do in a plan with
-- partial aggregation: test aggregates keep the bytea of their rows as the
-- transition state (string_agg's bytea transition function) and "serialize"
-- it with string_agg's final function, which returns those bytes; their
-- deserialize, combine and final functions are gpusort's.  Each partition of
-- a two-partition table gives one partial state (partitionwise aggregation).
-- The states are written in little-endian byte order, the order of the
-- machines gpusort runs on (x86-64, arm64).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
ALTER EXTENSION gpusort UPDATE;
RESET client_min_messages;

-- The state's layout: elemtype oid, descending int4, nvalues int8, nnulls
-- int8, param_len int4 (-1: no constant argument), limited int4 (1: only the
-- best k values matter, gpu_topk_agg's, k being the constant argument), then
-- param_len bytes of constant argument, then the packed values.
CREATE FUNCTION rev(b bytea) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(string_agg(substring(b FROM i FOR 1), ''::bytea ORDER BY i DESC), '')
	FROM generate_series(1, length(b)) i $$;
CREATE FUNCTION le4(v int8) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$ SELECT rev(substring(int8send(v) FROM 5)) $$;
CREATE FUNCTION le8(v int8) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$ SELECT rev(int8send(v)) $$;
CREATE FUNCTION i4s(VARIADIC v int8[]) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
	SELECT string_agg(le4(x), ''::bytea ORDER BY i) FROM unnest(v) WITH ORDINALITY u(x, i) $$;
CREATE FUNCTION i8s(VARIADIC v int8[]) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
	SELECT string_agg(le8(x), ''::bytea ORDER BY i) FROM unnest(v) WITH ORDINALITY u(x, i) $$;
CREATE FUNCTION f8s(VARIADIC v float8[]) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
	SELECT string_agg(rev(float8send(x)), ''::bytea ORDER BY i) FROM unnest(v) WITH ORDINALITY u(x, i) $$;
CREATE FUNCTION st(elemtype regtype, nvalues int8, nnulls int8, param bytea, payload bytea,
				   param_len int8 DEFAULT NULL, descending int8 DEFAULT 0, limited int8 DEFAULT 0) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
	SELECT le4(elemtype::oid::int8) || le4(descending) || le8(nvalues) || le8(nnulls)
		|| le4(coalesce(param_len, length(param), -1)) || le4(limited) || coalesce(param, '') || payload $$;
-- The percentile aggregates' constant argument: a kind byte ('s' one
-- fraction, 'a' an array), padding to 8 bytes, then the float8 or the
-- float8[] as it lies in memory (varlena header, ndim, dataoffset, elemtype,
-- dims, lower bounds, values).
CREATE FUNCTION fraction(p float8) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
	SELECT '\x73'::bytea || '\x00000000000000'::bytea || f8s(p) $$;
CREATE FUNCTION fractions(elemtype regtype, dim int8, VARIADIC ps float8[]) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
	SELECT '\x61'::bytea || '\x00000000000000'::bytea
		|| le4((24 + 8 * cardinality(ps)) * 4) || le4(1) || le4(0) || le4(elemtype::oid::int8)
		|| le4(dim) || le4(1) || f8s(VARIADIC ps) $$;

CREATE TEMP TABLE states (part int, state bytea) PARTITION BY LIST (part);
CREATE TEMP TABLE states_1 PARTITION OF states FOR VALUES IN (1);
CREATE TEMP TABLE states_2 PARTITION OF states FOR VALUES IN (2);
-- the partial states of the next query: a, and b unless it is NULL
CREATE PROCEDURE put(a bytea, b bytea DEFAULT NULL) LANGUAGE sql AS $$
	DELETE FROM states;
	INSERT INTO states VALUES (1, a), (2, b);
$$;

CREATE AGGREGATE sort_int4_from(bytea, bytea) (
	SFUNC = bytea_string_agg_transfn, STYPE = internal,
	SERIALFUNC = bytea_string_agg_finalfn, DESERIALFUNC = gpu_sort_agg_deserialize,
	COMBINEFUNC = gpu_sort_agg_combine, FINALFUNC = gpu_sort_agg_final_int4);
CREATE AGGREGATE topk_int4_from(bytea, bytea) (
	SFUNC = bytea_string_agg_transfn, STYPE = internal,
	SERIALFUNC = bytea_string_agg_finalfn, DESERIALFUNC = gpu_sort_agg_deserialize,
	COMBINEFUNC = gpu_sort_agg_combine, FINALFUNC = gpu_topk_agg_final_int4);
CREATE AGGREGATE cont_from(bytea, bytea) (
	SFUNC = bytea_string_agg_transfn, STYPE = internal,
	SERIALFUNC = bytea_string_agg_finalfn, DESERIALFUNC = gpu_sort_agg_deserialize,
	COMBINEFUNC = gpu_sort_agg_combine, FINALFUNC = gpu_percentile_cont_agg_final);
CREATE AGGREGATE cont_multi_from(bytea, bytea) (
	SFUNC = bytea_string_agg_transfn, STYPE = internal,
	SERIALFUNC = bytea_string_agg_finalfn, DESERIALFUNC = gpu_sort_agg_deserialize,
	COMBINEFUNC = gpu_sort_agg_combine, FINALFUNC = gpu_percentile_cont_multi_agg_final);
-- gpu_percentile_disc_agg's and gpu_mode_agg's final functions for int4,
-- declared for this aggregate's arguments
CREATE FUNCTION disc_int4_final(internal, bytea, bytea) RETURNS int4
AS '$libdir/gpusort', 'gpu_percentile_disc_final' LANGUAGE C;
CREATE FUNCTION mode_int4_final(internal, bytea, bytea) RETURNS int4
AS '$libdir/gpusort', 'gpu_mode_final' LANGUAGE C;
CREATE AGGREGATE disc_int4_from(bytea, bytea) (
	SFUNC = bytea_string_agg_transfn, STYPE = internal,
	SERIALFUNC = bytea_string_agg_finalfn, DESERIALFUNC = gpu_sort_agg_deserialize,
	COMBINEFUNC = gpu_sort_agg_combine, FINALFUNC = disc_int4_final, FINALFUNC_EXTRA);
CREATE AGGREGATE mode_int4_from(bytea, bytea) (
	SFUNC = bytea_string_agg_transfn, STYPE = internal,
	SERIALFUNC = bytea_string_agg_finalfn, DESERIALFUNC = gpu_sort_agg_deserialize,
	COMBINEFUNC = gpu_sort_agg_combine, FINALFUNC = mode_int4_final, FINALFUNC_EXTRA);

-- the plan: one partial aggregate per partition, combined
SET enable_partitionwise_aggregate = on;
EXPLAIN (COSTS OFF) SELECT sort_int4_from(state, '') FROM states;

-- well-formed states
CALL put(st('int4', 3, 1, NULL, i4s(3, -1, 2)));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int4', 2, 0, NULL, i4s(3, -1)), st('int4', 1, 2, NULL, i4s(2)));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int4', 2, 0, NULL, i4s(3, -1), descending => 1), st('int4', 0, 1, NULL, '', descending => 1));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int4', 4, 0, le4(2), i4s(5, 1, 3, 4)), st('int4', 0, 3, le4(2), ''));
SELECT topk_int4_from(state, '') FROM states;
-- limited states (gpu_topk_agg's): more values than k are cut on the way in,
-- with or without an unlimited state beside them
CALL put(st('int4', 5, 1, le4(2), i4s(5, 1, 3, 4, -7), limited => 1), st('int4', 2, 0, le4(2), i4s(0, 9), limited => 1));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('int4', 3, 0, le4(2), i4s(5, 1, 3), descending => 1, limited => 1),
		 st('int4', 2, 0, le4(2), i4s(8, 0), descending => 1));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('int4', 3, 2, le4(0), i4s(5, 1, 3), limited => 1));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('float8', 2, 0, fraction(0.5), f8s(1, 3)), st('float8', 1, 0, fraction(0.5), f8s(2)));
SELECT cont_from(state, '') FROM states;
CALL put(st('int8', 3, 0, fractions('float8', 2, 0.25, 0.75), i8s(10, 30, 20)));
SELECT cont_multi_from(state, '') FROM states;
CALL put(st('int4', 5, 0, fraction(0.5), i4s(7, 7, 1, 1, 5)));
SELECT disc_int4_from(state, ''), mode_int4_from(state, '') FROM states;

-- truncated: in the header, in the values; and bytes after the values
CALL put('\x190000000000'::bytea);
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int4', 3, 0, NULL, i4s(1, 2)));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, NULL, i4s(1, 2)));
SELECT sort_int4_from(state, '') FROM states;
-- counts whose byte length wraps to the length given (2^62 + 2 int4, 2^61 int8)
CALL put(st('int4', 4611686018427387906, 0, NULL, i4s(1, 2)));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int8', 2305843009213693952, 0, NULL, ''));
SELECT sort_int4_from(state, '') FROM states;
-- negative and overflowing counts
CALL put(st('int4', -1, 0, NULL, ''));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int4', 0, -1, NULL, ''));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 9223372036854775807, NULL, i4s(1)));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int4', 0, 4611686018427387904, NULL, ''), st('int4', 0, 4611686018427387904, NULL, ''));
SELECT sort_int4_from(state, '') FROM states;
-- constant-argument lengths past the end, and negative
CALL put(st('int4', 0, 0, NULL, '', param_len => 2147483647));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int4', 0, 0, NULL, '', param_len => -2));
SELECT sort_int4_from(state, '') FROM states;
-- descending neither 0 nor 1; partial states that disagree on it
CALL put(st('int4', 1, 0, NULL, i4s(1), descending => 2));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, NULL, i4s(1)), st('int4', 1, 0, NULL, i4s(1), descending => 1));
SELECT sort_int4_from(state, '') FROM states;

-- element types: one without an ordering, not the aggregate's, not the
-- other partial state's
CALL put(st('point', 0, 0, NULL, ''));
SELECT sort_int4_from(state, '') FROM states;
-- a type gpusort does not pack: its collation (an oid) before the constant
-- argument, then its values as datumSerialize writes them (an int4 length,
-- then the bytes, here a varlena with a 4-byte header): the collation
-- missing, a length past the end, a value whose varlena header disagrees
-- with its length, bytes after the values, and a well-formed one (of
-- another type than the aggregate's)
CALL put(st('text', 0, 0, NULL, ''));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('text', 1, 0, NULL, le4(100) || le4(1000)));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('text', 1, 0, NULL, le4(100) || le4(6) || le4(25 * 4) || '\x6162'::bytea));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('text', 1, 0, NULL, le4(100) || le4(6) || le4(6 * 4) || '\x616200'::bytea));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('text', 1, 0, NULL, le4(100) || le4(6) || le4(6 * 4) || '\x6162'::bytea));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st(0, 0, 0, NULL, ''));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('float8', 2, 0, NULL, f8s(1, 2)));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('int8', 2, 0, fraction(0.5), i8s(1, 2)));
SELECT disc_int4_from(state, '') FROM states;
SELECT mode_int4_from(state, '') FROM states;
CALL put(st('date', 1, 0, le4(1), i4s(1)));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, NULL, i4s(1)), st('int8', 2, 0, NULL, i8s(1, 2)));
SELECT sort_int4_from(state, '') FROM states;
CALL put(st('date', 1, 0, fraction(0.5), i4s(1)));
SELECT cont_from(state, '') FROM states;

-- gpu_topk_agg's k: missing, of the wrong length, negative
CALL put(st('int4', 1, 0, NULL, i4s(1)));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, '\x010000'::bytea, i4s(1)));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, le4(-1), i4s(1)));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, le4(1), i4s(1)), st('int4', 1, 0, le4(2), i4s(1)));
SELECT topk_int4_from(state, '') FROM states;
-- a limited flag neither 0 nor 1; a limited state whose k is missing, of the
-- wrong length or negative; limited states with different k
CALL put(st('int4', 1, 0, le4(1), i4s(1), limited => 2));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, NULL, i4s(1), limited => 1));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, le8(1), i4s(1), limited => 1));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, le4(-3), i4s(1), limited => 1));
SELECT topk_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, le4(1), i4s(1), limited => 1), st('int4', 1, 0, le4(2), i4s(1), limited => 1));
SELECT topk_int4_from(state, '') FROM states;

-- the percentile aggregates' fraction: missing, of an unknown kind, of the
-- wrong length; one where the final function returns an array and the
-- reverse; an array of another element type, whose dimension or length
-- disagrees with its data, or whose header is cut
CALL put(st('int4', 1, 0, NULL, i4s(1)));
SELECT cont_from(state, '') FROM states;
SELECT disc_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, '\x78000000000000000000000000000000'::bytea, i4s(1)));
SELECT cont_from(state, '') FROM states;
CALL put(st('int4', 1, 0, substring(fraction(0.5) FROM 1 FOR 12), i4s(1)));
SELECT cont_from(state, '') FROM states;
CALL put(st('int4', 1, 0, fraction(0.5), i4s(1)));
SELECT cont_multi_from(state, '') FROM states;
CALL put(st('int4', 1, 0, fractions('float8', 1, 0.5), i4s(1)));
SELECT cont_from(state, '') FROM states;
SELECT disc_int4_from(state, '') FROM states;
CALL put(st('int4', 1, 0, fractions('int8', 1, 0.5), i4s(1)));
SELECT cont_multi_from(state, '') FROM states;
CALL put(st('int4', 1, 0, fractions('float8', 1000, 0.5), i4s(1)));
SELECT cont_multi_from(state, '') FROM states;
CALL put(st('int4', 1, 0, fractions('float8', 1, 0.5) || '\x00'::bytea, i4s(1)));
SELECT cont_multi_from(state, '') FROM states;
CALL put(st('int4', 1, 0, substring(fractions('float8', 1, 0.5) FROM 1 FOR 20), i4s(1)));
SELECT cont_multi_from(state, '') FROM states;

-- the largest count of int4 whose byte length wraps to 0 (2^62): no loop
-- without end, no allocation
CALL put(st('int4', 4611686018427387904, 0, NULL, ''));
SELECT sort_int4_from(state, '') FROM states;

RESET enable_partitionwise_aggregate;
DROP AGGREGATE sort_int4_from(bytea, bytea);
DROP AGGREGATE topk_int4_from(bytea, bytea);
DROP AGGREGATE cont_from(bytea, bytea);
DROP AGGREGATE cont_multi_from(bytea, bytea);
DROP AGGREGATE disc_int4_from(bytea, bytea);
DROP AGGREGATE mode_int4_from(bytea, bytea);
DROP FUNCTION disc_int4_final(internal, bytea, bytea);
DROP FUNCTION mode_int4_final(internal, bytea, bytea);
DROP PROCEDURE put(bytea, bytea);
DROP TABLE states;
DROP FUNCTION fractions(regtype, int8, float8[]);
DROP FUNCTION fraction(float8);
DROP FUNCTION st(regtype, int8, int8, bytea, bytea, int8, int8, int8);
DROP FUNCTION f8s(float8[]);
DROP FUNCTION i8s(int8[]);
DROP FUNCTION i4s(int8[]);
DROP FUNCTION le8(int8);
DROP FUNCTION le4(int8);
DROP FUNCTION rev(bytea);
