/*
 * bench_radix.cu: our GPU radix sort (gs_gpu_sort, GS_ALGO_RADIX) against
 * cub::DeviceRadixSort (all key bits) and thrust::sort, in one run on the
 * same device buffers.  CUDA events around each sort, the input restored
 * from a pristine device copy before each run (outside the timed region),
 * warm-up runs, then the median of at least 9.  Prints a markdown table
 * (Gkeys/s, ratio to CUB, the physical floor) and writes it to --out.
 *
 *   bench_radix [--out FILE] [--quick] [--tune] [--diag] [--diag-pairs] [--dist] [--check-ballot]
 *               [--profile ours|cub|ballot] [--max N]
 *
 * --tune, after the table: other policies of the onesweep pass
 * (radix_dispatch.cuh instantiated here) and ablations of its steps at 10^8
 * keys against CUB, and small sorts in one block against the onesweep
 * passes and CUB.  --diag: only those, then a per-phase trace of one pass;
 * --diag-pairs: only the argsort table and the argsort traces.  --dist: only
 * the table of every distribution (10^7 int4 keys and pairs against CUB).
 * --check-ballot: only the library with its fallback rank (a device that
 * fails the check of the atomic rank) against CUB, every distribution and
 * path; exits 1 on a mismatch.  Instruments (per-step traces, the
 * look-back ablation, bulk loads) come from radix_instrument.cuh.
 * --profile sorts 10^8 int4 keys twice with one implementation and stops
 * (for ncu).
 */
#include <algorithm>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cub/device/device_radix_sort.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include "gpusort.h"
#include "radix_policy.cuh"
#include "../test/distributions.h"
#include "bench_common.cuh"
#include "radix_instrument.cuh"

/* One implementation's sort of keys[0] (and values[0]); returns the buffer holding the result. */
typedef int (*sort_fn) (gs_type t, size_t n, bool pairs);

template <typename K>
static int
sort_cub_typed(size_t n, bool pairs)
{
	cub::DoubleBuffer<K> k((K *) buf.keys[0], (K *) buf.keys[1]);
	cub::DoubleBuffer<uint32_t> v(buf.values[0], buf.values[1]);
	size_t		bytes = 0;

	if (pairs)
	{
		CHECK(cub::DeviceRadixSort::SortPairs(NULL, bytes, k, v, (int) n, 0, (int) sizeof(K) * 8, stream));
		ensure_temp(bytes);
		CHECK(cub::DeviceRadixSort::SortPairs(buf.temp, bytes, k, v, (int) n, 0, (int) sizeof(K) * 8, stream));
	}
	else
	{
		CHECK(cub::DeviceRadixSort::SortKeys(NULL, bytes, k, (int) n, 0, (int) sizeof(K) * 8, stream));
		ensure_temp(bytes);
		CHECK(cub::DeviceRadixSort::SortKeys(buf.temp, bytes, k, (int) n, 0, (int) sizeof(K) * 8, stream));
	}
	return k.selector;
}

static int
sort_cub(gs_type t, size_t n, bool pairs)
{
	return t == GS_INT4 ? sort_cub_typed<int32_t>(n, pairs) : sort_cub_typed<double>(n, pairs);
}

template <typename K>
static int
sort_thrust_typed(size_t n, bool pairs)
{
	thrust::device_ptr<K> k((K *) buf.keys[0]);

	if (pairs)
		thrust::sort_by_key(thrust::cuda::par.on(stream), k, k + n, thrust::device_ptr<uint32_t>(buf.values[0]));
	else
		thrust::sort(thrust::cuda::par.on(stream), k, k + n);
	return 0;
}

static int
sort_thrust(gs_type t, size_t n, bool pairs)
{
	return t == GS_INT4 ? sort_thrust_typed<int32_t>(n, pairs) : sort_thrust_typed<double>(n, pairs);
}

/* Device-to-device copy bandwidth, counting bytes read plus bytes written. */
static double
copy_bandwidth(size_t bytes)
{
	cudaEvent_t start, stop;
	std::vector<float> ms;

	CHECK(cudaEventCreate(&start));
	CHECK(cudaEventCreate(&stop));
	for (int r = 0; r < 12; r++)
	{
		float		t;

		CHECK(cudaEventRecord(start, stream));
		CHECK(cudaMemcpyAsync(buf.keys[1], buf.keys[0], bytes, cudaMemcpyDeviceToDevice, stream));
		CHECK(cudaEventRecord(stop, stream));
		CHECK(cudaEventSynchronize(stop));
		CHECK(cudaEventElapsedTime(&t, start, stop));
		if (r >= 2)
			ms.push_back(t);
	}
	std::sort(ms.begin(), ms.end());
	return 2.0 * bytes / (ms[ms.size() / 2] * 1e-3);
}

/* How many 8-bit digits of the ordered keys vary: the passes our sort runs. */
static int
varying_digits(gs_type t, const void *in, size_t n)
{
	size_t		w = gs_type_size(t);
	bool		f = t == GS_FLOAT8 || t == GS_FLOAT4;
	uint64_t	first = 0,
				diff = 0;
	int			passes = 0;

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	k = w == 4 ? gs_to_key32(((const uint32_t *) in)[i], f, 0) :
			gs_to_key64(((const uint64_t *) in)[i], f, 0);

		if (i == 0)
			first = k;
		diff |= k ^ first;
	}
	for (size_t d = 0; d < w; d++)
		passes += ((diff >> (8 * d)) & 0xFF) != 0;
	return passes;
}

