/*
 * bench_comparison.cu: the comparison sorts (merge, bitonic, quick) against the strongest
 * library sort of their kind and against our radix sort, in one run on the
 * same device buffers.  CUDA events around each sort, the input restored from
 * a pristine device copy before each run (outside the timed region), two
 * warm-up runs, then the median of at least 9.  Prints markdown tables and
 * writes them to --out.
 *
 *   bench_comparison [--out FILE] [--quick] [--only SECTION]
 *   bench_comparison --profile ours|cub|bcf --input random|worst --n N
 *
 * Sections: merge (ours, both variants, vs cub::DeviceMergeSort, thrust::sort
 * with a comparator, and our radix; int4 and float8 uniform 10^7 .. 10^8),
 * worst (merge sorts on the worst-case inputs of seed 003 against random
 * permutations of the same keys), quick (every distribution, 10^7 int4, vs
 * radix), small (every algorithm at 2^8 .. 2^24 keys: the bitonic / radix
 * crossover and the data for the auto rule).  --profile sorts once (after
 * one untimed sort of other data) for ncu's bank-conflict counters.
 */
#include <algorithm>
#include <cstdarg>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cub/device/device_merge_sort.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include "gpusort.h"
#include "keys.h"
#include "quick_sort.cuh"
#include "merge_sort.cuh"
#include "worst_case.h"
#include "../test/distributions.h"
#include "bench_common.cuh"

static std::string report;		/* everything printed, for --out */

static void
out(const char *fmt,...)
{
	char		line[1024];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fputs(line, stdout);
	fflush(stdout);
	report += line;
}

/* Grows buf to n keys of either type (8 bytes at most) and n values; frees the old buffers. */
static void
reserve(size_t n)
{
	if (n * 8 <= buf.bytes)
		return;
	CHECK(cudaFree(buf.pristine));
	CHECK(cudaFree(buf.iota));
	for (int i = 0; i < 2; i++)
	{
		CHECK(cudaFree(buf.keys[i]));
		CHECK(cudaFree(buf.values[i]));
	}
	CHECK(cudaMalloc(&buf.pristine, n * 8));
	CHECK(cudaMalloc(&buf.iota, n * 4));
	for (int i = 0; i < 2; i++)
	{
		CHECK(cudaMalloc(&buf.keys[i], n * 8));
		CHECK(cudaMalloc(&buf.values[i], n * 4));
	}
	{
		std::vector<uint32_t> io(n);

		std::iota(io.begin(), io.end(), 0u);
		CHECK(cudaMemcpy(buf.iota, io.data(), n * 4, cudaMemcpyHostToDevice));
	}
	buf.bytes = n * 8;
}

static void
upload(const void *host, size_t n, size_t w)
{
	reserve(n);
	CHECK(cudaMemcpy(buf.pristine, host, n * w, cudaMemcpyHostToDevice));
}

/* ---- the sorts ---- */

struct less_op
{
	template <typename T>
	__host__ __device__ bool operator() (const T &a, const T &b) const
	{
		return a < b;
	}
};

template <typename K>
static int
sort_cub_merge_typed(size_t n, bool pairs)
{
	size_t		bytes = 0;

	if (pairs)
	{
		CHECK(cub::DeviceMergeSort::SortPairs(NULL, bytes, (K *) buf.keys[0], buf.values[0], (int64_t) n,
											  less_op(), stream));
		ensure_temp(bytes);
		CHECK(cub::DeviceMergeSort::SortPairs(buf.temp, bytes, (K *) buf.keys[0], buf.values[0], (int64_t) n,
											  less_op(), stream));
	}
	else
	{
		CHECK(cub::DeviceMergeSort::SortKeys(NULL, bytes, (K *) buf.keys[0], (int64_t) n, less_op(), stream));
		ensure_temp(bytes);
		CHECK(cub::DeviceMergeSort::SortKeys(buf.temp, bytes, (K *) buf.keys[0], (int64_t) n, less_op(), stream));
	}
	return 0;
}

