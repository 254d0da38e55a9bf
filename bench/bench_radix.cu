/*
 * bench_radix.cu: our GPU radix sort (gs_gpu_sort, GS_ALGO_RADIX) against
 * cub::DeviceRadixSort (all key bits) and thrust::sort, in one run on the
 * same device buffers.  CUDA events around each sort, the input restored
 * from a pristine device copy before each run (outside the timed region),
 * warm-up runs, then the median of at least 9.  Prints a markdown table
 * (Gkeys/s, ratio to CUB, the physical floor) and writes it to --out.
 *
 *   bench_radix [--out FILE] [--quick] [--tune] [--profile] [--max N]
 *
 * --tune times other tile shapes of the onesweep pass (radix_dispatch.cuh
 * instantiated here) at 10^8 keys, to choose the sm_90 policy, and the two
 * ways of planning small sorts.  --profile sorts twice and stops (for ncu).
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
#include "radix_dispatch.cuh"
#include "../test/distributions.h"
#include "bench_common.cuh"

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
 * --tune: other policies of the onesweep pass, same dispatch.
 * ------------------------------------------------------------------------ */

template <int THREADS_, int ITEMS_, int MIN_BLOCKS_, int WINDOW_ = 8, bool MATCH_ANY_ = false,
		  size_t SYNC_MIN_ = 1 << 20>
struct tune_policy
{
	static constexpr int RADIX_BITS = 8;
	static constexpr int THREADS = THREADS_;
	static constexpr int ITEMS = ITEMS_;
	static constexpr int MIN_BLOCKS = MIN_BLOCKS_;
	static constexpr bool USE_MATCH_ANY = MATCH_ANY_;
	static constexpr int LOOKBACK_WINDOW = WINDOW_;
	static constexpr size_t SYNC_MIN_KEYS = SYNC_MIN_;
	static constexpr int HIST_THREADS = 256;
	static constexpr int HIST_BLOCKS_PER_SM = 4;
	static constexpr int HIST_UNROLL = 4;
	static constexpr int HIST_COPIES = 8;
};

template <typename K, bool PAIRS, class P>
static int
sort_policy(gs_type t, size_t n, bool pairs)
{
	gs_gpu_sort_args a;
	gs_error	err;
	int			device = 0,
				sms = 0;

	(void) pairs;
	sort_args(&a, GS_ALGO_RADIX, t, n, PAIRS);
	gs_radix_dispatch<K, PAIRS, P>::sort(&a, 0, 0, &err);
	ensure_temp(a.temp_bytes);
	a.temp = buf.temp;
	a.temp_bytes = buf.temp_bytes;
	if (gs_radix_device_info(&device, &sms, &err) != GS_OK ||
		gs_radix_dispatch<K, PAIRS, P>::sort(&a, sms, device, &err) != GS_OK)
	{
		fprintf(stderr, "tune sort: %s\n", err.message);
		exit(1);
	}
	return a.result_selector;
}

typedef struct tune_variant
{
	const char *name;
	sort_fn		keys32;
	sort_fn		pairs32;
	sort_fn		keys64;
} tune_variant;

#define TUNE(NAME, ...) {NAME, \
	sort_policy<uint32_t, false, tune_policy<__VA_ARGS__> >, \
	sort_policy<uint32_t, true, tune_policy<__VA_ARGS__> >, \
	sort_policy<uint64_t, false, tune_policy<__VA_ARGS__> >}

static const tune_variant tune_variants[] = {
	TUNE("384x16 min 2, window 8 (default)", 384, 16, 2),
	TUNE("384x16 min 2, window 1", 384, 16, 2, 1),
	TUNE("384x16 min 2, window 4", 384, 16, 2, 4),
	TUNE("384x16 min 2, window 16", 384, 16, 2, 16),
	TUNE("384x23 min 1, window 8", 384, 23, 1),
	TUNE("384x23 min 1, window 1", 384, 23, 1, 1),
	TUNE("512x12 min 2, window 8", 512, 12, 2),
	TUNE("256x23 min 2, window 8", 256, 23, 2),
	TUNE("384x12 min 3, window 8", 384, 12, 3),
	TUNE("256x16 min 3, window 8", 256, 16, 3),
};

/* Small sorts: the plan read back by the host (a stream sync) or used on the device. */
static const tune_variant plan_variants[] = {
	TUNE("host plan (sync)", 384, 16, 2, 8, false, 0),
	TUNE("device plan (no sync)", 384, 16, 2, 8, false, (size_t) 1 << 30),
};