static __global__ void
count_mismatches(const unsigned char *a, const unsigned char *b, size_t bytes, unsigned long long *count)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < bytes; i += (size_t) gridDim.x * blockDim.x)
		if (a[i] != b[i])
			atomicAdd(count, 1ULL);
}

/* Bytes differing between a device buffer and a copy of our result. */
static unsigned long long
mismatches(const void *a, const void *b, size_t bytes)
{
	unsigned long long *d,
				h = 0;

	CHECK(cudaMalloc(&d, sizeof(*d)));
	CHECK(cudaMemset(d, 0, sizeof(*d)));
	CHECK(cudaStreamSynchronize(stream));
	count_mismatches<<<1024, 256, 0, stream>>>((const unsigned char *) a, (const unsigned char *) b, bytes, d);
	CHECK(cudaGetLastError());
	CHECK(cudaStreamSynchronize(stream));
	CHECK(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK(cudaFree(d));
	return h;
}

/* ------------------------------------------------------------------------
 * --tune: other policies of the onesweep pass, same dispatch, against CUB
 * in the same run; --trace: where a tile's time goes.
 * ------------------------------------------------------------------------ */

/*
 * A tuning variant: the library's policy for the width with another shape
 * and rank (BULK_: tiles loaded by bulk copies, radix_instrument.cuh); the
 * wrappers below change one more setting each.
 */
template <int THREADS_, int ITEMS_, int MIN_BLOCKS_, int RANK_ = GS_RADIX_RANK_ATOMIC, bool LATE_ = false,
		  bool PACK_ = false, bool BULK_ = false>
struct tune_policy : gs_radix_policy_sm90<4, false>
{
	static constexpr int THREADS = THREADS_;
	static constexpr int ITEMS = ITEMS_;
	static constexpr int MIN_BLOCKS = MIN_BLOCKS_;
	static constexpr int RANK = RANK_;
	static constexpr bool VALUES_LATE = LATE_;
	static constexpr bool PACK_RANKS = PACK_;
	typedef std::conditional_t<BULK_, bulk_load_instrument, gs_radix_no_instrument> instrument;
};

/* an ablation: no wait for earlier tiles' counts (the output is wrong) */
template <class P>
struct without_look_back : P
{
	typedef no_look_back_instrument instrument;
};

template <class P>
struct traced : P
{
	typedef trace_instrument instrument;
};

/* every warp ranks with atomics, also where all its keys share the digit */
template <class P>
struct without_warp_runs : P
{
	static constexpr bool WARP_RUNS = false;
};

template <class P, size_t S>
struct with_sync_min : P
{
	static constexpr size_t SYNC_MIN_KEYS = S;
};

template <class P, size_t S>
struct with_small_max : P
{
	static constexpr size_t SMALL_MAX = S;
};

/*
 * The 1.0 release's policy: 384 x 16, serial ballot rank, 8 histogram copies with the run cache (the
 * copies are now one per warp, not per lane; otherwise the 1.0 kernels).
 */
struct release_1_0_policy : tune_policy<384, 16, 2, GS_RADIX_RANK_BALLOT_SERIAL>
{
	static constexpr int HIST_COPIES = 8;
	static constexpr bool HIST_RUN_CACHE = true;
};

/*
 * A sort with policy P, its instrument, and its own rank (the probe is not
 * consulted: the bench runs on one device).
 */
template <typename K, bool PAIRS, class P>
static int
sort_policy(gs_type t, size_t n, bool pairs)
{
	typedef gs_radix_dispatch<K, PAIRS, P, typename instrument_of<P>::type> dispatch;
	gs_gpu_sort_args a;
	gs_error	err;
	int			device = 0,
				sms = 0;
	bool		ordered = false;

	(void) pairs;
	sort_args(&a, GS_ALGO_RADIX, t, n, PAIRS);
	dispatch::template sort_ranked<P::RANK>(&a, 0, 0, &err);
	ensure_temp(a.temp_bytes);
	a.temp = buf.temp;
	a.temp_bytes = buf.temp_bytes;
	if (gs_radix_device_info(&device, &sms, &ordered, stream, &err) != GS_OK ||
		dispatch::template sort_ranked<P::RANK>(&a, sms, device, &err) != GS_OK)
	{
		fprintf(stderr, "tune sort: %s\n", err.message);
		exit(1);
	}
	if (P::RANK == GS_RADIX_RANK_ATOMIC && !ordered)
		fprintf(stderr, "warning: this device failed the probe of the atomic rank\n");
	return a.result_selector;
}

typedef struct tune_variant
{
	const char *name;
	sort_fn		keys32;
	sort_fn		pairs32;
	sort_fn		keys64;
	sort_fn		pairs64;
	bool		exact;			/* false: an ablation, whose output is wrong by design */
} tune_variant;

#define TUNE(NAME, EXACT, ...) {NAME, \
	sort_policy<uint32_t, false, __VA_ARGS__ >, \
	sort_policy<uint32_t, true, __VA_ARGS__ >, \
	sort_policy<uint64_t, false, __VA_ARGS__ >, \
	sort_policy<uint64_t, true, __VA_ARGS__ >, EXACT}

#define SERIAL GS_RADIX_RANK_BALLOT_SERIAL
#define BALLOT GS_RADIX_RANK_BALLOT
#define ATOMIC GS_RADIX_RANK_ATOMIC
#define LIB4 gs_radix_policy_sm90<4, false>

