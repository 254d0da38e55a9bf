/*
 * radix_agent.cuh: what one thread block does in each kernel of the GPU
 * radix sort (radix_sort.cu).  The histogram agent counts every digit of
 * every key in one read of the input (Onesweep's upfront histogram); the
 * onesweep agent does one digit pass over one tile: load, rank the digits
 * stably in shared memory (the local pre-sort of Satish et al. and Garland),
 * chain the tile's digit counts to its predecessors' by decoupled look-back,
 * and scatter the pre-sorted tile so that each digit's run is written
 * contiguously (coalesced).
 */
#ifndef GPUSORT_RADIX_AGENT_CUH
#define GPUSORT_RADIX_AGENT_CUH

#include <stdint.h>
#include <string.h>

#include <cub/block/block_scan.cuh>

#include "radix_block.cuh"

/* ------------------------------------------------------------------------
 * Histogram of all digits, plan of the passes.
 * ------------------------------------------------------------------------ */

template <typename KeyT, class Policy>
struct gs_radix_histogram_agent
{
	static constexpr int RADIX_BITS = Policy::RADIX_BITS;
	static constexpr int BINS = 1 << RADIX_BITS;
	static constexpr int PASSES = (gs_radix_key<KeyT>::BITS + RADIX_BITS - 1) / RADIX_BITS;
	static constexpr int THREADS = Policy::HIST_THREADS;
	/* as many sub-histograms as the policy asks for, within 32 KB */
	static constexpr int COPIES_FIT = 8192 / (PASSES * BINS);
	static constexpr int COPIES = Policy::HIST_COPIES < COPIES_FIT ? Policy::HIST_COPIES : COPIES_FIT;
	static constexpr int UNROLL = Policy::HIST_UNROLL;
	static constexpr int VEC = 16 / (int) sizeof(KeyT);	/* keys per 16-byte load */

	static_assert(THREADS >= BINS, "the plan step gives each bin a thread");
	static_assert(PASSES <= 32, "the plan is a 32-bit mask");

	typedef cub::BlockScan<uint32_t, THREADS> block_scan;

	struct storage
	{
		/* COPIES sub-histograms cut same-address atomics between lanes */
		uint32_t	hist[COPIES][PASSES][BINS];
		typename block_scan::TempStorage scan;
		int			last_block;
	};

	struct params
	{
		const KeyT *keys;		/* the caller's input (raw bits) */
		uint32_t	n;
		bool		is_float;
		bool		descending;
		uint32_t   *hist;		/* [PASSES][BINS], zero on entry */
		uint32_t   *blocks_done;	/* zero on entry */
		uint32_t   *bin_base;	/* out: per pass, BINS exclusive digit offsets */
		size_t		bin_base_pass_stride;	/* words between passes in bin_base */
		uint32_t   *plan;		/* out: bit p set when digit p must be sorted */
		uint32_t   *lookback0;	/* look-back words the first pass will use */
		size_t		lookback0_words;
	};

	storage    &s;
	const params &p;
	uint32_t	run_digit[PASSES];	/* a one-entry cache per digit: equal */
	uint32_t	run_count[PASSES];	/* digits in a row cost one atomic */

	__device__ __forceinline__
	gs_radix_histogram_agent(storage &s_, const params &p_) : s(s_), p(p_)
	{
#pragma unroll
		for (int d = 0; d < PASSES; d++)
		{
			run_digit[d] = 0;
			run_count[d] = 0;
		}
	}

	__device__ __forceinline__ void
	count(KeyT bits, uint32_t (*h)[BINS])
	{
		KeyT		key = gs_radix_key<KeyT>::to_ordered(bits, p.is_float, p.descending);

#pragma unroll
		for (int d = 0; d < PASSES; d++)
		{
			uint32_t	digit = gs_radix_digit<RADIX_BITS>(key, d * RADIX_BITS);

			if (digit == run_digit[d])
				run_count[d]++;
			else
			{
				if (run_count[d] != 0)
					atomicAdd(&h[d][run_digit[d]], run_count[d]);
				run_digit[d] = digit;
				run_count[d] = 1;
			}
		}
	}

