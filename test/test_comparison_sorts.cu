/*
 * test_comparison_sorts.cu: the cases that test_gpu_sort does not
 * reach, for the merge, bitonic and quick sorts, each against a stable CPU
 * reference bit-exactly (keys and argsort values):
 *   - the merge variants of bench/merge_variants/, built from bench's
 *     sources: the bank-conflict-free sort (Sitchinava and Weichert), keys
 *     only, across its distribution threshold, and the merge-path sort under
 *     every option (gs_merge_path_options: each shape with each way of
 *     finding a pass tile's split and each merge order), across several
 *     passes, and on the worst-case input built for each shape;
 *   - the library's merge sort on the worst-case inputs of "Engineering
 *     Worst-Case Inputs for Pairwise Merge Sort on GPUs" (Berney), for its
 *     own (E, b) and for CUB's;
 *   - the quicksort with its depth limits lowered, so that tasks take the
 *     merge-sort and bitonic fallbacks;
 *   - argsort stability with many ties at sizes that need several passes;
 *   - the bitonic sort around its single-block capacity.
 * Outputs are poisoned before every sort.
 *
 *   test_comparison_sorts [--quick] [--only path] [--race] [--variants SHAPE/SPLIT,...]
 *
 * --quick: small sizes, for compute-sanitizer; --only path: the merge-path
 * options alone; --race: the merge-path options with the fewest sorts that
 * run each of their kernels (for racecheck, which is slow); --variants: only
 * those shapes and splits of the merge path (default: every combination).
 */
#include <algorithm>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusort.h"
#include "keys.h"
#include "quick_sort.cuh"
#include "distributions.h"
#include "merge_variants.h"
#include "tap.h"
#include "../bench/worst_case.h"

#define POISON 0xA5

typedef struct device_buffers
{
	size_t		capacity;
	void	   *keys[2];
	uint32_t   *values[2];
	void	   *temp;
	size_t		temp_capacity;
} device_buffers;

static bool
reserve(device_buffers *b, size_t n)
{
	if (n <= b->capacity)
		return true;
	for (int i = 0; i < 2; i++)
	{
		cudaFree(b->keys[i]);
		cudaFree(b->values[i]);
		b->keys[i] = NULL;
		b->values[i] = NULL;
		if (cudaMalloc(&b->keys[i], n * 8) != cudaSuccess || cudaMalloc(&b->values[i], n * 4) != cudaSuccess)
		{
			b->capacity = 0;
			return false;
		}
	}
	b->capacity = n;
	return true;
}

static uint64_t
ordered_key(gs_type t, const void *a, size_t i, bool desc)
{
	bool		f = t == GS_FLOAT4 || t == GS_FLOAT8;

	switch (gs_type_size(t))
	{
		case 2:
			return gs_to_key16(((const uint16_t *) a)[i], desc);
		case 4:
			return gs_to_key32(((const uint32_t *) a)[i], f, desc);
		default:
			return gs_to_key64(((const uint64_t *) a)[i], f, desc);
	}
}

/* Stable reference: positions sorted by (ordered key, position). */
static void
reference(gs_type t, const void *in, size_t n, bool desc, std::vector<uint32_t> &perm)
{
	std::vector<std::pair<uint64_t, uint32_t> > v(n);

	for (size_t i = 0; i < n; i++)
		v[i] = std::make_pair(ordered_key(t, in, i, desc), (uint32_t) i);
	std::sort(v.begin(), v.end());
	perm.resize(n);
	for (size_t i = 0; i < n; i++)
		perm[i] = v[i].second;
}

/*
 * Sorts in[0..n) on the GPU with algo and checks against perm.  Returns "" or
 * why it failed.  expect_status: a status other than GS_OK that the call must
 * return instead (then nothing is checked).
 */
