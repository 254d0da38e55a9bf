/*
 * radix_sort.cu: the GPU LSD radix sort behind gs_gpu_sort (GS_ALGO_RADIX).
 *
 * Onesweep (Adinets & Merrill, 2022): one kernel reads the keys once and
 * histograms every 8-bit digit at once; then one kernel per digit ranks each
 * tile in shared memory and chains the tiles' digit offsets by decoupled
 * look-back (Merrill & Garland), so a pass reads and writes each key once.
 * The range limiter of Ha et al. (seed 001), generalised: a digit that is the
 * same for every key costs no pass.  The key transforms of keys.h are fused
 * into the first and last pass that run.  Layers: this file (the sm_90
 * policy, the entry point) -> radix_dispatch.cuh (kernels, scratch layout,
 * launching the passes) -> radix_agent.cuh (one block's work) ->
 * radix_block.cuh (warp and block primitives).
 */
#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"
#include "radix_dispatch.cuh"

/*
 * Tuning for sm_90 (H100, H200), by key width.  A tile of THREADS * ITEMS
 * keys per block; MIN_BLOCKS blocks per SM caps the registers so that
 * several blocks can share an SM.  USE_MATCH_ANY: rank with match.any.sync
 * instead of ballots (measured 1.4x slower).  LOOKBACK_WINDOW: earlier
 * tiles' status words read at once.  Sorts of fewer than SYNC_MIN_KEYS keys
 * plan on the device (no stream sync; a constant digit costs a copy pass).
 * The histogram kernel reads 16 bytes at a time, HIST_UNROLL loads in
 * flight per thread, into HIST_COPIES sub-histograms per block (fewer for
 * 64-bit keys, whose 8 digit histograms take more shared memory).
 *
 * Defaults: 384 x 16 with 2 blocks per SM and a look-back window of 8.  Run 2's
 * --tune found the 2-block shape 17% faster than the first default (384 x 23,
 * 1 block, window 1: 3.05 against 3.69 ms for 10^8 int4 keys); device run 3
 * passed test_gpu_sort (310 checks, and the large int4 cases) with exactly
 * this policy before it became the default (bench/NOTES-radix.md).
 */
/* Build-time overrides, so a test binary can try a candidate shape (bench/NOTES-radix.md). */
#ifndef GS_RADIX_ITEMS_NARROW
#define GS_RADIX_ITEMS_NARROW 16	/* items per thread, 16- and 32-bit keys */
#endif
#ifndef GS_RADIX_MIN_BLOCKS
#define GS_RADIX_MIN_BLOCKS 2
#endif
#ifndef GS_RADIX_LOOKBACK_WINDOW
#define GS_RADIX_LOOKBACK_WINDOW 8
#endif

template <int KEY_BYTES, bool HAS_VALUES>
struct gs_radix_policy_sm90
{
	static constexpr int RADIX_BITS = 8;
	static constexpr int THREADS = 384;
	static constexpr int ITEMS = KEY_BYTES == 8 ? 16 : GS_RADIX_ITEMS_NARROW;
	static constexpr int MIN_BLOCKS = GS_RADIX_MIN_BLOCKS;
	static constexpr bool USE_MATCH_ANY = false;
	static constexpr int LOOKBACK_WINDOW = GS_RADIX_LOOKBACK_WINDOW;
	static constexpr size_t SYNC_MIN_KEYS = 1 << 20;
	static constexpr int HIST_THREADS = 256;
	static constexpr int HIST_BLOCKS_PER_SM = 4;
	static constexpr int HIST_UNROLL = 4;
	static constexpr int HIST_COPIES = 8;
};

template <typename KeyT>
static gs_status
gs_radix_sort_width(gs_gpu_sort_args *a, int sm_count, int device, gs_error *err)
{
	if (a->values[0] != NULL)
		return gs_radix_dispatch<KeyT, true, gs_radix_policy_sm90<sizeof(KeyT), true> >::sort(a, sm_count, device, err);
	return gs_radix_dispatch<KeyT, false, gs_radix_policy_sm90<sizeof(KeyT), false> >::sort(a, sm_count, device, err);
}

/*
 * gs_gpu_sort's radix entry point (args validated, n > 1).  n is limited to
 * 2^32 - 1 keys (offsets are 32-bit), values or not.  Temp: the digit
 * histograms and offsets, and two areas of look-back words, 1 KB per tile of
 * THREADS * ITEMS keys (6144 with the defaults): about 0.17 bytes per key.  Sorts of 2^20 keys or more
 * synchronise the stream once, after the histograms, to read which digits
 * vary; smaller ones do not synchronise.
 */
extern "C" gs_status
gs_radix_sort_gpu(gs_gpu_sort_args *a, gs_error *err)
{
	int			device = 0;
	int			sm_count = 0;
	gs_status	s;

	if (a->n > UINT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE, "the radix sort takes at most %u keys, not %zu",
					   UINT32_MAX, a->n);
	if (a->temp != NULL && (s = gs_radix_device_info(&device, &sm_count, err)) != GS_OK)
		return s;
	switch (gs_type_size(a->type))
	{
		case 2:
			return gs_radix_sort_width<uint16_t>(a, sm_count, device, err);
		case 4:
			return gs_radix_sort_width<uint32_t>(a, sm_count, device, err);
		case 8:
			return gs_radix_sort_width<uint64_t>(a, sm_count, device, err);
		default:
			return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "unknown key type %d", (int) a->type);
	}
}
