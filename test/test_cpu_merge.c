/*
 * test_cpu_merge.c: the sorted-run functions of kernels/cpu_merge.c against
 * gs_cpu_sort (test_cpu_sort checks that against qsort), every type and
 * distribution of distributions.h, awkward sizes.
 *
 * gs_cpu_merge: the input is cut in two at several points (halves, one run
 * empty, one run much longer), each part sorted by gs_cpu_sort, and the
 * merge must equal gs_cpu_sort of the whole bit for bit.  The key order is a
 * total order on bits (keys.h's transforms are bijections), so equal keys are
 * equal bits and memcmp is exact, -0/+0 and NaN payloads included; float
 * inputs always carry -0, +0, both infinities and NaNs of both signs and
 * several payloads.  Outputs are guarded against writes past their ends and
 * the runs against any write.  A hand-written float order checks the merge
 * and gs_cpu_is_sorted without gs_cpu_sort.
 *
 * gs_cpu_is_sorted: true on sorted data, false once two unequal neighbours
 * are swapped.
 *
 * gs_cpu_runs_select: the input cut into r runs of random lengths (empty
 * ones included), each sorted; the element at the returned position must
 * have the bits of element `rank` of gs_cpu_sort of the whole.
 *
 *   test_cpu_merge              default run (sizes to 10^6)
 *   test_cpu_merge --quick      sizes up to 65537 only (for valgrind)
 *   test_cpu_merge --seed N     replays a run (every run prints its seed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpusort.h"
#include "distributions.h"
#include "tap.h"

#define POISON TAP_POISON
#define GUARD TAP_GUARD

static bool quick;
static uint64_t seed;

static bool
is_float_type(gs_type type)
{
	return type == GS_FLOAT4 || type == GS_FLOAT8;
}

/* Sorts keys[0..n) in place with gs_cpu_sort, ascending. */
static bool
reference_sort(gs_type type, void *keys, size_t n)
{
	void	   *scratch = xmalloc(gs_cpu_scratch_bytes(type, n, false));
	gs_error	err;
	gs_status	st = gs_cpu_sort(type, keys, n, false, scratch, NULL, NULL, &err);

	if (st != GS_OK)
		tap_note("gs_cpu_sort %s n=%zu: %s: %s", gs_type_name(type), n, gs_status_name(st), err.message);
	free(scratch);
	return st == GS_OK;
}

/*
 * Float values that every float input carries: -0, +0, +-Inf, quiet and
 * signalling NaNs of both signs with the smallest and largest payloads.
 */
static uint64_t
float_special_bits(gs_type type, size_t k)
{
	static const uint32_t f4[] = {
		0x80000000, 0x00000000, 0x7F800000, 0xFF800000,
		0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF
	};
	static const uint64_t f8[] = {
		UINT64_C(0x8000000000000000), UINT64_C(0x0000000000000000),
		UINT64_C(0x7FF0000000000000), UINT64_C(0xFFF0000000000000),
		UINT64_C(0x7FF8000000000000), UINT64_C(0xFFF8000000000000),
		UINT64_C(0x7FF0000000000001), UINT64_C(0xFFF0000000000001),
		UINT64_C(0x7FFFFFFFFFFFFFFF), UINT64_C(0xFFFFFFFFFFFFFFFF)
	};

	return type == GS_FLOAT4 ? f4[k % 10] : f8[k % 10];
}

#define FLOAT_SPECIALS 10

/*
 * Input of n elements: distribution dist, and for floats the specials above
 * written over random positions (up to twice each, so that equal specials
 * may fall in both runs).
 */
static unsigned char *
make_input(gs_type type, gs_dist dist, size_t n, uint64_t salt)
{
	unsigned char *input = xmalloc(n * gs_type_size(type));
	uint64_t	st = seed ^ (salt * UINT64_C(0x9E3779B97F4A7C15));

	gs_fill(type, dist, input, n, seed + salt);
	if (is_float_type(type) && n > 0)
		for (size_t k = 0; k < 2 * FLOAT_SPECIALS && k < n; k++)
			gs_store_bits(type, input, gs_rand_below(&st, n), float_special_bits(type, k));
	return input;
}