static const tune_variant tune_variants[] = {
	TUNE("1.0 release: 384x16/2 serial ballot rank", true, release_1_0_policy),
	TUNE("384x12/2 atomic, late values, packed", true, tune_policy<384, 12, 2, ATOMIC, true, true>),
	TUNE("384x12/2 atomic, packed, bulk loads", true, tune_policy<384, 12, 2, ATOMIC, false, true, true>),
	TUNE("384x16/2 atomic, late values, packed", true, tune_policy<384, 16, 2, ATOMIC, true, true>),
	TUNE("384x16/2 atomic, packed, bulk loads", true, tune_policy<384, 16, 2, ATOMIC, false, true, true>),
	TUNE("384x20/2 atomic, late values, packed", true, tune_policy<384, 20, 2, ATOMIC, true, true>),
	TUNE("384x20/2 atomic, packed, bulk loads", true, tune_policy<384, 20, 2, ATOMIC, false, true, true>),
	TUNE("512x16/2 atomic, late values, packed", true, tune_policy<512, 16, 2, ATOMIC, true, true>),
	TUNE("512x16/2 atomic, packed, bulk loads", true, tune_policy<512, 16, 2, ATOMIC, false, true, true>),
	TUNE("384x20/1 atomic, late values, packed", true, tune_policy<384, 20, 1, ATOMIC, true, true>),
	TUNE("384x30/1 atomic, late values, packed", true, tune_policy<384, 30, 1, ATOMIC, true, true>),
	TUNE("512x16/1 atomic, late values, packed", true, tune_policy<512, 16, 1, ATOMIC, true, true>),
	TUNE("512x24/1 atomic, late values, packed", true, tune_policy<512, 24, 1, ATOMIC, true, true>),
	TUNE("512x16/2 (the int4 keys policy) without the warp-runs rank", true, without_warp_runs<LIB4>),
	TUNE("ablation: 384x20/2 atomic, late values, packed, no look-back wait", false,
		 without_look_back<tune_policy<384, 20, 2, ATOMIC, true, true> >),
};

/*
 * Argsort variants: one policy for 32-bit keys, one for 64-bit keys, each
 * with its values (TUNE_OWN: one shape for both, one block per SM, values
 * loaded late).  And 64-bit keys alone.
 */
#define TUNE_PAIRS(NAME, P32, P64) {NAME, NULL, sort_policy<uint32_t, true, P32>, \
	NULL, sort_policy<uint64_t, true, P64>, true}
#define TUNE_OWN(NAME, T, I) {NAME, NULL, sort_policy<uint32_t, true, tune_policy<T, I, 1, ATOMIC, true, true> >, \
	NULL, sort_policy<uint64_t, true, tune_policy<T, I, 1, ATOMIC, true, true> >, true}
#define TUNE_KEYS64(NAME, T, I, B) {NAME, NULL, NULL, \
	sort_policy<uint64_t, false, tune_policy<T, I, B, ATOMIC, true, true> >, NULL, true}

typedef gs_radix_policy_sm90<4, true> lib_pairs32;
typedef gs_radix_policy_sm90<8, true> lib_pairs64;
typedef gs_radix_policy_sm90_two_blocks<4, true> lib_small_pairs32;
/* 64-bit pairs before one block per SM: 384 x 20, two blocks per SM, bulk loads */
typedef tune_policy<384, 20, 2, ATOMIC, false, true, true> two_blocks_pairs64;

static const tune_variant pair_variants[] = {
	TUNE_PAIRS("library from 2^21 keys: 384x40/1 (64-bit: 384x30/1)", lib_pairs32, lib_pairs64),
	TUNE_PAIRS("library below 2^21 keys: 384x20/2 (64-bit: 384x30/1)", lib_small_pairs32, lib_pairs64),
	TUNE_PAIRS("before: 384x20/2 (64-bit: bulk loads)", lib_small_pairs32, two_blocks_pairs64),
	TUNE_OWN("384x24/1", 384, 24),
	TUNE_OWN("384x30/1", 384, 30),
	TUNE_OWN("384x36/1", 384, 36),
	TUNE_OWN("384x40/1", 384, 40),
	TUNE_OWN("512x24/1", 512, 24),
	TUNE_OWN("512x30/1", 512, 30),
};

static const tune_variant keys64_variants[] = {
	{"library from 2^21 keys: 512x28/1", NULL, NULL, sort_policy<uint64_t, false, gs_radix_policy_sm90<8, false> >,
	NULL, true},
	{"library below 2^21 keys: 384x16/2", NULL, NULL,
	sort_policy<uint64_t, false, gs_radix_policy_sm90_two_blocks<8, false> >, NULL, true},
	TUNE_KEYS64("384x30/1", 384, 30, 1),
	TUNE_KEYS64("512x20/1", 512, 20, 1),
	TUNE_KEYS64("512x24/1", 512, 24, 1),
	TUNE_KEYS64("512x32/1", 512, 32, 1),
};

/* Small sorts: one block (the default up to 8192 keys) against the onesweep passes. */
static const tune_variant small_variants[] = {
	TUNE("one block up to 8192", true, LIB4),
	TUNE("onesweep passes", true, with_small_max<LIB4, 0>),
};

/* One column of a tuning table. */
typedef struct tune_case
{
	const char *name;
	size_t		n;
	gs_type		t;
	bool		pairs;
	void	   *host;
} tune_case;

/*
 * A table of median ms (of 9) per variant and case, with CUB's time over
 * ours; each exact variant's keys (and values) must equal CUB's.
 */
