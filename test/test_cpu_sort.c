/*
 * test_cpu_sort.c: the CPU sort of kernels/ (gs_cpu_sort, gs_cpu_argsort,
 * gs_cpu_scratch_bytes) against qsort, with every type, every distribution of
 * distributions.h, both directions and awkward sizes.
 *
 * The reference comparator implements gpusort's order (gpusort.h) on the values directly
 * (not through keys.h), so a wrong key transform cannot hide behind itself.
 * Results must match bit-exactly, except that NaNs may come in any order among
 * themselves: their run is compared as a multiset.
 *
 *   test_cpu_sort            default run (a few 10^7 cases; about a minute on 2 cores)
 *   test_cpu_sort --quick    small sizes only (for valgrind)
 *   test_cpu_sort --large    adds 10^7 cases for every type and more distributions
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusort.h"
#include "distributions.h"
#include "tap.h"

#define POISON 0xA5

static bool quick;
static bool large;

/* ------------------------------------------------------------------------
 * The reference: gpusort's order on values, for qsort.
 * ------------------------------------------------------------------------ */

/* -Inf < ... < -0 < +0 < ... < +Inf < NaN (any sign); NaNs tie with each other. */
static int
cmp_double_spec(double a, double b)
{
	int			an = isnan(a) != 0;
	int			bn = isnan(b) != 0;

	if (an || bn)
		return an - bn;
	if (a < b)
		return -1;
	if (a > b)
		return 1;
	/* equal values: only zeros can differ, by sign; -0 first */
	return (signbit(b) != 0) - (signbit(a) != 0);
}

#define CMP_NUM(a, b) (((a) > (b)) - ((a) < (b)))

static int
cmp_int2(const void *a, const void *b)
{
	return CMP_NUM(*(const int16_t *) a, *(const int16_t *) b);
}

static int
cmp_int4(const void *a, const void *b)
{
	return CMP_NUM(*(const int32_t *) a, *(const int32_t *) b);
}

static int
cmp_int8(const void *a, const void *b)
{
	return CMP_NUM(*(const int64_t *) a, *(const int64_t *) b);
}

static int
cmp_float4(const void *a, const void *b)
{
	return cmp_double_spec(*(const float *) a, *(const float *) b);
}

static int
cmp_float8(const void *a, const void *b)
{
	return cmp_double_spec(*(const double *) a, *(const double *) b);
}

static int	(*const ascending_cmp[GS_NUM_TYPES]) (const void *, const void *) = {
	cmp_int2, cmp_int4, cmp_int8, cmp_float4, cmp_float8
};

static void
reference_sort(gs_type type, void *a, size_t n)
{
	qsort(a, n, gs_type_size(type), ascending_cmp[type]);
}

static bool
is_nan(gs_type type, const void *a, size_t i)
{
	if (type == GS_FLOAT4)
		return isnan(((const float *) a)[i]);
	if (type == GS_FLOAT8)
		return isnan(((const double *) a)[i]);
	return false;
}

static uint64_t
bits_at(gs_type type, const void *a, size_t i)
{
	switch (gs_type_size(type))
	{
		case 2:
			return ((const uint16_t *) a)[i];
		case 4:
			return ((const uint32_t *) a)[i];
		default:
			return ((const uint64_t *) a)[i];
	}
}

static int
cmp_u64(const void *a, const void *b)
{
	return CMP_NUM(*(const uint64_t *) a, *(const uint64_t *) b);
}

/*
 * got equals want bit for bit, except that the NaNs (which must sit at the
 * same positions) may be permuted among themselves.  Describes the first
 * difference in why.
 */