/* ------------------------------------------------------------------------
 * gs_cpu_merge and gs_cpu_is_sorted
 * ------------------------------------------------------------------------ */

/* A guarded copy of keys[0..n), sorted. */
static unsigned char *
sorted_run(gs_type type, const unsigned char *keys, size_t n)
{
	size_t		w = gs_type_size(type);
	unsigned char *run = tap_guarded(n * w);

	memcpy(run, keys, n * w);
	if (!reference_sort(type, run, n))
		memset(run, 0, n * w);	/* the merge check then fails */
	return run;
}

/*
 * Merges the sorted input[0..na) and input[na..n) and compares with ref (the
 * whole input sorted); also checks that the runs were left alone.
 */
static bool
check_merge_split(gs_type type, const unsigned char *input, size_t n, size_t na,
				  const unsigned char *ref, char *why, size_t whylen)
{
	size_t		w = gs_type_size(type);
	size_t		nb = n - na;
	unsigned char *a = sorted_run(type, input, na);
	unsigned char *b = sorted_run(type, input + na * w, nb);
	unsigned char *a_before = xmalloc(na * w + GUARD);
	unsigned char *b_before = xmalloc(nb * w + GUARD);
	unsigned char *out = tap_guarded(n * w);
	gs_error	err;
	gs_status	st;
	bool		ok;

	why[0] = '\0';
	memcpy(a_before, a, na * w + GUARD);
	memcpy(b_before, b, nb * w + GUARD);
	st = gs_cpu_merge(type, a, na, b, nb, out, &err);
	if (st != GS_OK)
		snprintf(why, whylen, "na=%zu nb=%zu: status %s: %.120s", na, nb, gs_status_name(st), err.message);
	else if (!tap_guard_intact(out, n * w))
		snprintf(why, whylen, "na=%zu nb=%zu: wrote past the output", na, nb);
	else if (memcmp(a, a_before, na * w + GUARD) != 0 || memcmp(b, b_before, nb * w + GUARD) != 0)
		snprintf(why, whylen, "na=%zu nb=%zu: a run changed", na, nb);
	else if (n > 0 && memcmp(out, ref, n * w) != 0)
		snprintf(why, whylen, "na=%zu nb=%zu: output differs from the sort", na, nb);
	else if (!gs_cpu_is_sorted(type, out, n))
		snprintf(why, whylen, "na=%zu nb=%zu: is_sorted false on the output", na, nb);
	ok = st == GS_OK && why[0] == '\0';
	free(a);
	free(b);
	free(a_before);
	free(b_before);
	free(out);
	return ok;
}

static void
swap_elements(unsigned char *keys, size_t w, size_t i, size_t j)
{
	unsigned char tmp[8];

	memcpy(tmp, keys + i * w, w);
	memcpy(keys + i * w, keys + j * w, w);
	memcpy(keys + j * w, tmp, w);
}

/*
 * gs_cpu_is_sorted on sorted keys[0..n): true, and false with the first,
 * the last and a random pair of unequal neighbours swapped (keys restored).
 */