static std::string
check_sort(device_buffers *b, gs_algorithm algo, gs_type t, const void *in, size_t n, bool desc,
		   bool values, const std::vector<uint32_t> &perm, gs_status expect_status = GS_OK)
{
	size_t		w = gs_type_size(t);
	gs_gpu_sort_args a;
	gs_error	err;
	gs_status	s;
	std::vector<unsigned char> got(n * w), want(n * w);
	std::vector<uint32_t> vals(n), iota(n);
	char		msg[GS_MESSAGE_LEN + 64];

	if (!reserve(b, n))
		return "no device memory for the buffers";
	for (size_t i = 0; i < n; i++)
		iota[i] = (uint32_t) (i * 2654435761u);	/* values that are not positions */
	for (int i = 0; i < 2; i++)
	{
		cudaMemset(b->keys[i], POISON, n * w);
		cudaMemset(b->values[i], POISON, n * 4);
	}
	cudaMemcpy(b->keys[0], in, n * w, cudaMemcpyHostToDevice);
	cudaMemcpy(b->values[0], iota.data(), n * 4, cudaMemcpyHostToDevice);

	memset(&a, 0, sizeof(a));
	a.type = t;
	a.algorithm = algo;
	a.n = n;
	a.descending = desc;
	a.keys[0] = b->keys[0];
	a.keys[1] = b->keys[1];
	if (values)
	{
		a.values[0] = b->values[0];
		a.values[1] = b->values[1];
	}
	s = bench_gpu_sort(&a, &err);
	if (s != GS_OK)
	{
		snprintf(msg, sizeof(msg), "size query: %s", err.message);
		return msg;
	}
	if (a.temp_bytes > b->temp_capacity)
	{
		cudaFree(b->temp);
		if (cudaMalloc(&b->temp, a.temp_bytes) != cudaSuccess)
		{
			b->temp = NULL;
			b->temp_capacity = 0;
			return "no device memory for temp";
		}
		b->temp_capacity = a.temp_bytes;
	}
	cudaMemset(b->temp, POISON, a.temp_bytes);
	a.temp = b->temp;
	a.result_selector = -1;
	s = bench_gpu_sort(&a, &err);
	if (expect_status != GS_OK)
	{
		if (s == expect_status)
			return "";
		snprintf(msg, sizeof(msg), "expected status %s, got %s", gs_status_name(expect_status), gs_status_name(s));
		return msg;
	}
	if (s != GS_OK)
	{
		snprintf(msg, sizeof(msg), "sort: %s", err.message);
		return msg;
	}
	if (cudaDeviceSynchronize() != cudaSuccess)
		return std::string("CUDA error after the sort: ") + cudaGetErrorString(cudaGetLastError());
	if (a.result_selector != 0 && a.result_selector != 1)
		return "result_selector is neither 0 nor 1";
	cudaMemcpy(got.data(), a.keys[a.result_selector], n * w, cudaMemcpyDeviceToHost);
	for (size_t i = 0; i < n; i++)
		memcpy(&want[i * w], (const unsigned char *) in + (size_t) perm[i] * w, w);
	if (got != want)
	{
		for (size_t i = 0; i < n; i++)
			if (memcmp(&got[i * w], &want[i * w], w) != 0)
			{
				snprintf(msg, sizeof(msg), "keys differ first at %zu of %zu", i, n);
				return msg;
			}
	}
	if (values)
	{
		cudaMemcpy(vals.data(), a.values[a.result_selector], n * 4, cudaMemcpyDeviceToHost);
		for (size_t i = 0; i < n; i++)
			if (vals[i] != iota[perm[i]])
			{
				snprintf(msg, sizeof(msg), "values differ first at %zu of %zu (not stable?)", i, n);
				return msg;
			}
	}
	return "";
}

/* One (algorithm, type, distribution) over sizes, both directions, keys and (optionally) argsort. */
static void
matrix_cell(device_buffers *b, const char *label, gs_algorithm algo, gs_type t, gs_dist d,
			const std::vector<size_t> &sizes, bool argsort, bool ascending_only = false)
{
	std::string why;

	for (size_t n : sizes)
	{
		std::vector<unsigned char> in(n * gs_type_size(t));
		std::vector<uint32_t> perm;

		gs_fill(t, d, in.data(), n, 4242 + n);
		for (int desc = 0; desc < (ascending_only ? 1 : 2) && why.empty(); desc++)
		{
			reference(t, in.data(), n, desc, perm);
			why = check_sort(b, algo, t, in.data(), n, desc, false, perm);
			if (why.empty() && argsort)
				why = check_sort(b, algo, t, in.data(), n, desc, true, perm);
			if (!why.empty())
			{
				char		at[96];

				snprintf(at, sizeof(at), "n = %zu %s: ", n, desc ? "desc" : "asc");
				why = at + why;
			}
		}
		if (!why.empty())
			break;
	}
	if (!tap_check(why.empty(), "%s %s %s, %zu sizes%s%s", label, gs_type_name(t), gs_dist_names[d], sizes.size(),
				   argsort ? ", keys and argsort" : ", keys", ascending_only ? ", ascending" : ""))
		tap_note("%s", why.c_str());
}