static bool
same_result(gs_type type, const void *got, const void *want, size_t n, char *why, size_t whylen)
{
	size_t		w = gs_type_size(type);
	size_t		i,
				nans = 0;
	uint64_t   *g,
			   *e;
	bool		ok;

	if (n == 0 || memcmp(got, want, n * w) == 0)
		return true;
	for (i = 0; i < n; i++)
	{
		bool		gn = is_nan(type, got, i);

		if (gn != is_nan(type, want, i) || (!gn && bits_at(type, got, i) != bits_at(type, want, i)))
		{
			snprintf(why, whylen, "first difference at %zu: got 0x%llx, want 0x%llx", i,
					 (unsigned long long) bits_at(type, got, i), (unsigned long long) bits_at(type, want, i));
			return false;
		}
		nans += gn;
	}
	g = malloc(nans * sizeof(uint64_t) + 1);
	e = malloc(nans * sizeof(uint64_t) + 1);
	nans = 0;
	for (i = 0; i < n; i++)
		if (is_nan(type, want, i))
		{
			g[nans] = bits_at(type, got, i);
			e[nans++] = bits_at(type, want, i);
		}
	qsort(g, nans, sizeof(uint64_t), cmp_u64);
	qsort(e, nans, sizeof(uint64_t), cmp_u64);
	ok = memcmp(g, e, nans * sizeof(uint64_t)) == 0;
	if (!ok)
		snprintf(why, whylen, "the %zu nans differ as a multiset", nans);
	free(g);
	free(e);
	return ok;
}

/* ------------------------------------------------------------------------
 * Buffers.  The case buffers grow and are reused, so that page faults do
 * not dominate the run.  Scratch sits at a chosen misalignment inside its
 * block, and its exact size is followed by poisoned bytes that must survive
 * the sort, as must the bytes before it.
 * ------------------------------------------------------------------------ */

#define GUARD 64

static void *
xrealloc(void *p, size_t bytes)
{
	p = realloc(p, bytes ? bytes : 1);
	if (p == NULL)
	{
		fprintf(stderr, "out of memory for %zu bytes\n", bytes);
		exit(2);
	}
	return p;
}

typedef struct scratch_buf
{
	unsigned char *block;
	size_t		capacity;
	unsigned char *p;
	size_t		bytes;
} scratch_buf;

/* Points s->p at bytes of scratch, misaligned by misalign from the block's (malloc) alignment. */
static void
scratch_get(scratch_buf *s, size_t bytes, size_t misalign)
{
	if (s->block == NULL || s->capacity < bytes + misalign + GUARD)
	{
		s->capacity = bytes + misalign + GUARD;
		free(s->block);
		s->block = xmalloc(s->capacity);
	}
	s->bytes = bytes;
	s->p = s->block + misalign;
	memset(s->block, POISON, misalign);
	memset(s->p + bytes, POISON, GUARD);
}

static bool
scratch_guard_intact(const scratch_buf *s)
{
	size_t		i;

	for (i = 0; i < GUARD; i++)
		if (s->p[s->bytes + i] != POISON)
			return false;
	for (i = 0; s->block + i < s->p; i++)
		if (s->block[i] != POISON)
			return false;
	return true;
}

static void
scratch_free(scratch_buf *s)
{
	free(s->block);
	memset(s, 0, sizeof(*s));
}

typedef struct case_buffers
{
	size_t		capacity;		/* bytes of each element buffer */
	unsigned char *input;
	unsigned char *ascending;	/* the reference */
	unsigned char *want;
	unsigned char *got;
	unsigned char *sorted_keys;
	unsigned char *gathered;
	unsigned char *seen;
	uint32_t   *perm;
	scratch_buf scratch;
} case_buffers;

static case_buffers cb;

/* Room for n elements of any type. */
static void
case_buffers_reserve(size_t n)
{
	size_t		bytes = n * 8;

	if (bytes <= cb.capacity && cb.input != NULL)
		return;
	cb.capacity = bytes;
	cb.input = xrealloc(cb.input, bytes);
	cb.ascending = xrealloc(cb.ascending, bytes);
	cb.want = xrealloc(cb.want, bytes);
	cb.got = xrealloc(cb.got, bytes);
	cb.sorted_keys = xrealloc(cb.sorted_keys, bytes);
	cb.gathered = xrealloc(cb.gathered, bytes);
	cb.seen = xrealloc(cb.seen, n);
	cb.perm = xrealloc(cb.perm, n * sizeof(uint32_t));
}