template <size_t NC, size_t NV>
static void
tune_table(const char *title, const tune_case (&cases)[NC], const tune_variant (&variants)[NV])
{
	double		cub[NC];
	int			sel;

	printf("\n## %s (median ms of 9, uniform keys unless said; ratio = CUB's time / ours, same run)\n\n| policy |", title);
	for (const tune_case &c : cases)
		printf(" %s |", c.name);
	printf(" same as CUB |\n| --- |");
	for (size_t c = 0; c < NC; c++)
		printf(" ---: |");
	printf(" --- |\n| CUB DeviceRadixSort |");
	for (size_t c = 0; c < NC; c++)
	{
		CHECK(cudaMemcpy(buf.pristine, cases[c].host, cases[c].n * gs_type_size(cases[c].t), cudaMemcpyHostToDevice));
		cub[c] = time_sort([&]() { return sort_cub(cases[c].t, cases[c].n, cases[c].pairs); },
						   cases[c].n, gs_type_size(cases[c].t), cases[c].pairs, 9, &sel);
		printf(" %.3f |", cub[c]);
	}
	printf(" |\n");
	fflush(stdout);
	for (const tune_variant &v : variants)
	{
		bool		same = true;

		printf("| %s |", v.name);
		for (size_t c = 0; c < NC; c++)
		{
			size_t		n = cases[c].n,
						w = gs_type_size(cases[c].t);
			bool		pairs = cases[c].pairs;
			sort_fn		f = cases[c].t == GS_FLOAT8 ? (pairs ? v.pairs64 : v.keys64) : pairs ? v.pairs32 : v.keys32;
			int			cub_sel;
			double		ms;
			unsigned char *ours_copy;

			CHECK(cudaMemcpy(buf.pristine, cases[c].host, n * w, cudaMemcpyHostToDevice));
			ms = time_sort([&]() { return f(cases[c].t, n, pairs); }, n, w, pairs, 9, &sel);
			printf(" %.3f (%.2f) |", ms, cub[c] / ms);
			fflush(stdout);
			if (!v.exact)
				continue;
			CHECK(cudaMalloc(&ours_copy, n * (w + 4)));
			CHECK(cudaMemcpy(ours_copy, buf.keys[sel], n * w, cudaMemcpyDeviceToDevice));
			if (pairs)
				CHECK(cudaMemcpy(ours_copy + n * w, buf.values[sel], n * 4, cudaMemcpyDeviceToDevice));
			restore(n, w, pairs);
			cub_sel = sort_cub(cases[c].t, n, pairs);
			same = same && mismatches(ours_copy, buf.keys[cub_sel], n * w) == 0 &&
				(!pairs || mismatches(ours_copy + n * w, buf.values[cub_sel], n * 4) == 0);
			CHECK(cudaFree(ours_copy));
		}
		printf(" %s |\n", !v.exact ? "(ablation)" : same ? "yes" : "NO");
		fflush(stdout);
	}
}

static void
tune(void *host_int4, void *host_float8, void *host_narrow, size_t n, bool pairs_only)
{
	const tune_case cases[] = {
		{"int4 keys 10^8", n, GS_INT4, false, host_int4},
		{"int4 pairs 10^8", n, GS_INT4, true, host_int4},
		{"float8 keys 5x10^7", n / 2, GS_FLOAT8, false, host_float8},
		{"int4 keys 10^7", n / 10, GS_INT4, false, host_int4},
		{"int4 [0,10^6) 10^7", n / 10, GS_INT4, false, host_narrow},
		{"float8 pairs 5x10^7", n / 2, GS_FLOAT8, true, host_float8},
	};
	const tune_case pair_cases[] = {
		{"int4 pairs 10^6", n / 100, GS_INT4, true, host_int4},
		{"int4 pairs 10^7", n / 10, GS_INT4, true, host_int4},
		{"int4 pairs 10^8", n, GS_INT4, true, host_int4},
		{"float8 pairs 10^6", n / 100, GS_FLOAT8, true, host_float8},
		{"float8 pairs 10^7", n / 10, GS_FLOAT8, true, host_float8},
		{"float8 pairs 5x10^7", n / 2, GS_FLOAT8, true, host_float8},
	};

	const tune_case keys64_cases[] = {
		{"float8 keys 10^6", n / 100, GS_FLOAT8, false, host_float8},
		{"float8 keys 10^7", n / 10, GS_FLOAT8, false, host_float8},
		{"float8 keys 5x10^7", n / 2, GS_FLOAT8, false, host_float8},
	};

	if (!pairs_only)
		tune_table("Tuning", cases, tune_variants);
	tune_table("Tuning with values (argsort)", pair_cases, pair_variants);
	tune_table("Tuning of 64-bit keys", keys64_cases, keys64_variants);
}

/*
 * 10^7 int4 keys, and pairs, of every distribution: the library against
 * CUB (checked against it), and the library's policy without the
 * warp-runs rank.
 */
