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
		/*
		 * One sub-histogram per warp (COPIES of them, warps sharing them
		 * in turn): equal digits of one warp's lanes cost one update, which
		 * the atomic itself aggregates, and warps do not queue on the same
		 * words when the keys are sorted or few.
		 */
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
		uint32_t   *plan;		/* out: [0] bit d set when digit d must be sorted; */
								/* [1] the passes that move keys with a device plan */
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

			if (!Policy::HIST_RUN_CACHE)
				atomicAdd(&h[d][digit], 1);
			else if (digit == run_digit[d])
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
		uint32_t	(*h)[BINS] = s.hist[tid / 32 % COPIES];
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
		/*
		 * With a device plan every pass is launched and those over constant
		 * digits do nothing, except that when an odd number of digits vary
		 * the lowest constant digit's pass copies the keys: the result then
		 * always ends where an even number of passes leaves it.
		 */
		if (tid == 0)
		{
			p.plan[0] = plan;
			p.plan[1] = __popc(plan) % 2 ? plan | (~plan & (plan + 1)) : plan;
		}
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
	int			plan_mode;		/* GS_RADIX_PLAN_*: how this pass uses plan */
	const uint32_t *plan;		/* the histogram's plan (gs_radix_histogram_agent) */
	const uint32_t *bin_base_in;	/* [BINS] where each digit starts for this portion */
	uint32_t   *bin_base_out;	/* [BINS] the same for the next portion */
	uint32_t   *lookback;		/* [tiles][BINS] status words, zero on entry */
	uint32_t   *lookback_clear; /* the next launch's status words, to zero */
	size_t		lookback_clear_words;
	uint32_t   *tile_counter;	/* zero on entry */
	unsigned long long *trace;	/* NULL, or GS_RADIX_TRACE_WORDS per tile (Policy::TRACE) */
};

/*
 * How a pass learns whether its digit varies.  HOST: the host read the plan
 * and launched only passes that sort.  DEVICE: every pass is launched with
 * buffers 0 and 1 and reads the plan: it picks its buffers, first and last,
 * and copies or does nothing where its digit is constant (see the histogram
 * agent).  AHEAD: the first pass, launched before the host reads the plan,
 * does nothing where its digit is constant.
 */
#define GS_RADIX_PLAN_HOST		0
#define GS_RADIX_PLAN_DEVICE	1
#define GS_RADIX_PLAN_AHEAD		2

/*
 * Policy::TRACE: thread 0 of each tile writes these clock64() stamps (and
 * two counts) to trace[tile * GS_RADIX_TRACE_WORDS + i], for the benchmark's
 * breakdown of where a tile's time goes.  A stamp is taken where thread 0
 * is, so those after a barrier include the wait for the block's slowest
 * thread.
 */
enum
{
	GS_RADIX_TRACE_START,		/* entry */
	GS_RADIX_TRACE_TILE,		/* tile number known (barrier) */
	GS_RADIX_TRACE_COUNTED,		/* keys loaded, warp histograms done (barrier) */
	GS_RADIX_TRACE_SCANNED,		/* counts published, digit starts scanned (barrier) */
	GS_RADIX_TRACE_RANKED,		/* thread 0's warp has ranked and placed its keys */
	GS_RADIX_TRACE_LOOKED_BACK, /* thread 0 has the count of digit 0 before the tile */
	GS_RADIX_TRACE_OFFSETS,		/* every digit's offset known (barrier) */
	GS_RADIX_TRACE_END,			/* thread 0 has scattered its keys */
	GS_RADIX_TRACE_READS,		/* look-back round trips of digit 0 */
	GS_RADIX_TRACE_SM,			/* the SM that ran the tile */
	GS_RADIX_TRACE_START_NS,	/* %globaltimer at entry and at the end */
	GS_RADIX_TRACE_END_NS,
	GS_RADIX_TRACE_WORDS
};

/*
 * One tile, in the order of Onesweep: load; count the digits per warp and
 * publish the tile's counts at once, so that later tiles rarely wait; rank
 * each key to its place in the tile and pre-sort the tile in shared memory;
 * only then look back for the counts of earlier tiles (by now mostly
 * final); scatter the runs of each digit to the output.
 */
