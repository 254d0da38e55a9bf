/*
 * merge_block.cuh: thread-, warp- and block-level primitives of the
 * merge-path merge sort (merge_sort.cu), after the Thrust / Modern GPU design
 * analysed in seed 003: a per-thread sorting network in registers, the merge
 * path split of two sorted runs (serial in shared memory; in global memory
 * serial, or 8- or 32-way parallel across lanes of a warp) and the serial
 * merge of E items.
 *
 * Stability: every primitive takes from the left run (A) on ties, so the
 * sort built on them is stable.
 */
#ifndef GPUSORT_MERGE_BLOCK_CUH
#define GPUSORT_MERGE_BLOCK_CUH

#include "merge_common.cuh"

/*
 * The order the merge sort uses.  PAIR = false: by key alone (values ride
 * along; stability comes from the algorithm).  PAIR = true: by (key, value),
 * for callers whose values are distinct positions that break ties (the
 * quicksort's fallback on (key, position) pairs).
 */
template <typename K, bool PAIR>
static __device__ __forceinline__ bool
gs_le(K ka, uint32_t va, K kb, uint32_t vb)
{
	return PAIR ? (ka < kb || (ka == kb && va <= vb)) : ka <= kb;
}

template <typename K, bool PAIR>
static __device__ __forceinline__ bool
gs_lt(K ka, uint32_t va, K kb, uint32_t vb)
{
	return PAIR ? (ka < kb || (ka == kb && va < vb)) : ka < kb;
}

/*
 * Odd-even transposition sort of ITEMS keys (and values) in registers.
 * Adjacent compare-exchanges that swap only on strictly greater keys keep
 * equal keys in order, so this is stable; ITEMS rounds suffice.  Fully
 * unrolled so the arrays stay in registers.
 */
template <typename K, int ITEMS, bool VALUES, bool PAIR>
static __device__ __forceinline__ void
gs_thread_sort(K (&k)[ITEMS], uint32_t (&v)[ITEMS])
{
#pragma unroll
	for (int round = 0; round < ITEMS; round++)
	{
#pragma unroll
		for (int j = round & 1; j + 1 < ITEMS; j += 2)
		{
			if (gs_lt<K, PAIR>(k[j + 1], v[j + 1], k[j], v[j]))
			{
				K			t = k[j];

				k[j] = k[j + 1];
				k[j + 1] = t;
				if (VALUES)
				{
					uint32_t	u = v[j];

					v[j] = v[j + 1];
					v[j + 1] = u;
				}
			}
		}
	}
}

/*
 * The merge-path search: how many of the first diag outputs of merge(A, B)
 * come from A, by a binary search over an index of type I (int in shared
 * memory, size_t in global memory), given that the answer lies in [lo, hi].
 */