	__device__ __forceinline__ void
	run(void)
	{
		const int	tid = threadIdx.x;
		uint32_t	(*h)[BINS] = s.hist[tid % COPIES];
		const size_t grid_threads = (size_t) gridDim.x * THREADS;

		for (int i = tid; i < COPIES * PASSES * BINS; i += THREADS)
			(&s.hist[0][0][0])[i] = 0;
		/* the first digit pass finds its look-back words cleared */
		for (size_t i = blockIdx.x * (size_t) THREADS + tid; i < p.lookback0_words; i += grid_threads)
			p.lookback0[i] = 0;
		__syncthreads();

		/* 16-byte loads where the input is aligned, UNROLL of them in flight */
		size_t		nvec = ((uintptr_t) p.keys % 16 == 0) ? p.n / VEC : 0;
		const uint4 *vec = (const uint4 *) p.keys;

		for (size_t base = (size_t) blockIdx.x * THREADS * UNROLL; base < nvec;
			 base += grid_threads * UNROLL)
		{
			uint4		v[UNROLL];

#pragma unroll
			for (int u = 0; u < UNROLL; u++)
			{
				size_t		i = base + (size_t) u * THREADS + tid;

				if (i < nvec)
					v[u] = __ldg(vec + i);
			}
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
			{
				if (base + (size_t) u * THREADS + tid < nvec)
				{
					KeyT		k[VEC];

					memcpy(k, &v[u], sizeof(k));
#pragma unroll
					for (int j = 0; j < VEC; j++)
						count(k[j], h);
				}
			}
		}
		for (size_t i = nvec * VEC + blockIdx.x * (size_t) THREADS + tid; i < p.n; i += grid_threads)
			count(p.keys[i], h);
#pragma unroll
		for (int d = 0; d < PASSES; d++)
			if (run_count[d] != 0)
				atomicAdd(&h[d][run_digit[d]], run_count[d]);
		__syncthreads();

		for (int i = tid; i < PASSES * BINS; i += THREADS)
		{
			uint32_t	sum = 0;

#pragma unroll
			for (int c = 0; c < COPIES; c++)
				sum += (&s.hist[c][0][0])[i];
			if (sum != 0)
				atomicAdd(&p.hist[i], sum);
		}

		/* the last block to finish turns the histograms into the plan */
		__threadfence();
		__syncthreads();
		if (tid == 0)
			s.last_block = atomicAdd(p.blocks_done, 1) == gridDim.x - 1;
		__syncthreads();
		if (!s.last_block)
			return;
		__threadfence();

		uint32_t	plan = 0;

		for (int d = 0; d < PASSES; d++)
		{
			uint32_t	c = tid < BINS ? __ldcg(&p.hist[d * BINS + tid]) : 0;
			uint32_t	excl;

			/* one non-empty bucket: every key has this digit, skip the pass */
			if (!__syncthreads_or(c == p.n))
				plan |= 1u << d;
			block_scan(s.scan).ExclusiveSum(c, excl);
			__syncthreads();
			if (tid < BINS)
				p.bin_base[d * p.bin_base_pass_stride + tid] = excl;
		}
		if (tid == 0)
			*p.plan = plan;
	}
};

/* ------------------------------------------------------------------------
 * One digit pass over one tile (onesweep).
 * ------------------------------------------------------------------------ */

template <typename KeyT>
struct gs_radix_pass_params
{
	const KeyT *keys_in;		/* this portion's first key */
	KeyT	   *keys_out;		/* the whole output array */
	const uint32_t *values_in;	/* this portion's first value, or NULL */
	uint32_t   *values_out;
	uint32_t	n;				/* keys in this portion */
	int			digit;			/* which digit: its lowest bit is digit * RADIX_BITS */
	bool		first;			/* input is raw bits: apply the key transform */
	bool		last;			/* store raw bits: apply the inverse transform */
	bool		is_float;
	bool		descending;
	const uint32_t *plan;		/* NULL, or the histogram's pass mask: a digit */
								/* not in it makes this pass a plain copy */
	const uint32_t *bin_base_in;	/* [BINS] where each digit starts for this portion */
	uint32_t   *bin_base_out;	/* [BINS] the same for the next portion */
	uint32_t   *lookback;		/* [tiles][BINS] status words, zero on entry */
	uint32_t   *lookback_clear; /* the next launch's status words, to zero */
	size_t		lookback_clear_words;
	uint32_t   *tile_counter;	/* zero on entry */
};

/*
 * One tile, in the order of Onesweep: load; count the digits per warp and
 * publish the tile's counts at once, so that later tiles rarely wait; rank
 * each key to its place in the tile and pre-sort the tile in shared memory;
 * only then look back for the counts of earlier tiles (by now mostly
 * final); scatter the runs of each digit to the output.
 */