template <typename KeyT, bool HAS_VALUES, class Policy, int RANK>
struct gs_radix_onesweep_agent
{
	static constexpr int RADIX_BITS = Policy::RADIX_BITS;
	static constexpr int BINS = 1 << RADIX_BITS;
	static constexpr int THREADS = Policy::THREADS;
	static constexpr int ITEMS = Policy::ITEMS;
	static constexpr int TILE = THREADS * ITEMS;
	static constexpr int WARPS = THREADS / 32;
	static constexpr int WARP_ITEMS = 32 * ITEMS;

	/*
	 * RANK: GS_RADIX_RANK_* (radix_block.cuh).  ABLATE (benchmarks only; the
	 * output is wrong): 1 skips the wait for earlier tiles' counts, to
	 * measure what it costs.
	 */
	static constexpr int ABLATE = Policy::ABLATE;
	static constexpr bool TRACE = Policy::TRACE;

	/*
	 * VALUES_LATE: load the values only once the keys are placed, so that
	 * keys, ranks and values are never all held at once (fewer registers)
	 * and the loads overlap the look-back.  PACK_RANKS: two ranks per
	 * register, 16 bits each (a tile holds at most 65536 keys).
	 */
	/*
	 * BULK_LOAD: thread 0 copies the tile's keys (and values) into shared
	 * memory with the copy engine, and the threads read them from there,
	 * instead of one global load per key and thread.
	 */
	static constexpr bool BULK_LOAD = Policy::BULK_LOAD;
	static constexpr bool VALUES_LATE = Policy::VALUES_LATE && !BULK_LOAD && RANK != GS_RADIX_RANK_BALLOT_SERIAL;

	static_assert(!(BULK_LOAD && RANK == GS_RADIX_RANK_BALLOT_SERIAL), "the serial rank loads its own values");

	static constexpr bool PACK_RANKS = Policy::PACK_RANKS;
	static constexpr int RANK_WORDS = PACK_RANKS ? (ITEMS + 1) / 2 : ITEMS;

	static_assert(THREADS % 32 == 0, "whole warps");
	static_assert(THREADS >= BINS, "the look-back gives each bin a thread");

	typedef gs_radix_key<KeyT> key_ops;
	typedef cub::BlockScan<uint32_t, THREADS> block_scan;

	/* Dynamic shared memory: the exchange buffers, the warp counters, the offsets. */
	static constexpr size_t KEYS_BYTES = (size_t) TILE * sizeof(KeyT);
	static constexpr size_t VALUES_BYTES = HAS_VALUES ? (size_t) TILE * sizeof(uint32_t) : 0;
	static constexpr size_t COUNTERS_BYTES = (size_t) WARPS * BINS * sizeof(uint32_t);
	/* BULK_LOAD with values: where the tile's values land before they are placed */
	static constexpr size_t STAGE_BYTES = Policy::BULK_LOAD ? VALUES_BYTES : 0;
	static constexpr size_t SMEM_BYTES = KEYS_BYTES + VALUES_BYTES + COUNTERS_BYTES + BINS * sizeof(uint32_t) +
		STAGE_BYTES;

	struct static_storage
	{
		typename block_scan::TempStorage scan;
		uint64_t	bar;			/* BULK_LOAD: the copies' mbarrier */
		uint32_t	tile;
		uint32_t	bulk_keys;		/* BULK_LOAD: the tile's first keys (values) */
		uint32_t	bulk_values;	/* that came by bulk copy */
	};

	static_assert(!PACK_RANKS || TILE <= 65536, "a rank fits in 16 bits");

	static __device__ __forceinline__ void
	set_rank(uint32_t (&r)[RANK_WORDS], int i, uint32_t v)
	{
		if (!PACK_RANKS)
			r[i] = v;
		else if (i % 2 == 0)
			r[i / 2] = (r[i / 2] & 0xFFFF0000u) | v;
		else
			r[i / 2] = (r[i / 2] & 0xFFFFu) | (v << 16);
	}

	static __device__ __forceinline__ uint32_t
	get_rank(const uint32_t (&r)[RANK_WORDS], int i)
	{
		return PACK_RANKS ? (r[i / 2] >> (16 * (i % 2))) & 0xFFFFu : r[i];
	}

