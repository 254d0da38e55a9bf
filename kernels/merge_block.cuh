/*
 * merge_block.cuh: thread-, warp- and block-level primitives of the
 * merge-path merge sort (merge_path.cuh), after the Thrust / Modern GPU design
 * analysed in "Engineering Worst-Case Inputs for Pairwise Merge Sort on GPUs"
 * (Berney): a per-thread sorting network in registers, the merge
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
 * output: this loop is where the bank conflicts Berney constructs happen.
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

/* One round of gs_block_merge_sort: each thread's keys back to shared memory, then pairs of runs of run keys merged. */
template <typename K, int ITEMS, bool VALUES, bool PAIR>
static __device__ __forceinline__ void
gs_block_round(K *sk, uint32_t *sv, K (&k)[ITEMS], uint32_t (&v)[ITEMS], int run)
{
	const int	tid = threadIdx.x;
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
		gs_block_round<K, ITEMS, VALUES, PAIR>(sk, sv, k, v, run);
	gs_block_store_runs<K, ITEMS, VALUES>(sk, sv, k, v);
}

/* ------------------------------------------------------------------------
 * Randomized merge order
 *
 * Berney's worst-case inputs (bench/worst_case.h) choose the merge
 * path so that at every step of the serial merge about E threads of a warp
 * read one bank: each such thread reads its keys at banks s, s + 1, ...
 * in order, from the left run or the right run, both staged from bank 0.
 * Three choices the input cannot see break that up, drawn per kernel
 * launch from a seed (gs_merge_rand_bits):
 *   - each thread merges its ITEMS outputs forwards or backwards (from its
 *     last output down, taking the larger head, the right run on ties); a
 *     backward thread reads the same keys in the reverse order, banks
 *     s + E - 1, s + E - 2, ..., which meets the forward threads' bank
 *     s + j at most once;
 *   - the right run is staged delta (0 .. 31) elements after the left
 *     one's end, so that threads reading their aligned keys from different
 *     runs no longer share a bank;
 *   - one load a step for the whole warp (the next key of the run taken),
 *     so that the two kinds of reader meet in one instruction, where they
 *     now take different banks, instead of two predicated loads each
 *     conflicting within itself.
 * bench/NOTES-comparison.md has the model and the measurements.  The
 * caller keeps gs_merge_front_pad() elements of shared memory before the
 * staged tile (a backward thread reads up to ITEMS + 1 keys before a run)
 * and ITEMS + 1 after it.
 * ------------------------------------------------------------------------ */

#define GS_MERGE_MAX_DELTA 31

template <int ITEMS>
static constexpr int
gs_merge_front_pad(void)
{
	return ITEMS + 1;
}

/* 32 random bits for thread t of block b under a launch's seed (splitmix32-style mixing). */
static __device__ __forceinline__ uint32_t
gs_merge_rand_bits(uint32_t seed, uint32_t b, uint32_t t)
{
	uint32_t	x = seed ^ (b * 0x9E3779B9u) ^ (t * 0x85EBCA6Bu);

	x ^= x >> 16;
	x *= 0x7FEB352Du;
	x ^= x >> 15;
	x *= 0x846CA68Bu;
	x ^= x >> 16;
	return x;
}

/*
 * Serial merge of ITEMS outputs, forwards or backwards, with one shared load
 * a step.  pa, pb: where the heads of A and B are in sk/sv (forwards their
 * first keys, backwards their last); sa, sb: where each run stops (one past
 * its end in the direction of travel).  Forwards it takes B when B's head is
 * smaller, backwards when it is not smaller (ties to B, so that the result
 * is the stable one); out[i] is the i-th output taken, so backwards out[0]
 * is the thread's last output.  idx[i]: where out[i] came from.  Like
 * gs_serial_merge, it reads past the runs when both are out (up to ITEMS + 1
 * elements, before them backwards) and never uses those outputs.
 */
template <typename K, int ITEMS, bool PAIR>
static __device__ __forceinline__ void
gs_serial_merge_dir(const K *sk, const uint32_t *sv, int pa, int sa, int pb, int sb, bool back,
					K (&out)[ITEMS], int (&idx)[ITEMS])
{
	const int	step = back ? -1 : 1;
	K			ka = sk[pa];
	K			kb = sk[pb];
	uint32_t	va = PAIR ? sv[pa] : 0;
	uint32_t	vb = PAIR ? sv[pb] : 0;

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		/* bitwise, not short-circuit: a branch here would split the warp at every step */
		const bool	take_b = (pb != sb) & ((pa == sa) | (gs_lt<K, PAIR>(kb, vb, ka, va) != back));
		int			q = take_b ? pb : pa;
		K			key;
		uint32_t	val;

		out[i] = take_b ? kb : ka;
		idx[i] = q;
		q += step;
		key = sk[q];
		val = PAIR ? sv[q] : 0;
		pa = take_b ? pa : q;
		pb = take_b ? q : pb;
		ka = take_b ? ka : key;
		kb = take_b ? key : kb;
		va = take_b ? va : val;
		vb = take_b ? val : vb;
	}
}