static int
sort_cub_merge(gs_type t, size_t n, bool pairs)
{
	return t == GS_INT4 ? sort_cub_merge_typed<int32_t>(n, pairs) : sort_cub_merge_typed<double>(n, pairs);
}

/* A user comparator makes thrust::sort take its merge sort instead of the radix sort. */
template <typename K>
static int
sort_thrust_cmp_typed(size_t n, bool pairs)
{
	thrust::device_ptr<K> k((K *) buf.keys[0]);

	if (pairs)
		thrust::sort_by_key(thrust::cuda::par.on(stream), k, k + n, thrust::device_ptr<uint32_t>(buf.values[0]),
							less_op());
	else
		thrust::sort(thrust::cuda::par.on(stream), k, k + n, less_op());
	return 0;
}

static int
sort_thrust_cmp(gs_type t, size_t n, bool pairs)
{
	return t == GS_INT4 ? sort_thrust_cmp_typed<int32_t>(n, pairs) : sort_thrust_cmp_typed<double>(n, pairs);
}

/* Checks the sorted result against the host copy sorted by the ordered keys (cheap spot check: order only). */
static bool
check_sorted(gs_type t, size_t n, int selector, bool raw_order)
{
	size_t		w = gs_type_size(t);
	std::vector<unsigned char> h(n * w);
	bool		f = t == GS_FLOAT4 || t == GS_FLOAT8;

	CHECK(cudaMemcpy(h.data(), buf.keys[selector], n * w, cudaMemcpyDeviceToHost));
	for (size_t i = 1; i < n; i++)
	{
		uint64_t	a,
					b;

		if (w == 4)
		{
			a = gs_to_key32(((uint32_t *) h.data())[i - 1], f, 0);
			b = gs_to_key32(((uint32_t *) h.data())[i], f, 0);
		}
		else
		{
			a = gs_to_key64(((uint64_t *) h.data())[i - 1], f, 0);
			b = gs_to_key64(((uint64_t *) h.data())[i], f, 0);
		}
		if (a > b && !raw_order)
			return false;
		if (raw_order && a > b)
			return false;
	}
	return true;
}

static void
random_permutation(uint32_t *p, size_t n, uint64_t seed)
{
	std::mt19937_64 g(seed);

	for (size_t i = 0; i < n; i++)
		p[i] = (uint32_t) i;
	for (size_t i = n - 1; i > 0; i--)
	{
		size_t		j = g() % (i + 1);
		uint32_t	t = p[i];

		p[i] = p[j];
		p[j] = t;
	}
}

static int
runs_for(size_t n)
{
	return n >= 50000000 ? 9 : n >= 5000000 ? 15 : 31;
}

/* ---- sections ---- */

