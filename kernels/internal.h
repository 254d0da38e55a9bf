/*
 * internal.h: what the files of kernels/ share with each other and nobody
 * else: the error helper and the per-algorithm GPU entry points that
 * gs_gpu_sort (gpu_sort.cu) dispatches to.  Not part of the API.
 */
#ifndef GPUSORT_INTERNAL_H
#define GPUSORT_INTERNAL_H

#include "gpusort.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills err (when not NULL) with status and a printf-style message; returns status. */
gs_status	gs_fail(gs_error *err, gs_status status, const char *fmt,...)
#ifdef __GNUC__
			__attribute__((format(printf, 3, 4)))
#endif
			;

/*
 * GPU entry points, one per algorithm file, with gs_gpu_sort's contract
 * (args validated, algorithm resolved, n > 1).  Each handles temp == NULL
 * (size query) itself.
 */
gs_status	gs_radix_sort_gpu(gs_gpu_sort_args *args, gs_error *err);
gs_status	gs_merge_sort_gpu(gs_gpu_sort_args *args, gs_error *err);
gs_status	gs_bitonic_sort_gpu(gs_gpu_sort_args *args, gs_error *err);
gs_status	gs_quick_sort_gpu(gs_gpu_sort_args *args, gs_error *err);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>

/* A CUDA error as a gs_error: "what: cudaErrorName (description)". */
static inline gs_status
gs_cuda_fail(gs_error *err, cudaError_t e, const char *what)
{
	gs_status	s = (e == cudaErrorMemoryAllocation) ? GS_ERR_DEVICE_MEMORY :
		(e == cudaErrorNoDevice || e == cudaErrorInvalidDevice) ? GS_ERR_NO_DEVICE :
		(e == cudaErrorInsufficientDriver) ? GS_ERR_NO_DRIVER : GS_ERR_CUDA;

	return gs_fail(err, s, "%s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

/* Evaluates a CUDA call; on failure returns from the enclosing function with a gs_error. */
#define GS_CUDA_CHECK(call, err) \
	do { \
		cudaError_t gs_e_ = (call); \
		if (gs_e_ != cudaSuccess) \
			return gs_cuda_fail((err), gs_e_, #call); \
	} while (0)
#endif							/* __CUDACC__ */

#endif							/* GPUSORT_INTERNAL_H */
