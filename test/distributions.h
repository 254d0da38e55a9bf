/*
 * distributions.h: input generators shared by the C tests and benchmarks of
 * kernels/ (CPU and GPU).  Header-only; compiles as C and as CUDA host C++.
 *
 * The distributions are those of Nguyen Xuan Thang's thesis "Development of
 * parallel sorting algorithms for GPU", section 5.3.1 (random, sorted, almost
 * sorted, decreasing, zero entropy, gaussian, bucket, staggered; the last
 * three from Cederman and Tsigas), of Sitchinava and Weichert, "Bank Conflict
 * Free Comparison-based Sorting On GPUs", section 4 (0-1, defined
 * duplicates), a narrow range ([0, 10^6)), and the special values of each
 * type.  Every generator is deterministic in (type, n, seed).
 */
#ifndef GPUSORT_DISTRIBUTIONS_H
#define GPUSORT_DISTRIBUTIONS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpusort.h"

typedef enum gs_dist
{
	GS_DIST_UNIFORM = 0,		/* random bits over the type's values (floats: finite) */
	GS_DIST_SORTED,				/* ascending */
	GS_DIST_ALMOST_SORTED,		/* ascending with a few random swaps (n/10000 + 3) */
	GS_DIST_REVERSE,			/* descending */
	GS_DIST_ALL_EQUAL,			/* one random value ("zero entropy") */
	GS_DIST_ZERO_ONE,			/* 0 or 1 */
	GS_DIST_FEW_DISTINCT,		/* 16 random values ("defined duplicates") */
	GS_DIST_GAUSSIAN,			/* mean of four uniform values */
	GS_DIST_BUCKET,				/* p blocks of p sections, section i in [i, i+1) * range/p */
	GS_DIST_STAGGERED,			/* p blocks, block i in an interleaved range */
	GS_DIST_NARROW,				/* [0, 10^6) (int2: [0, 1000)) */
	GS_DIST_SPECIAL,			/* type extremes; floats: +-0, +-Inf, NaNs, denormals */
	GS_NUM_DISTS
} gs_dist;

static const char *const gs_dist_names[GS_NUM_DISTS] = {
	"uniform", "sorted", "almost_sorted", "reverse", "all_equal", "zero_one",
	"few_distinct", "gaussian", "bucket", "staggered", "narrow", "special"
};

