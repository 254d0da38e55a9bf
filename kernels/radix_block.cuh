/*
 * radix_block.cuh: the block and warp primitives of the GPU radix sort
 * (radix_sort.cu): key adapters over the transforms of keys.h, the warp
 * multi-split that ranks digits stably, and the status words of the
 * decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan
 * with Decoupled Look-back"; Adinets & Merrill, "Onesweep").
 */
#ifndef GPUSORT_RADIX_BLOCK_CUH
#define GPUSORT_RADIX_BLOCK_CUH

#include <stdint.h>

#include "keys.h"

/* ------------------------------------------------------------------------
 * Key adapters: one generic sort over unsigned keys of 16, 32 or 64 bits.
 * ------------------------------------------------------------------------ */

template <typename KeyT>
struct gs_radix_key;

template <>
struct gs_radix_key<uint16_t>
{
	static constexpr int BITS = 16;

	static __device__ __forceinline__ uint16_t
	to_ordered(uint16_t bits, bool is_float, bool descending)
	{
		(void) is_float;		/* int2 is the only 16-bit type */
		return gs_to_key16(bits, descending);
	}

	static __device__ __forceinline__ uint16_t
	from_ordered(uint16_t key, bool is_float, bool descending)
	{
		(void) is_float;
		return gs_from_key16(key, descending);
	}
};

template <>
struct gs_radix_key<uint32_t>
{
	static constexpr int BITS = 32;

	static __device__ __forceinline__ uint32_t
	to_ordered(uint32_t bits, bool is_float, bool descending)
	{
		return gs_to_key32(bits, is_float, descending);
	}

	static __device__ __forceinline__ uint32_t
	from_ordered(uint32_t key, bool is_float, bool descending)
	{
		return gs_from_key32(key, is_float, descending);
	}
};

template <>
struct gs_radix_key<uint64_t>
{
	static constexpr int BITS = 64;

	static __device__ __forceinline__ uint64_t
	to_ordered(uint64_t bits, bool is_float, bool descending)
	{
		return gs_to_key64(bits, is_float, descending);
	}

	static __device__ __forceinline__ uint64_t
	from_ordered(uint64_t key, bool is_float, bool descending)
	{
		return gs_from_key64(key, is_float, descending);
	}
};

/* The digit of a key at bit shift, RADIX_BITS wide. */
template <int RADIX_BITS, typename KeyT>
static __device__ __forceinline__ uint32_t
gs_radix_digit(KeyT key, int shift)
{
	return (uint32_t) (key >> shift) & ((1u << RADIX_BITS) - 1);
}

/* ------------------------------------------------------------------------
 * Warp primitives.
 * ------------------------------------------------------------------------ */

/*
 * How a tile ranks its keys stably.  ATOMIC: one shared-memory atomicAdd
 * per key, whose return is the key's place among its warp's earlier keys of
 * the same digit; this needs the device to return values to the lanes of
 * one atomic that hit one address in lane order, which the dispatch checks
 * once per device (gs_radix_probe_kernel) before using it.  BALLOT: the
 * lanes of equal digit found by one ballot per digit bit, ranked with one
 * atomic per group (gs_warp_rank_digit_atomic).  BALLOT_SERIAL: the same
 * match, the counter read and written by the group's leader in a chain
 * (gs_warp_rank_digit), kept for comparison.
 */
#define GS_RADIX_RANK_BALLOT_SERIAL	0
#define GS_RADIX_RANK_BALLOT		1
#define GS_RADIX_RANK_ATOMIC		2

static __device__ __forceinline__ uint32_t
gs_lane_id(void)
{
	uint32_t	lane;

	asm("mov.u32 %0, %%laneid;" : "=r"(lane));
	return lane;
}

static __device__ __forceinline__ uint32_t
gs_lanemask_lt(void)
{
	uint32_t	mask;

	asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
	return mask;
}