static void
case_buffers_free(void)
{
	free(cb.input);
	free(cb.ascending);
	free(cb.want);
	free(cb.got);
	free(cb.sorted_keys);
	free(cb.gathered);
	free(cb.seen);
	free(cb.perm);
	scratch_free(&cb.scratch);
	memset(&cb, 0, sizeof(cb));
}

/* ------------------------------------------------------------------------
 * One case: type x distribution x size x direction, sort and argsort,
 * against cb.want.
 * ------------------------------------------------------------------------ */

static unsigned case_counter;

/* FNV-1a, to see that argsort leaves its input alone. */
static uint64_t
checksum(const unsigned char *p, size_t bytes)
{
	uint64_t	h = UINT64_C(0xCBF29CE484222325);
	size_t		i;

	for (i = 0; i < bytes; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001B3);
	return h;
}

static void
check_direction(gs_type type, gs_dist dist, size_t n, bool descending)
{
	size_t		w = gs_type_size(type);
	const char *dir = descending ? "desc" : "asc";
	const unsigned char *input = cb.input;
	const unsigned char *want = cb.want;
	unsigned char *got = cb.got;
	unsigned char *sorted_keys = cb.sorted_keys;
	unsigned char *gathered = cb.gathered;
	unsigned char *seen = cb.seen;
	uint32_t   *perm = cb.perm;
	scratch_buf *sb = &cb.scratch;
	bool		with_sorted_keys = (case_counter & 1) == 0;
	size_t		misalign = case_counter % 17;
	gs_error	err;
	gs_status	st;
	char		why[320] = "";
	uint64_t	input_sum;
	bool		ok;
	size_t		i;

	case_counter++;
	input_sum = checksum(input, n * w);

	/* gs_cpu_sort, in place */
	memcpy(got, input, n * w);
	scratch_get(sb, gs_cpu_scratch_bytes(type, n, false), misalign);
	st = gs_cpu_sort(type, got, n, descending, sb->bytes ? sb->p : NULL, NULL, NULL, &err);
	ok = st == GS_OK;
	if (!ok)
		snprintf(why, sizeof(why), "status %s: %s", gs_status_name(st), err.message);
	else if (!scratch_guard_intact(sb))
	{
		ok = false;
		snprintf(why, sizeof(why), "wrote outside its %zu bytes of scratch", sb->bytes);
	}
	else
		ok = same_result(type, got, want, n, why, sizeof(why));
	tap_check(ok, "sort %s %s %s n=%zu%s%s", gs_type_name(type), gs_dist_names[dist], dir, n,
			  ok ? "" : ": ", why);

	/* gs_cpu_argsort, with or without sorted_keys, outputs poisoned */
	memset(perm, POISON, n * sizeof(uint32_t));
	memset(sorted_keys, POISON, n * w);
	scratch_get(sb, gs_cpu_scratch_bytes(type, n, true), misalign);
	st = gs_cpu_argsort(type, input, n, descending, perm, with_sorted_keys ? sorted_keys : NULL,
						sb->bytes ? sb->p : NULL, NULL, NULL, &err);
	ok = st == GS_OK;
	why[0] = '\0';
	if (!ok)
		snprintf(why, sizeof(why), "status %s: %s", gs_status_name(st), err.message);
	else if (!scratch_guard_intact(sb))
	{
		ok = false;
		snprintf(why, sizeof(why), "wrote outside its %zu bytes of scratch", sb->bytes);
	}
	if (ok)
	{
		/* a permutation of 0..n-1 */
		memset(seen, 0, n);
		for (i = 0; i < n && ok; i++)
		{
			if (perm[i] >= n || seen[perm[i]])
			{
				ok = false;
				snprintf(why, sizeof(why), "perm[%zu] = %u is not a new position", i, perm[i]);
			}
			else
				seen[perm[i]] = 1;
		}
	}
	if (ok)
	{
		for (i = 0; i < n; i++)
			memcpy(gathered + i * w, input + (size_t) perm[i] * w, w);
		ok = same_result(type, gathered, want, n, why, sizeof(why));
	}
	if (ok)
	{
		/* stable: equal elements (same bits) keep increasing positions */
		for (i = 0; i + 1 < n && ok; i++)
			if (memcmp(gathered + i * w, gathered + (i + 1) * w, w) == 0 && perm[i] > perm[i + 1])
			{
				ok = false;
				snprintf(why, sizeof(why), "unstable at %zu: positions %u then %u", i, perm[i], perm[i + 1]);
			}
	}
	if (ok && with_sorted_keys && n > 0 && memcmp(sorted_keys, gathered, n * w) != 0)
	{
		ok = false;
		snprintf(why, sizeof(why), "sorted_keys differs from keys[perm[i]]");
	}
	if (ok && n > 0 && memcmp(gathered, got, n * w) != 0)
	{
		ok = false;
		snprintf(why, sizeof(why), "argsort and sort order nans differently");
	}
	if (ok && n > 0 && checksum(input, n * w) != input_sum)
	{
		ok = false;
		snprintf(why, sizeof(why), "argsort modified its input");
	}
	tap_check(ok, "argsort %s %s %s n=%zu%s%s%s", gs_type_name(type), gs_dist_names[dist], dir, n,
			  with_sorted_keys ? " (with sorted_keys)" : "", ok ? "" : ": ", why);
}