	/* this thread's values of the tile, warp-striped like its keys */
	static __device__ __forceinline__ void
	load_values(const uint32_t *values_in, uint32_t tile_start, uint32_t warp_start, uint32_t lane,
				uint32_t valid, uint32_t (&values)[HAS_VALUES ? ITEMS : 1])
	{
#pragma unroll
		for (int i = 0; i < (HAS_VALUES ? ITEMS : 0); i++)
		{
			uint32_t	pos = warp_start + 32 * i + lane;

			if (pos < valid)
				values[i] = values_in[tile_start + pos];
		}
	}

	/*
	 * Thread b < BINS: the count of digit b in all earlier tiles, published
	 * as this tile's inclusive count, and where the tile's keys of digit b
	 * go (s_offset, relative to their place in the pre-sorted tile).  The
	 * last tile of the launch hands the offsets on to the next portion.
	 */
	static __device__ __forceinline__ void
	look_back(const gs_radix_pass_params<KeyT> &p, uint32_t tile, uint32_t real, uint32_t local_start,
			  uint32_t *status, uint32_t *s_offset, uint32_t &reads)
	{
		const int	tid = threadIdx.x;

		if (tid >= BINS)
			return;

		uint32_t	before = 0;

		if (tile > 0 && !(ABLATE & 1))
		{
			before = gs_lookback_exclusive<Policy::LOOKBACK_WINDOW>(p.lookback + tid, tile, BINS,
																	TRACE ? &reads : nullptr);
			gs_store_relaxed(status, GS_LOOKBACK_INCLUSIVE | (before + real));
		}

		uint32_t	base = p.bin_base_in[tid] + before;

		s_offset[tid] = base - local_start;
		if (tile == gridDim.x - 1)
			p.bin_base_out[tid] = base + real;
	}

	static __device__ __forceinline__ void
	stamp(unsigned long long *t, int i)
	{
		if (TRACE && threadIdx.x == 0)
			t[i] = clock64();
	}

	static __device__ __forceinline__ uint32_t
	digit_of(KeyT key, int digit)
	{
		return gs_radix_digit<RADIX_BITS>(key, digit * RADIX_BITS);
	}

	/*
	 * A pass over a digit that is the same for every key, which the device
	 * plan makes copy: the keys keep their places, so each tile is copied,
	 * transformed if this is the first or last pass.  No look-back.
	 */
	static __device__ __forceinline__ void
	copy_tile(const gs_radix_pass_params<KeyT> &p, const KeyT *keys_in, KeyT *keys_out, const uint32_t *values_in,
			  uint32_t *values_out, bool first, bool last)
	{
		const uint32_t tile_start = blockIdx.x * (uint32_t) TILE;
		const uint32_t valid = min((uint32_t) TILE, p.n - tile_start);

		for (uint32_t pos = threadIdx.x; pos < valid; pos += THREADS)
		{
			KeyT		key = keys_in[tile_start + pos];

			if (first)
				key = key_ops::to_ordered(key, p.is_float, p.descending);
			if (last)
				key = key_ops::from_ordered(key, p.is_float, p.descending);
			keys_out[tile_start + pos] = key;
			if (HAS_VALUES)
				values_out[tile_start + pos] = values_in[tile_start + pos];
		}
	}