template <typename I, typename K, bool PAIR>
static __device__ __forceinline__ I
gs_merge_path_between(const K *ak, const uint32_t *av, const K *bk, const uint32_t *bv, I diag, I lo, I hi)
{
	while (lo < hi)
	{
		I			mid = (lo + hi) >> 1;
		I			j = diag - 1 - mid;

		if (gs_le<K, PAIR>(ak[mid], PAIR ? av[mid] : 0, bk[j], PAIR ? bv[j] : 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The same over the whole of both runs (la and lb keys). */
template <typename I, typename K, bool PAIR>
static __device__ __forceinline__ I
gs_merge_path_search(const K *ak, const uint32_t *av, I la, const K *bk, const uint32_t *bv, I lb, I diag)
{
	return gs_merge_path_between<I, K, PAIR>(ak, av, bk, bv, diag, diag > lb ? diag - lb : 0, diag < la ? diag : la);
}

/*
 * Merge path in shared memory: how many of the first diag outputs of
 * merge(A, B) come from A (A first on ties).  A[i] is among them exactly
 * when A[i] <= B[diag - 1 - i], a predicate monotone in i.  av/bv are only
 * read when PAIR.
 */
template <typename K, bool PAIR>
static __device__ __forceinline__ int
gs_merge_path(const K *ak, const uint32_t *av, int la,
			  const K *bk, const uint32_t *bv, int lb, int diag)
{
	return gs_merge_path_search<int, K, PAIR>(ak, av, la, bk, bv, lb, diag);
}

/*
 * The same split in global memory, found by a group of LANES consecutive
 * lanes of a warp (LANES = 8 or 32): each step tests LANES evenly spaced
 * candidates at once and keeps the interval between the last true and the
 * first false, so a run of length L costs about log_LANES(L) dependent loads
 * instead of log2(L) (a lone binary search pays global latency, not
 * bandwidth), at LANES loads of each run per step.  All lanes of the group
 * must call it with the same arguments; all get the result.  Groups of one
 * warp may be at different steps: each ballot names its own group only.
 */
template <typename K, bool PAIR, int LANES>
static __device__ __forceinline__ size_t
gs_group_merge_path(const K *ak, const uint32_t *av, size_t la,
					const K *bk, const uint32_t *bv, size_t lb, size_t diag)
{
	static_assert(LANES == 8 || LANES == 32, "a group is 8 or 32 lanes");
	const unsigned lane = threadIdx.x & (LANES - 1);
	const unsigned shift = (threadIdx.x & 31) & ~(unsigned) (LANES - 1);
	const unsigned group_mask = (LANES == 32 ? 0xFFFFFFFFu : (1u << LANES) - 1) << shift;
	size_t		lo = diag > lb ? diag - lb : 0;
	size_t		hi = diag < la ? diag : la;

	/* invariant: the answer is in [lo, hi] */
	for (;;)
	{
		size_t		step = hi - lo > LANES ? (hi - lo + LANES - 1) / LANES : 1;
		size_t		p = lo + lane * step;
		bool		t = false;
		int			c;

		if (p < hi)
		{
			size_t		j = diag - 1 - p;

			t = gs_le<K, PAIR>(ak[p], PAIR ? av[p] : 0, bk[j], PAIR ? bv[j] : 0);
		}
		/* the predicate is monotone: a prefix of the group is true */
		c = __popc(__ballot_sync(group_mask, t) & group_mask);
		if (step == 1)
			return lo + (size_t) c;
		if (c == 0)
			return lo;
		{
			size_t		next_hi = lo + (size_t) c * step;

			lo = lo + (size_t) (c - 1) * step + 1;
			if (next_hi < hi)
				hi = next_hi;
		}
	}
}

/* The split in global memory by one thread alone: a binary search. */
template <typename K, bool PAIR>
static __device__ __forceinline__ size_t
gs_thread_merge_path(const K *ak, const uint32_t *av, size_t la,
					 const K *bk, const uint32_t *bv, size_t lb, size_t diag)
{
	return gs_merge_path_search<size_t, K, PAIR>(ak, av, la, bk, bv, lb, diag);
}

/*
 * Serial merge of ITEMS outputs from A = [a, a_end) and B = [b, b_end) of the
 * shared arrays sk/sv, into registers; idx receives the shared index each
 * output came from, for gathering values afterwards.  One shared load per
 * output: this loop is where the bank conflicts of seed 003 happen.
 *
 * Branch-free: each step loads the next key of the run it took from without
 * checking that run's end (the take condition checks both ends), so that the
 * compiler predicates the step instead of branching around each load, which
 * the threads of a warp take different ways (measured: 28 instructions a
 * step with the checks, bench/NOTES-comparison.md).  So a thread reads up
 * to ITEMS + 1 elements past the end of B, or of A when it runs out of both:
 * callers keep gs_merge_smem_pad() bytes of shared memory after the tile's
 * keys and values, and never use the outputs past both ends.
 */
template <typename K, int ITEMS, bool PAIR>
static __device__ __forceinline__ void
gs_serial_merge(const K *sk, const uint32_t *sv, int a, int a_end, int b, int b_end,
				K (&out)[ITEMS], int (&idx)[ITEMS])
{
	K			ka = sk[a];
	K			kb = sk[b];
	uint32_t	va = PAIR ? sv[a] : 0;
	uint32_t	vb = PAIR ? sv[b] : 0;

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		bool		take_b = b < b_end && (a >= a_end || gs_lt<K, PAIR>(kb, vb, ka, va));

		out[i] = take_b ? kb : ka;
		idx[i] = take_b ? b : a;
		if (take_b)
		{
			b++;
			kb = sk[b];
			if (PAIR)
				vb = sv[b];
		}
		else
		{
			a++;
			ka = sk[a];
			if (PAIR)
				va = sv[a];
		}
	}
}

/*
 * Shared memory a caller of gs_serial_merge keeps after a tile's keys and
 * values (sk, then sv when there are values): the merge reads up to ITEMS + 1
 * elements past either.
 */
template <typename K, int ITEMS>
static constexpr size_t
gs_merge_smem_pad(void)
{
	return (size_t) (ITEMS + 1) * (sizeof(K) + sizeof(uint32_t));
}

/* Writes each thread's ITEMS keys (and values) back to shared memory in order, between barriers. */
template <typename K, int ITEMS, bool VALUES>
static __device__ __forceinline__ void
gs_block_store_runs(K *sk, uint32_t *sv, const K (&k)[ITEMS], const uint32_t (&v)[ITEMS])
{
	const int	tid = threadIdx.x;

	__syncthreads();
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		sk[tid * ITEMS + i] = k[i];
		if (VALUES)
			sv[tid * ITEMS + i] = v[i];
	}
	__syncthreads();
}

/*
 * Block sort of one tile held in shared memory: on entry sk[0, THREADS*ITEMS)
 * (and sv when VALUES) hold the tile in any order, written by the caller's
 * striped load and followed by a __syncthreads(); on return they hold it
 * sorted, visible to the whole block, for the caller's striped store.  Each
 * thread takes ITEMS consecutive keys (ITEMS odd: thread t's reads t*ITEMS + i
 * fall in 32 distinct banks), sorts them in registers, then pairs of runs are
 * merged by merge path until one run covers the first `cover` keys (a caller
 * whose tile holds fewer real keys than THREADS*ITEMS stops early: the rounds
 * beyond would merge only the padding, which sorts last).  Stable; ordered by
 * (key, value) when PAIR.  The loop keeps the form `run < cover` so that a
 * constant cover (the merge sort's tile) unrolls as it did inside the kernel:
 * a loop with its exit in the middle measured 1.5-3% slower on the H100.
 */
template <typename K, int THREADS, int ITEMS, bool VALUES, bool PAIR>
static __device__ __forceinline__ void
gs_block_merge_sort(K *sk, uint32_t *sv, int cover)
{
	const int	tid = threadIdx.x;
	K			k[ITEMS];
	uint32_t	v[ITEMS];

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		k[i] = sk[tid * ITEMS + i];
		if (VALUES)
			v[i] = sv[tid * ITEMS + i];
	}
	gs_thread_sort<K, ITEMS, VALUES, PAIR>(k, v);

	/* bounded by the tile too, so that the compiler knows run's range as it did inside the kernel */
	for (int run = ITEMS; run < cover && run < THREADS * ITEMS; run *= 2)
	{
		const int	threads_per_pair = 2 * run / ITEMS;
		const int	pair_base = (tid / threads_per_pair) * 2 * run;
		const int	diag = (tid % threads_per_pair) * ITEMS;
		int			idx[ITEMS];
		int			a;

		gs_block_store_runs<K, ITEMS, VALUES>(sk, sv, k, v);
		a = gs_merge_path<K, PAIR>(sk + pair_base, sv + pair_base, run,
								   sk + pair_base + run, sv + pair_base + run, run, diag);
		gs_serial_merge<K, ITEMS, PAIR>(sk, sv, pair_base + a, pair_base + run,
										pair_base + run + diag - a, pair_base + 2 * run, k, idx);
		if (VALUES)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
				v[i] = sv[idx[i]];
		}
	}
	gs_block_store_runs<K, ITEMS, VALUES>(sk, sv, k, v);
}

#endif							/* GPUSORT_MERGE_BLOCK_CUH */