static void
tune(void *host_int4, void *host_float8, void *host_narrow, size_t n)
{
	printf("\n## Tuning at n = %zu (median ms of 9; uniform keys)\n\n", n);
	printf("| policy | int4 keys | int4 pairs | float8 keys |\n| --- | ---: | ---: | ---: |\n");
	for (const tune_variant &v : tune_variants)
	{
		int			sel;
		double		k32, p32, k64;

		CHECK(cudaMemcpy(buf.pristine, host_int4, n * 4, cudaMemcpyHostToDevice));
		k32 = time_sort([&]() { return v.keys32(GS_INT4, n, false); }, n, 4, false, 9, &sel);
		p32 = time_sort([&]() { return v.pairs32(GS_INT4, n, true); }, n, 4, true, 9, &sel);
		CHECK(cudaMemcpy(buf.pristine, host_float8, n * 8, cudaMemcpyHostToDevice));
		k64 = time_sort([&]() { return v.keys64(GS_FLOAT8, n, false); }, n, 8, false, 9, &sel);
		printf("| %s | %.3f | %.3f | %.3f |\n", v.name, k32, p32, k64);
		fflush(stdout);
	}

	printf("\n## The plan of small sorts (median us of 25, int4 keys)\n\n");
	printf("| plan | n | uniform | [0,10^6) | all equal |\n| --- | ---: | ---: | ---: | ---: |\n");
	for (size_t small : {(size_t) 10000, (size_t) 100000, (size_t) 1000000})
		for (const tune_variant &v : plan_variants)
		{
			int			sel;
			double		uni, nar, eq;
			std::vector<int32_t> equal(small, 12345);

			CHECK(cudaMemcpy(buf.pristine, host_int4, small * 4, cudaMemcpyHostToDevice));
			uni = time_sort([&]() { return v.keys32(GS_INT4, small, false); }, small, 4, false, 25, &sel);
			CHECK(cudaMemcpy(buf.pristine, host_narrow, small * 4, cudaMemcpyHostToDevice));
			nar = time_sort([&]() { return v.keys32(GS_INT4, small, false); }, small, 4, false, 25, &sel);
			CHECK(cudaMemcpy(buf.pristine, equal.data(), small * 4, cudaMemcpyHostToDevice));
			eq = time_sort([&]() { return v.keys32(GS_INT4, small, false); }, small, 4, false, 25, &sel);
			printf("| %s | %zu | %.1f | %.1f | %.1f |\n", v.name, small, uni * 1e3, nar * 1e3, eq * 1e3);
			fflush(stdout);
		}
}

/*
 * --profile: one sort each of 10^8 int4 uniform and [0, 10^6) keys, ours
 * only, for ncu (e.g. ncu --section SpeedOfLight -k regex:gs_radix).
 */
static void
profile(void *host_int4, void *host_narrow, size_t n)
{
	for (void *h : {host_int4, host_narrow})
	{
		CHECK(cudaMemcpy(buf.pristine, h, n * 4, cudaMemcpyHostToDevice));
		restore(n, 4, false);
		sort_ours(GS_ALGO_RADIX, GS_INT4, n, false);
		CHECK(cudaStreamSynchronize(stream));
	}
}

/* ------------------------------------------------------------------------ */

