/*
 * bench_comparison.cu: the comparison sorts (merge, bitonic, quick) against the strongest
 * library sort of their kind and against our radix sort, in one run on the
 * same device buffers.  CUDA events around each sort, the input restored from
 * a pristine device copy before each run (outside the timed region), two
 * warm-up runs, then the median of at least 9.  Prints markdown tables and
 * writes them to --out.
 *
 *   bench_comparison [--out FILE] [--quick] [--only SECTION[,SECTION...]]
 *   bench_comparison --profile ours|cub|bcf --input random|worst --n N
 *
 * Sections: merge (the merge-path sort under each of its variants, shape,
 * split and merge order of gs_merge_path_options, against cub::DeviceMergeSort; int4 uniform
 * 10^7 .. 10^8 per variant, with the block sort alone per shape, and the
 * bcf variant, thrust::sort with a comparator and our radix sort for
 * reference; float8 and int4 argsort per split), worst (each variant on the
 * worst-case input of Berney (worst_case.h) built for its own shape, against a random
 * permutation of the same keys; CUB on its own), quick (every distribution,
 * 10^7 int4, vs radix), small (every algorithm at 2^8 .. 2^24 keys: the
 * bitonic / radix crossover and the data for the auto rule).  A summary of
 * the merge variants ends the output.  The variants are the library's
 * default and the merge orders and shapes it is compared with
 * (merge_candidates below);
 * GS_BENCH_MERGE_VARIANTS="0/fused,1/warp,4/auto/nopdl,4/auto/rand,..." names others
 * ("all": every shape with every split; the first is then the reference and the one
 * --profile uses).  --profile sorts once (after one untimed sort of
 * other data) for ncu's bank-conflict counters.  The variants and the bcf
 * sort are built here from bench/merge_variants/; every other merge sort
 * timed is the library's.
 */
#include <algorithm>
#include <cmath>
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
#include "../test/merge_variants.h"
#include "worst_case.h"
#include "../test/distributions.h"
#define BENCH_GPU_SORT bench_gpu_sort
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

/* ---- merge-path variants (gs_merge_path_options) ---- */


/*
 * The variants run after the library's default when GS_BENCH_MERGE_VARIANTS
 * is unset: shape 4 with the merge order randomized in every round and in
 * the passes only, shape 0 with the fixed and the randomized order
 * (bench/NOTES-comparison.md, "Round 6", has their measurements).
 */
static const char *const merge_candidates = "4/auto/rand,4/auto/randp,0/auto,0/auto/rand";

/*
 * The variants to compare: the library's default and the candidates above,
 * every shape with every split (GS_BENCH_MERGE_VARIANTS=all), or the list
 * in GS_BENCH_MERGE_VARIANTS ("SHAPE/SPLIT[/nopdl][/rand|/randp],...", e.g.
 * "0/fused,4/auto/rand").  The
 * first is the reference for the others.
 */
static std::vector<merge_variant>
merge_variants(void)
{
	std::vector<merge_variant> v;
	const char *env = getenv("GS_BENCH_MERGE_VARIANTS");
	std::string list;
	gs_merge_path_options d;

	bench_merge_default_options(&d);
	v.push_back({d.shape, d.split, 0, d.order});
	if (env == NULL)
		list = merge_variant_name(v[0]) + "," + merge_candidates;
	else
		list = env;
	if (list == "all")
	{
		for (int sh = 0; sh < GS_NUM_MERGE_SHAPES; sh++)
			for (int sp = 0; sp < GS_NUM_MERGE_SPLITS; sp++)
				if (sh != d.shape || sp != (int) d.split)
					v.push_back({sh, (gs_merge_split) sp, 0});
		return v;
	}
	v.clear();
	merge_variants_parse(list, v);
	if (v.empty())
		v.push_back({d.shape, d.split, 0, d.order});
	return v;
}

/* The row of the block-sort-alone table a variant's block sort belongs to. */
static int
block_row(const merge_variant &v)
{
	return 2 * v.shape + (v.order == GS_MERGE_ORDER_RANDOM ? 1 : 0);
}