/* splitmix64: small, fast, good enough for test data. */
static inline uint64_t
gs_rand_next(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* Uniform in [0, bound), bound > 0 (multiply-shift; bias is negligible here). */
static inline uint64_t
gs_rand_below(uint64_t *state, uint64_t bound)
{
	return (uint64_t) (((unsigned __int128) gs_rand_next(state) * bound) >> 64);
}

/* Stores v into element i of an array of the type; integers wrap to the width. */
static inline void
gs_store_int(gs_type type, void *out, size_t i, int64_t v)
{
	switch (type)
	{
		case GS_INT2:
			((int16_t *) out)[i] = (int16_t) v;
			break;
		case GS_INT4:
			((int32_t *) out)[i] = (int32_t) v;
			break;
		case GS_INT8:
			((int64_t *) out)[i] = v;
			break;
		case GS_FLOAT4:
			((float *) out)[i] = (float) v;
			break;
		case GS_FLOAT8:
			((double *) out)[i] = (double) v;
			break;
		default:
			break;
	}
}

static inline void
gs_store_bits(gs_type type, void *out, size_t i, uint64_t bits)
{
	switch (gs_type_size(type))
	{
		case 2:
			((uint16_t *) out)[i] = (uint16_t) bits;
			break;
		case 4:
			((uint32_t *) out)[i] = (uint32_t) bits;
			break;
		default:
			((uint64_t *) out)[i] = bits;
			break;
	}
}

/* Random bits of the type's width; floats re-draw Inf/NaN patterns. */
static inline uint64_t
gs_rand_bits(gs_type type, uint64_t *state)
{
	for (;;)
	{
		uint64_t	r = gs_rand_next(state);

		if (type == GS_FLOAT4)
		{
			uint32_t	b = (uint32_t) r;

			if (((b >> 23) & 0xFF) != 0xFF)
				return b;
		}
		else if (type == GS_FLOAT8)
		{
			if (((r >> 52) & 0x7FF) != 0x7FF)
				return r;
		}
		else
			return r;
	}
}

/*
 * The largest magnitude of the "value range" distributions (sorted, gaussian,
 * bucket, staggered): 2^15, 2^31, 2^62, and 2^31 for floats (as 002 uses).
 */
static inline int64_t
gs_dist_range(gs_type type)
{
	switch (type)
	{
		case GS_INT2:
			return INT64_C(1) << 15;
		case GS_INT8:
			return INT64_C(1) << 62;
		default:
			return INT64_C(1) << 31;
	}
}

/* A special value of the type, number k (cycles through all of them). */
static inline uint64_t
gs_special_bits(gs_type type, uint64_t k)
{
	static const uint32_t f4[] = {
		0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
		0x7F800001, 0xFFFFFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,
		0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000
	};
	static const uint64_t f8[] = {
		UINT64_C(0x0000000000000000), UINT64_C(0x8000000000000000),
		UINT64_C(0x7FF0000000000000), UINT64_C(0xFFF0000000000000),
		UINT64_C(0x7FF8000000000000), UINT64_C(0xFFF8000000000000),
		UINT64_C(0x7FF0000000000001), UINT64_C(0xFFFFFFFFFFFFFFFF),
		UINT64_C(0x0000000000000001), UINT64_C(0x8000000000000001),
		UINT64_C(0x000FFFFFFFFFFFFF), UINT64_C(0x800FFFFFFFFFFFFF),
		UINT64_C(0x7FEFFFFFFFFFFFFF), UINT64_C(0xFFEFFFFFFFFFFFFF),
		UINT64_C(0x3FF0000000000000), UINT64_C(0xBFF0000000000000)
	};
	static const int64_t ints[] = {0, 1, -1, 2, -2, 0x7F, -0x80, INT16_MAX, INT16_MIN,
		INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 42, -42, 1000};

	switch (type)
	{
		case GS_FLOAT4:
			return f4[k % 16];
		case GS_FLOAT8:
			return f8[k % 16];
		case GS_INT2:
			return (uint64_t) ints[k % 9];		/* those that fit in 16 bits */
		case GS_INT4:
			return (uint64_t) ints[k % 11];		/* those that fit in 32 bits */
		default:
			return (uint64_t) ints[k % 16];
	}
}

/*
 * Fills out[0..n) with distribution d of the type, deterministically from seed.
 * out must hold n * gs_type_size(type) bytes.
 */
static inline void
gs_fill(gs_type type, gs_dist d, void *out, size_t n, uint64_t seed)
{
	uint64_t	st = seed * UINT64_C(0x2545F4914F6CDD1D) + (uint64_t) d * 7919 + (uint64_t) type;
	int64_t		range = gs_dist_range(type);
	size_t		i;

	switch (d)
	{
		case GS_DIST_UNIFORM:
			for (i = 0; i < n; i++)
				gs_store_bits(type, out, i, gs_rand_bits(type, &st));
			break;
		case GS_DIST_SORTED:
		case GS_DIST_ALMOST_SORTED:
		case GS_DIST_REVERSE:
			for (i = 0; i < n; i++)
			{
				/* spread i over [-range, range), non-decreasing in i */
				int64_t		v = (int64_t) (((unsigned __int128) i * (2 * (uint64_t) range)) / n) - range;

				if (type == GS_FLOAT4 || type == GS_FLOAT8)
					v = (int64_t) i - (int64_t) (n / 2);
				gs_store_int(type, out, d == GS_DIST_REVERSE ? n - 1 - i : i, v);
			}
			if (d == GS_DIST_ALMOST_SORTED && n > 1)
			{
				size_t		swaps = n / 10000 + 3;
				size_t		w = gs_type_size(type);
				unsigned char *p = (unsigned char *) out;
				unsigned char tmp[8];

				for (i = 0; i < swaps; i++)
				{
					size_t		a = gs_rand_below(&st, n),
								b = gs_rand_below(&st, n);

					memcpy(tmp, p + a * w, w);
					memcpy(p + a * w, p + b * w, w);
					memcpy(p + b * w, tmp, w);
				}
			}
			break;
		case GS_DIST_ALL_EQUAL:
			{
				uint64_t	b = gs_rand_bits(type, &st);

				for (i = 0; i < n; i++)
					gs_store_bits(type, out, i, b);
			}
			break;
		case GS_DIST_ZERO_ONE:
			for (i = 0; i < n; i++)
				gs_store_int(type, out, i, (int64_t) (gs_rand_next(&st) & 1));
			break;
		case GS_DIST_FEW_DISTINCT:
			{
				uint64_t	vals[16];

				for (i = 0; i < 16; i++)
					vals[i] = gs_rand_bits(type, &st);
				for (i = 0; i < n; i++)
					gs_store_bits(type, out, i, vals[gs_rand_next(&st) & 15]);
			}
			break;
		case GS_DIST_GAUSSIAN:
			for (i = 0; i < n; i++)
			{
				int64_t		s = 0;
				int			k;

				for (k = 0; k < 4; k++)
					s += (int64_t) gs_rand_below(&st, (uint64_t) range * 2) - range;
				gs_store_int(type, out, i, s / 4);
			}
			break;
		case GS_DIST_BUCKET:
		case GS_DIST_STAGGERED:
			{
				/* 002 section 5.3.1 with p = 128 (Cederman and Tsigas) over [0, range). */
				const uint64_t p = 128;
				uint64_t	width = (uint64_t) range / p;
				size_t		block = n / p + 1;

				for (i = 0; i < n; i++)
				{
					uint64_t	b = i / block;	/* block index */
					uint64_t	lo;

					if (d == GS_DIST_BUCKET)
					{
						/* each block is p sections; section s draws from [s, s+1) * width */
						size_t		section = (i % block) * p / block;

						lo = section * width;
					}
					else
						lo = (b < p / 2 ? 2 * b + 1 : 2 * b - p) * width;
					gs_store_int(type, out, i, (int64_t) (lo + gs_rand_below(&st, width)));
				}
			}
			break;
		case GS_DIST_NARROW:
			for (i = 0; i < n; i++)
				gs_store_int(type, out, i, (int64_t) gs_rand_below(&st, type == GS_INT2 ? 1000 : 1000000));
			break;
		case GS_DIST_SPECIAL:
			for (i = 0; i < n; i++)
			{
				/* half specials, half random values among them */
				uint64_t	r = gs_rand_next(&st);

				gs_store_bits(type, out, i, (r & 1) ? gs_special_bits(type, r >> 1) : gs_rand_bits(type, &st));
			}
			break;
		default:
			break;
	}
}

#endif							/* GPUSORT_DISTRIBUTIONS_H */
