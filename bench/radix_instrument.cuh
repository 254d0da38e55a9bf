/*
 * radix_instrument.cuh: instruments of the GPU radix sort's onesweep agent
 * for bench_radix (kernels/radix_agent.cuh, gs_radix_no_instrument), never
 * built into the library: per-step clock stamps of every tile, the
 * look-back left out (an ablation: the output is wrong by design), and the
 * tile loaded by bulk copies.  A policy names its instrument with
 * "typedef ... instrument" (instrument_of below).
 */
#ifndef GPUSORT_BENCH_RADIX_INSTRUMENT_CUH
#define GPUSORT_BENCH_RADIX_INSTRUMENT_CUH

#include <stdint.h>

#include <type_traits>

#include "radix_agent.cuh"

/* A policy's instrument: its "instrument" typedef, else the library's. */
template <class P, class = void>
struct instrument_of
{
	typedef gs_radix_no_instrument type;
};

template <class P>
struct instrument_of<P, std::void_t<typename P::instrument>>
{
	typedef typename P::instrument type;
};

/* ------------------------------------------------------------------------
 * Trace: thread 0 of each tile writes clock64() stamps at each step
 * (GS_RADIX_STEP_*) and these words to trace_out[tile * TRACE_WORDS + i],
 * in the pass over digit trace_digit only.  A stamp is taken where thread
 * 0 is, so those after a barrier include the wait for the block's slowest
 * thread.
 * ------------------------------------------------------------------------ */

enum
{
	TRACE_READS = GS_RADIX_STEPS,	/* look-back round trips of digit 0 */
	TRACE_SM,					/* the SM that ran the tile */
	TRACE_START_NS,				/* %globaltimer at entry and at the end */
	TRACE_END_NS,
	TRACE_WORDS
};

static __device__ unsigned long long *trace_out;	/* NULL: no trace */
static __device__ int trace_digit;

struct trace_instrument : gs_radix_no_instrument
{
	unsigned long long t[TRACE_WORDS];
	uint32_t	reads = 0;

	__device__ __forceinline__ void
	round_trip(void)
	{
		reads++;
	}

	template <int WINDOW>
	__device__ __forceinline__ uint32_t
	look_back(const uint32_t *status, uint32_t tile, uint32_t stride)
	{
		return gs_lookback_exclusive<WINDOW>(status, tile, stride, *this);
	}

	template <class Agent>
	__device__ __forceinline__ void
	at(const Agent &a, int step)
	{
		if (threadIdx.x != 0)
			return;
		t[step] = clock64();
		if (step == GS_RADIX_STEP_START)
			asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t[TRACE_START_NS]));
		if (step == GS_RADIX_STEP_END)
			write(a.tile, a.p.digit);
	}

	__device__ __forceinline__ void
	write(uint32_t tile, int digit)
	{
		unsigned long long *out = trace_out;
		uint32_t	sm;

		if (out == NULL || digit != trace_digit)
			return;
		out += (size_t) tile * TRACE_WORDS;
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t[TRACE_END_NS]));
		asm("mov.u32 %0, %%smid;" : "=r"(sm));
		t[TRACE_READS] = reads;
		t[TRACE_SM] = sm;
		for (int i = 0; i < TRACE_WORDS; i++)
			out[i] = t[i];
	}
};

/* ------------------------------------------------------------------------
 * Ablation: no wait for earlier tiles' counts (each tile takes 0 for
 * them), to measure what the look-back costs.
 * ------------------------------------------------------------------------ */

struct no_look_back_instrument : gs_radix_no_instrument
{
	template <int WINDOW>
	__device__ __forceinline__ uint32_t
	look_back(const uint32_t *, uint32_t, uint32_t)
	{
		return 0;
	}
};

/* ------------------------------------------------------------------------
 * Bulk copies from global to shared memory (sm_90's copy engine), which a
 * tile uses to load itself with one instruction instead of one load per key
 * and thread.  One mbarrier per block, used once (phase 0): thread 0
 * initialises it, announces the bytes and starts the copies; every thread
 * waits on it.  Addresses and sizes must be multiples of 16 bytes.
 * ------------------------------------------------------------------------ */

static __device__ __forceinline__ uint32_t
gs_smem_addr(const void *p)
{
	return (uint32_t) __cvta_generic_to_shared(p);
}

/* Thread 0, before the block's barrier: the mbarrier expects one arrival. */
static __device__ __forceinline__ void
gs_bulk_init(uint64_t *bar)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" : : "r"(gs_smem_addr(bar)) : "memory");
	asm volatile("fence.mbarrier_init.release.cluster;" : : : "memory");
}

/* Thread 0: the arrival, with the bytes the copies below will bring. */
static __device__ __forceinline__ void
gs_bulk_expect(uint64_t *bar, uint32_t bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
				 : : "r"(gs_smem_addr(bar)), "r"(bytes) : "memory");
}