static std::string
variant_label(const merge_variant &v)
{
	char		l[96];

	snprintf(l, sizeof(l), "%s (%s)", merge_variant_name(v).c_str(), bench_merge_shape_name(v.shape));
	return l;
}

static void
use_variant(const merge_variant &v, int max_passes)
{
	gs_merge_path_options o;

	merge_variant_options(v, &o);
	o.max_passes = max_passes;
	bench_merge_use(&o);
}

static void
use_default_variant(void)
{
	bench_merge_use_library();
}

/* What the final summary shows, filled in by the sections that ran. */
static struct
{
	std::vector<merge_variant> variants;
	std::vector<size_t> sizes;
	std::vector<std::vector<double> > int4_ratio;	/* [variant][size]: CUB time / ours */
	std::vector<std::vector<double> > argsort_ratio;	/* [variant][size], vs SortPairs */
	std::vector<std::vector<double> > float8_ratio;	/* [variant][size] */
	std::vector<double> worst;	/* [variant]: slowdown in percent on its own worst case */
	std::vector<bool> have_worst;
	bool		unsorted;
} summary;

/* ---- sections ---- */

static void
section_merge(bool quick)
{
	std::vector<size_t> sizes = quick ? std::vector<size_t>{10000000}
		: std::vector<size_t>{10000000, 30000000, 100000000};
	std::vector<size_t> pair_sizes = quick ? std::vector<size_t>{10000000}
		: std::vector<size_t>{10000000, 100000000};
	std::vector<merge_variant> vs = merge_variants();
	const size_t nv = vs.size();
	std::vector<std::vector<double> > ms(nv, std::vector<double>(sizes.size())),
				fms(nv, std::vector<double>(pair_sizes.size())),
				ams(nv, std::vector<double>(pair_sizes.size()));
	std::vector<double> cub(sizes.size()), thr(sizes.size()), rad(sizes.size()), bcf(sizes.size()),
				fcub(pair_sizes.size()), acub(pair_sizes.size());
	/* [shape * 2 + block sort in random order] */
	std::vector<std::vector<double> > block_ms(2 * GS_NUM_MERGE_SHAPES, std::vector<double>(sizes.size(), -1));

	summary.variants = vs;
	summary.sizes = sizes;
	summary.int4_ratio.assign(nv, std::vector<double>(sizes.size(), 0));
	summary.argsort_ratio.assign(nv, std::vector<double>(pair_sizes.size(), 0));
	summary.float8_ratio.assign(nv, std::vector<double>(pair_sizes.size(), 0));

	/* int4 keys: every variant, CUB, thrust with a comparator, our radix sort */
	for (size_t si = 0; si < sizes.size(); si++)
	{
		size_t		n = sizes[si];
		std::vector<unsigned char> in(n * 4);
		int			sel;

		fill_parallel(GS_INT4, GS_DIST_UNIFORM, in.data(), n);
		upload(in.data(), n, 4);
		cub[si] = time_sort([&]() { return sort_cub_merge(GS_INT4, n, false); }, n, 4, false, runs_for(n), &sel);
		summary.unsorted |= !check_sorted(GS_INT4, n, sel, true);
		for (size_t v = 0; v < nv; v++)
		{
			use_variant(vs[v], -1);
			ms[v][si] = time_sort([&]() { return sort_ours(GS_ALGO_MERGE, GS_INT4, n, false); }, n, 4, false,
								  runs_for(n), &sel);
			if (!check_sorted(GS_INT4, n, sel, false))
			{
				summary.unsorted = true;
				ms[v][si] = -ms[v][si];
			}
			summary.int4_ratio[v][si] = cub[si] / ms[v][si];
			if (block_ms[block_row(vs[v])][si] < 0)
			{
				use_variant(vs[v], 0);
				block_ms[block_row(vs[v])][si] = time_sort([&]() { return sort_ours(GS_ALGO_MERGE, GS_INT4, n, false); },
													  n, 4, false, runs_for(n), &sel);
			}
		}
		bench_merge_use_bcf();
		bcf[si] = time_sort([&]() { return sort_ours(GS_ALGO_MERGE, GS_INT4, n, false); }, n, 4, false,
							runs_for(n), &sel);
		summary.unsorted |= !check_sorted(GS_INT4, n, sel, false);
		/* CUB again after the variants: the faster of its two times is the reference */
		{
			double		again = time_sort([&]() { return sort_cub_merge(GS_INT4, n, false); }, n, 4, false,
										  runs_for(n), &sel);

			if (again < cub[si])
			{
				cub[si] = again;
				for (size_t v = 0; v < nv; v++)
					summary.int4_ratio[v][si] = cub[si] / ms[v][si];
			}
		}
		use_default_variant();
		thr[si] = time_sort([&]() { return sort_thrust_cmp(GS_INT4, n, false); }, n, 4, false, runs_for(n), &sel);
		rad[si] = time_sort([&]() { return sort_ours(GS_ALGO_RADIX, GS_INT4, n, false); }, n, 4, false,
							runs_for(n), &sel);
		fprintf(stderr, "merge: int4 n = %zu done\n", n);
	}
	out("\n## Merge sort variants, int4 uniform keys (Gkeys/s; ratio to cub::DeviceMergeSort, the faster of "
		"two CUB timings, before and after the variants)\n\n");
	out("Variant = shape/split: shape 0..%d (block sort and pass b x E, 32-bit keys without values), split = "
		"how a pass finds its tiles (fused: in the pass block; thread, lanes8, warp: a partition kernel, "
		"1, 8 or 32 lanes per split; prefetch: thread's partition, then persistent pass blocks that copy "
		"the next tile (cp.async) while merging this one; auto: fused below %.0e keys, thread from there); "
		"/nopdl: the kernels launched plain, without programmatic dependent launch; /rand, /randp: the merge "
		"order randomized in the block sort and the passes, or in the passes alone.  "
		"The first row is the library's default.\n\n", GS_NUM_MERGE_SHAPES - 1, (double) GS_MERGE_PARTITION_MIN);
	out("| variant |");
	for (size_t n : sizes)
		out(" %.0e |", (double) n);
	for (size_t n : sizes)
		out(" / CUB %.0e |", (double) n);
	out("\n| --- |");
	for (size_t i = 0; i < 2 * sizes.size(); i++)
		out(" --- |");
	out("\n");
	for (size_t v = 0; v < nv; v++)
	{
		out("| %s |", variant_label(vs[v]).c_str());
		for (size_t si = 0; si < sizes.size(); si++)
			out(" %.2f%s |", sizes[si] / fabs(ms[v][si]) / 1e6, ms[v][si] < 0 ? " UNSORTED" : "");
		for (size_t si = 0; si < sizes.size(); si++)
			out(" %.3f |", summary.int4_ratio[v][si]);
		out("\n");
	}
	for (int r = 0; r < 4; r++)
	{
		std::vector<double> &t = r == 0 ? cub : r == 1 ? thr : r == 2 ? rad : bcf;
		const char *name[] = {"CUB DeviceMergeSort", "thrust::sort + comparator", "radix (ours)", "merge (bcf)"};

		out("| %s |", name[r]);
		for (size_t si = 0; si < sizes.size(); si++)
			out(" %.2f |", sizes[si] / t[si] / 1e6);
		for (size_t si = 0; si < sizes.size(); si++)
			out(" %.3f |", cub[si] / t[si]);
		out("\n");
	}
	out("\nThe block sort alone (ms; the rest of a variant's time is its passes):\n\n| shape |");
	for (size_t n : sizes)
		out(" %.0e |", (double) n);
	out("\n| --- |");
	for (size_t i = 0; i < sizes.size(); i++)
		out(" --- |");
	out("\n");
	for (int r = 0; r < 2 * GS_NUM_MERGE_SHAPES; r++)
		if (block_ms[r][0] >= 0)
		{
			out("| %d (%s)%s |", r / 2, bench_merge_shape_name(r / 2), r % 2 ? ", random order" : "");
			for (size_t si = 0; si < sizes.size(); si++)
				out(" %.3f |", block_ms[r][si]);
			out("\n");
		}

	/* float8 keys and int4 argsort: the shape applies to 32-bit keys alone, so these compare splits */
	for (int kind = 0; kind < 2; kind++)
	{
		gs_type		t = kind == 0 ? GS_FLOAT8 : GS_INT4;
		bool		pairs = kind == 1;
		size_t		w = gs_type_size(t);

		for (size_t si = 0; si < pair_sizes.size(); si++)
		{
			size_t		n = pair_sizes[si];
			std::vector<unsigned char> in(n * w);
			int			sel;
			double		c;

			fill_parallel(t, GS_DIST_UNIFORM, in.data(), n);
			upload(in.data(), n, w);
			c = time_sort([&]() { return sort_cub_merge(t, n, pairs); }, n, w, pairs, runs_for(n), &sel);
			(kind == 0 ? fcub : acub)[si] = c;
			for (size_t v = 0; v < nv; v++)
			{
				double		m;
				size_t		same = v;

				/* one run per split; the variants that differ only in shape share it */
				for (size_t u = 0; u < v; u++)
					if (vs[u].split == vs[v].split && vs[u].nopdl == vs[v].nopdl && vs[u].order == vs[v].order &&
						same == v)
						same = u;
				if (same != v)
				{
					(kind == 0 ? fms : ams)[v][si] = (kind == 0 ? fms : ams)[same][si];
					(kind == 0 ? summary.float8_ratio : summary.argsort_ratio)[v][si] =
						(kind == 0 ? summary.float8_ratio : summary.argsort_ratio)[same][si];
					continue;
				}
				use_variant(vs[v], -1);
				m = time_sort([&]() { return sort_ours(GS_ALGO_MERGE, t, n, pairs); }, n, w, pairs, runs_for(n),
							  &sel);
				if (!check_sorted(t, n, sel, false))
				{
					summary.unsorted = true;
					m = -m;
				}
				(kind == 0 ? fms : ams)[v][si] = m;
				(kind == 0 ? summary.float8_ratio : summary.argsort_ratio)[v][si] = c / fabs(m);
			}
			fprintf(stderr, "merge: %s n = %zu done\n", pairs ? "argsort" : "float8", n);
		}
	}
	use_default_variant();
	out("\n## float8 keys and int4 argsort (keys + uint32 values) by split (Gkeys/s; ratio to CUB SortKeys / "
		"SortPairs)\n\nThese keep shape 0 whatever the variant's shape: rows of other shapes repeat it.\n\n");
	out("| split |");
	for (size_t n : pair_sizes)
		out(" float8 %.0e | / CUB |", (double) n);
	for (size_t n : pair_sizes)
		out(" argsort %.0e | / CUB |", (double) n);
	out("\n| --- |");
	for (size_t i = 0; i < 4 * pair_sizes.size(); i++)
		out(" --- |");
	out("\n");
	for (size_t v = 0; v < nv; v++)
	{
		bool		seen = false;

		for (size_t u = 0; u < v; u++)
			seen |= vs[u].split == vs[v].split && vs[u].nopdl == vs[v].nopdl && vs[u].order == vs[v].order;
		if (seen)
			continue;
		out("| %s%s%s%s |", bench_merge_split_name(vs[v].split), vs[v].nopdl ? "/nopdl" : "",
			vs[v].order != GS_MERGE_ORDER_FIXED ? "/" : "",
			vs[v].order != GS_MERGE_ORDER_FIXED ? bench_merge_order_name(vs[v].order) : "");
		for (size_t si = 0; si < pair_sizes.size(); si++)
			out(" %.2f%s | %.3f |", pair_sizes[si] / fabs(fms[v][si]) / 1e6, fms[v][si] < 0 ? " UNSORTED" : "",
				summary.float8_ratio[v][si]);
		for (size_t si = 0; si < pair_sizes.size(); si++)
			out(" %.2f%s | %.3f |", pair_sizes[si] / fabs(ams[v][si]) / 1e6, ams[v][si] < 0 ? " UNSORTED" : "",
				summary.argsort_ratio[v][si]);
		out("\n");
	}
	out("| CUB |");
	for (size_t si = 0; si < pair_sizes.size(); si++)
		out(" %.2f | 1.000 |", pair_sizes[si] / fcub[si] / 1e6);
	for (size_t si = 0; si < pair_sizes.size(); si++)
		out(" %.2f | 1.000 |", pair_sizes[si] / acub[si] / 1e6);
	out("\n");
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

/*
 * Every variant on the worst-case input built for its own shape (the block
 * sort's and the passes' (E, b), gs_worst_case_fill_shape) against a random
 * permutation of the same keys; CUB on its own worst case for reference.
 */
static void
section_worst(bool quick)
{
	std::vector<merge_variant> vs = merge_variants();
	size_t		target = 16000000;

	(void) quick;
	summary.worst.assign(vs.size(), 0);
	summary.have_worst.assign(vs.size(), false);
	if (summary.variants.empty())
		summary.variants = vs;
	out("\n## Merge sorts on their worst-case inputs (Berney), int4 keys 0..n-1\n\n");
	out("Worst case built for the sort's own block sort (E, b) and passes (E, b); random = a random permutation "
		"of the same keys. ms (median).\n\n");
	out("| sort | input built for | n | random | worst case | slowdown |\n| --- | --- | --- | --- | --- | --- |\n");
	for (int sh = 0; sh < GS_NUM_MERGE_SHAPES; sh++)
	{
		int			b,
					e,
					pb,
					pe;
		size_t		n;
		bool		used = false;

		for (auto &v : vs)
			used |= v.shape == sh;
		if (!used)
			continue;
		use_variant({sh, GS_MERGE_SPLIT_FUSED, 0}, -1);
		bench_merge_tuning(GS_INT4, false, &b, &e, &pb, &pe);
		n = worst_size(e, b, target);
		{
			std::vector<uint32_t> worst(n), rnd(n);
			char		built[96];

			snprintf(built, sizeof(built), "sort E=%d b=%d, pass E=%d b=%d", e, b, pe, pb);
			if (gs_worst_case_fill_shape(worst.data(), n, e, b, pe, pb, 32, 1) != 0)
			{
				out("| shape %d | %s | %zu | generator failed | | |\n", sh, built, n);
				continue;
			}
			fprintf(stderr, "worst: input for shape %d built\n", sh);
			random_permutation(rnd.data(), n, 5);
			for (size_t v = 0; v < vs.size(); v++)
			{
				double		ms_r,
							ms_w;
				int			sel;
				bool		ok;

				if (vs[v].shape != sh)
					continue;
				use_variant(vs[v], -1);
				auto		run = [&]() { return sort_ours(GS_ALGO_MERGE, GS_INT4, n, false); };

				upload(rnd.data(), n, 4);
				ms_r = time_sort(run, n, 4, false, runs_for(n), &sel);
				upload(worst.data(), n, 4);
				ms_w = time_sort(run, n, 4, false, runs_for(n), &sel);
				ok = check_sorted(GS_INT4, n, sel, false);
				summary.unsorted |= !ok;
				summary.worst[v] = 100.0 * (ms_w / ms_r - 1);
				summary.have_worst[v] = true;
				out("| %s | %s | %zu | %.3f | %.3f | %+.1f%%%s |\n", variant_label(vs[v]).c_str(), built, n, ms_r,
					ms_w, summary.worst[v], ok ? "" : " UNSORTED");
			}
		}
	}
	use_default_variant();
	{
		size_t		n = worst_size(17, 256, target);
		std::vector<uint32_t> worst(n), rnd(n);
		double		ms_r,
					ms_w;
		int			sel;

		if (gs_worst_case_fill(worst.data(), n, 17, 256, 32, 1) == 0)
		{
			auto		run = [&]() { return sort_cub_merge(GS_INT4, n, false); };

			random_permutation(rnd.data(), n, 5);
			upload(rnd.data(), n, 4);
			ms_r = time_sort(run, n, 4, false, runs_for(n), &sel);
			upload(worst.data(), n, 4);
			ms_w = time_sort(run, n, 4, false, runs_for(n), &sel);
			out("| CUB DeviceMergeSort | CUB sm_90 (E=17, b=256) | %zu | %.3f | %.3f | %+.1f%% |\n", n, ms_r, ms_w,
				100.0 * (ms_w / ms_r - 1));
		}
	}
}

/* One line per variant: what the targets ask (ratios to CUB at 10^7 and 10^8, the worst-case slowdown). */
static void
print_summary(void)
{
	const size_t nv = summary.variants.size();

	if (nv == 0)
		return;
	out("\n## Summary (ratio = CUB time / ours: >= 1 is at or past CUB; worst = slowdown on its own worst case)\n\n");
	out("| variant |");
	for (size_t n : summary.sizes)
		out(" int4 %.0e |", (double) n);
	out(" argsort 1e7 | argsort 1e8 | float8 1e8 | worst |\n| --- |");
	for (size_t i = 0; i < summary.sizes.size() + 4; i++)
		out(" --- |");
	out("\n");
	for (size_t v = 0; v < nv; v++)
	{
		out("| %s |", variant_label(summary.variants[v]).c_str());
		for (size_t si = 0; si < summary.sizes.size(); si++)
			out(" %.3f |", v < summary.int4_ratio.size() ? summary.int4_ratio[v][si] : 0.0);
		for (size_t si = 0; si < 2; si++)
			out(" %.3f |", v < summary.argsort_ratio.size() && si < summary.argsort_ratio[v].size() ?
				summary.argsort_ratio[v][si] : 0.0);
		out(" %.3f |", v < summary.float8_ratio.size() && summary.float8_ratio[v].size() > 1 ?
			summary.float8_ratio[v][1] : 0.0);
		if (v < summary.have_worst.size() && summary.have_worst[v])
			out(" %+.1f%% |\n", summary.worst[v]);
		else
			out(" |\n");
	}
	out("\nAll outputs sorted: %s\n", summary.unsorted ? "NO" : "yes");
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
				pb,
				pe,
				e,
				b;
	bool		cub = strcmp(who, "cub") == 0;
	std::vector<uint32_t> keys(n);

	use_variant(merge_variants()[0], -1);
	bench_merge_tuning(GS_INT4, false, &ob, &oe, &pb, &pe);
	e = cub ? 17 : oe;
	b = cub ? 256 : ob;
	if (cub)
	{
		pe = e;
		pb = b;
	}
	if (strcmp(who, "bcf") == 0)
		bench_merge_use_bcf();
	n = worst_size(e, b, n);
	if (strcmp(input, "worst") == 0)
	{
		if (gs_worst_case_fill_shape(keys.data(), n, e, b, pe, pb, 32, 1) != 0)
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

/* Whether a section is in the comma-separated --only list (all when there is none). */
static bool
wanted(const char *only, const char *section)
{
	std::string list = only == NULL ? "" : std::string(",") + only + ",";

	return only == NULL || list.find(std::string(",") + section + ",") != std::string::npos;
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
			fprintf(stderr, "usage: %s [--out FILE] [--quick] [--only SECTION[,SECTION...]]  (small, merge, worst, quick)\n"
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

			bench_merge_tuning(GS_INT4, false, &ob, &oe, NULL, NULL);
			out("\nmerge (path) tuning for int4: b = %d threads, E = %d keys per thread; CUB DeviceMergeSort sm_90: "
				"b = 256, E = 17 (int4), 8 (float8)\n", ob, oe);
		}
	}
	if (wanted(only, "small"))
		section_small(quick);
	if (wanted(only, "merge"))
		section_merge(quick);
	if (wanted(only, "worst"))
		section_worst(quick);
	if (wanted(only, "quick"))
		section_quick(quick);
	print_summary();

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