#define ASC 1
#define DESC 2

/*
 * Generates the input, sorts it once with qsort for the reference, and checks
 * the directions asked for.  gpusort.h makes descending the exact reverse of
 * ascending; elements that tie are bit-identical (NaNs aside, compared as a
 * multiset), so the reversed reference is the descending one.
 */
static void
check_case(gs_type type, gs_dist dist, size_t n, int directions)
{
	size_t		w = gs_type_size(type);
	size_t		i;

	case_buffers_reserve(n);
	gs_fill(type, dist, cb.input, n, 1000 + n);
	memcpy(cb.ascending, cb.input, n * w);
	reference_sort(type, cb.ascending, n);
	if (directions & ASC)
	{
		memcpy(cb.want, cb.ascending, n * w);
		check_direction(type, dist, n, false);
	}
	if (directions & DESC)
	{
		for (i = 0; i < n; i++)
			memcpy(cb.want + i * w, cb.ascending + (n - 1 - i) * w, w);
		check_direction(type, dist, n, true);
	}
}

static void
test_sizes_distributions(void)
{
	/* the sizes the benchmarks use, plus 63..65 around the switch from insertion sort to radix */
	static const size_t sizes[] = {0, 1, 2, 3, 5, 7, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025,
		4093, 65535, 65536, 65537, 1000003};
	size_t		nsizes = sizeof(sizes) / sizeof(sizes[0]);
	int			t,
				d,
				s;

	for (t = 0; t < GS_NUM_TYPES; t++)
		for (d = 0; d < GS_NUM_DISTS; d++)
			for (s = 0; s < (int) nsizes; s++)
			{
				/* --quick: radix path sizes past 2^16 on int4 and float8 only */
				if (quick && sizes[s] > 65537)
					continue;
				if (quick && sizes[s] >= 65535 && t != GS_INT4 && t != GS_FLOAT8)
					continue;
				check_case((gs_type) t, (gs_dist) d, sizes[s], ASC | DESC);
			}
}

