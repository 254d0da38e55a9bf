/*
 * test_cpu_topk.c: gs_cpu_topk against the first k of gs_cpu_argsort's
 * stable order (test_cpu_sort checks that against qsort), every type and
 * distribution of distributions.h, both directions, awkward sizes and k (0,
 * 1, around the full-sort switch at n / 8, n - 1, n, beyond n), keys only,
 * positions only and both; scratch and outputs are guarded against writes
 * past their ends.  gs_cpu_topk_keep_before against the elements that come
 * before a bound's run of equal keys in the same stable order.
 *
 *   test_cpu_topk            default run (sizes to 10^6, and 10^7 once per key width)
 *   test_cpu_topk --quick    sizes up to 65537 only (for valgrind)
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

/*
 * Checks gs_cpu_topk for one k against the reference order (ref_perm,
 * ref_keys of all n); mode 0: keys and positions, 1: keys only, 2: positions
 * only.  Returns false with why filled on a difference.
 */
static bool
check_k(gs_type type, const void *input, size_t n, size_t k, bool descending,
		const uint32_t *ref_perm, const unsigned char *ref_keys, int mode, char *why, size_t whylen)
{
	size_t		w = gs_type_size(type);
	size_t		m = k < n ? k : n;
	bool		want_keys = mode != 2;
	bool		want_perm = mode != 1;
	size_t		scratch_bytes = gs_cpu_topk_scratch_bytes(type, n, k, want_perm);
	unsigned char *scratch = tap_guarded(scratch_bytes);
	unsigned char *keys = tap_guarded(m * w);
	unsigned char *perm = tap_guarded(m * sizeof(uint32_t));
	gs_error	err;
	gs_status	st;
	bool		ok = true;

	st = gs_cpu_topk(type, input, n, k, descending, want_keys ? keys : NULL,
					 want_perm ? (uint32_t *) perm : NULL, scratch, NULL, NULL, &err);
	if (st != GS_OK)
	{
		snprintf(why, whylen, "k=%zu mode %d: status %s: %.120s", k, mode, gs_status_name(st), err.message);
		ok = false;
	}
	else if (!tap_guard_intact(scratch, scratch_bytes) || !tap_guard_intact(keys, m * w) ||
			 !tap_guard_intact(perm, m * sizeof(uint32_t)))
	{
		snprintf(why, whylen, "k=%zu mode %d: wrote past scratch or output", k, mode);
		ok = false;
	}
	else if (want_keys && m > 0 && memcmp(keys, ref_keys, m * w) != 0)
	{
		snprintf(why, whylen, "k=%zu mode %d: keys differ", k, mode);
		ok = false;
	}
	else if (want_perm && m > 0 && memcmp(perm, ref_perm, m * sizeof(uint32_t)) != 0)
	{
		snprintf(why, whylen, "k=%zu mode %d: positions differ", k, mode);
		ok = false;
	}
	free(scratch);
	free(keys);
	free(perm);
	return ok;
}

static void
check_case(gs_type type, gs_dist dist, size_t n, bool descending)
{
	size_t		w = gs_type_size(type);
	unsigned char *input = xmalloc(n * w);
	unsigned char *ref_keys = xmalloc(n * w);
	uint32_t   *ref_perm = xmalloc(n * sizeof(uint32_t));
	void	   *scratch = xmalloc(gs_cpu_scratch_bytes(type, n, true));
	size_t		ks[] = {0, 1, 2, 10, 100, 1000, n / 8, n / 8 + 1, n - 1, n, n + 5, SIZE_MAX};
	char		why[256] = "";
	gs_error	err;
	bool		ok;

	gs_fill(type, dist, input, n, 4242 + n);
	ok = gs_cpu_argsort(type, input, n, descending, ref_perm, ref_keys, scratch,
						NULL, NULL, &err) == GS_OK;
	if (!ok)
		snprintf(why, sizeof(why), "reference argsort failed: %.120s", err.message);
	for (size_t i = 0; ok && i < sizeof(ks) / sizeof(ks[0]); i++)
	{
		if (ks[i] > n + 5 && ks[i] != SIZE_MAX)
			continue;			/* n / 8 + 1 etc. wrapped for tiny n */
		/* past 65537 elements, the full-sort k (over n / 8) in one mode only */
		int			modes = (n > 65537 && ks[i] > n / 8) ? 1 : 3;

		for (int mode = 0; ok && mode < modes; mode++)
			ok = check_k(type, input, n, ks[i], descending, ref_perm, ref_keys, mode, why, sizeof(why));
	}
	tap_check(ok, "topk %s %s %s n=%zu%s%s", gs_type_name(type), gs_dist_names[dist],
			  descending ? "desc" : "asc", n, ok ? "" : ": ", why);
	free(input);
	free(ref_keys);
	free(ref_perm);
	free(scratch);
}