	static __device__ __forceinline__ void
	run(const gs_radix_pass_params<KeyT> &p, unsigned char *smem, static_storage &ss)
	{
		/* what a device plan may change (GS_RADIX_PLAN_DEVICE, _AHEAD) */
		const KeyT *keys_in = p.keys_in;
		KeyT	   *keys_out = p.keys_out;
		const uint32_t *values_in = p.values_in;
		uint32_t   *values_out = p.values_out;
		bool		first = p.first;
		bool		last = p.last;
		KeyT	   *s_keys = (KeyT *) smem;
		uint32_t   *s_values = (uint32_t *) (smem + KEYS_BYTES);
		uint32_t   *s_counters = (uint32_t *) (smem + KEYS_BYTES + VALUES_BYTES);
		uint32_t   *s_offset = s_counters + WARPS * BINS;
		uint32_t   *s_stage = s_offset + BINS;
		const int	tid = threadIdx.x;
		const int	warp = tid / 32;
		const uint32_t lane = gs_lane_id();
		uint32_t   *warp_counters = s_counters + warp * BINS;
		unsigned long long t[GS_RADIX_TRACE_WORDS];
		uint32_t	reads = 0;
		uint32_t	my_tile = 0;

		stamp(t, GS_RADIX_TRACE_START);
		if (BULK_LOAD && tid == 0)
			gs_bulk_init(&ss.bar);
		if (TRACE && tid == 0)
			asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t[GS_RADIX_TRACE_START_NS]));

		/*
		 * Tiles are numbered in the order blocks start, not by blockIdx, so
		 * that every tile a block looks back on belongs to a running block.
		 * The atomic goes first: its round trip overlaps the work below.
		 */
		if (tid == 0)
			ss.tile = my_tile = atomicAdd(p.tile_counter, 1);

		const uint32_t varying = p.plan_mode != GS_RADIX_PLAN_HOST ? p.plan[0] : 0;
		const uint32_t moving = p.plan_mode == GS_RADIX_PLAN_DEVICE ? p.plan[1] : 0;

		/* this launch clears the status words of the next one */
		if (p.lookback_clear_words != 0)
		{
			size_t		chunk = (p.lookback_clear_words + gridDim.x - 1) / gridDim.x;
			size_t		begin = blockIdx.x * chunk;
			size_t		end = min(begin + chunk, p.lookback_clear_words);

			for (size_t i = begin + tid; i < end; i += THREADS)
				p.lookback_clear[i] = 0;
		}
		if (p.plan_mode == GS_RADIX_PLAN_AHEAD)
		{
			if (!(varying & (1u << p.digit)))
				return;
			last = (varying >> p.digit) == 1;
		}
		else if (p.plan_mode == GS_RADIX_PLAN_DEVICE)
		{
			/* keys_in and keys_out (values too) come as buffers 0 and 1 */
			const uint32_t below = moving & ((1u << p.digit) - 1);

			if (!(moving & (1u << p.digit)))
				return;
			if (__popc(below) % 2)
			{
				keys_in = p.keys_out;
				keys_out = (KeyT *) p.keys_in;
				values_in = p.values_out;
				values_out = (uint32_t *) p.values_in;
			}
			first = below == 0;
			last = (moving >> p.digit) == 1;
			if (!(varying & (1u << p.digit)))
			{
				copy_tile(p, keys_in, keys_out, values_in, values_out, first, last);
				return;
			}
		}
		if (BULK_LOAD && tid == 0)
		{
			const uint32_t start = my_tile * (uint32_t) TILE;
			const uint32_t count = min((uint32_t) TILE, p.n - start);
			const uint32_t nk = gs_bulk_count(keys_in + start, count, sizeof(KeyT));
			const uint32_t nv = HAS_VALUES ? gs_bulk_count(values_in + start, count, sizeof(uint32_t)) : 0;

			gs_bulk_expect(&ss.bar, nk * (uint32_t) sizeof(KeyT) + nv * (uint32_t) sizeof(uint32_t));
			if (nk != 0)
				gs_bulk_copy(s_keys, keys_in + start, nk * (uint32_t) sizeof(KeyT), &ss.bar);
			if (nv != 0)
				gs_bulk_copy(s_stage, values_in + start, nv * (uint32_t) sizeof(uint32_t), &ss.bar);
			ss.bulk_keys = nk;
			ss.bulk_values = nv;
		}
		for (int i = tid; i < WARPS * BINS; i += THREADS)
			s_counters[i] = 0;
		__syncthreads();
		stamp(t, GS_RADIX_TRACE_TILE);

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
		if (BULK_LOAD)
			gs_bulk_wait(&ss.bar);
		if (BULK_LOAD && ss.bulk_keys == TILE)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
				keys[i] = s_keys[warp_start + 32 * i + lane];
		}
		else if (BULK_LOAD)
		{
			const uint32_t bulk = ss.bulk_keys;

#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t	pos = warp_start + 32 * i + lane;

				keys[i] = pos < bulk ? s_keys[pos] : pos < valid ? keys_in[tile_start + pos] : (KeyT) ~(KeyT) 0;
			}
		}
		else if (valid == TILE)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
				keys[i] = keys_in[tile_start + warp_start + 32 * i + lane];
		}
		else
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t	pos = warp_start + 32 * i + lane;

				keys[i] = pos < valid ? keys_in[tile_start + pos] : (KeyT) ~(KeyT) 0;
			}
		}
		if (first)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t	pos = warp_start + 32 * i + lane;

				if (pos < valid)
					keys[i] = key_ops::to_ordered(keys[i], p.is_float, p.descending);
			}
		}

		/*
		 * Early counts: each warp's digit histogram.  With
		 * GS_RADIX_RANK_ATOMIC the same atomics give each key its place among
		 * its warp's keys of its digit (item order, then lane order: input
		 * order), kept in ranks until the key's rank replaces it.
		 */
		uint32_t	ranks[RANK_WORDS];

		if (PACK_RANKS)
		{
#pragma unroll
			for (int w = 0; w < RANK_WORDS; w++)
				ranks[w] = 0;
		}
		/*
		 * WARP_RUNS: a warp whose keys all have one digit in this pass (runs
		 * of equal or sorted keys) ranks them by position, item then lane,
		 * and sets its count with one store: no atomics, which are slow when
		 * all 32 lanes hit one counter.
		 */
		bool		warp_uniform = false;

		if (RANK == GS_RADIX_RANK_ATOMIC && Policy::WARP_RUNS)
		{
			const uint32_t d0 = __shfl_sync(0xffffffffu, digit_of(keys[0], p.digit), 0);
			uint32_t	diff = 0;

#pragma unroll
			for (int i = 0; i < ITEMS; i++)
				diff |= digit_of(keys[i], p.digit) ^ d0;
			warp_uniform = !__any_sync(0xffffffffu, diff != 0);
			if (warp_uniform)
			{
				if (lane == 0)
					warp_counters[d0] = WARP_ITEMS;
#pragma unroll
				for (int i = 0; i < ITEMS; i++)
					set_rank(ranks, i, 32 * i + lane);
			}
		}
		if (!warp_uniform)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t   *c = &warp_counters[digit_of(keys[i], p.digit)];

				if (RANK == GS_RADIX_RANK_ATOMIC)
					set_rank(ranks, i, atomicAdd(c, 1));
				else
					atomicAdd(c, 1);
			}
		}

		/* the values' loads overlap the scan below (or, VALUES_LATE, the look-back) */
		uint32_t	values[HAS_VALUES ? ITEMS : 1];

		if (HAS_VALUES && !VALUES_LATE && !BULK_LOAD)
			load_values(values_in, tile_start, warp_start, lane, valid, values);
		__syncthreads();
		stamp(t, GS_RADIX_TRACE_COUNTED);

		/*
		 * Thread b owns digit b: it publishes the tile's count, and turns the
		 * warps' counts into where each warp's keys of the digit start in the
		 * pre-sorted tile.
		 */
		uint32_t	count = tid < BINS ? gs_warp_counts_to_starts<WARPS, BINS>(s_counters, tid) : 0;
		uint32_t	local_start;

		/* the padding keys are all in the last bin: not the tile's to publish */
		uint32_t	real = count - (tid == BINS - 1 ? TILE - valid : 0);
		uint32_t   *status = p.lookback + (size_t) tile * BINS + tid;

		if (tid < BINS)
			gs_store_relaxed(status, (tile == 0 ? GS_LOOKBACK_INCLUSIVE : GS_LOOKBACK_AGGREGATE) | real);
		block_scan(ss.scan).ExclusiveSum(count, local_start);
		if (tid < BINS)
			gs_warp_starts_add<WARPS, BINS>(s_counters, tid, local_start);
		__syncthreads();
		stamp(t, GS_RADIX_TRACE_SCANNED);

		/* rank each key to its place in the tile, and put it there */
		if (RANK == GS_RADIX_RANK_ATOMIC || RANK == GS_RADIX_RANK_BALLOT)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t	digit = digit_of(keys[i], p.digit);

				if (RANK == GS_RADIX_RANK_ATOMIC)
					set_rank(ranks, i, warp_counters[digit] + get_rank(ranks, i));
				else
					set_rank(ranks, i, gs_warp_rank_digit_atomic<RADIX_BITS>(digit, warp_counters));
			}
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				s_keys[get_rank(ranks, i)] = keys[i];
				if (HAS_VALUES && !VALUES_LATE && !BULK_LOAD)
					s_values[get_rank(ranks, i)] = values[i];
			}
			if (HAS_VALUES && BULK_LOAD && ss.bulk_values == TILE)
			{
#pragma unroll
				for (int i = 0; i < ITEMS; i++)
					s_values[get_rank(ranks, i)] = s_stage[warp_start + 32 * i + lane];
			}
			else if (HAS_VALUES && BULK_LOAD)
			{
				const uint32_t bulk = ss.bulk_values;

#pragma unroll
				for (int i = 0; i < ITEMS; i++)
				{
					uint32_t	pos = warp_start + 32 * i + lane;

					if (pos < valid)
						s_values[get_rank(ranks, i)] = pos < bulk ? s_stage[pos] : values_in[tile_start + pos];
				}
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
				if (HAS_VALUES)
					s_values[rank] = values[i];
			}
		}
		if (HAS_VALUES && VALUES_LATE)
			load_values(values_in, tile_start, warp_start, lane, valid, values);
		stamp(t, GS_RADIX_TRACE_RANKED);

		look_back(p, tile, real, local_start, status, s_offset, reads);
		stamp(t, GS_RADIX_TRACE_LOOKED_BACK);
		if (HAS_VALUES && VALUES_LATE)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
				s_values[get_rank(ranks, i)] = values[i];
		}
		__syncthreads();
		stamp(t, GS_RADIX_TRACE_OFFSETS);

		/* scatter: consecutive threads write consecutive places of a digit's run */
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			uint32_t	pos = i * THREADS + tid;

			if (pos < valid)
			{
				KeyT		key = s_keys[pos];
				uint32_t	dest = s_offset[digit_of(key, p.digit)] + pos;

				keys_out[dest] = last ? key_ops::from_ordered(key, p.is_float, p.descending) : key;
				if (HAS_VALUES)
					values_out[dest] = s_values[pos];
			}
		}
		if (TRACE && tid == 0 && p.trace != NULL)
		{
			unsigned long long *out = p.trace + (size_t) tile * GS_RADIX_TRACE_WORDS;
			uint32_t	sm;

			t[GS_RADIX_TRACE_END] = clock64();
			asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t[GS_RADIX_TRACE_END_NS]));
			asm("mov.u32 %0, %%smid;" : "=r"(sm));
			t[GS_RADIX_TRACE_READS] = reads;
			t[GS_RADIX_TRACE_SM] = sm;
			for (int i = 0; i < GS_RADIX_TRACE_WORDS; i++)
				out[i] = t[i];
		}
	}
};