static const gs_dist some_dists[] = {
	GS_DIST_UNIFORM, GS_DIST_SORTED, GS_DIST_REVERSE, GS_DIST_ALL_EQUAL, GS_DIST_ZERO_ONE,
	GS_DIST_FEW_DISTINCT, GS_DIST_STAGGERED, GS_DIST_SPECIAL
};


/*
 * Every shape with every split, shape 0's fused and thread splits with
 * plain launches, and every shape's fused and thread splits under the
 * randomized merge orders; or those of a list
 * "SHAPE/SPLIT[/nopdl][/rand|/randp],..." (e.g. "0/auto,4/prefetch,4/thread/rand").
 */
static std::vector<merge_variant>
path_variants(const char *list)
{
	std::vector<merge_variant> v;

	if (list == NULL)
	{
		for (int sh = 0; sh < GS_NUM_MERGE_SHAPES; sh++)
			for (int sp = 0; sp < GS_NUM_MERGE_SPLITS; sp++)
				v.push_back({sh, (gs_merge_split) sp, 0});
		/* plain launches (the kernels are the same; what differs is how they follow each other) */
		v.push_back({0, GS_MERGE_SPLIT_FUSED, 1});
		v.push_back({0, GS_MERGE_SPLIT_THREAD, 1});
		for (int sh = 0; sh < GS_NUM_MERGE_SHAPES; sh++)
			for (gs_merge_order l : {GS_MERGE_ORDER_RANDOM, GS_MERGE_ORDER_RANDOM_PASSES})
			{
				v.push_back({sh, GS_MERGE_SPLIT_FUSED, 0, l});
				v.push_back({sh, GS_MERGE_SPLIT_THREAD, 0, l});
			}
		return v;
	}
	merge_variants_parse(list, v);
	return v;
}

/*
 * The merge-path sort under every option (or the variants given): each
 * shape (it matters for 32-bit keys without values) with each split, keys
 * across several passes (pass tiles straddling nothing, partial last tiles
 * and pairs), argsort and the other widths under each split, and each shape
 * on the worst-case input built for it.  The prefetching split runs with 3
 * pass blocks except on int4 uniform keys (as many as fit), so that its
 * blocks loop over several tiles and reuse both buffers.  race: the least
 * that runs every kernel of a variant (for racecheck): 20001 keys (a pass
 * under every shape, two tiles per prefetching block), ascending only, no
 * int2 or few_distinct, the worst case at two tiles.  A randomized order
 * runs under seeds drawn per launch, then again under three fixed seeds
 * (named in the test's line), so that a failure can be replayed.
 * GS_ALGO_MERGE is the library's sort again afterwards.
 */