static void
distributions(size_t n)
{
	std::vector<uint32_t> host(n);
	sort_fn		without[2] = {sort_policy<uint32_t, false, without_warp_runs<LIB4> >,
		sort_policy<uint32_t, true, without_warp_runs<lib_pairs32> >};

	printf("\n## %zu int4 by distribution (median ms of 9; ratio = CUB's time / ours)\n\n"
		   "| distribution | mode | CUB | ours | ratio | ours without the warp-runs rank | same as CUB |\n"
		   "| --- | --- | ---: | ---: | ---: | ---: | --- |\n", n);
	for (int d = 0; d < GS_NUM_DISTS; d++)
	{
		fill_parallel(GS_INT4, (gs_dist) d, host.data(), n);
		CHECK(cudaMemcpy(buf.pristine, host.data(), n * 4, cudaMemcpyHostToDevice));
		for (int pairs = 0; pairs < 2; pairs++)
		{
			int			sel, cub_sel;
			double		cub, ours, alt;
			bool		same;
			unsigned char *copy;

			cub = time_sort([&]() { return sort_cub(GS_INT4, n, pairs); }, n, 4, pairs, 9, &sel);
			alt = time_sort([&]() { return without[pairs](GS_INT4, n, pairs); }, n, 4, pairs, 9, &sel);
			ours = time_sort([&]() { return sort_ours(GS_ALGO_RADIX, GS_INT4, n, pairs); }, n, 4, pairs, 9, &sel);
			CHECK(cudaMalloc(&copy, n * 8));
			CHECK(cudaMemcpy(copy, buf.keys[sel], n * 4, cudaMemcpyDeviceToDevice));
			if (pairs)
				CHECK(cudaMemcpy(copy + n * 4, buf.values[sel], n * 4, cudaMemcpyDeviceToDevice));
			restore(n, 4, pairs);
			cub_sel = sort_cub(GS_INT4, n, pairs);
			same = mismatches(copy, buf.keys[cub_sel], n * 4) == 0 &&
				(!pairs || mismatches(copy + n * 4, buf.values[cub_sel], n * 4) == 0);
			CHECK(cudaFree(copy));
			printf("| %s | %s | %.3f | %.3f | %.2f | %.3f | %s |\n", gs_dist_names[d], pairs ? "pairs" : "keys", cub, ours,
				   cub / ours, alt, same ? "yes" : "NO");
			fflush(stdout);
		}
	}
}

static void
small_sizes(void *host_int4, void *host_float8)
{
	printf("\n## Small sorts (median us of 25, uniform keys)\n\n");
	printf("| n | keys | ours, one block | ours, onesweep | CUB | one block / CUB time |\n"
		   "| ---: | --- | ---: | ---: | ---: | ---: |\n");
	for (size_t n : {(size_t) 1000, (size_t) 2048, (size_t) 4096, (size_t) 8192, (size_t) 10000})
		for (int c = 0; c < 3; c++)
		{
			gs_type		t = c == 2 ? GS_FLOAT8 : GS_INT4;
			bool		pairs = c == 1;
			size_t		w = gs_type_size(t);
			int			sel;
			double		ms[3];

			CHECK(cudaMemcpy(buf.pristine, t == GS_INT4 ? host_int4 : host_float8, n * w, cudaMemcpyHostToDevice));
			for (int v = 0; v < 2; v++)
			{
				const tune_variant &tv = small_variants[v];
				sort_fn		f = t == GS_FLOAT8 ? tv.keys64 : pairs ? tv.pairs32 : tv.keys32;

				ms[v] = time_sort([&]() { return f(t, n, pairs); }, n, w, pairs, 25, &sel);
			}
			ms[2] = time_sort([&]() { return sort_cub(t, n, pairs); }, n, w, pairs, 25, &sel);
			printf("| %zu | %s %s | %.1f | %.1f | %.1f | %.2f |\n", n, gs_type_name(t), pairs ? "pairs" : "keys",
				   ms[0] * 1e3, ms[1] * 1e3, ms[2] * 1e3, ms[0] / ms[2]);
			fflush(stdout);
		}
}

/*
 * --trace: one sort of n int4 keys (or pairs) with stamps (radix_agent.cuh,
 * radix_instrument.cuh) in its pass over digit 1 (the second pass of uniform keys); prints each phase's median and
 * mean cycles per tile, the look-back round trips, and how far apart tiles
 * start.
 */
template <bool PAIRS, class P>
static void
trace_policy(const char *name, size_t n)
{
	typedef gs_radix_dispatch<uint32_t, PAIRS, P, trace_instrument> D;
	size_t		tiles = (n + D::TILE - 1) / D::TILE;
	std::vector<unsigned long long> h(tiles * TRACE_WORDS);
	unsigned long long *d;
	int			sel;
	static const char *phase[] = {"tile number", "load + warp histograms", "publish + scan",
		"rank (thread 0's warp)", "look-back (digit 0)", "wait for all digits", "scatter", "whole tile"};

	CHECK(cudaMalloc(&d, h.size() * sizeof(h[0])));
	CHECK(cudaMemset(d, 0, h.size() * sizeof(h[0])));
	time_sort([&]() { return sort_policy<uint32_t, PAIRS, P>(GS_INT4, n, PAIRS); }, n, 4, PAIRS, 3, &sel);
	CHECK(cudaMemcpyToSymbol(trace_out, &d, sizeof(d)));
	{
		int			digit = 1;

		CHECK(cudaMemcpyToSymbol(trace_digit, &digit, sizeof(digit)));
	}
	restore(n, 4, PAIRS);
	sort_policy<uint32_t, PAIRS, P>(GS_INT4, n, PAIRS);
	CHECK(cudaStreamSynchronize(stream));
	{
		unsigned long long *none = NULL;

		CHECK(cudaMemcpyToSymbol(trace_out, &none, sizeof(none)));
	}
	CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
	CHECK(cudaFree(d));

	printf("\n## Trace of the second pass, %s, %zu int4 %s (%zu tiles; cycles per tile)\n\n", name, n,
		   PAIRS ? "pairs" : "keys", tiles);
	printf("| phase | median | mean |\n| --- | ---: | ---: |\n");
	for (int ph = 0; ph < 8; ph++)
	{
		int			from = ph == 7 ? GS_RADIX_STEP_START : ph;
		int			to = ph == 7 ? GS_RADIX_STEP_END : ph + 1;
		std::vector<double> v;
		double		sum = 0;

		for (size_t t = 0; t < tiles; t++)
		{
			double		x = (double) (long long) (h[t * TRACE_WORDS + to] - h[t * TRACE_WORDS + from]);

			v.push_back(x);
			sum += x;
		}
		std::sort(v.begin(), v.end());
		printf("| %s | %.0f | %.0f |\n", phase[ph], v[v.size() / 2], sum / v.size());
	}

	std::vector<double> reads, starts, life;

	for (size_t t = 0; t < tiles; t++)
	{
		reads.push_back((double) h[t * TRACE_WORDS + TRACE_READS]);
		starts.push_back((double) h[t * TRACE_WORDS + TRACE_START_NS]);
		life.push_back((double) (h[t * TRACE_WORDS + TRACE_END_NS] -
								 h[t * TRACE_WORDS + TRACE_START_NS]));
	}
	std::sort(reads.begin(), reads.end());
	std::sort(starts.begin(), starts.end());
	std::sort(life.begin(), life.end());
	printf("\nlook-back round trips of digit 0: median %.0f, 90th percentile %.0f, max %.0f\n",
		   reads[reads.size() / 2], reads[reads.size() * 9 / 10], reads.back());
	printf("pass from first start to last start: %.1f us; tiles start %.1f ns apart; a tile lives %.2f us (median, globaltimer)\n",
		   (starts.back() - starts.front()) / 1e3, (starts.back() - starts.front()) / (tiles - 1),
		   life[life.size() / 2] / 1e3);
}