static bool
check_is_sorted(gs_type type, unsigned char *keys, size_t n, uint64_t *rng)
{
	size_t		w = gs_type_size(type);
	size_t		pairs[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
	bool		ok = gs_cpu_is_sorted(type, keys, n);

	for (size_t i = 0; i + 1 < n; i++)
		if (memcmp(keys + i * w, keys + (i + 1) * w, w) != 0)
		{
			if (pairs[0] == SIZE_MAX)
				pairs[0] = i;
			pairs[1] = i;
		}
	if (n > 1 && pairs[0] != SIZE_MAX)
	{
		/* a random unequal pair: search forward from a random start, else take the first */
		size_t		i = gs_rand_below(rng, n - 1);

		while (i + 1 < n && memcmp(keys + i * w, keys + (i + 1) * w, w) == 0)
			i++;
		pairs[2] = i + 1 < n ? i : pairs[0];
	}
	for (int p = 0; p < 3; p++)
	{
		if (pairs[p] == SIZE_MAX)
			continue;
		swap_elements(keys, w, pairs[p], pairs[p] + 1);
		ok = ok && !gs_cpu_is_sorted(type, keys, n);
		swap_elements(keys, w, pairs[p], pairs[p] + 1);
	}
	return ok;
}

/* One (type, distribution, n): the merge at every split, is_sorted on the result. */
static void
check_merge_case(gs_type type, gs_dist dist, size_t n)
{
	size_t		w = gs_type_size(type);
	unsigned char *input = make_input(type, dist, n, 1000 + n);
	unsigned char *ref = xmalloc(n * w);
	/* past 65537 elements, the first three splits only */
	size_t		splits[] = {n / 2, 0, n / 100 + (n > 1), n, n - n / 100 - (n > 1), n / 2 + 1};
	size_t		nsplits = n > 65537 ? 3 : sizeof(splits) / sizeof(splits[0]);
	uint64_t	rng = seed + n;
	char		why[256] = "";
	bool		ok;

	memcpy(ref, input, n * w);
	ok = reference_sort(type, ref, n);
	if (!ok)
		snprintf(why, sizeof(why), "reference sort failed");
	for (size_t s = 0; ok && s < nsplits; s++)
		if (splits[s] <= n)
			ok = check_merge_split(type, input, n, splits[s], ref, why, sizeof(why));
	tap_check(ok, "merge %s %s n=%zu%s%s", gs_type_name(type), gs_dist_names[dist], n,
			  ok ? "" : ": ", why);
	tap_check(check_is_sorted(type, ref, n, &rng), "is_sorted %s %s n=%zu", gs_type_name(type),
			  gs_dist_names[dist], n);
	free(input);
	free(ref);
}

static void
test_merge_sizes_distributions(void)
{
	static const size_t sizes[] = {0, 1, 2, 31, 32, 33, 1000, 65537, 1000000};

	for (int t = 0; t < GS_NUM_TYPES; t++)
		for (int d = 0; d < GS_NUM_DISTS; d++)
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			{
				if (quick && sizes[s] > 65537)
					continue;
				check_merge_case((gs_type) t, (gs_dist) d, sizes[s]);
			}
}

/*
 * A float order written out by hand (gpusort.h: -Inf < ... < -0 < +0 < ...
 * < +Inf < NaN; among NaNs, keys.h's order: positive ones by their bits,
 * then negative ones by their bits reversed), with repeats.  Every split of
 * it into two subsequences must merge back into it, and it must be sorted
 * with any two unequal neighbours swapped not.
 */
static void
check_hand_order(gs_type type, const uint64_t *bits, size_t n)
{
	size_t		w = gs_type_size(type);
	unsigned char *order = xmalloc(n * w);
	unsigned char *a = xmalloc(n * w);
	unsigned char *b = xmalloc(n * w);
	unsigned char *out = tap_guarded(n * w);
	uint64_t	rng = seed;
	bool		merged = true;
	bool		sorted = true;
	gs_error	err;

	for (size_t i = 0; i < n; i++)
		gs_store_bits(type, order, i, bits[i]);
	for (int trial = 0; trial < 200; trial++)
	{
		/* trial 0: all in a, 1: all in b, 2: alternate, then random */
		size_t		na = 0,
					nb = 0;

		for (size_t i = 0; i < n; i++)
		{
			bool		to_a = trial == 0 || (trial == 2 && i % 2 == 0) ||
				(trial > 2 && (gs_rand_next(&rng) & 1));

			memcpy(to_a ? a + na++ * w : b + nb++ * w, order + i * w, w);
		}
		memset(out, POISON, n * w);
		merged = merged && gs_cpu_merge(type, a, na, b, nb, out, &err) == GS_OK &&
			memcmp(out, order, n * w) == 0 && tap_guard_intact(out, n * w);
	}
	tap_check(merged, "merge %s: every split of the hand-written order merges back into it",
			  gs_type_name(type));

	sorted = gs_cpu_is_sorted(type, order, n);
	for (size_t i = 0; i + 1 < n; i++)
		if (memcmp(order + i * w, order + (i + 1) * w, w) != 0)
		{
			swap_elements(order, w, i, i + 1);
			if (gs_cpu_is_sorted(type, order, n))
			{
				tap_note("is_sorted true with elements %zu and %zu swapped", i, i + 1);
				sorted = false;
			}
			swap_elements(order, w, i, i + 1);
		}
	tap_check(sorted, "is_sorted %s: the hand-written order, and no swap of unequal neighbours in it",
			  gs_type_name(type));
	free(order);
	free(a);
	free(b);
	free(out);
}

static void
test_merge_hand_order(void)
{
	static const uint64_t f4[] = {
		0xFF800000, 0xFF7FFFFF, 0xBF800000, 0x807FFFFF, 0x80000001,
		0x80000000, 0x80000000, 0x00000000, 0x00000000, 0x00000001, 0x007FFFFF,
		0x3F800000, 0x7F7FFFFF, 0x7F800000, 0x7F800000,
		0x7F800001, 0x7FC00000, 0x7FC00000, 0x7FFFFFFF,
		0xFFFFFFFF, 0xFFFFFFFF, 0xFFC00000, 0xFF800001
	};
	static const uint64_t f8[] = {
		UINT64_C(0xFFF0000000000000), UINT64_C(0xFFEFFFFFFFFFFFFF), UINT64_C(0xBFF0000000000000),
		UINT64_C(0x800FFFFFFFFFFFFF), UINT64_C(0x8000000000000001),
		UINT64_C(0x8000000000000000), UINT64_C(0x8000000000000000),
		UINT64_C(0x0000000000000000), UINT64_C(0x0000000000000000),
		UINT64_C(0x0000000000000001), UINT64_C(0x000FFFFFFFFFFFFF),
		UINT64_C(0x3FF0000000000000), UINT64_C(0x7FEFFFFFFFFFFFFF),
		UINT64_C(0x7FF0000000000000), UINT64_C(0x7FF0000000000000),
		UINT64_C(0x7FF0000000000001), UINT64_C(0x7FF8000000000000),
		UINT64_C(0x7FF8000000000000), UINT64_C(0x7FFFFFFFFFFFFFFF),
		UINT64_C(0xFFFFFFFFFFFFFFFF), UINT64_C(0xFFFFFFFFFFFFFFFF),
		UINT64_C(0xFFF8000000000000), UINT64_C(0xFFF0000000000001)
	};

	check_hand_order(GS_FLOAT4, f4, sizeof(f4) / sizeof(f4[0]));
	check_hand_order(GS_FLOAT8, f8, sizeof(f8) / sizeof(f8[0]));
}

static void
test_merge_arguments(void)
{
	int32_t		a[2] = {1, 3};
	int32_t		b[2] = {2, 4};
	int32_t		out[4];
	gs_error	err;

	tap_check(gs_cpu_merge(GS_NUM_TYPES, a, 2, b, 2, out, &err) == GS_ERR_INVALID_ARGUMENT,
			  "merge of a bad type is an invalid argument");
	tap_check(gs_cpu_merge(GS_INT4, NULL, 2, b, 2, out, &err) == GS_ERR_INVALID_ARGUMENT &&
			  gs_cpu_merge(GS_INT4, a, 2, NULL, 2, out, &err) == GS_ERR_INVALID_ARGUMENT &&
			  gs_cpu_merge(GS_INT4, a, 2, b, 2, NULL, &err) == GS_ERR_INVALID_ARGUMENT,
			  "merge with a null run or output is an invalid argument");
	tap_check(gs_cpu_merge(GS_INT4, NULL, 0, NULL, 0, NULL, &err) == GS_OK &&
			  gs_cpu_merge(GS_INT4, NULL, 0, b, 2, out, &err) == GS_OK &&
			  out[0] == 2 && out[1] == 4,
			  "merge of empty runs needs no pointers for them");
	tap_check(gs_cpu_is_sorted(GS_INT4, NULL, 0) && gs_cpu_is_sorted(GS_INT4, b, 1) &&
			  gs_cpu_is_sorted(GS_FLOAT8, NULL, 0),
			  "is_sorted is true for 0 and 1 elements");
	tap_check(!gs_cpu_is_sorted(GS_NUM_TYPES, a, 2) && !gs_cpu_is_sorted((gs_type) -1, a, 0),
			  "is_sorted is false for a bad type");
}

/* ------------------------------------------------------------------------
 * gs_cpu_runs_select
 * ------------------------------------------------------------------------ */

static int
compare_size(const void *x, const void *y)
{
	size_t		a = *(const size_t *) x;
	size_t		b = *(const size_t *) y;

	return (a > b) - (a < b);
}

/*
 * starts[0..nruns] for nruns runs over n elements beginning at off: random
 * cut points, three in eight of them at 0, at n or at the previous cut, so
 * that empty runs come first, last and in between.
 */
static void
make_runs(size_t n, size_t nruns, size_t off, uint64_t *rng, size_t *starts)
{
	starts[0] = 0;
	starts[nruns] = n;
	for (size_t r = 1; r < nruns; r++)
	{
		uint64_t	pick = gs_rand_below(rng, 8);

		if (pick == 0)
			starts[r] = 0;
		else if (pick == 1)
			starts[r] = n;
		else if (pick == 2 && r > 1)
			starts[r] = starts[r - 1];
		else
			starts[r] = gs_rand_below(rng, n + 1);
	}
	qsort(starts + 1, nruns - 1, sizeof(size_t), compare_size);
	for (size_t r = 0; r <= nruns; r++)
		starts[r] += off;
}

/*
 * Checks one rank: SIZE_MAX when rank >= n, else a position inside the runs
 * holding the bits of ref[rank].
 */
static bool
check_rank(gs_type type, const unsigned char *values, const size_t *starts, size_t nruns,
		   const unsigned char *ref, size_t n, size_t rank, char *why, size_t whylen)
{
	size_t		w = gs_type_size(type);
	size_t		pos = gs_cpu_runs_select(type, values, starts, nruns, rank);

	if (rank >= n)
	{
		if (pos == SIZE_MAX)
			return true;
		snprintf(why, whylen, "rank %zu of %zu: position %zu, not SIZE_MAX", rank, n, pos);
		return false;
	}
	if (pos < starts[0] || pos >= starts[nruns])
	{
		snprintf(why, whylen, "rank %zu: position %zu outside the runs [%zu, %zu)", rank, pos,
				 starts[0], starts[nruns]);
		return false;
	}
	if (memcmp(values + pos * w, ref + rank * w, w) != 0)
	{
		snprintf(why, whylen, "rank %zu: position %zu holds another key", rank, pos);
		return false;
	}
	return true;
}

/* The ranks to check: 0, n - 1, the middle, random ones, every one for small n; n and SIZE_MAX. */
static size_t
select_ranks(size_t n, uint64_t *rng, size_t *ranks, size_t max)
{
	size_t		m = 0;

	if (n <= 64)
		for (size_t i = 0; i < n && m < max; i++)
			ranks[m++] = i;
	else
	{
		ranks[m++] = 0;
		ranks[m++] = n - 1;
		ranks[m++] = n / 2;
		while (m < max - 2)
			ranks[m++] = gs_rand_below(rng, n);
	}
	ranks[m++] = n;
	ranks[m++] = SIZE_MAX;
	return m;
}

static void
check_select_case(gs_type type, gs_dist dist, size_t n, size_t nruns)
{
	size_t		w = gs_type_size(type);
	size_t		off = nruns % 2;	/* runs that do not start at values[0] too */
	unsigned char *input = make_input(type, dist, n, 2000 + n + nruns);
	unsigned char *values = tap_guarded((off + n) * w);
	unsigned char *ref = xmalloc(n * w);
	size_t	   *starts = xmalloc((nruns + 1) * sizeof(size_t));
	size_t		ranks[66];
	uint64_t	rng = seed ^ (n * 131 + nruns);
	size_t		nranks;
	char		why[256] = "";
	bool		ok;

	memcpy(ref, input, n * w);
	memcpy(values + off * w, input, n * w);
	make_runs(n, nruns, off, &rng, starts);
	ok = reference_sort(type, ref, n);
	for (size_t r = 0; ok && r < nruns; r++)
		ok = reference_sort(type, values + starts[r] * w, starts[r + 1] - starts[r]);
	if (!ok)
		snprintf(why, sizeof(why), "reference sort failed");
	nranks = select_ranks(n, &rng, ranks, sizeof(ranks) / sizeof(ranks[0]));
	for (size_t i = 0; ok && i < nranks; i++)
		ok = check_rank(type, values, starts, nruns, ref, n, ranks[i], why, sizeof(why));
	tap_check(ok, "runs_select %s %s n=%zu runs=%zu%s%s", gs_type_name(type), gs_dist_names[dist],
			  n, nruns, ok ? "" : ": ", why);
	free(input);
	free(values);
	free(ref);
	free(starts);
}

static void
test_select_sizes_distributions(void)
{
	static const size_t sizes[] = {0, 1, 2, 33, 1000, 65537, 1000000};
	static const size_t runs[] = {1, 2, 3, 8, 32, 64};

	for (int t = 0; t < GS_NUM_TYPES; t++)
		for (int d = 0; d < GS_NUM_DISTS; d++)
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
				for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++)
				{
					if (quick && sizes[s] > 65537)
						continue;
					/* 10^6 with 3 and 32 runs only */
					if (sizes[s] > 65537 && runs[r] != 3 && runs[r] != 32)
						continue;
					check_select_case((gs_type) t, (gs_dist) d, sizes[s], runs[r]);
				}
}

