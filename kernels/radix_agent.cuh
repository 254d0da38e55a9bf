/*
 * radix_agent.cuh: what one thread block does in each kernel of the GPU
 * radix sort (radix_sort.cu).  The histogram agent counts every digit of
 * every key in one read of the input (the upfront histogram of Onesweep,
 * Adinets & Merrill 2022); the onesweep agent does one digit pass over one
 * tile: load, rank the digits stably in shared memory (the local pre-sort of
 * Satish, Harris & Garland 2009), chain the tile's digit counts to its
 * predecessors' by decoupled look-back (Merrill & Garland 2016), and scatter
 * the pre-sorted tile so that each digit's run is written contiguously
 * (coalesced).  Each agent's process() names its steps in order, as CUB's
 * agents do; each step is a member function, inlined.
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
	const int	tid;
	const size_t grid_threads;
	uint32_t	(*const h)[BINS];	/* this warp's sub-histogram */
	uint32_t	run_digit[PASSES];	/* a one-entry cache per digit: equal */
	uint32_t	run_count[PASSES];	/* digits in a row cost one atomic */

	__device__ __forceinline__
	gs_radix_histogram_agent(storage &s_, const params &p_)
		: s(s_), p(p_), tid(threadIdx.x), grid_threads((size_t) gridDim.x * THREADS),
		  h(s_.hist[threadIdx.x / 32 % COPIES])
	{
#pragma unroll
		for (int d = 0; d < PASSES; d++)
		{
			run_digit[d] = 0;
			run_count[d] = 0;
		}
	}

	/*
	 * Count every digit of every key into this block's sub-histograms, add
	 * them to the device's; the last block to finish turns the histograms
	 * into the digit offsets and the plan.
	 */
	__device__ __forceinline__ void
	process(void)
	{
		clear();
		__syncthreads();
		count_vectors();
		count_rest();
		flush_runs();
		__syncthreads();
		add_to_device();
		if (!finished_last())
			return;
		plan_passes();
	}

	/* the sub-histograms; and the first digit pass's look-back words, which it finds cleared */
	__device__ __forceinline__ void
	clear(void)
	{
		for (int i = tid; i < COPIES * PASSES * BINS; i += THREADS)
			(&s.hist[0][0][0])[i] = 0;
		for (size_t i = blockIdx.x * (size_t) THREADS + tid; i < p.lookback0_words; i += grid_threads)
			p.lookback0[i] = 0;
	}

	__device__ __forceinline__ void
	count(KeyT bits)
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

	/* 16-byte loads where the input is aligned, UNROLL of them in flight */
	__device__ __forceinline__ size_t
	vectors(void)
	{
		return ((uintptr_t) p.keys % 16 == 0) ? p.n / VEC : 0;
	}

	__device__ __forceinline__ void
	count_vectors(void)
	{
		const size_t nvec = vectors();
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
						count(k[j]);
				}
			}
		}
	}

	/* the keys after the last whole vector (all of them where the input is misaligned) */
	__device__ __forceinline__ void
	count_rest(void)
	{
		for (size_t i = vectors() * VEC + blockIdx.x * (size_t) THREADS + tid; i < p.n; i += grid_threads)
			count(p.keys[i]);
	}

	__device__ __forceinline__ void
	flush_runs(void)
	{
#pragma unroll
		for (int d = 0; d < PASSES; d++)
			if (run_count[d] != 0)
				atomicAdd(&h[d][run_digit[d]], run_count[d]);
	}

	__device__ __forceinline__ void
	add_to_device(void)
	{
		for (int i = tid; i < PASSES * BINS; i += THREADS)
		{
			uint32_t	sum = 0;

#pragma unroll
			for (int c = 0; c < COPIES; c++)
				sum += (&s.hist[c][0][0])[i];
			if (sum != 0)
				atomicAdd(&p.hist[i], sum);
		}
	}

	/* whether this block finished last: then every block's counts are in p.hist */
	__device__ __forceinline__ bool
	finished_last(void)
	{
		__threadfence();
		__syncthreads();
		if (tid == 0)
			s.last_block = atomicAdd(p.blocks_done, 1) == gridDim.x - 1;
		__syncthreads();
		if (!s.last_block)
			return false;
		__threadfence();
		return true;
	}

	/*
	 * Per digit: the exclusive offsets of its bins, and whether it varies
	 * (a digit with one non-empty bin is the same for every key: its pass
	 * is skipped, the range limiter of Ha, Krüger & Silva generalised to
	 * every digit).  With a device plan every pass is launched and those
	 * over constant digits do nothing, except that when an odd number of
	 * digits vary the lowest constant digit's pass copies the keys: the
	 * result then always ends where an even number of passes leaves it.
	 */
	__device__ __forceinline__ void
	plan_passes(void)
	{
		uint32_t	plan = 0;

		for (int d = 0; d < PASSES; d++)
		{
			uint32_t	c = tid < BINS ? __ldcg(&p.hist[d * BINS + tid]) : 0;
			uint32_t	excl;

			if (!__syncthreads_or(c == p.n))
				plan |= 1u << d;
			block_scan(s.scan).ExclusiveSum(c, excl);
			__syncthreads();
			if (tid < BINS)
				p.bin_base[d * p.bin_base_pass_stride + tid] = excl;
		}
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

/* The points between a tile's steps (gs_radix_onesweep_agent::process) that an instrument is told of. */
enum gs_radix_step
{
	GS_RADIX_STEP_START,		/* entry */
	GS_RADIX_STEP_TILE,			/* tile number known (barrier) */
	GS_RADIX_STEP_COUNTED,		/* keys loaded, warp histograms done (barrier) */
	GS_RADIX_STEP_SCANNED,		/* counts published, digit starts scanned (barrier) */
	GS_RADIX_STEP_RANKED,		/* this thread's warp has ranked and placed its keys */
	GS_RADIX_STEP_LOOKED_BACK,	/* this thread has its digit's count in earlier tiles */
	GS_RADIX_STEP_OFFSETS,		/* every digit's offset known (barrier) */
	GS_RADIX_STEP_END,			/* this thread has scattered its keys */
	GS_RADIX_STEPS
};

/*
 * The instrument of the onesweep agent: hooks that a benchmark replaces to
 * time the steps, leave one out, or load the tile another way
 * (bench/radix_instrument.cuh).  This, the library's, adds nothing: its
 * look-back is the library's and every other hook is empty.
 * LOADS_TILE: the instrument loads the tile's keys (load_keys, after
 * start_loads) and places its values (place_values), in dynamic shared
 * memory of its own, smem_bytes past the agent's.
 */
struct gs_radix_no_instrument
{
	static constexpr bool LOADS_TILE = false;

	static constexpr size_t
	smem_bytes(size_t values_bytes)
	{
		(void) values_bytes;
		return 0;
	}

	template <class Agent>
	__device__ __forceinline__ void
	at(const Agent &, int)
	{
	}

	template <int WINDOW>
	__device__ __forceinline__ uint32_t
	look_back(const uint32_t *status, uint32_t tile, uint32_t stride)
	{
		return gs_lookback_exclusive<WINDOW>(status, tile, stride);
	}

	template <class Agent>
	__device__ __forceinline__ void
	start_loads(Agent &)
	{
	}

	template <class Agent, class K, int N>
	__device__ __forceinline__ void
	load_keys(Agent &, K (&)[N])
	{
	}

	template <class Agent, int N>
	__device__ __forceinline__ void
	place_values(Agent &, const uint32_t (&)[N])
	{
	}
};

/*
 * One tile, in the order of Onesweep: load; count the digits per warp and
 * publish the tile's counts at once, so that later tiles rarely wait; rank
 * each key to its place in the tile and pre-sort the tile in shared memory;
 * only then look back for the counts of earlier tiles (by now mostly
 * final); scatter the runs of each digit to the output.
 *
 * RANK: GS_RADIX_RANK_* (radix_block.cuh).  VALUES_LATE: load the values
 * only once the keys are placed, so that keys, ranks and values are never
 * all held at once (fewer registers) and the loads overlap the look-back.
 * PACK_RANKS: two ranks per register, 16 bits each (a tile holds at most
 * 65536 keys).  The register arrays (keys, ranks, values) are locals of
 * process(), passed to the steps by reference with constant sizes, so that
 * they stay in registers.
 */
template <typename KeyT, bool HAS_VALUES, class Policy, int RANK, class Instrument = gs_radix_no_instrument>
struct gs_radix_onesweep_agent
{
	static constexpr int RADIX_BITS = Policy::RADIX_BITS;
	static constexpr int BINS = 1 << RADIX_BITS;
	static constexpr int THREADS = Policy::THREADS;
	static constexpr int ITEMS = Policy::ITEMS;
	static constexpr int TILE = THREADS * ITEMS;
	static constexpr int WARPS = THREADS / 32;
	static constexpr int WARP_ITEMS = 32 * ITEMS;

	static constexpr bool VALUES_LATE = HAS_VALUES && Policy::VALUES_LATE && !Instrument::LOADS_TILE &&
		RANK != GS_RADIX_RANK_BALLOT_SERIAL;
	/* values loaded with the keys, before the scan, and placed with them */
	static constexpr bool VALUES_EARLY = HAS_VALUES && !VALUES_LATE && !Instrument::LOADS_TILE;
	static constexpr bool PACK_RANKS = Policy::PACK_RANKS;
	static constexpr int RANK_WORDS = PACK_RANKS ? (ITEMS + 1) / 2 : ITEMS;
	static constexpr int VALUE_WORDS = HAS_VALUES ? ITEMS : 1;

	static_assert(!(Instrument::LOADS_TILE && RANK == GS_RADIX_RANK_BALLOT_SERIAL),
				  "the serial rank loads its own values");
	static_assert(THREADS % 32 == 0, "whole warps");
	static_assert(THREADS >= BINS, "the look-back gives each bin a thread");
	static_assert(!PACK_RANKS || TILE <= 65536, "a rank fits in 16 bits");

	typedef gs_radix_key<KeyT> key_ops;
	typedef cub::BlockScan<uint32_t, THREADS> block_scan;

	/* Dynamic shared memory: the exchange buffers, the warp counters, the offsets, the instrument's. */
	static constexpr size_t KEYS_BYTES = (size_t) TILE * sizeof(KeyT);
	static constexpr size_t VALUES_BYTES = HAS_VALUES ? (size_t) TILE * sizeof(uint32_t) : 0;
	static constexpr size_t COUNTERS_BYTES = (size_t) WARPS * BINS * sizeof(uint32_t);
	static constexpr size_t OFFSETS_BYTES = (size_t) BINS * sizeof(uint32_t);
	static constexpr size_t SMEM_BYTES = KEYS_BYTES + VALUES_BYTES + COUNTERS_BYTES + OFFSETS_BYTES +
		Instrument::smem_bytes(VALUES_BYTES);

	struct static_storage
	{
		typename block_scan::TempStorage scan;
		uint32_t	tile;
	};

	const gs_radix_pass_params<KeyT> &p;
	static_storage &ss;
	Instrument	instrument;
	KeyT	   *const s_keys;		/* the tile, pre-sorted */
	uint32_t   *const s_values;
	uint32_t   *const s_counters;	/* [WARPS][BINS]: counts, then starts in the tile */
	uint32_t   *const s_offset;		/* [BINS]: output place less the place in the tile */
	unsigned char *const s_instrument;
	const int	tid;
	const uint32_t lane;
	uint32_t   *const warp_counters;
	const uint32_t warp_start;		/* this warp's first key in the tile */

	/* the pass: a device plan may change these (GS_RADIX_PLAN_DEVICE, _AHEAD) */
	const KeyT *keys_in;
	KeyT	   *keys_out;
	const uint32_t *values_in;
	uint32_t   *values_out;
	bool		first;
	bool		last;
	uint32_t	varying;			/* the histogram's plan, read on the device */
	uint32_t	moving;

	/* the tile (thread 0 knows tile from take_tile_number on, the others from read_tile) */
	uint32_t	tile;
	uint32_t	tile_start;
	uint32_t	valid;				/* keys of the tile before the end of the input */

	/* thread b < BINS: its digit's count in the tile (padding left out), where it starts there, its status word */
	uint32_t	real;
	uint32_t	local_start;
	uint32_t   *status;

	__device__ __forceinline__
	gs_radix_onesweep_agent(const gs_radix_pass_params<KeyT> &p_, unsigned char *smem, static_storage &ss_)
		: p(p_), ss(ss_), instrument(),
		  s_keys((KeyT *) smem),
		  s_values((uint32_t *) (smem + KEYS_BYTES)),
		  s_counters((uint32_t *) (smem + KEYS_BYTES + VALUES_BYTES)),
		  s_offset((uint32_t *) (smem + KEYS_BYTES + VALUES_BYTES + COUNTERS_BYTES)),
		  s_instrument(smem + KEYS_BYTES + VALUES_BYTES + COUNTERS_BYTES + OFFSETS_BYTES),
		  tid(threadIdx.x), lane(gs_lane_id()),
		  warp_counters(s_counters + threadIdx.x / 32 * BINS),
		  warp_start(threadIdx.x / 32 * WARP_ITEMS),
		  keys_in(p_.keys_in), keys_out(p_.keys_out), values_in(p_.values_in), values_out(p_.values_out),
		  first(p_.first), last(p_.last), varying(0), moving(0), tile(0), tile_start(0), valid(0),
		  real(0), local_start(0), status(nullptr)
	{
	}

	__device__ __forceinline__ void
	process(void)
	{
		instrument.at(*this, GS_RADIX_STEP_START);
		take_tile_number();
		read_plan();
		clear_next_lookback();
		if (!follow_plan())
			return;
		instrument.start_loads(*this);
		zero_counters();
		__syncthreads();
		read_tile();
		instrument.at(*this, GS_RADIX_STEP_TILE);

		KeyT		keys[ITEMS];
		uint32_t	ranks[RANK_WORDS];
		uint32_t	values[VALUE_WORDS];

		load_keys(keys);
		count_digits(keys, ranks);
		if constexpr (VALUES_EARLY)
			load_values(values);
		__syncthreads();
		instrument.at(*this, GS_RADIX_STEP_COUNTED);
		publish_and_scan();
		__syncthreads();
		instrument.at(*this, GS_RADIX_STEP_SCANNED);
		rank_and_place(keys, ranks, values);
		if constexpr (VALUES_LATE)
			load_values(values);
		instrument.at(*this, GS_RADIX_STEP_RANKED);
		look_back();
		instrument.at(*this, GS_RADIX_STEP_LOOKED_BACK);
		if constexpr (VALUES_LATE)
			place_values(values, ranks);
		__syncthreads();
		instrument.at(*this, GS_RADIX_STEP_OFFSETS);
		scatter();
		instrument.at(*this, GS_RADIX_STEP_END);
	}

	/* ---- the steps, in order ---- */

	/*
	 * Tiles are numbered in the order blocks start, not by blockIdx, so
	 * that every tile a block looks back on belongs to a running block.
	 * The atomic goes first: its round trip overlaps the steps up to the
	 * next barrier.
	 */
	__device__ __forceinline__ void
	take_tile_number(void)
	{
		if (tid == 0)
			ss.tile = tile = atomicAdd(p.tile_counter, 1);
	}

	__device__ __forceinline__ void
	read_plan(void)
	{
		varying = p.plan_mode != GS_RADIX_PLAN_HOST ? p.plan[0] : 0;
		moving = p.plan_mode == GS_RADIX_PLAN_DEVICE ? p.plan[1] : 0;
	}

	/* this launch clears the status words of the next one */
	__device__ __forceinline__ void
	clear_next_lookback(void)
	{
		if (p.lookback_clear_words == 0)
			return;

		size_t		chunk = (p.lookback_clear_words + gridDim.x - 1) / gridDim.x;
		size_t		begin = blockIdx.x * chunk;
		size_t		end = min(begin + chunk, p.lookback_clear_words);

		for (size_t i = begin + tid; i < end; i += THREADS)
			p.lookback_clear[i] = 0;
	}

	/*
	 * Where the pass reads the plan on the device: false when its digit is
	 * the same for every key, so that the tile is not sorted (it is copied
	 * where the device plan needs the keys moved).  A device plan also picks
	 * the buffers (keys_in and keys_out come as buffers 0 and 1) and which
	 * pass is first and last.
	 */
	__device__ __forceinline__ bool
	follow_plan(void)
	{
		if (p.plan_mode == GS_RADIX_PLAN_AHEAD)
		{
			if (!(varying & (1u << p.digit)))
				return false;
			last = (varying >> p.digit) == 1;
		}
		else if (p.plan_mode == GS_RADIX_PLAN_DEVICE)
		{
			const uint32_t below = moving & ((1u << p.digit) - 1);

			if (!(moving & (1u << p.digit)))
				return false;
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
				copy_tile();
				return false;
			}
		}
		return true;
	}

	/*
	 * A pass over a digit that is the same for every key, which the device
	 * plan makes copy: the keys keep their places, so each tile is copied,
	 * transformed if this is the first or last pass.  No look-back.
	 */
	__device__ __forceinline__ void
	copy_tile(void)
	{
		const uint32_t start = blockIdx.x * (uint32_t) TILE;
		const uint32_t count = min((uint32_t) TILE, p.n - start);

		for (uint32_t pos = tid; pos < count; pos += THREADS)
		{
			KeyT		key = keys_in[start + pos];

			if (first)
				key = key_ops::to_ordered(key, p.is_float, p.descending);
			if (last)
				key = key_ops::from_ordered(key, p.is_float, p.descending);
			keys_out[start + pos] = key;
			if (HAS_VALUES)
				values_out[start + pos] = values_in[start + pos];
		}
	}

	__device__ __forceinline__ void
	zero_counters(void)
	{
		for (int i = tid; i < WARPS * BINS; i += THREADS)
			s_counters[i] = 0;
	}

	/* after the barrier: every thread knows the tile */
	__device__ __forceinline__ void
	read_tile(void)
	{
		tile = ss.tile;
		tile_start = tile * (uint32_t) TILE;
		valid = min((uint32_t) TILE, p.n - tile_start);
	}

	/*
	 * Warp-striped load: item i of a lane is key warp_start + 32 i + lane,
	 * so item order then lane order is input order, which the ranking
	 * relies on for stability.  Past the end: all-ones keys, whose digit
	 * is the last bin and which rank after every real key of the tile.
	 * The first pass applies the key transform (keys.h).
	 */
	__device__ __forceinline__ void
	load_keys(KeyT (&keys)[ITEMS])
	{
		if constexpr (Instrument::LOADS_TILE)
			instrument.load_keys(*this, keys);
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
	}

	/*
	 * Early counts: each warp's digit histogram.  With GS_RADIX_RANK_ATOMIC
	 * the same atomics give each key its place among its warp's keys of its
	 * digit (item order, then lane order: input order), kept in ranks until
	 * the key's rank in the tile replaces it.
	 */
	__device__ __forceinline__ void
	count_digits(const KeyT (&keys)[ITEMS], uint32_t (&ranks)[RANK_WORDS])
	{
		if (PACK_RANKS)
		{
#pragma unroll
			for (int w = 0; w < RANK_WORDS; w++)
				ranks[w] = 0;
		}
		if (RANK == GS_RADIX_RANK_ATOMIC && Policy::WARP_RUNS && count_warp_run(keys, ranks))
			return;
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			uint32_t   *c = &warp_counters[digit_of(keys[i])];

			if (RANK == GS_RADIX_RANK_ATOMIC)
				set_rank(ranks, i, atomicAdd(c, 1));
			else
				atomicAdd(c, 1);
		}
	}

	/*
	 * WARP_RUNS: a warp whose keys all have one digit in this pass (runs of
	 * equal or sorted keys) ranks them by position, item then lane, and sets
	 * its count with one store: no atomics, which are slow when all 32 lanes
	 * hit one counter.  False (nothing done) where the digits differ.
	 */
	__device__ __forceinline__ bool
	count_warp_run(const KeyT (&keys)[ITEMS], uint32_t (&ranks)[RANK_WORDS])
	{
		const uint32_t d0 = __shfl_sync(0xffffffffu, digit_of(keys[0]), 0);
		uint32_t	diff = 0;

#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			diff |= digit_of(keys[i]) ^ d0;
		if (__any_sync(0xffffffffu, diff != 0))
			return false;
		if (lane == 0)
			warp_counters[d0] = WARP_ITEMS;
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			set_rank(ranks, i, 32 * i + lane);
		return true;
	}

	/* this thread's values of the tile, warp-striped like its keys */
	__device__ __forceinline__ void
	load_values(uint32_t (&values)[VALUE_WORDS])
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
	 * Thread b owns digit b: it publishes the tile's count (Onesweep's
	 * early publication of the aggregate), and turns the warps' counts into
	 * where each warp's keys of the digit start in the pre-sorted tile.
	 */
	__device__ __forceinline__ void
	publish_and_scan(void)
	{
		uint32_t	count = tid < BINS ? gs_warp_counts_to_starts<WARPS, BINS>(s_counters, tid) : 0;

		/* the padding keys are all in the last bin: not the tile's to publish */
		real = count - (tid == BINS - 1 ? TILE - valid : 0);
		status = p.lookback + (size_t) tile * BINS + tid;
		if (tid < BINS)
			gs_store_relaxed(status, (tile == 0 ? GS_LOOKBACK_INCLUSIVE : GS_LOOKBACK_AGGREGATE) | real);
		block_scan(ss.scan).ExclusiveSum(count, local_start);
		if (tid < BINS)
			gs_warp_starts_add<WARPS, BINS>(s_counters, tid, local_start);
	}

	/* each key's rank: its place in the pre-sorted tile; the key (and an early value) put there */
	__device__ __forceinline__ void
	rank_and_place(const KeyT (&keys)[ITEMS], uint32_t (&ranks)[RANK_WORDS], const uint32_t (&values)[VALUE_WORDS])
	{
		if constexpr (RANK == GS_RADIX_RANK_BALLOT_SERIAL)
			rank_and_place_serial(keys, values);
		else
		{
			rank_keys(keys, ranks);
			place_keys(keys, ranks, values);
			if constexpr (HAS_VALUES && Instrument::LOADS_TILE)
				instrument.place_values(*this, ranks);
		}
	}

	/* the place among its warp's keys of its digit, plus where the warp's keys of that digit start */
	__device__ __forceinline__ void
	rank_keys(const KeyT (&keys)[ITEMS], uint32_t (&ranks)[RANK_WORDS])
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			uint32_t	digit = digit_of(keys[i]);

			if (RANK == GS_RADIX_RANK_ATOMIC)
				set_rank(ranks, i, warp_counters[digit] + get_rank(ranks, i));
			else
				set_rank(ranks, i, gs_warp_rank_digit_atomic<RADIX_BITS>(digit, warp_counters));
		}
	}

	__device__ __forceinline__ void
	place_keys(const KeyT (&keys)[ITEMS], const uint32_t (&ranks)[RANK_WORDS], const uint32_t (&values)[VALUE_WORDS])
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			s_keys[get_rank(ranks, i)] = keys[i];
			if (VALUES_EARLY)
				s_values[get_rank(ranks, i)] = values[i];
		}
	}

	/* GS_RADIX_RANK_BALLOT_SERIAL: rank item by item, the counter updated by each group's leader */
	__device__ __forceinline__ void
	rank_and_place_serial(const KeyT (&keys)[ITEMS], const uint32_t (&values)[VALUE_WORDS])
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			uint32_t	rank = gs_warp_rank_digit<RADIX_BITS, Policy::USE_MATCH_ANY>(digit_of(keys[i]), warp_counters);

			s_keys[rank] = keys[i];
			if (HAS_VALUES)
				s_values[rank] = values[i];
		}
	}

	/*
	 * Thread b < BINS: the count of digit b in all earlier tiles (decoupled
	 * look-back), published as this tile's inclusive count, and where the
	 * tile's keys of digit b go (s_offset, relative to their place in the
	 * pre-sorted tile).  The last tile of the launch hands the offsets on to
	 * the next portion.
	 */
	__device__ __forceinline__ void
	look_back(void)
	{
		if (tid >= BINS)
			return;

		uint32_t	before = 0;

		if (tile > 0)
		{
			before = instrument.template look_back<Policy::LOOKBACK_WINDOW>(p.lookback + tid, tile, BINS);
			gs_store_relaxed(status, GS_LOOKBACK_INCLUSIVE | (before + real));
		}

		uint32_t	base = p.bin_base_in[tid] + before;

		s_offset[tid] = base - local_start;
		if (tile == gridDim.x - 1)
			p.bin_base_out[tid] = base + real;
	}

	/* VALUES_LATE: each value to its key's place in the tile */
	__device__ __forceinline__ void
	place_values(const uint32_t (&values)[VALUE_WORDS], const uint32_t (&ranks)[RANK_WORDS])
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			s_values[get_rank(ranks, i)] = values[i];
	}

	/*
	 * The pre-sorted tile to the output, keys and values: consecutive
	 * threads write consecutive places of a digit's run.  The last pass
	 * applies the inverse key transform.
	 */
	__device__ __forceinline__ void
	scatter(void)
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			uint32_t	pos = i * THREADS + tid;

			if (pos < valid)
			{
				KeyT		key = s_keys[pos];
				uint32_t	dest = s_offset[digit_of(key)] + pos;

				keys_out[dest] = last ? key_ops::from_ordered(key, p.is_float, p.descending) : key;
				if (HAS_VALUES)
					values_out[dest] = s_values[pos];
			}
		}
	}

	/* ---- helpers ---- */

	__device__ __forceinline__ uint32_t
	digit_of(KeyT key) const
	{
		return gs_radix_digit<RADIX_BITS>(key, p.digit * RADIX_BITS);
	}

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
 * place among its warp's keys of its digit) and place it in shared memory;
 * read the tile back in the same warp-striped order for the next digit;
 * store.  There is no look-back, no scratch and no second launch, so small
 * sorts cost one launch.  Past n the tile holds all-ones keys, which stay
 * behind every real key: they are last in input order, and every pass is
 * stable.
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
	static constexpr int VALUE_WORDS = HAS_VALUES ? ITEMS : 1;

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

	const gs_radix_block_sort_params<KeyT> &p;
	static_storage &ss;
	KeyT	   *const s_keys;
	uint32_t   *const s_values;
	uint32_t   *const s_counters;	/* [WARPS][BINS] */
	const int	tid;
	const uint32_t lane;
	const uint32_t warp_start;
	uint32_t   *const warp_counters;

	__device__ __forceinline__
	gs_radix_block_sort_agent(const gs_radix_block_sort_params<KeyT> &p_, unsigned char *smem, static_storage &ss_)
		: p(p_), ss(ss_), s_keys((KeyT *) smem), s_values((uint32_t *) (smem + KEYS_BYTES)),
		  s_counters((uint32_t *) (smem + KEYS_BYTES + VALUES_BYTES)), tid(threadIdx.x), lane(gs_lane_id()),
		  warp_start(threadIdx.x / 32 * WARP_ITEMS), warp_counters(s_counters + threadIdx.x / 32 * BINS)
	{
	}

	__device__ __forceinline__ void
	process(void)
	{
		KeyT		keys[ITEMS];
		uint32_t	values[VALUE_WORDS];
		const uint64_t vary = varying_digits(load(keys, values));

		for (int d = 0; d < PASSES; d++)
			if ((vary >> (d * RADIX_BITS)) & (BINS - 1))
				sort_digit(d * RADIX_BITS, keys, values);
		/* every read of p.keys came before the barriers above */
		store(keys, values);
	}

	/* warp-striped, as a onesweep tile; returns the OR of every real key ^ the first key */
	__device__ __forceinline__ KeyT
	load(KeyT (&keys)[ITEMS], uint32_t (&values)[VALUE_WORDS])
	{
		const KeyT	first = key_ops::to_ordered(p.keys[0], p.is_float, p.descending);
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
		return varying;
	}

	/* the bits that vary among the block's real keys: digits without any cost no pass */
	__device__ __forceinline__ uint64_t
	varying_digits(KeyT varying)
	{
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
		return ss.varying[0] | ((uint64_t) ss.varying[1] << 32);
	}

	/* one stable pass over the digit at bit shift, through shared memory and back to the registers */
	__device__ __forceinline__ void
	sort_digit(int shift, KeyT (&keys)[ITEMS], uint32_t (&values)[VALUE_WORDS])
	{
		uint32_t	ranks[ITEMS];

		for (int i = tid; i < WARPS * BINS; i += THREADS)
			s_counters[i] = 0;
		__syncthreads();
		count_digits(shift, keys, ranks);
		__syncthreads();
		scan_digits();
		__syncthreads();
		rank_keys(shift, keys, ranks);
		place(keys, values, ranks);
		__syncthreads();
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			keys[i] = s_keys[warp_start + 32 * i + lane];
			if (HAS_VALUES)
				values[i] = s_values[warp_start + 32 * i + lane];
		}
	}

	/* each warp's digit histogram (with the atomic rank, each key's place among its warp's keys of its digit) */
	__device__ __forceinline__ void
	count_digits(int shift, const KeyT (&keys)[ITEMS], uint32_t (&ranks)[ITEMS])
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			uint32_t   *c = &warp_counters[gs_radix_digit<RADIX_BITS>(keys[i], shift)];

			if (RANK == GS_RADIX_RANK_ATOMIC)
				ranks[i] = atomicAdd(c, 1);
			else
				atomicAdd(c, 1);
		}
	}

	/* thread b owns digit b: where each warp's keys of digit b start in the tile */
	__device__ __forceinline__ void
	scan_digits(void)
	{
		uint32_t	count = tid < BINS ? gs_warp_counts_to_starts<WARPS, BINS>(s_counters, tid) : 0;
		uint32_t	start;

		block_scan(ss.scan).ExclusiveSum(count, start);
		if (tid < BINS)
			gs_warp_starts_add<WARPS, BINS>(s_counters, tid, start);
	}

	__device__ __forceinline__ void
	rank_keys(int shift, const KeyT (&keys)[ITEMS], uint32_t (&ranks)[ITEMS])
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			uint32_t	digit = gs_radix_digit<RADIX_BITS>(keys[i], shift);

			if (RANK == GS_RADIX_RANK_ATOMIC)
				ranks[i] += warp_counters[digit];
			else
				ranks[i] = gs_warp_rank_digit_atomic<RADIX_BITS>(digit, warp_counters);
		}
	}

	__device__ __forceinline__ void
	place(const KeyT (&keys)[ITEMS], const uint32_t (&values)[VALUE_WORDS], const uint32_t (&ranks)[ITEMS])
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			s_keys[ranks[i]] = keys[i];
			if (HAS_VALUES)
				s_values[ranks[i]] = values[i];
		}
	}

	__device__ __forceinline__ void
	store(const KeyT (&keys)[ITEMS], const uint32_t (&values)[VALUE_WORDS])
	{
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
