/*
 * keys.h: the key transforms every sort in kernels/ shares (CPU and GPU).
 *
 * Each element's bits map to an unsigned "ordered key" of the same width whose
 * unsigned order is gpusort's order (gpusort.h), and back.  The maps are bijections, so a
 * sort of ordered keys followed by the inverse map is a bit-exact permutation
 * of the input (no canonicalisation of -0 or of NaN payloads).
 *
 * Floats: the classic flip (negative: invert all bits; positive: set the sign
 * bit) orders -Inf < ... < -0 < +0 < ... < +Inf < +NaN, but puts negative NaNs
 * (sign bit set) below -Inf, at flipped values 0 .. R-1 where R is the number
 * of negative NaN bit patterns plus one (R-1 is -Inf's flipped value).
 * Subtracting R modulo 2^w rotates those R values to the top, after the
 * positive NaNs, and keeps every other value in order: all NaNs sort after
 * +Inf whatever their sign bit.  R = 0x007FFFFF (float4), 0x000FFFFFFFFFFFFF
 * (float8).
 *
 * Descending is the bitwise NOT of the ascending key: the exact reverse order;
 * a stable sort on it keeps ties in input order.
 */
#ifndef GPUSORT_KEYS_H
#define GPUSORT_KEYS_H

#include <stdint.h>

#ifdef __CUDACC__
#define GS_KEY_FN static __host__ __device__ __forceinline__
#else
#define GS_KEY_FN static inline
#endif

#define GS_FLOAT4_NAN_ROTATION UINT32_C(0x007FFFFF)
#define GS_FLOAT8_NAN_ROTATION UINT64_C(0x000FFFFFFFFFFFFF)

/* int2 / int4 / int8: flip the sign bit; that is its own inverse. */
GS_KEY_FN uint16_t
gs_int2_to_key(uint16_t bits)
{
	return (uint16_t) (bits ^ UINT16_C(0x8000));
}

GS_KEY_FN uint16_t
gs_key_to_int2(uint16_t key)
{
	return (uint16_t) (key ^ UINT16_C(0x8000));
}

GS_KEY_FN uint32_t
gs_int4_to_key(uint32_t bits)
{
	return bits ^ UINT32_C(0x80000000);
}

GS_KEY_FN uint32_t
gs_key_to_int4(uint32_t key)
{
	return key ^ UINT32_C(0x80000000);
}

GS_KEY_FN uint64_t
gs_int8_to_key(uint64_t bits)
{
	return bits ^ UINT64_C(0x8000000000000000);
}

GS_KEY_FN uint64_t
gs_key_to_int8(uint64_t key)
{
	return key ^ UINT64_C(0x8000000000000000);
}

/* float4 / float8: flip, then rotate negative NaNs above everything. */
GS_KEY_FN uint32_t
gs_float4_to_key(uint32_t bits)
{
	uint32_t	mask = (uint32_t) ((int32_t) bits >> 31) | UINT32_C(0x80000000);

	return (bits ^ mask) - GS_FLOAT4_NAN_ROTATION;
}

GS_KEY_FN uint32_t
gs_key_to_float4(uint32_t key)
{
	uint32_t	flipped = key + GS_FLOAT4_NAN_ROTATION;
	/* flipped has its top bit set exactly when the input was non-negative */
	uint32_t	mask = (uint32_t) ((int32_t) ~flipped >> 31) | UINT32_C(0x80000000);

	return flipped ^ mask;
}

GS_KEY_FN uint64_t
gs_float8_to_key(uint64_t bits)
{
	uint64_t	mask = (uint64_t) ((int64_t) bits >> 63) | UINT64_C(0x8000000000000000);

	return (bits ^ mask) - GS_FLOAT8_NAN_ROTATION;
}

GS_KEY_FN uint64_t
gs_key_to_float8(uint64_t key)
{
	uint64_t	flipped = key + GS_FLOAT8_NAN_ROTATION;
	uint64_t	mask = (uint64_t) ((int64_t) ~flipped >> 63) | UINT64_C(0x8000000000000000);

	return flipped ^ mask;
}

/*
 * Width-generic forms for code that is written once per key width: is_float
 * selects the float transform, descending inverts.  The compiler folds the
 * branches when the flags are constants.
 */
GS_KEY_FN uint16_t
gs_to_key16(uint16_t bits, int descending)
{
	uint16_t	k = gs_int2_to_key(bits);

	return descending ? (uint16_t) ~k : k;
}

GS_KEY_FN uint16_t
gs_from_key16(uint16_t key, int descending)
{
	return gs_key_to_int2(descending ? (uint16_t) ~key : key);
}

GS_KEY_FN uint32_t
gs_to_key32(uint32_t bits, int is_float, int descending)
{
	uint32_t	k = is_float ? gs_float4_to_key(bits) : gs_int4_to_key(bits);

	return descending ? ~k : k;
}

GS_KEY_FN uint32_t
gs_from_key32(uint32_t key, int is_float, int descending)
{
	uint32_t	k = descending ? ~key : key;

	return is_float ? gs_key_to_float4(k) : gs_key_to_int4(k);
}

GS_KEY_FN uint64_t
gs_to_key64(uint64_t bits, int is_float, int descending)
{
	uint64_t	k = is_float ? gs_float8_to_key(bits) : gs_int8_to_key(bits);

	return descending ? ~k : k;
}

GS_KEY_FN uint64_t
gs_from_key64(uint64_t key, int is_float, int descending)
{
	uint64_t	k = descending ? ~key : key;

	return is_float ? gs_key_to_float8(k) : gs_key_to_int8(k);
}

#endif							/* GPUSORT_KEYS_H */
