/*
 * merge_sort.cuh: the merge sort's internal interface to the rest of
 * kernels/ and to the benchmark (not part of the API): the variant switch
 * between the merge-path design (seed 003) and the bank-conflict-free design
 * (seed 000), the tuning (E, b) of a variant for the worst-case generator, and
 * a sort of already ordered keys on a sub-range for other algorithms (the
 * quicksort's depth-limit fallback).
 */
#ifndef GPUSORT_MERGE_SORT_CUH
#define GPUSORT_MERGE_SORT_CUH

#include "gpusort.h"

typedef enum gs_merge_variant
{
	GS_MERGE_PATH = 0,			/* block sort + pairwise merge path (Thrust/ModernGPU/CUB) */
	GS_MERGE_BCF,				/* ShearSort base case, conflict-free merge, splitter buckets */
	GS_NUM_MERGE_VARIANTS
} gs_merge_variant;

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Selects the variant behind GS_ALGO_MERGE for this process (the default is
 * the faster one, measured: see bench/NOTES-comparison.md).  For benchmarks
 * and tests; not thread safe.
 */
void		gs_merge_set_variant(gs_merge_variant v);
gs_merge_variant gs_merge_get_variant(void);
const char *gs_merge_variant_name(gs_merge_variant v);

/*
 * Threads per block (b) and elements per thread (E) of the merge-path
 * variant for a key type, with or without values: the parameters of its
 * merging rounds, which the worst-case inputs of seed 003 are built for.
 */
void		gs_merge_path_tuning(gs_type type, bool values, int *threads, int *items);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>

/*
 * Stable merge sort of n ordered keys (width K: uint16_t, uint32_t or
 * uint64_t) already in device memory, no key transform: keys[0] holds the
 * input, keys[1] is scratch; with vals (vals[0] input, vals[1] scratch) the
 * values move with the keys, and pair = true orders by (key, value).  The
 * result lands in keys[0]/vals[0].  No temporary memory; asynchronous.
 */
template <typename K>
gs_status	gs_merge_sort_ordered(K *keys[2], uint32_t *vals[2], size_t n, bool pair,
								  cudaStream_t stream, gs_error *err);
#endif

#endif							/* GPUSORT_MERGE_SORT_CUH */