static void
test_sizes_distributions(void)
{
	static const size_t sizes[] = {0, 1, 2, 3, 64, 65, 1000, 65536, 65537, 300007, 1000003};

	for (int t = 0; t < GS_NUM_TYPES; t++)
		for (int d = 0; d < GS_NUM_DISTS; d++)
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			{
				if (quick && sizes[s] > 65537)
					continue;
				/* the select path past 65536: every type on some, int4 and float8 on all */
				if (sizes[s] > 65537 && t != GS_INT4 && t != GS_FLOAT8 && d % 3 != 0)
					continue;
				check_case((gs_type) t, (gs_dist) d, sizes[s], false);
				check_case((gs_type) t, (gs_dist) d, sizes[s], true);
			}
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* 10^7 keys, k = 100, against the full argsort (and a note of both times). */
static void
test_ten_million(void)
{
	static const gs_type types[] = {GS_INT2, GS_INT4, GS_FLOAT8};
	size_t		n = 10000000,
				k = 100;

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
	{
		gs_type		type = types[t];
		size_t		w = gs_type_size(type);
		unsigned char *input = xmalloc(n * w);
		uint32_t   *ref_perm = xmalloc(n * sizeof(uint32_t));
		unsigned char *ref_keys = xmalloc(n * w);
		void	   *scratch = xmalloc(gs_cpu_scratch_bytes(type, n, true));
		void	   *tscratch = xmalloc(gs_cpu_topk_scratch_bytes(type, n, k, true));
		unsigned char *keys = xmalloc(k * w);
		uint32_t   *perm = xmalloc(k * sizeof(uint32_t));
		gs_error	err;
		double		t0,
					t1,
					t2;
		bool		ok;

		gs_fill(type, GS_DIST_UNIFORM, input, n, 77);
		t0 = now_ms();
		ok = gs_cpu_argsort(type, input, n, true, ref_perm, ref_keys, scratch, NULL, NULL, &err) == GS_OK;
		t1 = now_ms();
		ok = ok && gs_cpu_topk(type, input, n, k, true, keys, perm, tscratch, NULL, NULL, &err) == GS_OK;
		t2 = now_ms();
		ok = ok && memcmp(keys, ref_keys, k * w) == 0 && memcmp(perm, ref_perm, k * sizeof(uint32_t)) == 0;
		tap_check(ok, "topk %s uniform desc n=%zu k=%zu", gs_type_name(type), n, k);
		tap_note("%s n=%zu: full argsort %.1f ms, top-%zu %.1f ms", gs_type_name(type), n, t1 - t0, k, t2 - t1);
		free(input);
		free(ref_perm);
		free(ref_keys);
		free(scratch);
		free(tscratch);
		free(keys);
		free(perm);
	}
}

/*
 * gs_cpu_topk_keep_before with the element at sorted position b as the
 * bound: it keeps, in input order, the elements whose stable-sort position
 * comes before the first key equal to the bound (equal keys are equal bits).
 */
static bool
check_keep_before(gs_type type, const unsigned char *input, size_t n, bool descending,
				  const uint32_t *ref_perm, const unsigned char *ref_keys, size_t b)
{
	size_t		w = gs_type_size(type);
	size_t		start = b;
	unsigned char *keys = tap_guarded(n * w);
	unsigned char *expected = xmalloc(n * w);
	unsigned char *before = xmalloc(n ? n : 1);
	unsigned char bound[8];
	size_t		m = 0;
	size_t		kept;
	bool		ok;

	memcpy(bound, ref_keys + b * w, w);
	while (start > 0 && memcmp(ref_keys + (start - 1) * w, bound, w) == 0)
		start--;
	memset(before, 0, n ? n : 1);
	for (size_t j = 0; j < start; j++)
		before[ref_perm[j]] = 1;
	for (size_t i = 0; i < n; i++)
		if (before[i])
			memcpy(expected + m++ * w, input + i * w, w);

	memcpy(keys, input, n * w);
	kept = gs_cpu_topk_keep_before(type, keys, n, bound, descending);
	ok = kept == m && memcmp(keys, expected, m * w) == 0 && tap_guard_intact(keys, n * w);
	free(keys);
	free(expected);
	free(before);
	return ok;
}

static void
test_keep_before(void)
{
	static const size_t sizes[] = {1, 2, 3, 1000, 65537};

	for (int t = 0; t < GS_NUM_TYPES; t++)
		for (int d = 0; d < GS_NUM_DISTS; d++)
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
				for (int desc = 0; desc < 2; desc++)
				{
					gs_type		type = (gs_type) t;
					size_t		n = sizes[s];
					size_t		w = gs_type_size(type);
					unsigned char *input = xmalloc(n * w);
					unsigned char *ref_keys = xmalloc(n * w);
					uint32_t   *ref_perm = xmalloc(n * sizeof(uint32_t));
					void	   *scratch = xmalloc(gs_cpu_scratch_bytes(type, n, true));
					size_t		bs[] = {0, n / 3, n / 2, n - 1};
					gs_error	err;
					bool		ok;

					gs_fill(type, (gs_dist) d, input, n, 99 + n);
					ok = gs_cpu_argsort(type, input, n, desc, ref_perm, ref_keys, scratch,
										NULL, NULL, &err) == GS_OK;
					for (size_t i = 0; ok && i < sizeof(bs) / sizeof(bs[0]); i++)
						ok = check_keep_before(type, input, n, desc, ref_perm, ref_keys, bs[i]);
					tap_check(ok, "keep_before %s %s %s n=%zu", gs_type_name(type), gs_dist_names[d],
							  desc ? "desc" : "asc", n);
					free(input);
					free(ref_keys);
					free(ref_perm);
					free(scratch);
				}
	tap_check(gs_cpu_topk_keep_before(GS_INT4, NULL, 0, "\0\0\0\0", false) == 0,
			  "keep_before of no elements keeps none");
	tap_check(gs_cpu_topk_keep_before(GS_NUM_TYPES, NULL, 7, NULL, false) == 7,
			  "keep_before of a bad type keeps all");
}

static bool
stop_now(void *arg)
{
	int		   *calls = arg;

	(*calls)++;
	return true;
}

static void
test_interrupt_and_arguments(void)
{
	size_t		n = 200000,
				k = 10;
	int32_t    *input = xmalloc(n * sizeof(int32_t));
	void	   *scratch = xmalloc(gs_cpu_topk_scratch_bytes(GS_INT4, n, k, true));
	int32_t		keys[10];
	uint32_t	perm[10];
	gs_error	err;
	int			calls = 0;
	gs_status	st;

	gs_fill(GS_INT4, GS_DIST_UNIFORM, input, n, 5);
	st = gs_cpu_topk(GS_INT4, input, n, k, false, keys, perm, scratch, stop_now, &calls, &err);
	tap_check(st == GS_ERR_INTERRUPTED && calls == 1, "an interrupt stops the select (status %s, %d polls)",
			  gs_status_name(st), calls);
	st = gs_cpu_topk(GS_INT4, input, n, k, false, NULL, NULL, scratch, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT, "no output wanted is an invalid argument");
	st = gs_cpu_topk(GS_INT4, input, n, k, false, keys, NULL, NULL, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT, "no scratch is an invalid argument");
	st = gs_cpu_topk(GS_NUM_TYPES, input, n, k, false, keys, NULL, scratch, NULL, NULL, &err);
	tap_check(st == GS_ERR_INVALID_ARGUMENT, "a bad type is an invalid argument");
	st = gs_cpu_topk(GS_INT4, NULL, 0, k, false, NULL, NULL, NULL, NULL, NULL, &err);
	tap_check(st == GS_OK && gs_cpu_topk_scratch_bytes(GS_INT4, 0, k, true) == 0,
			  "no elements: nothing to do, no scratch");
	free(input);
	free(scratch);
}

int
main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;

	test_sizes_distributions();
	test_keep_before();
	if (!quick)
		test_ten_million();
	test_interrupt_and_arguments();
	return tap_done();
}