static __device__ __forceinline__ void
gs_bulk_copy(void *dst, const void *src, uint32_t bytes, uint64_t *bar)
{
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
				 : : "r"(gs_smem_addr(dst)), "l"(src), "r"(bytes), "r"(gs_smem_addr(bar)) : "memory");
}

/* Every thread: until the copies announced have landed. */
static __device__ __forceinline__ void
gs_bulk_wait(uint64_t *bar)
{
	uint32_t	done;

	do
		asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
					 : "=r"(done) : "r"(gs_smem_addr(bar)) : "memory");
	while (!done);
}

/* How many of count elements of size bytes at src one bulk copy can take (0 if src is misaligned). */
static __device__ __forceinline__ uint32_t
gs_bulk_count(const void *src, uint32_t count, uint32_t size)
{
	if ((uintptr_t) src % 16 != 0)
		return 0;
	return (count * size) / 16 * 16 / size;
}

/*
 * Bulk loads: thread 0 copies the tile's keys (and values) into shared
 * memory with the copy engine, and the threads read them from there,
 * instead of one global load per key and thread.  Keys land in the agent's
 * key buffer (read back before the ranks overwrite it), values in a stage
 * of their own; the instrument's shared memory starts with the mbarrier and
 * the counts of keys and values that came by bulk copy (the rest, a
 * misaligned or partial end, is read from global memory).
 */
struct bulk_load_instrument : gs_radix_no_instrument
{
	static constexpr bool LOADS_TILE = true;
	static constexpr size_t HEADER_BYTES = 16;

	struct header
	{
		uint64_t	bar;
		uint32_t	keys;
		uint32_t	values;
	};

	static constexpr size_t
	smem_bytes(size_t values_bytes)
	{
		return HEADER_BYTES + values_bytes;
	}

	template <class Agent>
	static __device__ __forceinline__ header *
	head(const Agent &a)
	{
		return (header *) a.s_instrument;
	}

	template <class Agent>
	static __device__ __forceinline__ uint32_t *
	stage(const Agent &a)
	{
		return (uint32_t *) (a.s_instrument + HEADER_BYTES);
	}

	/* thread 0, which knows the tile number, before the barrier that follows */
	template <class Agent>
	__device__ __forceinline__ void
	start_loads(Agent &a)
	{
		typedef typename std::remove_cv<typename std::remove_pointer<decltype(a.keys_out)>::type>::type KeyT;

		if (a.tid != 0)
			return;

		header	   *h = head(a);
		const uint32_t start = a.tile * (uint32_t) Agent::TILE;
		const uint32_t count = min((uint32_t) Agent::TILE, a.p.n - start);
		const uint32_t nk = gs_bulk_count(a.keys_in + start, count, sizeof(KeyT));
		const uint32_t nv = a.values_in != NULL ? gs_bulk_count(a.values_in + start, count, sizeof(uint32_t)) : 0;

		gs_bulk_init(&h->bar);
		gs_bulk_expect(&h->bar, nk * (uint32_t) sizeof(KeyT) + nv * (uint32_t) sizeof(uint32_t));
		if (nk != 0)
			gs_bulk_copy(a.s_keys, a.keys_in + start, nk * (uint32_t) sizeof(KeyT), &h->bar);
		if (nv != 0)
			gs_bulk_copy(stage(a), a.values_in + start, nv * (uint32_t) sizeof(uint32_t), &h->bar);
		h->keys = nk;
		h->values = nv;
	}

	template <class Agent, class KeyT, int N>
	__device__ __forceinline__ void
	load_keys(Agent &a, KeyT (&keys)[N])
	{
		header	   *h = head(a);

		gs_bulk_wait(&h->bar);
		if (h->keys == Agent::TILE)
		{
#pragma unroll
			for (int i = 0; i < N; i++)
				keys[i] = a.s_keys[a.warp_start + 32 * i + a.lane];
			return;
		}

		const uint32_t bulk = h->keys;

#pragma unroll
		for (int i = 0; i < N; i++)
		{
			uint32_t	pos = a.warp_start + 32 * i + a.lane;

			keys[i] = pos < bulk ? a.s_keys[pos] : pos < a.valid ? a.keys_in[a.tile_start + pos] : (KeyT) ~(KeyT) 0;
		}
	}

	template <class Agent, int N>
	__device__ __forceinline__ void
	place_values(Agent &a, const uint32_t (&ranks)[N])
	{
		const uint32_t bulk = head(a)->values;
		const uint32_t *s_stage = stage(a);

#pragma unroll
		for (int i = 0; i < Agent::ITEMS; i++)
		{
			uint32_t	pos = a.warp_start + 32 * i + a.lane;

			if (pos < a.valid)
				a.s_values[Agent::get_rank(ranks, i)] = pos < bulk ? s_stage[pos] : a.values_in[a.tile_start + pos];
		}
	}
};

#endif							/* GPUSORT_BENCH_RADIX_INSTRUMENT_CUH */
