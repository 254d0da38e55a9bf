/*
 * gpu_sort.cu: gs_gpu_sort, the one entry point of the GPU sorts on device
 * buffers.  It checks the arguments, settles the trivial sizes, resolves
 * GS_ALGO_AUTO and hands over to the algorithm's file (internal.h).
 */
#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"

/*
 * What GS_ALGO_AUTO runs, from bench_comparison's every-algorithm table on
 * an H100 (bench/NOTES-comparison.md, "AUTO"; the times below are its): the
 * single-block bitonic sort for the smallest arrays (up to 512 keys, 256 for
 * an argsort, 1024 for 64-bit keys; within 2 us of the radix sort's single
 * block there, which run to run is noise); the radix sort's single-block sort
 * up to its 8192 keys (9-17 us for int4 keys, where merge takes 18-30); the
 * merge sort where the radix sort's several launches cost more than the merge
 * passes (up to 2^14 keys: 37.2 against 37.8 us there, 41.2 against 38.6 at
 * 2^15; 2^15 for a 32-bit argsort: 39.4 against 44.4; 2^20 for 64-bit keys,
 * whose radix sort makes eight passes: 125.0 against 127.6); the radix sort
 * beyond.
 */
static gs_algorithm
gs_gpu_auto_algorithm(gs_type type, size_t n, bool argsort)
{
	size_t		w = gs_type_size(type);
	size_t		bitonic_max = w == 8 ? 1024 : argsort ? 256 : 512;
	size_t		merge_max = (size_t) 1 << (w == 8 ? 20 : argsort ? 15 : 14);

	if (n <= bitonic_max)
		return GS_ALGO_BITONIC;
	if (n <= 8192)
		return GS_ALGO_RADIX;
	if (n <= merge_max)
		return GS_ALGO_MERGE;
	return GS_ALGO_RADIX;
}

/*
 * Checks what every algorithm relies on.  keys[0] must be set for n >= 1 and
 * keys[1] for n >= 2; values are both set or both NULL; with values n must be
 * below 2^32 (they are 32-bit positions).
 */
static gs_status
gs_gpu_check_args(const gs_gpu_sort_args *a, gs_error *err)
{
	if (gs_type_size(a->type) == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "unknown element type %d", (int) a->type);
	if ((unsigned) a->algorithm >= GS_NUM_ALGORITHMS)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "unknown algorithm %d", (int) a->algorithm);
	if ((a->values[0] == NULL) != (a->values[1] == NULL))
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "values needs both buffers or none");
	if (a->values[0] != NULL && a->n > UINT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE, "a sort with values takes at most %u elements, not %zu",
					   UINT32_MAX, a->n);
	if (a->n >= 1 && a->keys[0] == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "keys[0] is NULL");
	if (a->n >= 2 && a->keys[1] == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "keys[1] is NULL");
	if (a->n >= 2 && (a->keys[0] == a->keys[1] || (a->values[0] != NULL && a->values[0] == a->values[1])))
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "the two buffers of keys or values are the same");
	return GS_OK;
}

/*
 * Sorts on the current device (gpusort.h).  n <= 1 is already sorted: no
 * scratch is needed (temp_bytes = 0 on a size query, temp may stay NULL),
 * nothing runs and result_selector is 0.
 */
extern "C" gs_status
gs_gpu_sort(gs_gpu_sort_args *args, gs_error *err)
{
	gs_status	s;
	gs_algorithm algo;

	if (args == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "args is NULL");
	if ((s = gs_gpu_check_args(args, err)) != GS_OK)
		return s;

	algo = args->algorithm == GS_ALGO_AUTO ?
		gs_gpu_auto_algorithm(args->type, args->n, args->values[0] != NULL) : args->algorithm;
	args->algorithm_used = algo;
	args->result_selector = 0;
	if (args->n <= 1)
	{
		if (args->temp == NULL)
			args->temp_bytes = 0;
		return GS_OK;
	}

	/* one line per algorithm built; the others answer "not built" */
	switch (algo)
	{
		case GS_ALGO_RADIX:
			return gs_radix_sort_gpu(args, err);
		case GS_ALGO_MERGE:
			return gs_merge_sort_gpu(args, err);
		case GS_ALGO_BITONIC:
			return gs_bitonic_sort_gpu(args, err);
		case GS_ALGO_QUICK:
			return gs_quick_sort_gpu(args, err);
		default:
			return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "algorithm \"%s\" is not built",
						   gs_algorithm_name(algo));
	}
}