/* ------------------------------------------------------------------------
 * A whole small sort in one block.
 * ------------------------------------------------------------------------ */

template <typename KeyT>
struct gs_radix_block_sort_params
{
	KeyT	   *keys;			/* in and out: sorted in place */
	uint32_t   *values;			/* NULL, or in and out likewise */
	uint32_t	n;				/* at most THREADS * ITEMS */
	bool		is_float;
	bool		descending;
};

/*
 * Sorts up to THREADS * ITEMS keys (and values) in one block, one launch:
 * load, then for each digit that varies among the keys, rank every key
 * stably as a onesweep tile does (warp histograms, digit starts, each key's
 * place among its warp's keys of its digit) and place it in shared memory; read the tile back in the same
 * warp-striped order for the next digit; store.  There is no look-back, no
 * scratch and no second launch, so small sorts cost one launch.  Past n the
 * tile holds all-ones keys, which stay behind every real key: they are last
 * in input order, and every pass is stable.
 */
template <typename KeyT, bool HAS_VALUES, int THREADS, int ITEMS, int RANK>
struct gs_radix_block_sort_agent
{
	static constexpr int RADIX_BITS = 8;
	static constexpr int BINS = 1 << RADIX_BITS;
	static constexpr int PASSES = gs_radix_key<KeyT>::BITS / RADIX_BITS;
	static constexpr int TILE = THREADS * ITEMS;
	static constexpr int WARPS = THREADS / 32;
	static constexpr int WARP_ITEMS = 32 * ITEMS;