static void
test_path_options(device_buffers *b, bool quick, bool race, const std::vector<merge_variant> &variants)
{
	std::vector<size_t> sizes = race ? std::vector<size_t>{20001}
		: quick ? std::vector<size_t>{1000, 7681, 40001}
		: std::vector<size_t>{1000, 7681, 40001, 1300021};
	gs_merge_path_options o;

	for (const merge_variant &pv : variants)
	{
		const int	sh = pv.shape;
		const bool	prefetch = pv.split == GS_MERGE_SPLIT_PREFETCH;
		char		label[96];

		merge_variant_options(pv, &o);
		o.prefetch_blocks = prefetch && race ? 3 : 0;
		bench_merge_use(&o);
		snprintf(label, sizeof(label), "merge(path %s)", merge_variant_name(pv).c_str());
		for (gs_dist d : {GS_DIST_UNIFORM, GS_DIST_FEW_DISTINCT})
		{
			if (race && d != GS_DIST_UNIFORM)
				continue;
			o.prefetch_blocks = prefetch && (race || d != GS_DIST_UNIFORM) ? 3 : 0;
			bench_merge_use(&o);
			matrix_cell(b, label, GS_ALGO_MERGE, GS_INT4, d, sizes, sh == 0, race);
		}
		o.prefetch_blocks = prefetch ? 3 : 0;
		bench_merge_use(&o);
		if (sh == 0)
		{
			matrix_cell(b, label, GS_ALGO_MERGE, GS_FLOAT8, GS_DIST_UNIFORM, sizes, true, race);
			if (!race)
				matrix_cell(b, label, GS_ALGO_MERGE, GS_INT2, GS_DIST_FEW_DISTINCT, sizes, true, false);
			if (!quick && !race)
				for (gs_dist d : {GS_DIST_SORTED, GS_DIST_REVERSE, GS_DIST_ALL_EQUAL, GS_DIST_SPECIAL})
					matrix_cell(b, label, GS_ALGO_MERGE, GS_INT4, d, sizes, true, false);
		}

		/* the worst case built for this shape's block sort and passes */
		{
			int			sb,
						se,
						pb,
						pe;
			size_t		n;
			std::vector<uint32_t> in, perm;
			std::string why;

			bench_merge_tuning(GS_INT4, false, &sb, &se, &pb, &pe);
			n = (size_t) sb * se << (quick || race ? 1 : 4);
			in.resize(n);
			if (gs_worst_case_fill_shape(in.data(), n, se, sb, pe, pb, 32, 7) != 0)
				why = "generator refused n";
			for (int desc = 0; desc < (race ? 1 : 2) && why.empty(); desc++)
			{
				reference(GS_INT4, in.data(), n, desc, perm);
				why = check_sort(b, GS_ALGO_MERGE, GS_INT4, in.data(), n, desc, false, perm);
			}
			if (!tap_check(why.empty(), "%s int4 on its worst case (sort E = %d, b = %d, pass E = %d, b = %d), "
						   "n = %zu", label, se, sb, pe, pb, n))
				tap_note("%s", why.c_str());
		}

		/* fixed seeds, so that a failure can be replayed */
		if (pv.order != GS_MERGE_ORDER_FIXED)
		{
			for (uint32_t seed : {1u, 12345u, 0xDEADBEEFu})
			{
				char		with[128];

				o.seed = seed;
				bench_merge_use(&o);
				snprintf(with, sizeof(with), "%s, seed %u", label, seed);
				matrix_cell(b, with, GS_ALGO_MERGE, GS_INT4, GS_DIST_UNIFORM, sizes, true, race);
				if (!race)
					matrix_cell(b, with, GS_ALGO_MERGE, GS_FLOAT8, GS_DIST_FEW_DISTINCT, sizes, true, false);
			}
			o.seed = 0;
			bench_merge_use(&o);
		}
	}
	bench_merge_use_library();
}