/*
 * The library's sort (gs_radix_sort_sm90: the policy by width and size)
 * with its fallback rank, as on a device that fails the check of the
 * atomic rank.
 */
template <typename K, bool PAIRS>
static int
sort_fallback_rank(gs_type t, size_t n, bool pairs)
{
	gs_gpu_sort_args a;
	gs_error	err;
	int			device = 0,
				sms = 0;
	bool		ordered = false;

	(void) pairs;
	sort_args(&a, GS_ALGO_RADIX, t, n, PAIRS);
	gs_radix_sort_sm90<K, PAIRS>(&a, 0, 0, false, &err);
	ensure_temp(a.temp_bytes);
	a.temp = buf.temp;
	a.temp_bytes = buf.temp_bytes;
	if (gs_radix_device_info(&device, &sms, &ordered, stream, &err) != GS_OK ||
		gs_radix_sort_sm90<K, PAIRS>(&a, sms, device, false, &err) != GS_OK)
	{
		fprintf(stderr, "fallback rank sort: %s\n", err.message);
		exit(1);
	}
	return a.result_selector;
}

/*
 * --check-ballot: the library with its fallback rank against the library's
 * own sort (the rank this device runs, which test_gpu_sort checks against
 * the CPU sort), keys and values byte for byte: int4 and float8 keys and
 * pairs of every distribution, at sizes on both sides of each path's limit
 * (one block, the device plan, two blocks per SM, the large tiles).  Not
 * against CUB: the library orders floats as PostgreSQL does (every NaN
 * equal and last, -0 equal to 0), CUB by their bits.  Returns the number of
 * mismatches.
 */
static int
check_fallback_rank(size_t max_n)
{
	const size_t sizes[] = {2, 1000, 1025, 4097, 8193, 100003, ((size_t) 1 << 20) + 1, ((size_t) 1 << 21) + 1,
		10000000};
	const sort_fn ours[2][2] = {{sort_fallback_rank<uint32_t, false>, sort_fallback_rank<uint32_t, true>},
		{sort_fallback_rank<uint64_t, false>, sort_fallback_rank<uint64_t, true>}};
	int			checks = 0,
				bad = 0;

	for (int w = 0; w < 2; w++)
		for (int d = 0; d < GS_NUM_DISTS; d++)
		{
			gs_type		t = w == 0 ? GS_INT4 : GS_FLOAT8;
			size_t		cap = std::min(max_n / 2, sizes[8]);
			std::vector<uint64_t> host(cap);

			fill_parallel(t, (gs_dist) d, host.data(), cap);
			CHECK(cudaMemcpy(buf.pristine, host.data(), cap * gs_type_size(t), cudaMemcpyHostToDevice));
			for (size_t n : sizes)
				for (int pairs = 0; pairs < 2 && n <= cap; pairs++)
				{
					size_t		kw = gs_type_size(t);
					unsigned char *copy;
					int			sel,
								ref_sel;
					bool		same;

					restore(n, kw, pairs);
					sel = ours[w][pairs](t, n, pairs);
					CHECK(cudaMalloc(&copy, n * (kw + 4)));
					CHECK(cudaMemcpyAsync(copy, buf.keys[sel], n * kw, cudaMemcpyDeviceToDevice, stream));
					if (pairs)
						CHECK(cudaMemcpyAsync(copy + n * kw, buf.values[sel], n * 4, cudaMemcpyDeviceToDevice, stream));
					restore(n, kw, pairs);
					ref_sel = sort_ours(GS_ALGO_RADIX, t, n, pairs);
					same = mismatches(copy, buf.keys[ref_sel], n * kw) == 0 &&
						(!pairs || mismatches(copy + n * kw, buf.values[ref_sel], n * 4) == 0);
					CHECK(cudaFree(copy));
					checks++;
					if (!same)
					{
						bad++;
						printf("DIFFERS from the library's sort: %s %s %s n=%zu\n", gs_type_name(t), gs_dist_names[d],
							   pairs ? "pairs" : "keys", n);
					}
				}
		}
	printf("fallback rank against the library's sort: %d passed, %d failed\n", checks - bad, bad);
	return bad;
}

/*
 * --profile ours|cub|ballot: two sorts of 10^8 int4 uniform keys by one
 * implementation, and nothing else (for ncu, e.g. ncu -k regex:onesweep
 * --launch-skip 4 --launch-count 1).
 */