	static_assert(THREADS >= BINS, "each bin has a thread");

	typedef gs_radix_key<KeyT> key_ops;
	typedef cub::BlockScan<uint32_t, THREADS> block_scan;

	static constexpr size_t KEYS_BYTES = (size_t) TILE * sizeof(KeyT);
	static constexpr size_t VALUES_BYTES = HAS_VALUES ? (size_t) TILE * sizeof(uint32_t) : 0;
	static constexpr size_t SMEM_BYTES = KEYS_BYTES + VALUES_BYTES + (size_t) WARPS * BINS * sizeof(uint32_t);

	struct static_storage
	{
		typename block_scan::TempStorage scan;
		uint32_t	varying[2];	/* OR of key ^ first key, low and high word */
	};

	static __device__ __forceinline__ void
	run(const gs_radix_block_sort_params<KeyT> &p, unsigned char *smem, static_storage &ss)
	{
		KeyT	   *s_keys = (KeyT *) smem;
		uint32_t   *s_values = (uint32_t *) (smem + KEYS_BYTES);
		uint32_t   *s_counters = (uint32_t *) (smem + KEYS_BYTES + VALUES_BYTES);
		const int	tid = threadIdx.x;
		const int	warp = tid / 32;
		const uint32_t lane = gs_lane_id();
		const uint32_t warp_start = warp * WARP_ITEMS;
		uint32_t   *warp_counters = s_counters + warp * BINS;
		const KeyT	first = key_ops::to_ordered(p.keys[0], p.is_float, p.descending);
		KeyT		keys[ITEMS];
		uint32_t	values[HAS_VALUES ? ITEMS : 1];
		KeyT		varying = 0;

		if (tid < 2)
			ss.varying[tid] = 0;
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			uint32_t	pos = warp_start + 32 * i + lane;

			keys[i] = (KeyT) ~(KeyT) 0;
			if (pos < p.n)
			{
				keys[i] = key_ops::to_ordered(p.keys[pos], p.is_float, p.descending);
				varying |= keys[i] ^ first;
				if (HAS_VALUES)
					values[i] = p.values[pos];
			}
		}

