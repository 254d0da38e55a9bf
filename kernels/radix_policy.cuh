/*
 * radix_policy.cuh: the GPU radix sort's tuning for sm_90, in a header of
 * its own so that bench_radix times exactly the policy the library runs
 * (and variants of it).
 */
#ifndef GPUSORT_RADIX_POLICY_CUH
#define GPUSORT_RADIX_POLICY_CUH

#include <stddef.h>

#include "radix_block.cuh"

/*
 * Tuning for sm_90 (H100, H200), by key width and whether values travel
 * with the keys (bench_radix --tune, bench/NOTES-radix.md).  A tile of
 * THREADS * ITEMS keys per block; MIN_BLOCKS blocks per SM caps the
 * registers so that several blocks can share an SM.  RANK: how a tile ranks
 * its keys (GS_RADIX_RANK_*, radix_block.cuh); USE_MATCH_ANY: the ballot
 * ranks' match by match.any.sync instead of ballots (measured 1.4x slower).
 * VALUES_LATE and PACK_RANKS: register savings; BULK_LOAD: tiles loaded by
 * the copy engine; VALUES: GS_RADIX_VALUES_* (radix_agent.cuh).
 * LOOKBACK_WINDOW: earlier tiles' status words read at once.  Sorts of fewer
 * than SYNC_MIN_KEYS keys plan on the device (no wait for the host);
 * larger ones wait for the plan on the host while their first pass runs.
 * Up to SMALL_MAX keys one block sorts everything in one launch.  The
 * histogram kernel reads 16 bytes at a time, HIST_UNROLL loads in flight per
 * thread, into HIST_COPIES sub-histograms per block, one per warp (fewer
 * for 64-bit keys, whose 8 digit histograms take more shared memory);
 * HIST_RUN_CACHE counts runs of one digit with one atomic.
 */
/* Build-time overrides, so a test binary can try a candidate (bench/NOTES-radix.md). */
#ifndef GS_RADIX_RANK
#define GS_RADIX_RANK GS_RADIX_RANK_ATOMIC
#endif
#ifndef GS_RADIX_BULK_LOAD
#define GS_RADIX_BULK_LOAD false
#endif
#ifndef GS_RADIX_VALUES
#define GS_RADIX_VALUES GS_RADIX_VALUES_OWN
#endif

template <int KEY_BYTES, bool HAS_VALUES>
struct gs_radix_policy_sm90
{
	static constexpr int RADIX_BITS = 8;
	static constexpr int THREADS = KEY_BYTES <= 4 && !HAS_VALUES ? 512 : 384;
	static constexpr int ITEMS = !HAS_VALUES ? 16 : 20;
	static constexpr int MIN_BLOCKS = 2;
	static constexpr bool USE_MATCH_ANY = false;
	static constexpr int RANK = GS_RADIX_RANK;
	static constexpr bool VALUES_LATE = true;
	static constexpr bool PACK_RANKS = true;
	static constexpr int VALUES = GS_RADIX_VALUES;
	static constexpr bool BULK_LOAD = GS_RADIX_BULK_LOAD || (KEY_BYTES == 8 && HAS_VALUES && VALUES == GS_RADIX_VALUES_OWN);
	static constexpr int ABLATE = 0;
	static constexpr bool TRACE = false;
	static constexpr int LOOKBACK_WINDOW = 8;
	static constexpr size_t SYNC_MIN_KEYS = (size_t) 1 << 20;
	static constexpr size_t SMALL_MAX = 8192;
	static constexpr int HIST_THREADS = 256;
	static constexpr int HIST_BLOCKS_PER_SM = 4;
	static constexpr int HIST_UNROLL = 4;
	static constexpr int HIST_COPIES = 8;
	static constexpr bool HIST_RUN_CACHE = false;
};

#endif							/* GPUSORT_RADIX_POLICY_CUH */