static void
test_select_arguments(void)
{
	int32_t		v[3] = {1, 2, 3};
	size_t		starts[2] = {0, 3};

	tap_check(gs_cpu_runs_select(GS_NUM_TYPES, v, starts, 1, 0) == SIZE_MAX,
			  "runs_select of a bad type is SIZE_MAX");
	tap_check(gs_cpu_runs_select(GS_INT4, v, starts, 0, 0) == SIZE_MAX,
			  "runs_select with no runs is SIZE_MAX");
	tap_check(gs_cpu_runs_select(GS_INT4, v, starts, 1, 2) == 2 &&
			  gs_cpu_runs_select(GS_INT4, v, starts, 1, 3) == SIZE_MAX,
			  "runs_select: the last rank, and the first rank out of range");
}

int
main(int argc, char **argv)
{
	seed = (uint64_t) time(NULL);
	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else
		{
			fprintf(stderr, "usage: %s [--quick] [--seed N]\n", argv[0]);
			return 2;
		}
	}
	tap_note("seed %llu (replay with --seed %llu)", (unsigned long long) seed,
			 (unsigned long long) seed);

	test_merge_arguments();
	test_merge_hand_order();
	test_merge_sizes_distributions();
	test_select_arguments();
	test_select_sizes_distributions();
	return tap_done();
}