		/* the digits that vary among the real keys: the others cost no pass */
		uint32_t	lo = __reduce_or_sync(0xffffffffu, (uint32_t) varying);
		uint32_t	hi = sizeof(KeyT) == 8 ? __reduce_or_sync(0xffffffffu, (uint32_t) ((uint64_t) varying >> 32)) : 0;

		__syncthreads();
		if (lane == 0)
		{
			if (lo)
				atomicOr(&ss.varying[0], lo);
			if (hi)
				atomicOr(&ss.varying[1], hi);
		}
		__syncthreads();

		const uint64_t vary = ss.varying[0] | ((uint64_t) ss.varying[1] << 32);

		for (int d = 0; d < PASSES; d++)
		{
			if (((vary >> (d * RADIX_BITS)) & (BINS - 1)) == 0)
				continue;
			for (int i = tid; i < WARPS * BINS; i += THREADS)
				s_counters[i] = 0;
			__syncthreads();
			uint32_t	ranks[ITEMS];

#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t   *c = &warp_counters[gs_radix_digit<RADIX_BITS>(keys[i], d * RADIX_BITS)];

				if (RANK == GS_RADIX_RANK_ATOMIC)
					ranks[i] = atomicAdd(c, 1);
				else
					atomicAdd(c, 1);
			}
			__syncthreads();

			/* thread b owns digit b: where each warp's keys of digit b start */
			uint32_t	count = tid < BINS ? gs_warp_counts_to_starts<WARPS, BINS>(s_counters, tid) : 0;
			uint32_t	start;

			block_scan(ss.scan).ExclusiveSum(count, start);
			if (tid < BINS)
				gs_warp_starts_add<WARPS, BINS>(s_counters, tid, start);
			__syncthreads();

#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				uint32_t	digit = gs_radix_digit<RADIX_BITS>(keys[i], d * RADIX_BITS);

				if (RANK == GS_RADIX_RANK_ATOMIC)
					ranks[i] += warp_counters[digit];
				else
					ranks[i] = gs_warp_rank_digit_atomic<RADIX_BITS>(digit, warp_counters);
			}
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				s_keys[ranks[i]] = keys[i];
				if (HAS_VALUES)
					s_values[ranks[i]] = values[i];
			}
			__syncthreads();
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				keys[i] = s_keys[warp_start + 32 * i + lane];
				if (HAS_VALUES)
					values[i] = s_values[warp_start + 32 * i + lane];
			}
		}

		/* every read of p.keys came before the barriers above */
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			uint32_t	pos = warp_start + 32 * i + lane;

			if (pos < p.n)
			{
				p.keys[pos] = key_ops::from_ordered(keys[i], p.is_float, p.descending);
				if (HAS_VALUES)
					p.values[pos] = values[i];
			}
		}
	}
};

#endif							/* GPUSORT_RADIX_AGENT_CUH */