static void
profile(const char *which, void *host_int4, size_t n)
{
	CHECK(cudaMemcpy(buf.pristine, host_int4, n * 4, cudaMemcpyHostToDevice));
	for (int r = 0; r < 2; r++)
	{
		restore(n, 4, false);
		if (strcmp(which, "cub") == 0)
			sort_cub(GS_INT4, n, false);
		else if (strcmp(which, "ballot") == 0)
			sort_policy<uint32_t, false, tune_policy<512, 16, 2, BALLOT, true, true> >(GS_INT4, n, false);
		else
			sort_ours(GS_ALGO_RADIX, GS_INT4, n, false);
		CHECK(cudaStreamSynchronize(stream));
	}
}

/* ------------------------------------------------------------------------ */

typedef struct options
{
	const char *out_path;
	bool		quick,
				tune,
				diag,
				dist,
				pairs_only,
				check_ballot;
	const char *profile;
	size_t		max_n;
} options;

static void
parse_options(int argc, char **argv, options *o)
{
	memset(o, 0, sizeof(*o));
	o->max_n = 260000000;
	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			o->out_path = argv[++i];
		else if (strcmp(argv[i], "--quick") == 0)
			o->quick = true;
		else if (strcmp(argv[i], "--tune") == 0)
			o->tune = true;
		else if (strcmp(argv[i], "--diag") == 0)
			o->diag = true;
		else if (strcmp(argv[i], "--diag-pairs") == 0)
			o->diag = o->pairs_only = true;
		else if (strcmp(argv[i], "--dist") == 0)
			o->dist = true;
		else if (strcmp(argv[i], "--check-ballot") == 0)
			o->check_ballot = true;
		else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
			o->profile = argv[++i];
		else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
			o->max_n = strtoull(argv[++i], NULL, 10);
		else
		{
			fprintf(stderr, "usage: %s [--out FILE] [--quick] [--tune] [--diag] [--diag-pairs] [--dist] "
					"[--check-ballot] [--profile ours|cub|ballot] [--max N]\n", argv[0]);
			exit(2);
		}
	}
	if (o->quick)
		o->max_n = std::min(o->max_n, (size_t) 10000000);
}

/* one key buffer holds max_n int4 or max_n / 2 float8 */
static void
alloc_buffers(size_t max_n)
{
	std::vector<uint32_t> iota(max_n);

	buf.bytes = max_n * 4;
	CHECK(cudaMalloc(&buf.pristine, buf.bytes));
	CHECK(cudaMalloc(&buf.keys[0], buf.bytes));
	CHECK(cudaMalloc(&buf.keys[1], buf.bytes));
	CHECK(cudaMalloc(&buf.iota, max_n * 4));
	CHECK(cudaMalloc(&buf.values[0], max_n * 4));
	CHECK(cudaMalloc(&buf.values[1], max_n * 4));
	for (size_t i = 0; i < max_n; i++)
		iota[i] = (uint32_t) i;
	CHECK(cudaMemcpy(buf.iota, iota.data(), max_n * 4, cudaMemcpyHostToDevice));
}

/* --diag, --diag-pairs: the tuning tables, the distributions, small sorts and traces at 10^8 keys */
static void
diagnose(size_t max_n, bool pairs_only)
{
	size_t		n = std::min((size_t) 100000000, max_n);
	void	   *host_int4 = malloc(n * 4),
			   *host_narrow = malloc(n / 10 * 4),
			   *host_float8 = malloc(n / 2 * 8);

	fill_parallel(GS_INT4, GS_DIST_UNIFORM, host_int4, n);
	fill_parallel(GS_FLOAT8, GS_DIST_UNIFORM, host_float8, n / 2);
	fill_parallel(GS_INT4, GS_DIST_NARROW, host_narrow, n / 10);
	tune(host_int4, host_float8, host_narrow, n, pairs_only);
	distributions(n / 10);
	if (!pairs_only)
		small_sizes(host_int4, host_float8);
	CHECK(cudaMemcpy(buf.pristine, host_int4, n * 4, cudaMemcpyHostToDevice));
	if (!pairs_only)
		trace_policy<false, traced<LIB4> >("the int4 keys policy", n);
	trace_policy<true, traced<gs_radix_policy_sm90<4, true> > >("the int4 pairs policy", n);
	trace_policy<true, traced<lib_small_pairs32> >("the int4 pairs policy with two blocks per SM", n);
}

/* the table's title, setting and header */
static std::string
table_head(double bw)
{
	cudaDeviceProp prop;
	time_t		now = time(NULL);
	char		date[32];
	char		line[512];
	std::string table;

	CHECK(cudaGetDeviceProperties(&prop, 0));
	strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
	snprintf(line, sizeof(line),
			 "# GPU radix sort: gpusort vs CUB vs thrust\n\n"
			 "GPU: %s (%d SMs, sm_%d%d, %.1f GiB), %s, CUDA runtime %d.\n"
			 "Device-to-device copy bandwidth (bytes read + written): %.2f TB/s.\n\n",
			 prop.name, prop.multiProcessorCount, prop.major, prop.minor,
			 prop.totalGlobalMem / 1073741824.0, date, CUDART_VERSION / 1000, bw / 1e12);
	table += line;
	table += "Median of 9+ runs after 2 warm-ups, CUDA events, input restored from a pristine device copy\n"
		"outside the timed region. CUB: DeviceRadixSort SortKeys/SortPairs with DoubleBuffer over all key\n"
		"bits; thrust: sort / sort_by_key (its own temporary allocation included). ratio = our Gkeys/s over\n"
		"CUB's. floor: bytes our passes must move (histogram read + each pass's read and write) over the copy\n"
		"bandwidth; 'of floor' = floor time / our time.\n\n"
		"| keys | mode | n | passes | ours ms | ours Gkeys/s | CUB Gkeys/s | thrust Gkeys/s | ratio | floor ms | of floor | check |\n"
		"| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n";
	return table;
}