template <typename KeyT, bool HAS_VALUES, class Policy>
struct gs_radix_onesweep_agent
{
	static constexpr int RADIX_BITS = Policy::RADIX_BITS;
	static constexpr int BINS = 1 << RADIX_BITS;
	static constexpr int THREADS = Policy::THREADS;
	static constexpr int ITEMS = Policy::ITEMS;
	static constexpr int TILE = THREADS * ITEMS;
	static constexpr int WARPS = THREADS / 32;
	static constexpr int WARP_ITEMS = 32 * ITEMS;

	static_assert(THREADS % 32 == 0, "whole warps");
	static_assert(THREADS >= BINS, "the look-back gives each bin a thread");

	typedef gs_radix_key<KeyT> key_ops;
	typedef cub::BlockScan<uint32_t, THREADS> block_scan;

	/* Dynamic shared memory: the exchange buffers, the warp counters, the offsets. */
	static constexpr size_t KEYS_BYTES = (size_t) TILE * sizeof(KeyT);
	static constexpr size_t VALUES_BYTES = HAS_VALUES ? (size_t) TILE * sizeof(uint32_t) : 0;
	static constexpr size_t COUNTERS_BYTES = (size_t) WARPS * BINS * sizeof(uint32_t);
	static constexpr size_t SMEM_BYTES = KEYS_BYTES + VALUES_BYTES + COUNTERS_BYTES + BINS * sizeof(uint32_t);

	struct static_storage
	{
		typename block_scan::TempStorage scan;
		uint32_t	tile;
	};

	static __device__ __forceinline__ uint32_t
	digit_of(KeyT key, int digit)
	{
		return gs_radix_digit<RADIX_BITS>(key, digit * RADIX_BITS);
	}

	/*
	 * A pass over a digit that is the same for every key (device-side plan):
	 * the keys keep their places, so each tile is copied, transformed if this
	 * is the first or last pass.  No look-back.
	 */
	static __device__ __forceinline__ void
	copy_tile(const gs_radix_pass_params<KeyT> &p)
	{
		const uint32_t tile_start = blockIdx.x * (uint32_t) TILE;
		const uint32_t valid = min((uint32_t) TILE, p.n - tile_start);

		for (uint32_t pos = threadIdx.x; pos < valid; pos += THREADS)
		{
			KeyT		key = p.keys_in[tile_start + pos];

			if (p.first)
				key = key_ops::to_ordered(key, p.is_float, p.descending);
			if (p.last)
				key = key_ops::from_ordered(key, p.is_float, p.descending);
			p.keys_out[tile_start + pos] = key;
			if (HAS_VALUES)
				p.values_out[tile_start + pos] = p.values_in[tile_start + pos];
		}
	}

	static __device__ __forceinline__ void
	run(const gs_radix_pass_params<KeyT> &p, unsigned char *smem, static_storage &ss)
	{
		KeyT	   *s_keys = (KeyT *) smem;
		uint32_t   *s_values = (uint32_t *) (smem + KEYS_BYTES);
		uint32_t   *s_counters = (uint32_t *) (smem + KEYS_BYTES + VALUES_BYTES);
		uint32_t   *s_offset = s_counters + WARPS * BINS;
		const int	tid = threadIdx.x;
		const int	warp = tid / 32;
		const uint32_t lane = gs_lane_id();
		uint32_t   *warp_counters = s_counters + warp * BINS;

		/* this launch clears the status words of the next one */
		if (p.lookback_clear_words != 0)
		{
			size_t		chunk = (p.lookback_clear_words + gridDim.x - 1) / gridDim.x;
			size_t		begin = blockIdx.x * chunk;
			size_t		end = min(begin + chunk, p.lookback_clear_words);

			for (size_t i = begin + tid; i < end; i += THREADS)
				p.lookback_clear[i] = 0;
		}
		if (p.plan != NULL && !(*p.plan & (1u << p.digit)))
		{
			copy_tile(p);
			return;
		}

		/*
		 * Tiles are numbered in the order blocks start, not by blockIdx, so
		 * that every tile a block looks back on belongs to a running block.
		 */
		if (tid == 0)
			ss.tile = atomicAdd(p.tile_counter, 1);
		for (int i = tid; i < WARPS * BINS; i += THREADS)
			s_counters[i] = 0;
		__syncthreads();

		const uint32_t tile = ss.tile;
		const uint32_t tile_start = tile * (uint32_t) TILE;
		const uint32_t valid = min((uint32_t) TILE, p.n - tile_start);
		const uint32_t warp_start = warp * WARP_ITEMS;
		KeyT		keys[ITEMS];

		/*
		 * Warp-striped load: item i of a lane is key warp_start + 32 i + lane,
		 * so item order then lane order is input order, which the ranking
		 * relies on for stability.  Past the end: all-ones keys, whose digit
		 * is the last bin and which rank after every real key of the tile.
		 */
		if (valid == TILE)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
				keys[i] = p.keys_in[tile_start + warp_start + 32 * i + lane];
		}
		else
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t	pos = warp_start + 32 * i + lane;