int
main(int argc, char **argv)
{
	const char *out_path = NULL;
	bool		quick = false,
				do_tune = false,
				do_profile = false;
	size_t		max_n = 260000000;
	cudaDeviceProp prop;
	int			device = 0;
	std::string table;
	char		line[512];

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out_path = argv[++i];
		else if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--tune") == 0)
			do_tune = true;
		else if (strcmp(argv[i], "--profile") == 0)
			do_profile = true;
		else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
			max_n = strtoull(argv[++i], NULL, 10);
		else
		{
			fprintf(stderr, "usage: %s [--out FILE] [--quick] [--tune] [--profile] [--max N]\n", argv[0]);
			return 2;
		}
	}
	if (quick)
		max_n = std::min(max_n, (size_t) 10000000);

	CHECK(cudaSetDevice(device));
	CHECK(cudaGetDeviceProperties(&prop, device));
	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

	/* one key buffer holds max_n int4 or max_n / 2 float8 */
	buf.bytes = max_n * 4;
	CHECK(cudaMalloc(&buf.pristine, buf.bytes));
	CHECK(cudaMalloc(&buf.keys[0], buf.bytes));
	CHECK(cudaMalloc(&buf.keys[1], buf.bytes));
	CHECK(cudaMalloc(&buf.iota, max_n * 4));
	CHECK(cudaMalloc(&buf.values[0], max_n * 4));
	CHECK(cudaMalloc(&buf.values[1], max_n * 4));
	{
		std::vector<uint32_t> iota(max_n);

		for (size_t i = 0; i < max_n; i++)
			iota[i] = (uint32_t) i;
		CHECK(cudaMemcpy(buf.iota, iota.data(), max_n * 4, cudaMemcpyHostToDevice));
	}

	double		bw = copy_bandwidth(buf.bytes / 2);
	time_t		now = time(NULL);
	char		date[32];

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
	printf("%s", table.c_str());
	fflush(stdout);

	struct
	{
		gs_type		t;
		gs_dist		d;
		const char *name;
	}			configs[] = {
		{GS_INT4, GS_DIST_UNIFORM, "int4 uniform"},
		{GS_FLOAT8, GS_DIST_UNIFORM, "float8 uniform"},
		{GS_INT4, GS_DIST_NARROW, "int4 [0,10^6)"},
	};
	std::vector<size_t> sizes = {1000, 10000, 100000, 1000000, 10000000, 100000000, 260000000};
	void	   *host_int4 = NULL,
			   *host_float8 = NULL,
			   *host_narrow = NULL;

	if (do_profile)
	{
		size_t		n = std::min((size_t) 100000000, max_n);

		host_int4 = malloc(n * 4);
		host_narrow = malloc(n * 4);
		fill_parallel(GS_INT4, GS_DIST_UNIFORM, host_int4, n);
		fill_parallel(GS_INT4, GS_DIST_NARROW, host_narrow, n);
		profile(host_int4, host_narrow, n);
		return 0;
	}

	for (auto &c : configs)
	{
		size_t		w = gs_type_size(c.t);
		size_t		cap = buf.bytes / w;
		std::vector<unsigned char> host(cap * w);

		fill_parallel(c.t, c.d, host.data(), cap);
		CHECK(cudaMemcpy(buf.pristine, host.data(), cap * w, cudaMemcpyHostToDevice));
		std::vector<size_t> ns;

		/* the sizes that fit, then the largest that fits (1.3e8 float8 is 1 GB) */
		for (size_t n : sizes)
			if (n <= cap)
				ns.push_back(n);
		if (ns.back() < cap && cap <= sizes.back())
			ns.push_back(cap);
		for (int pairs = 0; pairs < 2; pairs++)
			for (size_t n : ns)
			{
				int			runs = n <= 10000000 ? 25 : 9;
				int			sel_ours, sel_cub, sel_thrust;
				double		ours, cub, thr;
				int			passes = varying_digits(c.t, host.data(), n);
				double		floor_bytes;
				unsigned long long bad;
				void	   *ours_copy;

				ours = time_sort([&]() { return sort_ours(GS_ALGO_RADIX, c.t, n, pairs); }, n, w, pairs, runs, &sel_ours);
				/* keep our result for the check against CUB's (both are stable) */
				CHECK(cudaMalloc(&ours_copy, n * (w + 4)));
				CHECK(cudaMemcpy(ours_copy, buf.keys[sel_ours], n * w, cudaMemcpyDeviceToDevice));
				if (pairs)
					CHECK(cudaMemcpy((char *) ours_copy + n * w, buf.values[sel_ours], n * 4, cudaMemcpyDeviceToDevice));
				cub = time_sort([&]() { return sort_cub(c.t, n, pairs); }, n, w, pairs, runs, &sel_cub);
				bad = mismatches(ours_copy, buf.keys[sel_cub], n * w);
				if (pairs)
					bad += mismatches((char *) ours_copy + n * w, buf.values[sel_cub], n * 4);
				CHECK(cudaFree(ours_copy));
				thr = time_sort([&]() { return sort_thrust(c.t, n, pairs); }, n, w, pairs, runs, &sel_thrust);
				floor_bytes = (double) n * (w + passes * 2.0 * (w + (pairs ? 4 : 0)));
				snprintf(line, sizeof(line),
						 "| %s | %s | %zu | %d | %.4f | %.2f | %.2f | %.2f | %.2f | %.4f | %.0f%% | %s |\n",
						 c.name, pairs ? "pairs" : "keys", n, passes, ours, n / ours / 1e6, n / cub / 1e6,
						 n / thr / 1e6, cub / ours, floor_bytes / bw * 1e3,
						 100.0 * floor_bytes / bw * 1e3 / ours, bad ? "DIFFERS from CUB" : "same as CUB");
				table += line;
				printf("%s", line);
				fflush(stdout);
			}
		if (c.t == GS_INT4 && c.d == GS_DIST_UNIFORM)
		{
			host_int4 = malloc(cap * 4);
			memcpy(host_int4, host.data(), cap * 4);
		}
		if (c.t == GS_INT4 && c.d == GS_DIST_NARROW)
		{
			host_narrow = malloc(cap * 4);
			memcpy(host_narrow, host.data(), cap * 4);
		}
		if (c.t == GS_FLOAT8)
		{
			host_float8 = malloc(cap * 8);
			memcpy(host_float8, host.data(), cap * 8);
		}
	}
	if (out_path != NULL)
	{
		FILE	   *f = fopen(out_path, "w");

		if (f == NULL)
		{
			perror(out_path);
			return 1;
		}
		fputs(table.c_str(), f);
		fclose(f);
	}
	if (do_tune)
		tune(host_int4, host_float8, host_narrow, std::min((size_t) 100000000, max_n / 2));
	return 0;
}