static void
section_merge(bool quick)
{
	std::vector<size_t> sizes = quick ? std::vector<size_t>{10000000}
		: std::vector<size_t>{10000000, 30000000, 100000000};

	out("\n## Merge sort, uniform keys (Gkeys/s; ratio to cub::DeviceMergeSort)\n\n");
	out("| type | n | merge (path) | merge (bcf) | CUB merge | thrust::sort + comparator | radix (ours) | path / CUB |\n");
	out("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (gs_type t : {GS_INT4, GS_FLOAT8})
		for (size_t n : sizes)
		{
			size_t		w = gs_type_size(t);
			std::vector<unsigned char> in(n * w);
			double		ms[5];
			int			sel;
			bool		ok = true;

			fill_parallel(t, GS_DIST_UNIFORM, in.data(), n);
			upload(in.data(), n, w);
			gs_merge_set_variant(GS_MERGE_PATH);
			ms[0] = time_sort([&]() { return sort_ours(GS_ALGO_MERGE, t, n, false); }, n, w, false, runs_for(n), &sel);
			ok &= check_sorted(t, n, sel, false);
			gs_merge_set_variant(GS_MERGE_BCF);
			ms[1] = time_sort([&]() { return sort_ours(GS_ALGO_MERGE, t, n, false); }, n, w, false, runs_for(n), &sel);
			ok &= check_sorted(t, n, sel, false);
			gs_merge_set_variant(GS_MERGE_PATH);
			ms[2] = time_sort([&]() { return sort_cub_merge(t, n, false); }, n, w, false, runs_for(n), &sel);
			ok &= check_sorted(t, n, sel, true);
			ms[3] = time_sort([&]() { return sort_thrust_cmp(t, n, false); }, n, w, false, runs_for(n), &sel);
			ok &= check_sorted(t, n, sel, true);
			ms[4] = time_sort([&]() { return sort_ours(GS_ALGO_RADIX, t, n, false); }, n, w, false, runs_for(n), &sel);
			ok &= check_sorted(t, n, sel, false);
			out("| %s | %.0e | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f%s |\n", gs_type_name(t), (double) n,
				n / ms[0] / 1e6, n / ms[1] / 1e6, n / ms[2] / 1e6, n / ms[3] / 1e6, n / ms[4] / 1e6,
				ms[2] / ms[0], ok ? "" : " (UNSORTED OUTPUT)");
		}
	out("\nArgsort (keys + uint32 values), int4 uniform:\n\n");
	out("| n | merge (path) | CUB merge SortPairs | radix (ours) |\n| --- | --- | --- | --- |\n");
	for (size_t n : quick ? std::vector<size_t>{10000000} : std::vector<size_t>{10000000, 100000000})
	{
		std::vector<unsigned char> in(n * 4);
		double		a,
					c,
					r;
		int			sel;

		fill_parallel(GS_INT4, GS_DIST_UNIFORM, in.data(), n);
		upload(in.data(), n, 4);
		a = time_sort([&]() { return sort_ours(GS_ALGO_MERGE, GS_INT4, n, true); }, n, 4, true, runs_for(n), &sel);
		c = time_sort([&]() { return sort_cub_merge(GS_INT4, n, true); }, n, 4, true, runs_for(n), &sel);
		r = time_sort([&]() { return sort_ours(GS_ALGO_RADIX, GS_INT4, n, true); }, n, 4, true, runs_for(n), &sel);
		out("| %.0e | %.2f | %.2f | %.2f |\n", (double) n, n / a / 1e6, n / c / 1e6, n / r / 1e6);
	}
}

/* The largest b*E*2^k not above target. */
static size_t
worst_size(int e, int b, size_t target)
{
	size_t		n = (size_t) e * b;

	while (n * 2 <= target)
		n *= 2;
	return n;
}

static void
section_worst(bool quick)
{
	int			ob,
				oe;

	gs_merge_path_tuning(GS_INT4, false, &ob, &oe);
	out("\n## Merge sorts on their worst-case inputs (seed 003), int4 keys 0..n-1\n\n");
	out("Worst case built for (E, b); random = a random permutation of the same keys. ms (median).\n\n");
	out("| sort | input built for | n | random | worst case | slowdown |\n| --- | --- | --- | --- | --- | --- |\n");
	for (size_t target : quick ? std::vector<size_t>{16000000} : std::vector<size_t>{16000000, 80000000})
	{
		struct
		{
			const char *sort;
			int			cub;
			int			e,
						b;
			const char *built;
		}			rows[] = {
			{"merge (path, ours)", 0, oe, ob, "ours"},
			{"CUB DeviceMergeSort", 1, 17, 256, "CUB sm_90"},
			{"merge (path, ours)", 0, 17, 256, "CUB sm_90"},
			{"CUB DeviceMergeSort", 1, oe, ob, "ours"},
		};

		for (auto &r : rows)
		{
			size_t		n = worst_size(r.e, r.b, target);
			std::vector<uint32_t> worst(n), rnd(n);
			double		ms_r,
						ms_w;
			int			sel;

			if (gs_worst_case_fill(worst.data(), n, r.e, r.b, 32, 1) != 0)
			{
				out("| %s | E=%d b=%d | %zu | generator failed | | |\n", r.sort, r.e, r.b, n);
				continue;
			}
			random_permutation(rnd.data(), n, 5);
			auto		run = [&]() { return r.cub ? sort_cub_merge(GS_INT4, n, false) : sort_ours(GS_ALGO_MERGE, GS_INT4, n, false); };

			upload(rnd.data(), n, 4);
			ms_r = time_sort(run, n, 4, false, runs_for(n), &sel);
			upload(worst.data(), n, 4);
			ms_w = time_sort(run, n, 4, false, runs_for(n), &sel);
			out("| %s | %s (E=%d, b=%d) | %zu | %.3f | %.3f | %+.1f%% |\n", r.sort, r.built, r.e, r.b, n, ms_r, ms_w,
				100.0 * (ms_w / ms_r - 1));
		}
	}
}

static void
section_quick(bool quick)
{
	size_t		n = 10000000;
	double		uniform_ms = 0;

	(void) quick;
	out("\n## Quicksort, 10^7 int4, every distribution (ms; ratio to our radix, and to quick on uniform)\n\n");
	{
		/* GS_BENCH_QUICK_DEPTH=F,S: depth limits for this section (S >= 0 selects the in-block quicksort) */
		const char *qd = getenv("GS_BENCH_QUICK_DEPTH");
		int			f,
					s;

		if (qd != NULL && sscanf(qd, "%d,%d", &f, &s) == 2)
		{
			gs_quick_set_depth_limits(f, s);
			out("Depth limits %d / %d (GS_BENCH_QUICK_DEPTH).\n\n", f, s);
		}
	}
	out("| distribution | quick | radix (ours) | quick / radix | quick / quick uniform |\n| --- | --- | --- | --- | --- |\n");
	for (int d = 0; d < GS_NUM_DISTS; d++)
	{
		std::vector<unsigned char> in(n * 4);
		double		q,
					r;
		int			sel;
		bool		ok;

		fill_parallel(GS_INT4, (gs_dist) d, in.data(), n);
		upload(in.data(), n, 4);
		q = time_sort([&]() { return sort_ours(GS_ALGO_QUICK, GS_INT4, n, false); }, n, 4, false, 15, &sel);
		ok = check_sorted(GS_INT4, n, sel, false);
		r = time_sort([&]() { return sort_ours(GS_ALGO_RADIX, GS_INT4, n, false); }, n, 4, false, 15, &sel);
		if (d == GS_DIST_UNIFORM)
			uniform_ms = q;
		out("| %s | %.3f | %.3f | %.2f | %.2f%s |\n", gs_dist_names[d], q, r, q / r, q / uniform_ms,
			ok ? "" : " (UNSORTED OUTPUT)");
	}
}

static void
section_small(bool quick)
{
	std::vector<size_t> sizes;

	for (int k = 8; k <= (quick ? 20 : 24); k += (k < 16 ? 1 : 2))
		sizes.push_back((size_t) 1 << k);
	for (gs_type t : {GS_INT4, GS_FLOAT8})
		for (int pairs = 0; pairs < 2; pairs++)
		{
			if (t == GS_FLOAT8 && pairs)
				continue;
			out("\n## Every algorithm by size, %s uniform, %s (microseconds, median)\n\n", gs_type_name(t),
				pairs ? "argsort" : "keys only");
			out("| n | radix | merge | bitonic | quick | fastest |\n| --- | --- | --- | --- | --- | --- |\n");
			for (size_t n : sizes)
			{
				size_t		w = gs_type_size(t);
				std::vector<unsigned char> in(n * w);
				gs_algorithm algos[4] = {GS_ALGO_RADIX, GS_ALGO_MERGE, GS_ALGO_BITONIC, GS_ALGO_QUICK};
				double		us[4];
				int			best = 0,
							sel;

				fill_parallel(t, GS_DIST_UNIFORM, in.data(), n);
				upload(in.data(), n, w);
				for (int a = 0; a < 4; a++)
				{
					us[a] = 1000 * time_sort([&]() { return sort_ours(algos[a], t, n, pairs); }, n, w, pairs,
											 n >= ((size_t) 1 << 22) ? 15 : 51, &sel);
					if (!check_sorted(t, n, sel, false))
						us[a] = -1;
					if (us[a] > 0 && us[a] < us[best])
						best = a;
				}
				out("| %zu | %.1f | %.1f | %.1f | %.1f | %s |\n", n, us[0], us[1], us[2], us[3],
					gs_algorithm_name(algos[best]));
			}
		}
}

/* One sort for ncu: an untimed warm-up on other data, then the measured sort. */
static int
profile(const char *who, const char *input, size_t n)
{
	int			ob,
				oe,
				e,
				b;
	bool		cub = strcmp(who, "cub") == 0;
	std::vector<uint32_t> keys(n);

	gs_merge_path_tuning(GS_INT4, false, &ob, &oe);
	e = cub ? 17 : oe;
	b = cub ? 256 : ob;
	if (strcmp(who, "bcf") == 0)
		gs_merge_set_variant(GS_MERGE_BCF);
	n = worst_size(e, b, n);
	if (strcmp(input, "worst") == 0)
	{
		if (gs_worst_case_fill(keys.data(), n, e, b, 32, 1) != 0)
			return 1;
	}
	else
		random_permutation(keys.data(), n, 5);
	upload(keys.data(), n, 4);
	restore(n, 4, false);
	(void) (cub ? sort_cub_merge(GS_INT4, n, false) : sort_ours(GS_ALGO_MERGE, GS_INT4, n, false));
	CHECK(cudaStreamSynchronize(stream));
	restore(n, 4, false);
	CHECK(cudaStreamSynchronize(stream));
	fprintf(stderr, "profiled sort: %s on %s input, n = %zu (E = %d, b = %d)\n", who, input, n, e, b);
	(void) (cub ? sort_cub_merge(GS_INT4, n, false) : sort_ours(GS_ALGO_MERGE, GS_INT4, n, false));
	CHECK(cudaStreamSynchronize(stream));
	return 0;
}

int
main(int argc, char **argv)
{
	const char *out_path = NULL,
			   *only = NULL,
			   *prof = NULL,
			   *input = "random";
	bool		quick = false;
	size_t		pn = 16000000;
	cudaDeviceProp prop;
	int			device = 0;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out_path = argv[++i];
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = argv[++i];
		else if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
			prof = argv[++i];
		else if (strcmp(argv[i], "--input") == 0 && i + 1 < argc)
			input = argv[++i];
		else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
			pn = strtoull(argv[++i], NULL, 10);
		else
		{
			fprintf(stderr, "usage: %s [--out FILE] [--quick] [--only merge|worst|quick|small]\n"
					"       %s --profile ours|cub|bcf --input random|worst --n N\n", argv[0], argv[0]);
			return 2;
		}
	}
	CHECK(cudaSetDevice(device));
	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	if (prof != NULL)
		return profile(prof, input, pn);

	CHECK(cudaGetDeviceProperties(&prop, device));
	{
		time_t		now = time(NULL);
		char		date[32];

		strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
		out("# Comparison sorts: %s, %d SMs, sm_%d%d, %.0f GiB; %s; CUDA %d\n", prop.name,
			prop.multiProcessorCount, prop.major, prop.minor, prop.totalGlobalMem / 1073741824.0, date,
			CUDART_VERSION);
		{
			int			ob,
						oe;

			gs_merge_path_tuning(GS_INT4, false, &ob, &oe);
			out("\nmerge (path) tuning for int4: b = %d threads, E = %d keys per thread; CUB DeviceMergeSort sm_90: "
				"b = 256, E = 17 (int4), 8 (float8)\n", ob, oe);
		}
	}
	if (only == NULL || strcmp(only, "small") == 0)
		section_small(quick);
	if (only == NULL || strcmp(only, "merge") == 0)
		section_merge(quick);
	if (only == NULL || strcmp(only, "worst") == 0)
		section_worst(quick);
	if (only == NULL || strcmp(only, "quick") == 0)
		section_quick(quick);

	if (out_path != NULL)
	{
		FILE	   *f = fopen(out_path, "w");

		if (f == NULL)
		{
			perror(out_path);
			return 1;
		}
		fputs(report.c_str(), f);
		fclose(f);
	}
	return 0;
}
