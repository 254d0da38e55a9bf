/*
 * radix_policy.cuh: the GPU radix sort's tuning for sm_90, and the choice
 * of policy by size, in a header of its own so that bench_radix times
 * exactly what the library runs (and variants of it).
 */
#ifndef GPUSORT_RADIX_POLICY_CUH
#define GPUSORT_RADIX_POLICY_CUH

#include <stddef.h>

#include "radix_dispatch.cuh"

/*
 * Tuning for sm_90 (H100, H200), by key width and whether values travel
 * with the keys (bench_radix --tune, bench/NOTES-radix.md).  A tile of
 * THREADS * ITEMS keys per block; MIN_BLOCKS blocks per SM caps the
 * registers so that several blocks can share an SM, and 1 leaves them
 * uncapped: one block per SM holds a large tile in registers, the faster
 * choice for 64-bit keys and for keys with values (32-bit keys alone run
 * two blocks of 512 x 16).  RANK: how a tile ranks its keys
 * (GS_RADIX_RANK_*, radix_block.cuh; where the device fails the check of
 * the atomic rank, the dispatch's FALLBACK_RANK); USE_MATCH_ANY: the ballot
 * ranks' match by match.any.sync instead of ballots (slower, bench/NOTES-radix.md).
 * VALUES_LATE and PACK_RANKS: register savings; WARP_RUNS: a warp whose
 * keys share the pass's digit ranks them without atomics (radix_agent.cuh).
 * LOOKBACK_WINDOW: earlier tiles' status words read at once.  Sorts of fewer
 * than SYNC_MIN_KEYS keys plan on the device (no wait for the host);
 * larger ones wait for the plan on the host while their first pass runs.
 * Up to SMALL_MAX keys one block sorts everything in one launch.  The
 * histogram kernel reads 16 bytes at a time, HIST_UNROLL loads in flight per
 * thread, into HIST_COPIES sub-histograms per block, one per warp (fewer
 * for 64-bit keys, whose 8 digit histograms take more shared memory);
 * HIST_RUN_CACHE counts runs of one digit with one atomic.
 */
template <int KEY_BYTES, bool HAS_VALUES>
struct gs_radix_policy_sm90
{
	static constexpr int RADIX_BITS = 8;
	static constexpr int THREADS = HAS_VALUES ? 384 : 512;
	static constexpr int ITEMS = KEY_BYTES <= 4 ? (HAS_VALUES ? 40 : 16) : (HAS_VALUES ? 30 : 28);
	static constexpr int MIN_BLOCKS = KEY_BYTES <= 4 && !HAS_VALUES ? 2 : 1;
	static constexpr bool USE_MATCH_ANY = false;
	static constexpr int RANK = GS_RADIX_RANK_ATOMIC;
	static constexpr bool VALUES_LATE = true;
	static constexpr bool PACK_RANKS = true;
	static constexpr bool WARP_RUNS = true;
	static constexpr int LOOKBACK_WINDOW = 8;
	static constexpr size_t SYNC_MIN_KEYS = (size_t) 1 << 20;
	static constexpr size_t SMALL_MAX = 8192;
	/* below this many keys gs_radix_policy_sm90_two_blocks sorts (0: never) */
	static constexpr size_t TWO_BLOCKS_BELOW = (KEY_BYTES <= 4) == HAS_VALUES ? (size_t) 1 << 21 : 0;
	static constexpr int HIST_THREADS = 256;
	static constexpr int HIST_BLOCKS_PER_SM = 4;
	static constexpr int HIST_UNROLL = 4;
	static constexpr int HIST_COPIES = 8;
	static constexpr bool HIST_RUN_CACHE = false;
};

/*
 * Arrays too small to give every SM one of the large tiles above: two
 * blocks per SM of 384 x 16 (64-bit keys) or 384 x 20 (32-bit keys with
 * values), as 32-bit keys alone always run.  Used for 32-bit keys with
 * values and 64-bit keys alone below TWO_BLOCKS_BELOW keys (2^21, about
 * one tile for each of the H100's 132 SMs); 64-bit keys with values keep
 * their large tiles, which are as fast at 10^6 keys and faster below.
 */
template <int KEY_BYTES, bool HAS_VALUES>
struct gs_radix_policy_sm90_two_blocks : gs_radix_policy_sm90<KEY_BYTES, HAS_VALUES>
{
	static constexpr int THREADS = 384;
	static constexpr int ITEMS = HAS_VALUES ? 20 : 16;
	static constexpr int MIN_BLOCKS = 2;
};

/*
 * Sorts n keys (or answers the size query, with the same policy) with the
 * policy for their width and size; the atomic rank where atomics_ordered
 * (the device passed gs_radix_probe_kernel), else the fallback rank.
 */
template <typename KeyT, bool HAS_VALUES>
static gs_status
gs_radix_sort_sm90(gs_gpu_sort_args *a, int sm_count, int device, bool atomics_ordered, gs_error *err)
{
	typedef gs_radix_policy_sm90<sizeof(KeyT), HAS_VALUES> large;
	typedef gs_radix_policy_sm90_two_blocks<sizeof(KeyT), HAS_VALUES> two_blocks;

	if constexpr (large::TWO_BLOCKS_BELOW != 0)
	{
		if (a->n < large::TWO_BLOCKS_BELOW)
			return gs_radix_dispatch<KeyT, HAS_VALUES, two_blocks>::sort(a, sm_count, device, atomics_ordered, err);
	}
	return gs_radix_dispatch<KeyT, HAS_VALUES, large>::sort(a, sm_count, device, atomics_ordered, err);
}

#endif							/* GPUSORT_RADIX_POLICY_CUH */
