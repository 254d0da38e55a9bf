/*
 * radix_sort.cu: the GPU LSD radix sort behind gs_gpu_sort (GS_ALGO_RADIX).
 *
 * Onesweep (Adinets & Merrill, 2022): one kernel reads the keys once and
 * histograms every 8-bit digit at once; then one kernel per digit ranks each
 * tile in shared memory and chains the tiles' digit offsets by decoupled
 * look-back (Merrill & Garland), so a pass reads and writes each key once.
 * The range limiter of Ha, Krüger & Silva ("Implicit radix sorting on
 * GPUs"), generalised: a digit that is the same for every key costs no
 * pass.  The key transforms of keys.h are fused into the first and last
 * pass that run.  Layers: this file (the entry point) -> radix_policy.cuh
 * (the sm_90 tuning, the policy by size) -> radix_dispatch.cuh (kernels,
 * scratch layout, launching the passes) -> radix_agent.cuh (one block's
 * work) -> radix_block.cuh (warp and block primitives).
 */
#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"
#include "radix_policy.cuh"

template <typename KeyT>
static gs_status
gs_radix_sort_width(gs_gpu_sort_args *a, int sm_count, int device, bool ordered, gs_error *err)
{
	if (a->values[0] != NULL)
		return gs_radix_sort_sm90<KeyT, true>(a, sm_count, device, ordered, err);
	return gs_radix_sort_sm90<KeyT, false>(a, sm_count, device, ordered, err);
}

/*
 * gs_gpu_sort's radix entry point (args validated, n > 1).  n is limited to
 * 2^32 - 1 keys (offsets are 32-bit), values or not.  Up to SMALL_MAX keys
 * one block sorts in one launch and needs no scratch.  Beyond, temp holds
 * the digit histograms and offsets and two areas of look-back words, 1 KB
 * per tile of THREADS * ITEMS keys (radix_policy.cuh: 6144 to 15360 keys),
 * at most 0.17 bytes per key.
 * Sorts of 2^20 keys or more wait once for the host to read which digits
 * vary, while their first pass runs; smaller ones do not wait.  The first
 * sort on a device also waits for the probe of gs_radix_device_info.
 */
extern "C" gs_status
gs_radix_sort_gpu(gs_gpu_sort_args *a, gs_error *err)
{
	int			device = 0;
	int			sm_count = 0;
	bool		ordered = false;
	gs_status	s;

	if (a->n > UINT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE, "the radix sort takes at most %u keys, not %zu",
					   UINT32_MAX, a->n);
	if (a->temp != NULL &&
		(s = gs_radix_device_info(&device, &sm_count, &ordered, (cudaStream_t) a->stream, err)) != GS_OK)
		return s;
	switch (gs_type_size(a->type))
	{
		case 2:
			return gs_radix_sort_width<uint16_t>(a, sm_count, device, ordered, err);
		case 4:
			return gs_radix_sort_width<uint32_t>(a, sm_count, device, ordered, err);
		case 8:
			return gs_radix_sort_width<uint64_t>(a, sm_count, device, ordered, err);
		default:
			return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "unknown key type %d", (int) a->type);
	}
}