/*
 * The lanes of the warp whose digit equals this lane's (all lanes converged).
 * One ballot per digit bit: match.any.sync is slower than this for a few
 * bits on sm_70 and later (CUB makes the same choice).
 */
template <int RADIX_BITS, bool USE_MATCH_ANY>
static __device__ __forceinline__ uint32_t
gs_warp_match_digit(uint32_t digit)
{
	if (USE_MATCH_ANY)
		return __match_any_sync(0xffffffffu, digit);

	uint32_t	peers = 0xffffffffu;

#pragma unroll
	for (int b = 0; b < RADIX_BITS; b++)
	{
		bool		set = (digit >> b) & 1;
		uint32_t	votes = __ballot_sync(0xffffffffu, set);

		peers &= set ? votes : ~votes;
	}
	return peers;
}

/*
 * Warp multi-split rank: for one item per lane, all lanes converged, returns
 * counters[digit] plus the number of lower lanes with the same digit, and
 * adds the number of lanes with that digit to counters[digit].  Called item
 * by item, lanes in lane order, the ranks follow input order: the sort stays
 * stable.  Only one lane (the highest of each group of equal digits) updates
 * a counter, so there are no write conflicts; the __syncwarp makes the update
 * visible to whichever lane leads that digit in the next call.
 */
template <int RADIX_BITS, bool USE_MATCH_ANY>
static __device__ __forceinline__ uint32_t
gs_warp_rank_digit(uint32_t digit, uint32_t *counters)
{
	uint32_t	peers = gs_warp_match_digit<RADIX_BITS, USE_MATCH_ANY>(digit);
	uint32_t	lane = gs_lane_id();
	uint32_t	leader = 31 - __clz(peers);
	uint32_t	before = 0;

	if (lane == leader)
	{
		before = counters[digit];
		counters[digit] = before + __popc(peers);
	}
	before = __shfl_sync(0xffffffffu, before, leader);
	__syncwarp();
	return before + __popc(peers & gs_lanemask_lt());
}

/*
 * The same rank, pipelined: the highest lane of each group of equal digits
 * adds the group's size to counters[digit] with one shared-memory atomic and
 * the old value comes back to the group by a shuffle.  No lane waits for an
 * earlier item's counter before starting on the next item, so a warp's
 * items overlap (the other form is a load, a store and a __syncwarp per
 * item in a chain).  The sort stays stable because a warp's shared-memory
 * atomics on one address take effect in the order the warp issues them:
 * item by item, as the loop is written.
 */
template <int RADIX_BITS>
static __device__ __forceinline__ uint32_t
gs_warp_rank_digit_atomic(uint32_t digit, uint32_t *counters)
{
	uint32_t	peers = gs_warp_match_digit<RADIX_BITS, false>(digit);
	uint32_t	leader = 31 - __clz(peers);
	uint32_t	below = __popc(peers & gs_lanemask_lt());
	uint32_t	before = 0;

	if (below + 1 == (uint32_t) __popc(peers))
		before = atomicAdd(&counters[digit], below + 1);
	return __shfl_sync(0xffffffffu, before, leader) + below;
}

/* ------------------------------------------------------------------------
 * A tile's digit counts.  counters[w * BINS + b] holds warp w's count of
 * digit b; thread b (b < BINS) owns digit b.
 * ------------------------------------------------------------------------ */

/* Thread b: each warp's count of digit b becomes the count in the warps before it; returns the tile's count. */
template <int WARPS, int BINS>
static __device__ __forceinline__ uint32_t
gs_warp_counts_to_starts(uint32_t *counters, int b)
{
	uint32_t	count = 0;

#pragma unroll
	for (int w = 0; w < WARPS; w++)
	{
		uint32_t	c = counters[w * BINS + b];

		counters[w * BINS + b] = count;
		count += c;
	}
	return count;
}

/* Thread b: start (where digit b begins in the tile) added to each warp's start of digit b. */
template <int WARPS, int BINS>
static __device__ __forceinline__ void
gs_warp_starts_add(uint32_t *counters, int b, uint32_t start)
{
#pragma unroll
	for (int w = 0; w < WARPS; w++)
		counters[w * BINS + b] += start;
}

