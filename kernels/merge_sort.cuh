/*
 * merge_sort.cuh: the merge sort's internal interface to the rest of
 * kernels/ (not part of the API): a sort of already ordered keys on a
 * sub-range for other algorithms (the quicksort's depth-limit fallback).
 */
#ifndef GPUSORT_MERGE_SORT_CUH
#define GPUSORT_MERGE_SORT_CUH

#include "gpusort.h"

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