static void
test_ten_million(void)
{
	static const struct
	{
		gs_type		type;
		gs_dist		dist;
		int			directions;
	}			few[] = {
		{GS_INT4, GS_DIST_UNIFORM, ASC},
		{GS_FLOAT8, GS_DIST_SPECIAL, DESC},
		{GS_INT2, GS_DIST_FEW_DISTINCT, ASC | DESC},
	};
	static const gs_dist many[] = {GS_DIST_UNIFORM, GS_DIST_SORTED, GS_DIST_REVERSE, GS_DIST_FEW_DISTINCT,
		GS_DIST_GAUSSIAN, GS_DIST_NARROW, GS_DIST_SPECIAL};
	size_t		n = 10000000;
	size_t		i;
	int			t;

	if (quick)
		return;
	if (!large)
	{
		for (i = 0; i < sizeof(few) / sizeof(few[0]); i++)
			check_case(few[i].type, few[i].dist, n, few[i].directions);
		return;
	}
	for (t = 0; t < GS_NUM_TYPES; t++)
		for (i = 0; i < sizeof(many) / sizeof(many[0]); i++)
			check_case((gs_type) t, many[i], n, ASC | DESC);
	/* sizes just past a power of two, many interrupt chunks */
	check_case(GS_INT4, GS_DIST_UNIFORM, ((size_t) 1 << 24) + 1, ASC | DESC);
	check_case(GS_FLOAT4, GS_DIST_SPECIAL, ((size_t) 1 << 24) + 1, ASC | DESC);
}

/* ------------------------------------------------------------------------
 * Hand-written expectations for the float specials (independent of qsort).
 * ------------------------------------------------------------------------ */

static void
test_float_specials(void)
{
	double		in[] = {1.0, NAN, -0.0, INFINITY, 0.0, -INFINITY, -NAN, -1.0, 5e-324, -5e-324};
	double		asc[] = {-INFINITY, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1.0, INFINITY};
	size_t		n = sizeof(in) / sizeof(in[0]);
	size_t		m = sizeof(asc) / sizeof(asc[0]);
	double		a[sizeof(in) / sizeof(in[0])];
	float		f[sizeof(in) / sizeof(in[0])];
	bool		ok;
	size_t		i;
	int			desc;

	/* n is 10: the insertion sort; the radix path gets the same data 4000 times over */
	for (desc = 0; desc < 2; desc++)
	{
		memcpy(a, in, sizeof(in));
		ok = gs_cpu_sort(GS_FLOAT8, a, n, desc, NULL, NULL, NULL, NULL) == GS_OK;
		for (i = 0; i < m && ok; i++)
		{
			double		e = desc ? asc[m - 1 - i] : asc[i];

			ok = memcmp(&a[desc ? n - m + i : i], &e, sizeof(double)) == 0;
		}
		for (i = 0; i < n - m && ok; i++)
			ok = isnan(a[desc ? i : m + i]);
		tap_check(ok, "float8 specials %s: -inf -1 -denormal -0 +0 +denormal 1 +inf nan nan",
				  desc ? "desc" : "asc");

		for (i = 0; i < n; i++)
			f[i] = (float) in[i];
		ok = gs_cpu_sort(GS_FLOAT4, f, n, desc, NULL, NULL, NULL, NULL) == GS_OK;
		for (i = 0; i + 1 < n && ok; i++)
		{
			float		x = desc ? f[i + 1] : f[i];
			float		y = desc ? f[i] : f[i + 1];

			/* x must come before y ascending */
			ok = isnan(y) || (!isnan(x) && (x < y || (x == y && (signbit(x) || !signbit(y)))));
		}
		tap_check(ok, "float4 specials %s in spec order", desc ? "desc" : "asc");
	}

	/* the same values, many copies: the radix path */
	{
		size_t		copies = 4000;
		size_t		big = n * copies;
		double	   *b = xmalloc(big * sizeof(double));
		scratch_buf sb = {0};
		gs_error	err;

		for (i = 0; i < big; i++)
			b[i] = in[i % n];
		scratch_get(&sb, gs_cpu_scratch_bytes(GS_FLOAT8, big, false), 0);
		ok = gs_cpu_sort(GS_FLOAT8, b, big, false, sb.p, NULL, NULL, &err) == GS_OK;
		for (i = 0; i < big && ok; i++)
		{
			size_t		rank = i / copies;

			ok = rank < m ? memcmp(&b[i], &asc[rank], sizeof(double)) == 0 : isnan(b[i]);
		}
		tap_check(ok, "float8 specials x %zu asc on the radix path", copies);
		scratch_free(&sb);
		free(b);
	}
}