/* ------------------------------------------------------------------------
 * Decoupled look-back status words: 2 flag bits, 30 bits of count.  A
 * portion holds at most 2^28 keys, so a count always fits.  Zero means "not
 * published yet"; the flag and the count travel in one 32-bit word, so a
 * reader never sees a flag without its count.
 * ------------------------------------------------------------------------ */

#define GS_LOOKBACK_AGGREGATE	(1u << 30)	/* this tile's own count */
#define GS_LOOKBACK_INCLUSIVE	(2u << 30)	/* count of this tile and all before it */
#define GS_LOOKBACK_FLAGS		(3u << 30)
#define GS_LOOKBACK_COUNT		(~GS_LOOKBACK_FLAGS)

static __device__ __forceinline__ uint32_t
gs_load_relaxed(const uint32_t *p)
{
	uint32_t	v;

	asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

static __device__ __forceinline__ void
gs_store_relaxed(uint32_t *p, uint32_t v)
{
	asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

/*
 * Looks back from tile (exclusive) through the status words of one digit
 * (stride words apart) and returns the count of that digit in all earlier
 * tiles (decoupled look-back, Merrill & Garland 2016).  WINDOW 1 reads one
 * tile per round trip.  A larger WINDOW reads that many earlier tiles at
 * once: tiles start a few tens of nanoseconds apart and a read costs an L2
 * round trip of some hundreds, so the nearest predecessors are still looking
 * back themselves and a walk of one tile per round trip would grow long.
 * The words are consumed in order up to the first inclusive one; a word not
 * yet published (zero) is read again, from there.  Those tiles belong to
 * blocks that took their tile number earlier (tile numbers come from an
 * atomic counter), so they are running and will publish.  round_trip() is
 * called once per read (per window of reads), for a benchmark's count.
 */
struct gs_no_round_trip_count
{
	__device__ __forceinline__ void
	round_trip(void)
	{
	}
};

template <int WINDOW, class Counter = gs_no_round_trip_count>
static __device__ __forceinline__ uint32_t
gs_lookback_exclusive(const uint32_t *status, uint32_t tile, uint32_t stride, Counter &&counter = Counter())
{
	uint32_t	sum = 0;
	uint32_t	t = tile;		/* tiles t .. tile-1 are summed */

	if constexpr (WINDOW == 1)
	{
		/* one tile per round trip */
		while (t > 0)
		{
			uint32_t	v;

			t--;
			do
			{
				v = gs_load_relaxed(status + (size_t) t * stride);
				counter.round_trip();
			} while ((v & GS_LOOKBACK_FLAGS) == 0);
			sum += v & GS_LOOKBACK_COUNT;
			if (v & GS_LOOKBACK_INCLUSIVE)
				break;
		}
	}
	else
	{
		while (t > 0)
		{
			uint32_t	v[WINDOW];
			uint32_t	taken = 0;
			bool		done = false;

#pragma unroll
			for (int k = 0; k < WINDOW; k++)
				/* tile 0 is always inclusive: nothing before it is ever needed */
				v[k] = t > (uint32_t) k ? gs_load_relaxed(status + (size_t) (t - 1 - k) * stride) : GS_LOOKBACK_INCLUSIVE;
			counter.round_trip();
#pragma unroll
			for (int k = 0; k < WINDOW; k++)
			{
				if (done || taken != (uint32_t) k || (v[k] & GS_LOOKBACK_FLAGS) == 0)
					continue;
				sum += v[k] & GS_LOOKBACK_COUNT;
				taken++;
				done = (v[k] & GS_LOOKBACK_INCLUSIVE) != 0;
			}
			if (done)
				break;
			t -= taken;
		}
	}
	return sum;
}

#endif							/* GPUSORT_RADIX_BLOCK_CUH */