int
main(int argc, char **argv)
{
	bool		quick = false,
				only_path = false,
				race = false;
	const char *variants = NULL;
	int			count = 0;
	device_buffers b;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc && strcmp(argv[i + 1], "path") == 0)
		{
			only_path = true;
			i++;
		}
		else if (strcmp(argv[i], "--race") == 0)
			race = true;
		else if (strcmp(argv[i], "--variants") == 0 && i + 1 < argc)
			variants = argv[++i];
		else
		{
			fprintf(stderr, "usage: %s [--quick] [--only path] [--race] [--variants SHAPE/SPLIT,...]\n", argv[0]);
			return 2;
		}
	}
	memset(&b, 0, sizeof(b));
	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
		return tap_skip_all("no CUDA device");

	test_path_options(&b, quick, race, path_variants(variants));
	if (only_path)
	{
		for (int i = 0; i < 2; i++)
		{
			cudaFree(b.keys[i]);
			cudaFree(b.values[i]);
		}
		cudaFree(b.temp);
		return tap_done();
	}

	/* 1. the bank-conflict-free merge sort, keys only (it refuses values) */
	{
		std::vector<size_t> sizes = quick ? std::vector<size_t>{2, 1000, 1025, 5000, 70001}
			: std::vector<size_t>{2, 1000, 1024, 1025, 5000, 100003, 1300021, 3000017};

		bench_merge_use_bcf();
		for (int ti = 0; ti < GS_NUM_TYPES; ti++)
			for (gs_dist d : some_dists)
				matrix_cell(&b, "merge(bcf)", GS_ALGO_MERGE, (gs_type) ti, d, sizes, false);
		{
			std::vector<unsigned char> in(1000 * 4);
			std::vector<uint32_t> perm;

			gs_fill(GS_INT4, GS_DIST_UNIFORM, in.data(), 1000, 1);
			reference(GS_INT4, in.data(), 1000, false, perm);
			tap_check(check_sort(&b, GS_ALGO_MERGE, GS_INT4, in.data(), 1000, false, true, perm,
								 GS_ERR_INVALID_ARGUMENT).empty(), "merge(bcf) refuses values");
		}
		bench_merge_use_library();
	}

	/* 2. the library's merge sort on Berney's worst-case inputs (its parameters and CUB's), int4 */
	{
		int			ours_b,
					ours_e;

		bench_merge_tuning(GS_INT4, false, &ours_b, &ours_e, NULL, NULL);
		struct
		{
			const char *who;
			int			e,
						b;
		}			params[] = {{"own", ours_e, ours_b}, {"cub", 17, 256}};

		for (auto &p : params)
			for (int k : quick ? std::vector<int>{1} : std::vector<int>{1, 4, 9})
			{
				size_t		n = (size_t) p.e * p.b << k;
				std::vector<uint32_t> in(n), perm;
				std::string why;

				if (gs_worst_case_fill(in.data(), n, p.e, p.b, 32, 7) != 0)
					why = "generator refused n";
				for (int desc = 0; desc < 2 && why.empty(); desc++)
				{
					reference(GS_INT4, in.data(), n, desc, perm);
					why = check_sort(&b, GS_ALGO_MERGE, GS_INT4, in.data(), n, desc, false, perm);
					if (why.empty())
						why = check_sort(&b, GS_ALGO_MERGE, GS_INT4, in.data(), n, desc, true, perm);
				}
				if (!tap_check(why.empty(), "merge int4 on the worst case for %s E = %d, b = %d, n = %zu",
							   p.who, p.e, p.b, n))
					tap_note("%s", why.c_str());
			}
	}

	/* 3. quicksort with lowered depth limits: fallbacks to merge sort and to bitonic */
	{
		struct
		{
			int			first,
						second;
		}			limits[] = {{1, -1}, {-1, 1}, {0, 0}};
		std::vector<size_t> sizes = quick ? std::vector<size_t>{3000, 20011}
			: std::vector<size_t>{3000, 20011, 100003, 1000003};

		for (auto &l : limits)
		{
			char		label[64];

			gs_quick_set_depth_limits(l.first, l.second);
			snprintf(label, sizeof(label), "quick(depth limits %d/%d)", l.first, l.second);
			for (gs_type t : {GS_INT4, GS_FLOAT8, GS_INT2})
				for (gs_dist d : {GS_DIST_UNIFORM, GS_DIST_SORTED, GS_DIST_FEW_DISTINCT, GS_DIST_SPECIAL})
					matrix_cell(&b, label, GS_ALGO_QUICK, t, d, sizes, true);
		}
		gs_quick_set_depth_limits(-1, -1);
	}

	/* 4. argsort stability with many ties, several passes deep */
	if (!quick)
	{
		std::vector<size_t> sizes = {3000017};

		for (gs_algorithm algo : {GS_ALGO_MERGE, GS_ALGO_QUICK, GS_ALGO_BITONIC})
			for (gs_dist d : {GS_DIST_ZERO_ONE, GS_DIST_FEW_DISTINCT, GS_DIST_ALL_EQUAL, GS_DIST_STAGGERED,
							  GS_DIST_UNIFORM})
				matrix_cell(&b, gs_algorithm_name(algo), algo, GS_INT4, d, sizes, true);
		for (gs_algorithm algo : {GS_ALGO_MERGE, GS_ALGO_QUICK})
			matrix_cell(&b, gs_algorithm_name(algo), algo, GS_FLOAT8, GS_DIST_SPECIAL, sizes, true);
	}

	/* 5. bitonic around its single-block capacity (and quick around its block capacity) */
	{
		struct
		{
			gs_type		t;
			size_t		cap;
		}			caps[] = {{GS_INT2, 65536}, {GS_INT4, 32768}, {GS_INT4, 16384}, {GS_INT8, 16384}, {GS_FLOAT8, 8192}};

		for (auto &c : caps)
		{
			std::vector<size_t> sizes = {c.cap - 1, c.cap, c.cap + 1, 2 * c.cap + 3};

			matrix_cell(&b, "bitonic", GS_ALGO_BITONIC, c.t, GS_DIST_UNIFORM, sizes, true);
			matrix_cell(&b, "quick", GS_ALGO_QUICK, c.t, GS_DIST_UNIFORM, sizes, true);
		}
	}

	for (int i = 0; i < 2; i++)
	{
		cudaFree(b.keys[i]);
		cudaFree(b.values[i]);
	}
	cudaFree(b.temp);
	return tap_done();
}