				keys[i] = pos < valid ? p.keys_in[tile_start + pos] : (KeyT) ~(KeyT) 0;
			}
		}
		if (p.first)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t	pos = warp_start + 32 * i + lane;

				if (pos < valid)
					keys[i] = key_ops::to_ordered(keys[i], p.is_float, p.descending);
			}
		}

		/* early counts: each warp's digit histogram */
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			atomicAdd(&warp_counters[digit_of(keys[i], p.digit)], 1);
		__syncthreads();

		/*
		 * Thread b owns digit b: it publishes the tile's count, and turns the
		 * warps' counts into where each warp's keys of the digit start in the
		 * pre-sorted tile.
		 */
		uint32_t	count = 0;
		uint32_t	local_start;

		if (tid < BINS)
		{
#pragma unroll
			for (int w = 0; w < WARPS; w++)
			{
				uint32_t	c = s_counters[w * BINS + tid];

				s_counters[w * BINS + tid] = count;
				count += c;
			}
		}

		/* the padding keys are all in the last bin: not the tile's to publish */
		uint32_t	real = count - (tid == BINS - 1 ? TILE - valid : 0);
		uint32_t   *status = p.lookback + (size_t) tile * BINS + tid;

		if (tid < BINS)
			gs_store_relaxed(status, (tile == 0 ? GS_LOOKBACK_INCLUSIVE : GS_LOOKBACK_AGGREGATE) | real);
		block_scan(ss.scan).ExclusiveSum(count, local_start);
		if (tid < BINS)
		{
#pragma unroll
			for (int w = 0; w < WARPS; w++)
				s_counters[w * BINS + tid] += local_start;
		}
		__syncthreads();

		/* rank each key to its place in the tile, and put it there */
		if (HAS_VALUES)
		{
			uint32_t	values[ITEMS];

#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t	pos = warp_start + 32 * i + lane;

				if (pos < valid)
					values[i] = p.values_in[tile_start + pos];
			}
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t	rank = gs_warp_rank_digit<RADIX_BITS, Policy::USE_MATCH_ANY>(
					digit_of(keys[i], p.digit), warp_counters);

				s_keys[rank] = keys[i];
				s_values[rank] = values[i];
			}
		}
		else
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t	rank = gs_warp_rank_digit<RADIX_BITS, Policy::USE_MATCH_ANY>(
					digit_of(keys[i], p.digit), warp_counters);

				s_keys[rank] = keys[i];
			}
		}

		/* the counts of all earlier tiles, digit by digit */
		if (tid < BINS)
		{
			uint32_t	before = 0;

			if (tile > 0)
			{
				before = gs_lookback_exclusive<Policy::LOOKBACK_WINDOW>(p.lookback + tid, tile, BINS);
				gs_store_relaxed(status, GS_LOOKBACK_INCLUSIVE | (before + real));
			}

			uint32_t	base = p.bin_base_in[tid] + before;

			s_offset[tid] = base - local_start;
			if (tile == gridDim.x - 1)
				p.bin_base_out[tid] = base + real;
		}
		__syncthreads();

		/* scatter: consecutive threads write consecutive places of a digit's run */
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			uint32_t	pos = i * THREADS + tid;

			if (pos < valid)
			{
				KeyT		key = s_keys[pos];
				uint32_t	dest = s_offset[digit_of(key, p.digit)] + pos;

				p.keys_out[dest] = p.last ? key_ops::from_ordered(key, p.is_float, p.descending) : key;
				if (HAS_VALUES)
					p.values_out[dest] = s_values[pos];
			}
		}
	}
};

#endif							/* GPUSORT_RADIX_AGENT_CUH */