/* ------------------------------------------------------------------------
 * Scratch sizes.
 * ------------------------------------------------------------------------ */

static void
test_scratch_bytes(void)
{
	static const size_t sizes[] = {2, 33, 1000, 65535, 65536, 1 << 20, 100000000};
	bool		ok = true;
	int			t;
	size_t		i;

	tap_check(gs_cpu_scratch_bytes(GS_NUM_TYPES, 1000, false) == 0 &&
			  gs_cpu_scratch_bytes((gs_type) -1, 1000, true) == 0,
			  "scratch bytes of a bad type is 0");
	for (t = 0; t < GS_NUM_TYPES; t++)
		ok &= gs_cpu_scratch_bytes((gs_type) t, 0, false) == 0 && gs_cpu_scratch_bytes((gs_type) t, 1, true) == 0;
	tap_check(ok, "no scratch for 0 or 1 elements");

	ok = true;
	for (t = 0; t < GS_NUM_TYPES; t++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		{
			size_t		w = gs_type_size((gs_type) t);
			size_t		plain = gs_cpu_scratch_bytes((gs_type) t, sizes[i], false);
			size_t		arg = gs_cpu_scratch_bytes((gs_type) t, sizes[i], true);

			if (arg < plain)
				ok = false;
			/* the radix path needs a second buffer; n is linear, not more */
			if (sizes[i] >= 1000 && (plain < sizes[i] * w || plain > sizes[i] * w + (1 << 20) ||
									 arg < sizes[i] * (2 * w + 4) || arg > sizes[i] * (2 * w + 4) + (1 << 20)))
				ok = false;
		}
	tap_check(ok, "scratch bytes are O(n) and argsort needs at least as much as sort");
}

/* ------------------------------------------------------------------------
 * Interrupts.
 * ------------------------------------------------------------------------ */

typedef struct stopper
{
	int			stop_at;		/* return true on this call (1-based); 0: never */
	int			calls;
} stopper;

static bool
stop_after(void *arg)
{
	stopper    *s = arg;

	return ++s->calls == s->stop_at;
}

static void
test_interrupts(void)
{
	size_t		n = quick ? ((size_t) 1 << 20) + 3 : 3 * ((size_t) 1 << 20) + 7;
	size_t		chunks = (n + ((size_t) 1 << 20) - 1) >> 20;
	int32_t    *input = xmalloc(n * sizeof(int32_t));
	int32_t    *a = xmalloc(n * sizeof(int32_t));
	int32_t    *want = xmalloc(n * sizeof(int32_t));
	uint32_t   *perm = xmalloc(n * sizeof(uint32_t));
	scratch_buf sb = {0};
	gs_error	err;
	gs_status	st;
	stopper		s;
	int			k,
				uniform_calls;
	char		why[320];

	gs_fill(GS_INT4, GS_DIST_UNIFORM, input, n, 7);
	memcpy(want, input, n * sizeof(int32_t));
	reference_sort(GS_INT4, want, n);
	scratch_get(&sb, gs_cpu_scratch_bytes(GS_INT4, n, true), 8);

	/* polled at least once per 2^20 elements in the histogram read and in each scatter */
	memcpy(a, input, n * sizeof(int32_t));
	s.stop_at = 0;
	s.calls = 0;
	st = gs_cpu_sort(GS_INT4, a, n, false, sb.p, stop_after, &s, &err);
	uniform_calls = s.calls;
	tap_check(st == GS_OK && same_result(GS_INT4, a, want, n, why, sizeof(why)) &&
			  (size_t) s.calls >= 2 * chunks,
			  "a callback that never stops: sorted, polled %d times for %zu chunks", s.calls, chunks);

	for (k = 1; k <= 6; k++)
	{
		memcpy(a, input, n * sizeof(int32_t));
		s.stop_at = k;
		s.calls = 0;
		memset(&err, 0, sizeof(err));
		st = gs_cpu_sort(GS_INT4, a, n, false, sb.p, stop_after, &s, &err);
		tap_check(st == GS_ERR_INTERRUPTED && err.status == GS_ERR_INTERRUPTED && s.calls == k &&
				  err.message[0] != '\0',
				  "sort stops on the callback's call %d (%s: %s)", k, gs_status_name(st), err.message);

		memset(perm, POISON, n * sizeof(uint32_t));
		s.calls = 0;
		st = gs_cpu_argsort(GS_INT4, input, n, true, perm, NULL, sb.p, stop_after, &s, &err);
		tap_check(st == GS_ERR_INTERRUPTED && s.calls == k,
				  "argsort stops on the callback's call %d", k);
	}

	/* after an interrupt the same scratch sorts again */
	memcpy(a, input, n * sizeof(int32_t));
	st = gs_cpu_sort(GS_INT4, a, n, false, sb.p, NULL, NULL, &err);
	tap_check(st == GS_OK && same_result(GS_INT4, a, want, n, why, sizeof(why)),
			  "the next sort after an interrupt is right");

	/* constant input: only the histogram read is polled, no scatter runs */
	gs_fill(GS_INT4, GS_DIST_ALL_EQUAL, a, n, 7);
	memcpy(want, a, n * sizeof(int32_t));
	s.stop_at = 0;
	s.calls = 0;
	st = gs_cpu_sort(GS_INT4, a, n, true, sb.p, stop_after, &s, &err);
	tap_check(st == GS_OK && memcmp(a, want, n * sizeof(int32_t)) == 0 && s.calls < uniform_calls &&
			  (size_t) s.calls >= chunks,
			  "all-equal input skips every scatter (%d polls, uniform %d)", s.calls, uniform_calls);

	/*
	 * An argsort of input already in order writes the identity permutation
	 * instead of scattering: that pass through n positions is polled too
	 * (the histogram read polls once per chunk, so the call after those).
	 */
	gs_fill(GS_INT4, GS_DIST_SORTED, a, n, 7);
	s.stop_at = (int) chunks + 1;
	s.calls = 0;
	memset(&err, 0, sizeof(err));
	st = gs_cpu_argsort(GS_INT4, a, n, false, perm, NULL, sb.p, stop_after, &s, &err);
	tap_check(st == GS_ERR_INTERRUPTED && s.calls == (int) chunks + 1,
			  "argsort of sorted input stops while writing the identity (%s after %d polls)",
			  gs_status_name(st), s.calls);

	scratch_free(&sb);
	free(input);
	free(a);
	free(want);
	free(perm);
}

/* ------------------------------------------------------------------------
 * Invalid arguments.
 * ------------------------------------------------------------------------ */

static bool
good_message(const gs_error *err, gs_status want)
{
	size_t		len = strlen(err->message);

	return err->status == want && len > 0 && !(err->message[0] >= 'A' && err->message[0] <= 'Z') &&
		err->message[len - 1] != '.';
}

static void
test_invalid_arguments(void)
{
	int32_t		k[100] = {0};
	int32_t		out[100];
	uint32_t	perm[100];
	size_t		bytes = gs_cpu_scratch_bytes(GS_INT4, 100, true);
	void	   *scratch = xmalloc(bytes);
	gs_error	err;
	gs_status	st;

	memset(&err, 0, sizeof(err));
	st = gs_cpu_sort(GS_NUM_TYPES, k, 100, false, scratch, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT && good_message(&err, st), "sort: bad type (%s)", err.message);
	memset(&err, 0, sizeof(err));
	st = gs_cpu_argsort((gs_type) -3, k, 100, false, perm, NULL, scratch, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT && good_message(&err, st), "argsort: bad type (%s)", err.message);
	memset(&err, 0, sizeof(err));
	st = gs_cpu_sort(GS_INT4, NULL, 100, false, scratch, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT && good_message(&err, st), "sort: null keys (%s)", err.message);
	memset(&err, 0, sizeof(err));
	st = gs_cpu_sort(GS_INT4, k, 100, false, NULL, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT && good_message(&err, st), "sort: null scratch (%s)", err.message);
	memset(&err, 0, sizeof(err));
	st = gs_cpu_argsort(GS_INT4, NULL, 100, false, perm, NULL, scratch, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT && good_message(&err, st), "argsort: null keys (%s)", err.message);
	memset(&err, 0, sizeof(err));
	st = gs_cpu_argsort(GS_INT4, k, 100, false, NULL, out, scratch, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT && good_message(&err, st), "argsort: null perm (%s)", err.message);
	memset(&err, 0, sizeof(err));
	st = gs_cpu_argsort(GS_INT4, k, 100, false, perm, out, NULL, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT && good_message(&err, st), "argsort: null scratch (%s)", err.message);
	memset(&err, 0, sizeof(err));
	st = gs_cpu_argsort(GS_INT4, k, 100, false, perm, k, scratch, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT && good_message(&err, st), "argsort: sorted_keys aliases keys (%s)",
			  err.message);
	memset(&err, 0, sizeof(err));
	st = gs_cpu_argsort(GS_INT4, k, 100, false, perm, k + 50, scratch, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT && good_message(&err, st), "argsort: sorted_keys overlaps keys (%s)",
			  err.message);
	memset(&err, 0, sizeof(err));
	/* 2^32 elements: refused before anything is touched */
	st = gs_cpu_argsort(GS_INT2, k, (size_t) 1 << 32, false, perm, NULL, scratch, NULL, NULL, &err);
	tap_check(st == GS_ERR_TOO_LARGE && good_message(&err, st), "argsort: 2^32 elements is too large (%s)",
			  err.message);
	st = gs_cpu_sort(GS_INT4, NULL, 100, false, scratch, NULL, NULL, NULL);
	tap_check(st == GS_ERR_INVALID_ARGUMENT, "a null gs_error is allowed");
	/* nothing to do: NULL pointers are fine */
	tap_check(gs_cpu_sort(GS_INT8, NULL, 0, true, NULL, NULL, NULL, &err) == GS_OK &&
			  gs_cpu_argsort(GS_FLOAT4, NULL, 0, true, NULL, NULL, NULL, NULL, NULL, &err) == GS_OK,
			  "n = 0 accepts null pointers");
	/* one element needs no scratch */
	k[0] = 42;
	perm[0] = 7;
	out[0] = 0;
	tap_check(gs_cpu_sort(GS_INT4, k, 1, false, NULL, NULL, NULL, &err) == GS_OK && k[0] == 42 &&
			  gs_cpu_argsort(GS_INT4, k, 1, false, perm, out, NULL, NULL, NULL, &err) == GS_OK &&
			  perm[0] == 0 && out[0] == 42,
			  "n = 1 needs no scratch");
	free(scratch);
}

int
main(int argc, char **argv)
{
	int			i;

	for (i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--large") == 0)
			large = true;
		else
		{
			fprintf(stderr, "usage: %s [--quick | --large]\n", argv[0]);
			return 2;
		}
	}
	test_invalid_arguments();
	test_scratch_bytes();
	test_float_specials();
	test_interrupts();
	test_sizes_distributions();
	test_ten_million();
	case_buffers_free();
	return tap_done();
}