/* one row of the table: ours, CUB (whose result ours must equal) and thrust on host's first n keys */
static std::string
table_row(const char *name, gs_type t, const void *host, size_t n, bool pairs, double bw)
{
	size_t		w = gs_type_size(t);
	int			runs = n <= 10000000 ? 25 : 9;
	int			sel_ours, sel_cub, sel_thrust;
	double		ours, cub, thr;
	int			passes = varying_digits(t, host, n);
	double		floor_bytes = (double) n * (w + passes * 2.0 * (w + (pairs ? 4 : 0)));
	unsigned long long bad;
	void	   *ours_copy;
	char		line[512];

	ours = time_sort([&]() { return sort_ours(GS_ALGO_RADIX, t, n, pairs); }, n, w, pairs, runs, &sel_ours);
	/* keep our result for the check against CUB's (both are stable) */
	CHECK(cudaMalloc(&ours_copy, n * (w + 4)));
	CHECK(cudaMemcpy(ours_copy, buf.keys[sel_ours], n * w, cudaMemcpyDeviceToDevice));
	if (pairs)
		CHECK(cudaMemcpy((char *) ours_copy + n * w, buf.values[sel_ours], n * 4, cudaMemcpyDeviceToDevice));
	cub = time_sort([&]() { return sort_cub(t, n, pairs); }, n, w, pairs, runs, &sel_cub);
	bad = mismatches(ours_copy, buf.keys[sel_cub], n * w);
	if (pairs)
		bad += mismatches((char *) ours_copy + n * w, buf.values[sel_cub], n * 4);
	CHECK(cudaFree(ours_copy));
	thr = time_sort([&]() { return sort_thrust(t, n, pairs); }, n, w, pairs, runs, &sel_thrust);
	snprintf(line, sizeof(line),
			 "| %s | %s | %zu | %d | %.4f | %.2f | %.2f | %.2f | %.2f | %.4f | %.0f%% | %s |\n",
			 name, pairs ? "pairs" : "keys", n, passes, ours, n / ours / 1e6, n / cub / 1e6,
			 n / thr / 1e6, cub / ours, floor_bytes / bw * 1e3,
			 100.0 * floor_bytes / bw * 1e3 / ours, bad ? "DIFFERS from CUB" : "same as CUB");
	printf("%s", line);
	fflush(stdout);
	return line;
}

static void
write_table(const char *path, const std::string &table)
{
	FILE	   *f = fopen(path, "w");

	if (f == NULL)
	{
		perror(path);
		exit(1);
	}
	fputs(table.c_str(), f);
	fclose(f);
}

int
main(int argc, char **argv)
{
	options		o;
	std::string table;
	const struct
	{
		gs_type		t;
		gs_dist		d;
		const char *name;
	}			configs[] = {
		{GS_INT4, GS_DIST_UNIFORM, "int4 uniform"},
		{GS_FLOAT8, GS_DIST_UNIFORM, "float8 uniform"},
		{GS_INT4, GS_DIST_NARROW, "int4 [0,10^6)"},
	};
	const size_t sizes[] = {1000, 10000, 100000, 1000000, 10000000, 100000000, 260000000};
	/* each configuration's input, kept for --tune */
	void	   *host[3] = {NULL, NULL, NULL};

	parse_options(argc, argv, &o);
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	alloc_buffers(o.max_n);
	if (o.check_ballot)
		return check_fallback_rank(o.max_n) == 0 ? 0 : 1;
	if (o.dist)
	{
		distributions(std::min((size_t) 10000000, o.max_n / 2));
		return 0;
	}
	if (o.profile != NULL)
	{
		size_t		n = std::min((size_t) 100000000, o.max_n);
		void	   *host_int4 = malloc(n * 4);

		fill_parallel(GS_INT4, GS_DIST_UNIFORM, host_int4, n);
		profile(o.profile, host_int4, n);
		return 0;
	}
	if (o.diag)
	{
		diagnose(o.max_n, o.pairs_only);
		return 0;
	}

	double		bw = copy_bandwidth(buf.bytes / 2);

	table = table_head(bw);
	printf("%s", table.c_str());
	fflush(stdout);
	for (int c = 0; c < 3; c++)
	{
		size_t		w = gs_type_size(configs[c].t);
		size_t		cap = buf.bytes / w;

		host[c] = malloc(cap * w);
		fill_parallel(configs[c].t, configs[c].d, host[c], cap);
		CHECK(cudaMemcpy(buf.pristine, host[c], cap * w, cudaMemcpyHostToDevice));

		/* the sizes that fit, then the largest that fits (1.3e8 float8 is 1 GB) */
		std::vector<size_t> ns;

		for (size_t n : sizes)
			if (n <= cap)
				ns.push_back(n);
		if (ns.back() < cap && cap <= sizes[6])
			ns.push_back(cap);
		for (int pairs = 0; pairs < 2; pairs++)
			for (size_t n : ns)
				table += table_row(configs[c].name, configs[c].t, host[c], n, pairs, bw);
	}
	if (o.out_path != NULL)
		write_table(o.out_path, table);
	if (o.tune)
	{
		tune(host[0], host[1], host[2], std::min((size_t) 100000000, o.max_n / 2), false);
		distributions(std::min((size_t) 10000000, o.max_n / 2));
		small_sizes(host[0], host[1]);
	}
	return 0;
}
