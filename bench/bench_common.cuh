/*
 * bench_common.cuh: what the GPU benchmarks (bench_radix, bench_comparison,
 * bench_transfer) share: the CHECK macro, the benchmark stream and device
 * buffers, restoring the input before a run, our sort through gs_gpu_sort,
 * the timer (CUDA events, two warm-ups, median) and the parallel input fill.
 *
 * A header of static functions, not a .cu, because the Makefile builds every
 * .cu file in bench/ as a program of its own.  Each program allocates buf
 * itself (bench_radix once at its largest size, bench_comparison as sizes
 * grow).
 */
#ifndef GPUSORT_BENCH_COMMON_CUH
#define GPUSORT_BENCH_COMMON_CUH

#include <algorithm>
#include <thread>
#include <vector>

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusort.h"
#include "../test/distributions.h"

/* A benchmark cannot go on after a failed CUDA call: say where, and stop. */
#define CHECK(call) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) \
		{ \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
			exit(1); \
		} \
	} while (0)

/* The stream every timed sort runs on (bench_transfer uses the library's). */
static cudaStream_t stream __attribute__((unused));

/* Device buffers shared by every implementation and size. */
typedef struct bench_buffers
{
	size_t		bytes;			/* per key buffer */
	void	   *pristine;		/* the input, never sorted */
	void	   *keys[2];
	uint32_t   *iota;			/* 0 .. n-1, the argsort payload, never sorted */
	uint32_t   *values[2];
	void	   *temp;
	size_t		temp_bytes;
} bench_buffers;

static bench_buffers buf __attribute__((unused));

/* Grows the temporary storage to at least bytes (never shrinks it). */
static inline void
ensure_temp(size_t bytes)
{
	if (bytes <= buf.temp_bytes)
		return;
	CHECK(cudaFree(buf.temp));
	CHECK(cudaMalloc(&buf.temp, bytes));
	buf.temp_bytes = bytes;
}

/* Restores keys[0] (and values[0]) to the input before a run. */
static inline void
restore(size_t n, size_t w, bool pairs)
{
	CHECK(cudaMemcpyAsync(buf.keys[0], buf.pristine, n * w, cudaMemcpyDeviceToDevice, stream));
	if (pairs)
		CHECK(cudaMemcpyAsync(buf.values[0], buf.iota, n * 4, cudaMemcpyDeviceToDevice, stream));
}

/* The arguments of a sort of keys[0] (and values[0]) on stream; no temporary storage yet. */
static inline void
sort_args(gs_gpu_sort_args *a, gs_algorithm algo, gs_type t, size_t n, bool pairs)
{
	memset(a, 0, sizeof(*a));
	a->type = t;
	a->algorithm = algo;
	a->n = n;
	a->keys[0] = buf.keys[0];
	a->keys[1] = buf.keys[1];
	if (pairs)
	{
		a->values[0] = buf.values[0];
		a->values[1] = buf.values[1];
	}
	a->stream = stream;
}

/*
 * The sort sort_ours calls: gs_gpu_sort, or a program's own with its
 * contract (bench_comparison's sends the merge sort to bench/merge_variants/).
 */
#ifndef BENCH_GPU_SORT
#define BENCH_GPU_SORT gs_gpu_sort
#endif

/* Our sort (algo) of keys[0] (and values[0]); returns the buffer holding the result. */
static inline int
sort_ours(gs_algorithm algo, gs_type t, size_t n, bool pairs)
{
	gs_gpu_sort_args a;
	gs_error	err;

	sort_args(&a, algo, t, n, pairs);
	if (BENCH_GPU_SORT(&a, &err) != GS_OK)
	{
		fprintf(stderr, "size query (%s): %s\n", gs_algorithm_name(algo), err.message);
		exit(1);
	}
	ensure_temp(a.temp_bytes);
	a.temp = buf.temp;
	a.temp_bytes = buf.temp_bytes;
	if (BENCH_GPU_SORT(&a, &err) != GS_OK)
	{
		fprintf(stderr, "gs_gpu_sort (%s): %s\n", gs_algorithm_name(algo), err.message);
		exit(1);
	}
	return a.result_selector;
}

/*
 * Median time in ms of runs sorts after two warm-ups, each on the input
 * restored outside the timed region; *selector gets the result buffer.
 */
template <typename F>
static double
time_sort(F sort, size_t n, size_t w, bool pairs, int runs, int *selector)
{
	cudaEvent_t start,
				stop;
	std::vector<float> ms;

	CHECK(cudaEventCreate(&start));
	CHECK(cudaEventCreate(&stop));
	for (int r = 0; r < runs + 2; r++)
	{
		float		t;

		restore(n, w, pairs);
		CHECK(cudaEventRecord(start, stream));
		*selector = sort();
		CHECK(cudaEventRecord(stop, stream));
		CHECK(cudaEventSynchronize(stop));
		CHECK(cudaGetLastError());
		CHECK(cudaEventElapsedTime(&t, start, stop));
		if (r >= 2)
			ms.push_back(t);
	}
	CHECK(cudaEventDestroy(start));
	CHECK(cudaEventDestroy(stop));
	std::sort(ms.begin(), ms.end());
	return ms[ms.size() / 2];
}

/* Fills n keys on all cores (chunks with their own seeds: same distribution). */
static inline void
fill_parallel(gs_type t, gs_dist d, void *out, size_t n)
{
	const size_t chunks = 64;
	size_t		w = gs_type_size(t);
	std::vector<std::thread> pool;

	for (unsigned th = 0; th < 16; th++)
		pool.emplace_back([=]() {
			for (size_t c = th; c < chunks; c += 16)
			{
				size_t		lo = n * c / chunks,
							hi = n * (c + 1) / chunks;

				gs_fill(t, d, (char *) out + lo * w, hi - lo, 42 + c);
			}
		});
	for (auto &p : pool)
		p.join();
}

#endif							/* GPUSORT_BENCH_COMMON_CUH */