/*
 * One thread's share of merging A = sk[a0, a0 + la) with B = sk[b0, b0 + lb)
 * (and sv): its outputs d .. e - 1 (e <= d + ITEMS), forwards or backwards,
 * keys into k and with VALUES values into v, in the order taken (see
 * gs_serial_merge_dir).
 */
template <typename K, int ITEMS, bool VALUES, bool PAIR>
static __device__ __forceinline__ void
gs_merge_dir_items(const K *sk, const uint32_t *sv, int a0, int la, int b0, int lb, int d, int e, bool back,
				   K (&k)[ITEMS], uint32_t (&v)[ITEMS])
{
	int			idx[ITEMS];
	const int	at = back ? e : d;
	const int	a = gs_merge_path<K, PAIR>(sk + a0, sv + a0, la, sk + b0, sv + b0, lb, at);
	/* one call with the direction as data: the threads of a warp go both ways */
	const int	off = back ? -1 : 0;

	gs_serial_merge_dir<K, ITEMS, PAIR>(sk, sv, a0 + a + off, back ? a0 - 1 : a0 + la, b0 + (at - a) + off,
										back ? b0 - 1 : b0 + lb, back, k, idx);
	if (VALUES)
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			v[i] = sv[idx[i]];
	}
}

/*
 * Writes a thread's ITEMS keys (and values), taken forwards or backwards
 * (gs_serial_merge_dir), to sk/sv from position first in output order,
 * between barriers.  Each key is picked by a select, so that every store of
 * the warp keeps the forward stride (ITEMS: no bank conflict).
 */
template <typename K, int ITEMS, bool VALUES>
static __device__ __forceinline__ void
gs_block_store_dir(K *sk, uint32_t *sv, const K (&k)[ITEMS], const uint32_t (&v)[ITEMS], int first, bool back)
{
	__syncthreads();
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		sk[first + i] = back ? k[ITEMS - 1 - i] : k[i];
		if (VALUES)
			sv[first + i] = back ? v[ITEMS - 1 - i] : v[i];
	}
	__syncthreads();
}

/*
 * gs_block_merge_sort with the merge order randomized under seed in the
 * rounds whose runs span at least GS_MERGE_SHIFT_MIN_THREADS threads (a
 * warp): each thread's direction is drawn per round, and each right run is
 * staged delta elements after its left one (delta drawn per round for the
 * block; the pairs of a round move along by delta each).  The rounds before
 * keep the fixed order: there a warp merges two or more pairs whose runs
 * start at different banks, which Berney's construction cannot line up
 * (it gives them random splits).  sk/sv hold the tile from 0 as in
 * gs_block_merge_sort, with gs_merge_front_pad() elements of shared memory
 * before them and gs_block_rand_room() after the tile.
 */
#define GS_MERGE_SHIFT_MIN_THREADS 32

template <int THREADS, int ITEMS>
static __host__ __device__ constexpr int
gs_block_rand_room(void)
{
	return GS_MERGE_MAX_DELTA * (THREADS / (2 * GS_MERGE_SHIFT_MIN_THREADS)) + ITEMS + 1;
}

template <typename K, int THREADS, int ITEMS, bool VALUES, bool PAIR>
static __device__ __forceinline__ void
gs_block_merge_sort_rand(K *sk, uint32_t *sv, uint32_t seed)
{
	const int	tid = threadIdx.x;
	const uint32_t mine = gs_merge_rand_bits(seed, blockIdx.x, tid);
	const uint32_t block = gs_merge_rand_bits(seed, blockIdx.x, THREADS);
	K			k[ITEMS];
	uint32_t	v[ITEMS];
	bool		back = false;
	int			r = 0;
	int			run = ITEMS;

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		k[i] = sk[tid * ITEMS + i];
		if (VALUES)
			v[i] = sv[tid * ITEMS + i];
	}
	gs_thread_sort<K, ITEMS, VALUES, PAIR>(k, v);

	for (; run < GS_MERGE_SHIFT_MIN_THREADS * ITEMS && run < THREADS * ITEMS; run *= 2)
		gs_block_round<K, ITEMS, VALUES, PAIR>(sk, sv, k, v, run);
	for (; run < THREADS * ITEMS; run *= 2, r++)
	{
		const int	threads_per_run = run / ITEMS;
		const int	delta = (int) ((block >> (r % 28)) & GS_MERGE_MAX_DELTA);
		const int	pair = tid / (2 * threads_per_run);
		const int	a0 = pair * (2 * run + delta);
		const int	d = (tid % (2 * threads_per_run)) * ITEMS;
		/* where the thread's keys go: run j after j / 2 shifts (its pair's shifts before it, then its own) */
		const int	first = tid * ITEMS + delta * ((tid / threads_per_run + 1) >> 1);

		gs_block_store_dir<K, ITEMS, VALUES>(sk, sv, k, v, first, back);
		back = (mine >> (r % 32)) & 1;
		gs_merge_dir_items<K, ITEMS, VALUES, PAIR>(sk, sv, a0, run, a0 + run + delta, run, d, d + ITEMS, back,
												   k, v);
	}
	gs_block_store_dir<K, ITEMS, VALUES>(sk, sv, k, v, tid * ITEMS, back);
}

#endif							/* GPUSORT_MERGE_BLOCK_CUH */
