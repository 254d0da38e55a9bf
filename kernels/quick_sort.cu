/*
 * quick_sort.cu: GPU quicksort (gs_quick_sort_gpu), after chapter 4 of
 * "Development of parallel sorting algorithms for GPU" (Nguyen Xuan Thang's
 * thesis; Cederman and Tsigas' design): a first phase in which many
 * blocks partition each large task together, then a second phase in which
 * one block sorts a task alone.  The thesis' second phase, quicksort in
 * shared memory with bitonic sort at the leaves, is kept (see below when it
 * runs); by default the second phase is a block merge sort.
 *
 * Changes to the thesis, for robustness:
 *   - three-way partitions (<, =, > pivot): keys equal to the pivot are
 *     final at once and never recurse, so all-equal and few-distinct inputs
 *     finish in a level or two;
 *   - the pivot is the median of 32 evenly spaced samples (one warp sorts
 *     them), not of three, so sorted, reversed and staggered inputs split
 *     near the middle;
 *   - a depth limit: a first-phase task deeper than 2 log2(n) + 8 levels is
 *     sorted by the merge sort (O(n log n)), a second-phase range (in-block
 *     quicksort) deeper than 2 log2(block capacity) + 4 by an in-place
 *     bitonic sort, so the work never degrades to quadratic;
 *   - in-block quicksort: leaves of at most 32*E keys are sorted by one warp
 *     in registers (bitonic network, shuffles), many warps at once.
 * Argsort sorts (key, position) pairs, which makes the result stable; the
 * final writes gather values[0] by position.  Results go to keys[1] and
 * values[1].
 *
 * Changes for speed (bench/NOTES-comparison.md, Quicksort, has the
 * measurements): a level of the first phase is two launches, partition and
 * finish, with no host round trip: the finish step allocates the next
 * level's tasks and their partition blocks with one 64-bit atomic (task
 * count in the high bits, block count in the low), so the blocks' first
 * indices come out ascending and a partition block finds its task by a
 * search; the partition grid is an upper bound and surplus blocks leave at
 * once.  The host launches about log2(n / capacity) + 2 levels before it
 * reads the task count back, then 4 at a time.  Short runs of keys equal to
 * a pivot are written by the finishing warp, long ones by a fill kernel at
 * the end.  The small ranges of a batch of levels are sorted by one
 * second-phase launch after its read-back (they never move again, so the
 * second phase may run any time after the level that produced them).  The
 * second phase sorts a range by a block merge sort (merge_block.cuh
 * primitives: E keys per thread sorted in registers, then merge-path rounds
 * in shared memory, stopping once a run covers the range), which measured
 * faster than the in-block quicksort; the in-block quicksort runs when a
 * test sets a second-phase depth limit (gs_quick_set_depth_limits, in the
 * test build of the library only), so that it and its bitonic fallback stay
 * exercised.
 */
#include <stdint.h>
#include <string.h>

#include <algorithm>

#include <cub/block/block_scan.cuh>

#include "bitonic_block.cuh"
#include "merge_block.cuh"
#include "merge_common.cuh"
#include "merge_sort.cuh"
#include "quick_sort.cuh"

#define GS_QUICK_THREADS 256	/* first phase: threads per partition block */
#define GS_QUICK_ITEMS(K) (sizeof(K) == 8 ? 8 : 16)	/* keys per thread there (staging fits 48 KB) */
#define GS_QUICK_CHUNK(K) (GS_QUICK_THREADS * GS_QUICK_ITEMS(K))
#define GS_QUICK_BLOCK_THREADS 512	/* second phase */
#define GS_QUICK_STACK 64
#define GS_QUICK_LEAVES 256		/* leaves batched before the warps sort them */
#define GS_QUICK_SMEM_MAX (160 * 1024)
#define GS_QUICK_FILL_WARP 4096	/* runs equal to a pivot up to this are written by the finishing warp */
#define GS_QUICK_FIRST_BATCH_EXTRA 2	/* levels launched beyond log2(n / capacity) before the first read-back */
#define GS_QUICK_BATCH 4		/* levels launched per later read-back */
#define GS_QUICK_BLOCK_BITS 40	/* packed level counter: tasks << 40 | partition blocks */

/*
 * Second phase by block merge sort, sm_90: THREADS x ITEMS keys per range
 * (the capacity).  E odd (bank-conflict free transposes and merges, as in the
 * merge sort); 4-byte keys alone take more per thread so that the
 * capacity stays near the in-block quicksort's 16K and the first phase needs
 * no extra level.  Overridable at build time for measurements.
 */
#ifndef GS_QUICK_BS_THREADS4
#define GS_QUICK_BS_THREADS4 512
#endif
#ifndef GS_QUICK_BS_ITEMS4
#define GS_QUICK_BS_ITEMS4 31
#endif
template <typename K, bool PAIR>
struct gs_quick_bs_policy
{
	static constexpr bool NARROW = sizeof(K) == 4 && !PAIR;
	static constexpr int THREADS = NARROW ? GS_QUICK_BS_THREADS4 : 512;
	static constexpr int ITEMS = NARROW ? GS_QUICK_BS_ITEMS4 : (sizeof(K) == 8 && PAIR ? 11 : 15);
	static constexpr int TILE = THREADS * ITEMS;
	static constexpr size_t SMEM = (size_t) TILE * (sizeof(K) + (PAIR ? sizeof(uint32_t) : 0)) +
		gs_merge_smem_pad<K, ITEMS>();
};

/* A first-phase task: keys [begin, end) in buffer buf, partitioned around (pivot, pivot_pos). */
template <typename K>
struct gs_qtask
{
	unsigned long long begin,
				end;
	unsigned long long lt,		/* keys placed left / right so far (atomics) */
				gt;
	K			pivot;
	uint32_t	pivot_pos;
	int			buf;
	int			depth;
};

/*
 * Device counters (unsigned long long each).  Level L reads its packed
 * counter GS_QC_LEVEL + (L & 1) and its finish step fills the other; the
 * lists of long fills and fallback ranges grow over all levels, the list of
 * small ranges over a batch of levels (the host empties it after each).
 */
#define GS_QC_LEVEL 0
#define GS_QC_SMALL 2
#define GS_QC_FILLS 3
#define GS_QC_FALLBACK 4
#define GS_QC_COUNT 8
#define GS_QC_MASK ((1ull << GS_QUICK_BLOCK_BITS) - 1)

/* A range for the second phase or the fallback, or (fill list) a run of keys equal to the pivot. */
template <typename K>
struct gs_qrange
{
	unsigned long long begin,
				end;
	K			key;
	uint32_t	pos;
	int			buf;
	int			raw;			/* keys still untransformed (the whole input, level 0) */
};

/* Where everything lives.  Buffer b means keys[b] and pos[b]. */
template <typename K>
struct gs_qctx
{
	K		   *keys[2];
	uint32_t   *pos[2];			/* PAIR: pos[0] in temp, pos[1] = values[1] */
	const uint32_t *vals_in;	/* values[0] */
	K		   *keys_out;		/* keys[1] */
	uint32_t   *vals_out;		/* values[1] */
	size_t		n;
	gs_key_codec codec;
};

/* The depth limits' overrides (-1: none); a test's only in a build with GS_TEST_HOOKS (quick_sort.cuh). */
#ifdef GS_TEST_HOOKS
static int	gs_quick_depth_first = -1;
static int	gs_quick_depth_second = -1;

extern "C" void
gs_quick_set_depth_limits(int first_phase, int second_phase)
{
	gs_quick_depth_first = first_phase;
	gs_quick_depth_second = second_phase;
}
#else
static const int gs_quick_depth_first = -1;
static const int gs_quick_depth_second = -1;
#endif

/* Buffer b of keys / positions (selects, so the pointer pair stays out of local memory). */
template <typename K>
static __device__ __forceinline__ K *
gs_qk(const gs_qctx<K> &c, int b)
{
	return b ? c.keys[1] : c.keys[0];
}

template <typename K>
static __device__ __forceinline__ uint32_t *
gs_qp(const gs_qctx<K> &c, int b)
{
	return b ? c.pos[1] : c.pos[0];
}

/* Second-phase capacity: two shared buffers of it must fit. */
template <typename K, bool PAIR>
static __host__ __device__ constexpr int
gs_quick_block_cap(void)
{
	return (2 * 16384 * (sizeof(K) + (PAIR ? 4 : 0)) <= GS_QUICK_SMEM_MAX) ? 16384 :
		(2 * 8192 * (sizeof(K) + (PAIR ? 4 : 0)) <= GS_QUICK_SMEM_MAX) ? 8192 : 4096;
}

/* Keys per lane of a leaf. */
template <typename K, bool PAIR>
static __host__ __device__ constexpr int
gs_quick_leaf_items(void)
{
	return (sizeof(K) <= 4 && !PAIR) ? 32 : 16;
}

/* Reads key i of buffer b as an ordered key (and its position). */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_quick_read(const gs_qctx<K> &c, int b, int raw, size_t i, K *k, uint32_t *p)
{
	K			x = gs_qk<K>(c, b)[i];

	*k = raw ? gs_encode_key<K>(x, c.codec) : x;
	if (PAIR)
		*p = raw ? (uint32_t) i : gs_qp<K>(c, b)[i];
}

/* Writes a finished key to the result (decoded; the value gathered by position). */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_quick_final(const gs_qctx<K> &c, size_t i, K k, uint32_t p)
{
	c.keys_out[i] = gs_decode_key<K>(k, c.codec);
	if (PAIR)
		c.vals_out[i] = c.vals_in[p];
}

/*
 * Pivot of keys [b, e) of a buffer: the median of 32 evenly spaced samples,
 * sorted by one warp (bitonic over lanes).  All lanes call; all get it.
 */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_quick_pivot_global(const gs_qctx<K> &c, int buf, int raw, size_t b, size_t e, K *pk, uint32_t *pp)
{
	const int	lane = threadIdx.x & 31;
	K			k[1];
	uint32_t	v[1];

	gs_quick_read<K, PAIR>(c, buf, raw, b + ((2 * (size_t) lane + 1) * (e - b)) / 64, &k[0], &v[0]);
	gs_bitonic_sort_warp<K, PAIR, 1>(k, v, lane);
	*pk = gs_shfl_xor_key<K>(k[0], lane ^ 15);	/* lane 15's key */
	*pp = PAIR ? __shfl_sync(0xFFFFFFFFu, v[0], 15) : 0;
}

/* ------------------------------------------------------------------------
 * First phase
 * ------------------------------------------------------------------------ */

/* The whole input as the first task, and level 0's packed counter. */
template <typename K, bool PAIR>
__global__ void
gs_quick_init_kernel(gs_qctx<K> c, gs_qtask<K> *tasks, unsigned *first, unsigned long long *counters)
{
	K			pk;
	uint32_t	pp;

	gs_quick_pivot_global<K, PAIR>(c, 0, 1, 0, c.n, &pk, &pp);
	if (threadIdx.x == 0)
	{
		gs_qtask<K> t;

		t.begin = 0;
		t.end = c.n;
		t.lt = t.gt = 0;
		t.pivot = pk;
		t.pivot_pos = pp;
		t.buf = 0;
		t.depth = 0;
		tasks[0] = t;
		first[0] = 0;
		counters[GS_QC_LEVEL] = (1ull << GS_QUICK_BLOCK_BITS) + (c.n + GS_QUICK_CHUNK(K) - 1) / GS_QUICK_CHUNK(K);
	}
}

/*
 * Multi-block partition (algorithm 4.3.2): block = one chunk of one task.
 * Counts keys below and above the pivot per thread, scans them over the
 * block, reserves room at the task's left and right ends with one atomic
 * each, and writes through shared memory so that both writes are coalesced.
 * Keys equal to the pivot are dropped here and written by the finish step.
 * The grid is an upper bound of the level's blocks (the host does not know
 * the level's size); block 0 clears the counter the finish step will fill.
 */
template <typename K, bool PAIR>
__global__ void __launch_bounds__(GS_QUICK_THREADS)
gs_quick_partition_kernel(gs_qctx<K> c, gs_qtask<K> *tasks, const unsigned long long *level_count,
						  unsigned long long *next_count, const unsigned *first, int raw)
{
	typedef cub::BlockScan<unsigned, GS_QUICK_THREADS> scan_t;
	__shared__ typename scan_t::TempStorage ts;
	__shared__ K sk[GS_QUICK_CHUNK(K)];
	__shared__ uint32_t sv[PAIR ? GS_QUICK_CHUNK(K) : 1];
	__shared__ unsigned long long base_lt,
				base_gt;
	__shared__ int s_task;
	const unsigned long long packed = *level_count;
	const int	nt = (int) (packed >> GS_QUICK_BLOCK_BITS);
	const unsigned long long nblocks = packed & GS_QC_MASK;
	const int	tid = threadIdx.x;
	int			t;
	K			k[GS_QUICK_ITEMS(K)];
	uint32_t	v[GS_QUICK_ITEMS(K)];
	unsigned	cls = 0;		/* 2 bits per item: 1 = less, 2 = greater */
	unsigned	nlt = 0,
				ngt = 0,
				scanned,
				totals;

	if (blockIdx.x == 0 && tid == 0)
		*next_count = 0;
	if (nt == 0 || blockIdx.x >= nblocks)
		return;
	/*
	 * The task whose blocks include this one: the last t with first[t] <=
	 * blockIdx.x (first[] ascends), found by warp 0 testing 32 candidates
	 * per step, so a few dependent loads instead of log2(tasks).
	 */
	if (tid < 32)
	{
		int			lo = 0,
					hi = nt - 1;	/* the answer is in [lo, hi]; first[0] = 0 */

		while (lo < hi)
		{
			int			step = (hi - lo + 31) / 32;
			int			cand = lo + (tid + 1) * step;
			bool		ok = cand <= hi && first[cand] <= blockIdx.x;
			int			cnt = __popc(__ballot_sync(0xFFFFFFFFu, ok));	/* a prefix of lanes */

			hi = min(hi, lo + (cnt + 1) * step - 1);
			lo = lo + cnt * step;
		}
		if (tid == 0)
			s_task = lo;
	}
	__syncthreads();
	t = s_task;
	{
		const gs_qtask<K> task = tasks[t];
		const size_t cb = task.begin + (size_t) (blockIdx.x - first[t]) * GS_QUICK_CHUNK(K);
		const int	cnt = (int) min((unsigned long long) GS_QUICK_CHUNK(K), task.end - cb);
		const int	dst = task.buf ^ 1;

#pragma unroll
		for (int i = 0; i < GS_QUICK_ITEMS(K); i++)
		{
			int			j = tid + i * GS_QUICK_THREADS;

			if (j < cnt)
			{
				gs_quick_read<K, PAIR>(c, task.buf, raw, cb + j, &k[i], &v[i]);
				if (PAIR ? gs_pair_less<K>(k[i], v[i], task.pivot, task.pivot_pos) : k[i] < task.pivot)
				{
					cls |= 1u << (2 * i);
					nlt++;
				}
				else if (PAIR ? gs_pair_less<K>(task.pivot, task.pivot_pos, k[i], v[i]) : task.pivot < k[i])
				{
					cls |= 2u << (2 * i);
					ngt++;
				}
			}
		}
		/* both counts in one scan: less in the low half, greater in the high */
		scan_t(ts).ExclusiveSum(nlt | (ngt << 16), scanned, totals);
		{
			unsigned	lt_total = totals & 0xFFFF,
						gt_total = totals >> 16;
			unsigned	lt_at = scanned & 0xFFFF,
						gt_at = lt_total + (scanned >> 16);

			if (tid == 0)
			{
				base_lt = atomicAdd(&tasks[t].lt, (unsigned long long) lt_total);
				base_gt = atomicAdd(&tasks[t].gt, (unsigned long long) gt_total);
			}
#pragma unroll
			for (int i = 0; i < GS_QUICK_ITEMS(K); i++)
			{
				unsigned	ci = (cls >> (2 * i)) & 3;

				if (ci != 0)
				{
					unsigned	at = ci == 1 ? lt_at++ : gt_at++;

					sk[at] = k[i];
					if (PAIR)
						sv[at] = v[i];
				}
			}
			__syncthreads();
			for (unsigned j = tid; j < lt_total + gt_total; j += GS_QUICK_THREADS)
			{
				size_t		g = j < lt_total ? task.begin + base_lt + j
					: task.end - base_gt - gt_total + (j - lt_total);

				gs_qk<K>(c, dst)[g] = sk[j];
				if (PAIR)
					gs_qp<K>(c, dst)[g] = sv[j];
			}
		}
	}
}

/*
 * After a partition: the keys equal to the pivot are final (written here
 * when the run is short, else listed for the fill kernel); each side becomes
 * a next-level task (with its pivot), a second-phase range when small, or a
 * fallback range when too deep.  A warp per task.  A next task and its
 * partition blocks are allocated by one atomic on the packed counter, so
 * first[] ascends with the task index.
 */
template <typename K, bool PAIR>
__global__ void
gs_quick_finish_kernel(gs_qctx<K> c, const gs_qtask<K> *tasks, const unsigned long long *level_count,
					   gs_qtask<K> *next, unsigned long long *next_count, unsigned *first,
					   unsigned long long *counters, gs_qrange<K> *small, gs_qrange<K> *fills,
					   gs_qrange<K> *fallback, int small_cap, int depth_limit)
{
	const int	lane = threadIdx.x & 31;
	const int	t = (int) ((blockIdx.x * (size_t) blockDim.x + threadIdx.x) >> 5);

	if (t >= (int) (*level_count >> GS_QUICK_BLOCK_BITS))
		return;
	{
		const gs_qtask<K> task = tasks[t];
		const int	dst = task.buf ^ 1;
		const unsigned long long mid_b = task.begin + task.lt;
		const unsigned long long mid_e = task.end - task.gt;

		if (mid_e - mid_b > GS_QUICK_FILL_WARP)
		{
			if (lane == 0)
			{
				gs_qrange<K> f;
				unsigned long long at = atomicAdd(&counters[GS_QC_FILLS], 1ull);

				f.begin = mid_b;
				f.end = mid_e;
				f.key = task.pivot;
				f.pos = task.pivot_pos;
				f.buf = dst;
				f.raw = 0;
				fills[at] = f;
			}
		}
		else
		{
			for (unsigned long long i = mid_b + lane; i < mid_e; i += 32)
				gs_quick_final<K, PAIR>(c, i, task.pivot, task.pivot_pos);
		}
		for (int side = 0; side < 2; side++)
		{
			unsigned long long b = side == 0 ? task.begin : mid_e;
			unsigned long long e = side == 0 ? mid_b : task.end;
			unsigned long long len = e - b;

			if (len == 0)
				continue;
			if (len <= (unsigned long long) small_cap || task.depth + 1 > depth_limit)
			{
				if (lane == 0)
				{
					gs_qrange<K> r;
					bool		small_one = len <= (unsigned long long) small_cap;
					unsigned long long at = atomicAdd(&counters[small_one ? GS_QC_SMALL : GS_QC_FALLBACK], 1ull);

					r.begin = b;
					r.end = e;
					r.key = 0;
					r.pos = 0;
					r.buf = dst;
					r.raw = 0;
					(small_one ? small : fallback)[at] = r;
				}
			}
			else
			{
				K			pk;
				uint32_t	pp;

				gs_quick_pivot_global<K, PAIR>(c, dst, 0, b, e, &pk, &pp);
				if (lane == 0)
				{
					gs_qtask<K> nt;
					unsigned long long chunks = (len + GS_QUICK_CHUNK(K) - 1) / GS_QUICK_CHUNK(K);
					unsigned long long old = atomicAdd(next_count, (1ull << GS_QUICK_BLOCK_BITS) + chunks);
					unsigned long long at = old >> GS_QUICK_BLOCK_BITS;

					nt.begin = b;
					nt.end = e;
					nt.lt = nt.gt = 0;
					nt.pivot = pk;
					nt.pivot_pos = pp;
					nt.buf = dst;
					nt.depth = task.depth + 1;
					next[at] = nt;
					first[at] = (unsigned) (old & GS_QC_MASK);
				}
			}
		}
	}
}

/* Writes the long runs of keys equal to their pivot (all blocks share every run). */
template <typename K, bool PAIR>
__global__ void
gs_quick_fill_kernel(gs_qctx<K> c, const gs_qrange<K> *fills, const unsigned long long *counters)
{
	const unsigned long long nf = counters[GS_QC_FILLS];

	for (unsigned long long f = 0; f < nf; f++)
	{
		const gs_qrange<K> r = fills[f];

		for (unsigned long long i = r.begin + (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < r.end;
			 i += (size_t) gridDim.x * blockDim.x)
			gs_quick_final<K, PAIR>(c, i, r.key, r.pos);
	}
}

/* ------------------------------------------------------------------------
 * Second phase: one block per range (algorithm 4.3.3)
 * ------------------------------------------------------------------------ */

/* Shared buffer x (0 or 1) of the second phase; needs sk0, sv0 and CAP in scope. */
#define GS_SK(x) (sk0 + ((x) ? CAP : 0))
#define GS_SV(x) (sv0 + ((x) ? CAP : 0))

/* Sorts up to GS_QUICK_LEAVES batched leaves, a warp each, and writes them out. */
template <typename K, bool PAIR>
static __device__ void
gs_quick_flush_leaves(const gs_qctx<K> &c, size_t gbase, K *sk0, uint32_t *sv0,
					  const int *leaf_b, const int *leaf_e, const int *leaf_buf, int nleaves)
{
	constexpr int E = gs_quick_leaf_items<K, PAIR>();
	constexpr int CAP = gs_quick_block_cap<K, PAIR>();
	const int	lane = threadIdx.x & 31;

	for (int l = threadIdx.x >> 5; l < nleaves; l += GS_QUICK_BLOCK_THREADS / 32)
	{
		const int	b = leaf_b[l],
					len = leaf_e[l] - b,
					buf = leaf_buf[l];
		K			k[E];
		uint32_t	v[E];

#pragma unroll
		for (int r = 0; r < E; r++)
		{
			int			i = r * 32 + lane;

			k[r] = i < len ? GS_SK(buf)[b + i] : gs_key_max<K>();
			v[r] = PAIR ? (i < len ? GS_SV(buf)[b + i] : UINT32_MAX) : 0;
		}
		if (len > 1)
			gs_bitonic_sort_warp<K, PAIR, E>(k, v, lane);
#pragma unroll
		for (int r = 0; r < E; r++)
		{
			int			i = r * 32 + lane;

			if (i < len)
				gs_quick_final<K, PAIR>(c, gbase + b + i, k[r], v[r]);
		}
	}
}

/*
 * The in-block quicksort's state in shared memory: the stack of ranges still
 * to partition (begin, end, shared buffer, depth), the batch of leaves, the
 * step thread 0 chose with its range, and the pivot of a partition.  The
 * kernel declares each as a __shared__ variable of its own and this holds
 * references: separate variables tell the compiler that the indexed stores
 * into the stack and the batch leave nstack and nleaves alone (in one
 * struct, it reloaded them after each such store).
 */
template <typename K>
struct gs_quick_block_shared
{
	typename cub::BlockScan<unsigned, GS_QUICK_BLOCK_THREADS>::TempStorage &scan;
	int			(&st_b)[GS_QUICK_STACK],
				(&st_e)[GS_QUICK_STACK],
				(&st_buf)[GS_QUICK_STACK],
				(&st_d)[GS_QUICK_STACK];
	int			(&leaf_b)[GS_QUICK_LEAVES],
				(&leaf_e)[GS_QUICK_LEAVES],
				(&leaf_buf)[GS_QUICK_LEAVES];
	int		   &nstack,
			   &nleaves;
	int		   &cur_b,
			   &cur_e,
			   &cur_buf,
			   &cur_d,
			   &action;
	K		   &piv_k;
	uint32_t   &piv_p;
};

/* What the block does next (thread 0 chooses, all threads do it). */
enum gs_quick_block_action
{
	GS_QB_DONE = 0,				/* stack and leaf batch empty */
	GS_QB_FLUSH = 1,			/* sort the batched leaves */
	GS_QB_PARTITION = 2,		/* partition the range taken from the stack */
	GS_QB_BITONIC = 3,			/* the range is too deep: bitonic sort it */
	GS_QB_LEAF = 4				/* the range joined the leaf batch */
};

/* The step every thread copied from shared memory: its action and range. */
struct gs_quick_block_step
{
	int			action,
				b,
				e,
				buf,
				depth;
};

/*
 * Sorts one range of at most the block capacity: load into shared memory,
 * quicksort with an explicit stack (the smaller side first, so the stack
 * stays logarithmic), partitions ping-ponging between two shared buffers;
 * leaves go to a batch that all warps sort together; keys equal to a pivot
 * and sorted leaves are written straight to the result.  process() is the
 * loop; each step below is one action, its barriers included.
 */
template <typename K, bool PAIR>
struct gs_quick_block_agent
{
	static constexpr int CAP = gs_quick_block_cap<K, PAIR>();
	static constexpr int LEAF = 32 * gs_quick_leaf_items<K, PAIR>();
	typedef cub::BlockScan<unsigned, GS_QUICK_BLOCK_THREADS> scan_t;

	const gs_qctx<K> &c;
	const gs_quick_block_shared<K> &s;
	K		   *const sk0;			/* two shared buffers of CAP keys (GS_SK) */
	uint32_t   *const sv0;			/* and of CAP positions (GS_SV) */
	const int	tid;
	const gs_qrange<K> range;
	const size_t gbase;			/* the range's first key in the result */
	const int	depth_limit;

	__device__ __forceinline__
	gs_quick_block_agent(const gs_qctx<K> &c_, const gs_quick_block_shared<K> &s_, unsigned char *smem,
						 const gs_qrange<K> &range_, int depth_limit_)
		: c(c_), s(s_), sk0((K *) smem), sv0((uint32_t *) ((K *) smem + 2 * CAP)), tid(threadIdx.x),
		  range(range_), gbase(range_.begin), depth_limit(depth_limit_)
	{
	}

	__device__ __forceinline__ void
	process(void)
	{
		load_range();
		__syncthreads();
		for (;;)
		{
			if (tid == 0)
				choose_step();
			__syncthreads();

			const gs_quick_block_step step = {s.action, s.cur_b, s.cur_e, s.cur_buf, s.cur_d};

			/* everyone has the decision before thread 0 may make the next one */
			__syncthreads();
			if (step.action == GS_QB_DONE)
				break;
			if (step.action == GS_QB_LEAF)
				continue;
			if (step.action == GS_QB_FLUSH)
				flush_leaves();
			else if (step.action == GS_QB_BITONIC)
				sort_by_bitonic(step);
			else
				partition(step);
		}
	}

	/* ---- the steps ---- */

	/* The range into shared buffer 0; the whole of it is the stack's one entry. */
	__device__ __forceinline__ void
	load_range(void)
	{
		const int	len = (int) (range.end - range.begin);

		for (int i = tid; i < len; i += GS_QUICK_BLOCK_THREADS)
		{
			K			k;
			uint32_t	p;

			gs_quick_read<K, PAIR>(c, range.buf, range.raw, gbase + i, &k, &p);
			GS_SK(0)[i] = k;
			if (PAIR)
				GS_SV(0)[i] = p;
		}
		if (tid == 0)
		{
			s.st_b[0] = 0;
			s.st_e[0] = len;
			s.st_buf[0] = 0;
			s.st_d[0] = 0;
			s.nstack = 1;
			s.nleaves = 0;
		}
	}

	/* Thread 0: pops a range; a leaf joins the batch, which is flushed when full or when nothing is left. */
	__device__ __forceinline__ void
	choose_step(void)
	{
		if (s.nstack == 0)
		{
			s.action = s.nleaves > 0 ? GS_QB_FLUSH : GS_QB_DONE;
			return;
		}
		s.nstack--;
		s.cur_b = s.st_b[s.nstack];
		s.cur_e = s.st_e[s.nstack];
		s.cur_buf = s.st_buf[s.nstack];
		s.cur_d = s.st_d[s.nstack];
		if (s.cur_e - s.cur_b <= LEAF)
		{
			s.leaf_b[s.nleaves] = s.cur_b;
			s.leaf_e[s.nleaves] = s.cur_e;
			s.leaf_buf[s.nleaves] = s.cur_buf;
			s.nleaves++;
			s.action = s.nleaves == GS_QUICK_LEAVES ? GS_QB_FLUSH : GS_QB_LEAF;
		}
		else
			s.action = s.cur_d > depth_limit ? GS_QB_BITONIC : GS_QB_PARTITION;
	}

	__device__ __forceinline__ void
	flush_leaves(void)
	{
		gs_quick_flush_leaves<K, PAIR>(c, gbase, sk0, sv0, s.leaf_b, s.leaf_e, s.leaf_buf, s.nleaves);
		__syncthreads();
		if (tid == 0)
			s.nleaves = 0;
	}

	/* A range past the depth limit: sorted in place and written out. */
	__device__ __forceinline__ void
	sort_by_bitonic(const gs_quick_block_step &r)
	{
		gs_bitonic_sort_smem_n<K, PAIR>(GS_SK(r.buf) + r.b, GS_SV(r.buf) + r.b, r.e - r.b);
		for (int i = r.b + tid; i < r.e; i += GS_QUICK_BLOCK_THREADS)
			gs_quick_final<K, PAIR>(c, gbase + i, GS_SK(r.buf)[i], PAIR ? GS_SV(r.buf)[i] : 0);
		__syncthreads();
	}

	/*
	 * Three-way partition of a range into the other shared buffer: both
	 * sides' counts in one scan (less in the low half, greater in the
	 * high), the keys equal to the pivot written to the result, the two
	 * sides pushed.
	 */
	__device__ __forceinline__ void
	partition(const gs_quick_block_step &r)
	{
		unsigned	nlt = 0,
					ngt = 0,
					scanned,
					totals;

		choose_pivot(r);
		__syncthreads();

		const K		pk = s.piv_k;
		const uint32_t pp = s.piv_p;

		count_sides(r, pk, pp, &nlt, &ngt);
		scan_t(s.scan).ExclusiveSum(nlt | (ngt << 16), scanned, totals);

		const int	lt_total = (int) (totals & 0xFFFF),
					gt_total = (int) (totals >> 16);

		move_sides(r, pk, pp, r.b + (int) (scanned & 0xFFFF), r.e - gt_total + (int) (scanned >> 16));
		/* keys equal to the pivot are final */
		for (int i = r.b + lt_total + tid; i < r.e - gt_total; i += GS_QUICK_BLOCK_THREADS)
			gs_quick_final<K, PAIR>(c, gbase + i, pk, pp);
		__syncthreads();
		if (tid == 0)
			push_sides(r, r.b + lt_total, r.e - gt_total);
		__syncthreads();
	}

	/* Warp 0: the median of 32 evenly spaced keys of the range, to s.piv_k / s.piv_p. */
	__device__ __forceinline__ void
	choose_pivot(const gs_quick_block_step &r)
	{
		if (tid >= 32)
			return;

		K			pk[1];
		uint32_t	pp[1];
		int			i = r.b + (int) (((2 * (size_t) tid + 1) * (size_t) (r.e - r.b)) / 64);

		pk[0] = GS_SK(r.buf)[i];
		pp[0] = PAIR ? GS_SV(r.buf)[i] : 0;
		gs_bitonic_sort_warp<K, PAIR, 1>(pk, pp, tid);
		if (tid == 15)
		{
			s.piv_k = pk[0];
			s.piv_p = pp[0];
		}
	}

	/* This thread's keys of the range below and above the pivot. */
	__device__ __forceinline__ void
	count_sides(const gs_quick_block_step &r, K pk, uint32_t pp, unsigned *nlt, unsigned *ngt)
	{
		for (int i = r.b + tid; i < r.e; i += GS_QUICK_BLOCK_THREADS)
		{
			K			k = GS_SK(r.buf)[i];
			uint32_t	p = PAIR ? GS_SV(r.buf)[i] : 0;

			if (before(k, p, pk, pp))
				(*nlt)++;
			else if (before(pk, pp, k, p))
				(*ngt)++;
		}
	}

	/* This thread's keys below the pivot to lt_at on, above it to gt_at on, in the other buffer. */
	__device__ __forceinline__ void
	move_sides(const gs_quick_block_step &r, K pk, uint32_t pp, int lt_at, int gt_at)
	{
		const int	x = r.buf;

		for (int i = r.b + tid; i < r.e; i += GS_QUICK_BLOCK_THREADS)
		{
			K			k = GS_SK(x)[i];
			uint32_t	p = PAIR ? GS_SV(x)[i] : 0;

			if (before(k, p, pk, pp))
			{
				GS_SK(x ^ 1)[lt_at] = k;
				if (PAIR)
					GS_SV(x ^ 1)[lt_at] = p;
				lt_at++;
			}
			else if (before(pk, pp, k, p))
			{
				GS_SK(x ^ 1)[gt_at] = k;
				if (PAIR)
					GS_SV(x ^ 1)[gt_at] = p;
				gt_at++;
			}
		}
	}

	/* Thread 0: the sides [b, le) and [rb, e) onto the stack, the larger first so the smaller is sorted first. */
	__device__ __forceinline__ void
	push_sides(const gs_quick_block_step &r, int le, int rb)
	{
		if (le - r.b <= r.e - rb)
		{
			push(r, rb, r.e);
			push(r, r.b, le);
		}
		else
		{
			push(r, r.b, le);
			push(r, rb, r.e);
		}
	}

	/* ---- helpers ---- */

	__device__ __forceinline__ void
	push(const gs_quick_block_step &r, int pb, int pe)
	{
		if (pe > pb)
		{
			s.st_b[s.nstack] = pb;
			s.st_e[s.nstack] = pe;
			s.st_buf[s.nstack] = r.buf ^ 1;
			s.st_d[s.nstack] = r.depth + 1;
			s.nstack++;
		}
	}

	/* (ka, pa) orders before (kb, pb): by key, then (argsort) by position. */
	static __device__ __forceinline__ bool
	before(K ka, uint32_t pa, K kb, uint32_t pb)
	{
		return PAIR ? gs_pair_less<K>(ka, pa, kb, pb) : ka < kb;
	}
};

/* The second phase by the in-block quicksort (tests only, see gs_quick_set_depth_limits): a block per range. */
template <typename K, bool PAIR>
__global__ void __launch_bounds__(GS_QUICK_BLOCK_THREADS)
gs_quick_block_kernel(gs_qctx<K> c, const gs_qrange<K> *ranges, const unsigned long long *nranges,
					  int depth_limit)
{
	typedef cub::BlockScan<unsigned, GS_QUICK_BLOCK_THREADS> scan_t;
	extern __shared__ __align__(16) unsigned char gs_smem[];
	__shared__ typename scan_t::TempStorage ts;
	__shared__ int st_b[GS_QUICK_STACK],
				st_e[GS_QUICK_STACK],
				st_buf[GS_QUICK_STACK],
				st_d[GS_QUICK_STACK];
	__shared__ int leaf_b[GS_QUICK_LEAVES],
				leaf_e[GS_QUICK_LEAVES],
				leaf_buf[GS_QUICK_LEAVES];
	__shared__ int nstack,
				nleaves;
	__shared__ int cur_b,
				cur_e,
				cur_buf,
				cur_d,
				action;
	__shared__ K piv_k;
	__shared__ uint32_t piv_p;
	const gs_quick_block_shared<K> s = {ts, st_b, st_e, st_buf, st_d, leaf_b, leaf_e, leaf_buf, nstack, nleaves,
										cur_b, cur_e, cur_buf, cur_d, action, piv_k, piv_p};

	if (blockIdx.x >= *nranges)
		return;
	gs_quick_block_agent<K, PAIR>(c, s, gs_smem, ranges[blockIdx.x], depth_limit).process();
}

#undef GS_SK
#undef GS_SV

/*
 * The default second phase: one block sorts one range of at most TILE keys
 * by merge sort (merge_block.cuh's gs_block_merge_sort): a striped
 * load with the key transform on level 0, padding with the largest key (and
 * position, so padding sorts after any real key), a transpose to ITEMS
 * consecutive keys per thread, a sorting network in registers, then
 * merge-path rounds in shared memory until one run covers the range (the
 * rounds beyond would only merge padding).  Orders by (key, position) for
 * argsort, so the result is the stable one.
 */
template <typename K, bool PAIR, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
gs_quick_msort_kernel(gs_qctx<K> c, const gs_qrange<K> *ranges, const unsigned long long *nranges)
{
	constexpr int TILE = THREADS * ITEMS;
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem;
	uint32_t   *sv = (uint32_t *) (sk + TILE);
	const int	tid = threadIdx.x;

	if (blockIdx.x >= *nranges)
		return;
	{
		const gs_qrange<K> range = ranges[blockIdx.x];
		const size_t gbase = range.begin;
		const int	count = (int) (range.end - range.begin);

#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			int			j = tid + i * THREADS;
			K			key = gs_key_max<K>();
			uint32_t	p = UINT32_MAX;

			if (j < count)
				gs_quick_read<K, PAIR>(c, range.buf, range.raw, gbase + j, &key, &p);
			sk[j] = key;
			if (PAIR)
				sv[j] = p;
		}
		__syncthreads();
		gs_block_merge_sort<K, THREADS, ITEMS, PAIR, PAIR>(sk, sv, count);
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			int			j = tid + i * THREADS;

			if (j < count)
				gs_quick_final<K, PAIR>(c, gbase + j, sk[j], PAIR ? sv[j] : 0);
		}
	}
}

/* ------------------------------------------------------------------------
 * Fallback of the first phase: a task too deep goes to the merge sort.
 * ------------------------------------------------------------------------ */

/* After the merge sort of a fallback range (sorted keys in buffer buf): decode and gather. */
template <typename K, bool PAIR>
__global__ void
gs_quick_fallback_out_kernel(gs_qctx<K> c, int buf, size_t b, size_t e)
{
	for (size_t i = b + (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < e; i += (size_t) gridDim.x * blockDim.x)
		gs_quick_final<K, PAIR>(c, i, gs_qk<K>(c, buf)[i], PAIR ? gs_qp<K>(c, buf)[i] : 0);
}

/* The whole input as a single second-phase range (n <= block capacity). */
template <typename K>
__global__ void
gs_quick_one_range_kernel(gs_qrange<K> *ranges, unsigned long long *nranges, size_t n)
{
	gs_qrange<K> r;

	r.begin = 0;
	r.end = n;
	r.key = 0;
	r.pos = 0;
	r.buf = 0;
	r.raw = 1;
	ranges[0] = r;
	*nranges = 1;
}

/* ------------------------------------------------------------------------
 * Host side
 * ------------------------------------------------------------------------ */

typedef struct gs_quick_layout
{
	size_t		max_tasks,
				max_small,
				max_fills;
	size_t		off_tasks[2],
				off_small,
				off_fills,
				off_fallback,
				off_first,
				off_counters,
				off_pos;
	size_t		bytes;
} gs_quick_layout;

static int
gs_log2_ceil(size_t n)
{
	int			l = 0;

	while (((size_t) 1 << l) < n)
		l++;
	return l;
}

/* Levels launched before the first read-back of the task count. */
static int
gs_quick_first_batch(size_t n, size_t small_cap)
{
	int			b = gs_log2_ceil((n + small_cap - 1) / small_cap) + GS_QUICK_FIRST_BATCH_EXTRA;

	return b > GS_QUICK_BATCH ? b : GS_QUICK_BATCH;
}

/* Ranges a second-phase block takes: the merge tile, or (tests) the in-block quicksort's capacity. */
template <typename K, bool PAIR>
static size_t
gs_quick_small_cap(bool block_quicksort)
{
	return block_quicksort ? (size_t) gs_quick_block_cap<K, PAIR>() : (size_t) gs_quick_bs_policy<K, PAIR>::TILE;
}

template <typename K, bool PAIR>
static void
gs_quick_make_layout(size_t n, gs_quick_layout *l)
{
	size_t		t = 0;
	size_t		cap = std::min(gs_quick_small_cap<K, PAIR>(false), gs_quick_small_cap<K, PAIR>(true));

	/* tasks of one level are disjoint and larger than the capacity */
	l->max_tasks = n / cap + 2;
	/* each task of a batch's levels yields at most two small ranges; the list is emptied per batch */
	l->max_small = 2 * l->max_tasks * (size_t) gs_quick_first_batch(n, cap);
	/* long fills are disjoint and longer than GS_QUICK_FILL_WARP */
	l->max_fills = n / GS_QUICK_FILL_WARP + 2;
#define GS_QUICK_TAKE(field, bytes) do { t = gs_align_up(t, 256); l->field = t; t += (bytes); } while (0)
	GS_QUICK_TAKE(off_tasks[0], l->max_tasks * sizeof(gs_qtask<K>));
	GS_QUICK_TAKE(off_tasks[1], l->max_tasks * sizeof(gs_qtask<K>));
	GS_QUICK_TAKE(off_small, l->max_small * sizeof(gs_qrange<K>));
	GS_QUICK_TAKE(off_fills, l->max_fills * sizeof(gs_qrange<K>));
	GS_QUICK_TAKE(off_fallback, l->max_tasks * sizeof(gs_qrange<K>));
	GS_QUICK_TAKE(off_first, l->max_tasks * sizeof(unsigned));
	GS_QUICK_TAKE(off_counters, GS_QC_COUNT * sizeof(unsigned long long));
	GS_QUICK_TAKE(off_pos, PAIR ? n * sizeof(uint32_t) : 0);
#undef GS_QUICK_TAKE
	l->bytes = gs_align_up(t, 256);
}

/*
 * One run: the limits that steer it (from n, or a test's overrides), where
 * everything lives on the device (the layout's lists carved from temp), and
 * its stream.
 */
template <typename K>
struct gs_quick_plan
{
	gs_quick_layout l;
	gs_qctx<K>	c;
	gs_qtask<K> *tasks[2];		/* level L reads tasks[L & 1], fills the other */
	gs_qrange<K> *small,
			   *fills,
			   *fallback;
	unsigned   *first;
	unsigned long long *counters;
	bool		block_quicksort;	/* second phase by the in-block quicksort (tests) */
	size_t		small_cap;		/* ranges up to this go to the second phase */
	int			block_depth;	/* the in-block quicksort's depth limit */
	int			depth_limit;	/* the first phase's depth limit */
	size_t		part_blocks_max;	/* partition blocks of a level, at most */
	cudaStream_t stream;
};

/* The plan of a run whose layout (q->l) is made and fits in temp. */
template <typename K, bool PAIR>
static void
gs_quick_plan_init(const gs_gpu_sort_args *args, gs_quick_plan<K> *q)
{
	const size_t n = args->n;
	const gs_quick_layout *l = &q->l;
	unsigned char *temp = (unsigned char *) args->temp;

	q->block_quicksort = gs_quick_depth_second >= 0;
	q->small_cap = gs_quick_small_cap<K, PAIR>(q->block_quicksort);
	q->block_depth = gs_quick_depth_second >= 0 ? gs_quick_depth_second
		: 2 * gs_log2_ceil(gs_quick_block_cap<K, PAIR>()) + 4;
	q->depth_limit = gs_quick_depth_first >= 0 ? gs_quick_depth_first : 2 * gs_log2_ceil(n) + 8;
	q->part_blocks_max = (n + GS_QUICK_CHUNK(K) - 1) / GS_QUICK_CHUNK(K);
	q->stream = (cudaStream_t) args->stream;
	q->c.keys[0] = (K *) args->keys[0];
	q->c.keys[1] = (K *) args->keys[1];
	q->c.pos[0] = PAIR ? (uint32_t *) (temp + l->off_pos) : NULL;
	q->c.pos[1] = PAIR ? args->values[1] : NULL;
	q->c.vals_in = args->values[0];
	q->c.keys_out = (K *) args->keys[1];
	q->c.vals_out = args->values[1];
	q->c.n = n;
	q->c.codec = gs_codec_of(args);
	q->tasks[0] = (gs_qtask<K> *) (temp + l->off_tasks[0]);
	q->tasks[1] = (gs_qtask<K> *) (temp + l->off_tasks[1]);
	q->small = (gs_qrange<K> *) (temp + l->off_small);
	q->fills = (gs_qrange<K> *) (temp + l->off_fills);
	q->fallback = (gs_qrange<K> *) (temp + l->off_fallback);
	q->first = (unsigned *) (temp + l->off_first);
	q->counters = (unsigned long long *) (temp + l->off_counters);
}

/* Raises the second phase kernel's shared memory limit; zeroes the device counters. */
template <typename K, bool PAIR>
static gs_status
gs_quick_prepare(const gs_quick_plan<K> &q, gs_error *err)
{
	typedef gs_quick_bs_policy<K, PAIR> P;
	unsigned long long *const counters = q.counters;
	cudaStream_t stream = q.stream;

	if (q.block_quicksort)
		GS_CUDA_CHECK((gs_smem_limit<gs_quick_block_kernel<K, PAIR>>(
			2 * (size_t) gs_quick_block_cap<K, PAIR>() * (sizeof(K) + (PAIR ? 4 : 0)))), err);
	else
		GS_CUDA_CHECK((gs_smem_limit<gs_quick_msort_kernel<K, PAIR, P::THREADS, P::ITEMS>>(P::SMEM)), err);
	GS_CUDA_CHECK(cudaMemsetAsync(counters, 0, GS_QC_COUNT * sizeof(unsigned long long), stream), err);
	return GS_OK;
}

/* Launches the second phase on the count ranges listed so far. */
template <typename K, bool PAIR>
static gs_status
gs_quick_second_phase(const gs_quick_plan<K> &q, unsigned long long count, gs_error *err)
{
	typedef gs_quick_bs_policy<K, PAIR> P;
	const unsigned long long *nsmall = q.counters + GS_QC_SMALL;

	if (count == 0)
		return GS_OK;
	if (q.block_quicksort)
	{
		const size_t smem = 2 * (size_t) gs_quick_block_cap<K, PAIR>() * (sizeof(K) + (PAIR ? 4 : 0));

		gs_quick_block_kernel<K, PAIR><<<(unsigned) count, GS_QUICK_BLOCK_THREADS, smem, q.stream>>>
			(q.c, q.small, nsmall, q.block_depth);
		GS_LAUNCH_CHECK("quicksort: block launch", err);
	}
	else
	{
		gs_quick_msort_kernel<K, PAIR, P::THREADS, P::ITEMS><<<(unsigned) count, P::THREADS, P::SMEM, q.stream>>>
			(q.c, q.small, nsmall);
		GS_LAUNCH_CHECK("quicksort: block merge sort launch", err);
	}
	return GS_OK;
}

/* One level of the first phase: partition its tasks, then finish them (next tasks, ranges, fills). */
template <typename K, bool PAIR>
static gs_status
gs_quick_level(const gs_quick_plan<K> &q, int level, gs_error *err)
{
	const int	cur = level & 1;
	unsigned long long *const counters = q.counters;

	gs_quick_partition_kernel<K, PAIR><<<(unsigned) (q.part_blocks_max + q.l.max_tasks), GS_QUICK_THREADS, 0,
		q.stream>>>(q.c, q.tasks[cur], counters + GS_QC_LEVEL + cur, counters + GS_QC_LEVEL + (cur ^ 1), q.first,
					level == 0);
	GS_LAUNCH_CHECK("quicksort: partition launch", err);
	gs_quick_finish_kernel<K, PAIR><<<(unsigned) ((q.l.max_tasks * 32 + 255) / 256), 256, 0, q.stream>>>
		(q.c, q.tasks[cur], counters + GS_QC_LEVEL + cur, q.tasks[cur ^ 1], counters + GS_QC_LEVEL + (cur ^ 1),
		 q.first, counters, q.small, q.fills, q.fallback, (int) q.small_cap, q.depth_limit);
	GS_LAUNCH_CHECK("quicksort: finish launch", err);
	return GS_OK;
}

/*
 * The first phase: the whole input as the first task, then levels in
 * batches.  After each batch the host reads the counters back, sorts the
 * batch's small ranges, and stops once a level has no task; the counters
 * are left in host_counters.
 */
template <typename K, bool PAIR>
static gs_status
gs_quick_first_phase(const gs_quick_plan<K> &q, unsigned long long (&host_counters)[GS_QC_COUNT], gs_error *err)
{
	unsigned long long *const counters = q.counters;
	cudaStream_t stream = q.stream;
	int			level = 0;
	gs_status	st;

	gs_quick_init_kernel<K, PAIR><<<1, 32, 0, stream>>>(q.c, q.tasks[0], q.first, counters);
	GS_LAUNCH_CHECK("quicksort: init launch", err);
	for (int batch = gs_quick_first_batch(q.c.n, q.small_cap);; batch = GS_QUICK_BATCH)
	{
		/*
		 * Levels are launched blind: each reads its size from the device, and
		 * a level past the last one is a few empty launches.
		 */
		for (int i = 0; i < batch; i++, level++)
		{
			st = gs_quick_level<K, PAIR>(q, level, err);
			if (st != GS_OK)
				return st;
		}
		GS_CUDA_CHECK(cudaMemcpyAsync(host_counters, counters, sizeof(host_counters), cudaMemcpyDeviceToHost,
									  stream), err);
		GS_CUDA_CHECK(cudaStreamSynchronize(stream), err);
		/* the batch's small ranges, then an empty list for the next batch (ranges never move again) */
		st = gs_quick_second_phase<K, PAIR>(q, host_counters[GS_QC_SMALL], err);
		if (st != GS_OK)
			return st;
		if ((host_counters[GS_QC_LEVEL + (level & 1)] >> GS_QUICK_BLOCK_BITS) == 0)
			break;
		GS_CUDA_CHECK(cudaMemsetAsync(counters + GS_QC_SMALL, 0, sizeof(unsigned long long), stream), err);
	}
	return GS_OK;
}

/* The fallback ranges (rare): merge sort each, then decode and gather. */
template <typename K, bool PAIR>
static gs_status
gs_quick_fallbacks(const gs_quick_plan<K> &q, unsigned long long count, gs_error *err)
{
	const gs_qctx<K> &c = q.c;
	const gs_qrange<K> *const fallback = q.fallback;
	cudaStream_t stream = q.stream;
	gs_status	st;

	for (unsigned long long i = 0; i < count; i++)
	{
		gs_qrange<K> r;
		K		   *kb[2];
		uint32_t   *vb[2];

		GS_CUDA_CHECK(cudaMemcpyAsync(&r, fallback + i, sizeof(r), cudaMemcpyDeviceToHost, stream), err);
		GS_CUDA_CHECK(cudaStreamSynchronize(stream), err);
		kb[0] = c.keys[r.buf] + r.begin;
		kb[1] = c.keys[r.buf ^ 1] + r.begin;
		if (PAIR)
		{
			vb[0] = c.pos[r.buf] + r.begin;
			vb[1] = c.pos[r.buf ^ 1] + r.begin;
		}
		st = gs_merge_sort_ordered<K>(kb, PAIR ? vb : NULL, (size_t) (r.end - r.begin), PAIR, stream, err);
		if (st != GS_OK)
			return st;
		gs_quick_fallback_out_kernel<K, PAIR><<<264, 256, 0, stream>>>(c, r.buf, r.begin, r.end);
		GS_LAUNCH_CHECK("quicksort: fallback output launch", err);
	}
	return GS_OK;
}

/*
 * A run: the plan, then either the whole input as one second-phase range,
 * or the first phase (which runs the second on its small ranges), the long
 * runs of keys equal to a pivot, and the fallback ranges.  Results in
 * keys[1] and values[1].
 */
template <typename K, bool PAIR>
static gs_status
gs_quick_run(gs_gpu_sort_args *args, gs_error *err)
{
	const size_t n = args->n;
	gs_quick_plan<K> q;
	unsigned long long host_counters[GS_QC_COUNT];
	gs_status	st;

	gs_quick_make_layout<K, PAIR>(n, &q.l);
	if (args->temp_bytes < q.l.bytes)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "quicksort: temp_bytes %zu is too small (need %zu)",
					   args->temp_bytes, q.l.bytes);
	gs_quick_plan_init<K, PAIR>(args, &q);
	args->result_selector = 1;
	st = gs_quick_prepare<K, PAIR>(q, err);
	if (st != GS_OK)
		return st;

	if (n <= q.small_cap)
	{
		/* the whole input is one second-phase range */
		gs_quick_one_range_kernel<K><<<1, 1, 0, q.stream>>>(q.small, q.counters + GS_QC_SMALL, n);
		GS_LAUNCH_CHECK("quicksort: range launch", err);
		return gs_quick_second_phase<K, PAIR>(q, 1, err);
	}
	st = gs_quick_first_phase<K, PAIR>(q, host_counters, err);
	if (st != GS_OK)
		return st;
	if (host_counters[GS_QC_FILLS] > 0)
	{
		gs_quick_fill_kernel<K, PAIR><<<264, 256, 0, q.stream>>>(q.c, q.fills, q.counters);
		GS_LAUNCH_CHECK("quicksort: fill launch", err);
	}
	return gs_quick_fallbacks<K, PAIR>(q, host_counters[GS_QC_FALLBACK], err);
}

template <typename K>
static gs_status
gs_quick_typed(gs_gpu_sort_args *args, gs_error *err)
{
	if (args->values[0] != NULL)
	{
		if (args->n > UINT32_MAX)
			return gs_fail(err, GS_ERR_TOO_LARGE, "quicksort: argsort of %zu keys (2^32-1 at most)", args->n);
		return gs_quick_run<K, true>(args, err);
	}
	return gs_quick_run<K, false>(args, err);
}

static size_t
gs_quick_temp_bytes(const gs_gpu_sort_args *args)
{
	gs_quick_layout l;
	bool		pair = args->values[0] != NULL;

	switch (gs_type_size(args->type))
	{
		case 2:
			pair ? gs_quick_make_layout<uint16_t, true>(args->n, &l) : gs_quick_make_layout<uint16_t, false>(args->n, &l);
			break;
		case 4:
			pair ? gs_quick_make_layout<uint32_t, true>(args->n, &l) : gs_quick_make_layout<uint32_t, false>(args->n, &l);
			break;
		default:
			pair ? gs_quick_make_layout<uint64_t, true>(args->n, &l) : gs_quick_make_layout<uint64_t, false>(args->n, &l);
			break;
	}
	return l.bytes;
}

extern "C" gs_status
gs_quick_sort_gpu(gs_gpu_sort_args *args, gs_error *err)
{
	if (gs_type_size(args->type) == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "quicksort: unknown key type %d", (int) args->type);
	if (args->temp == NULL)
	{
		args->temp_bytes = gs_quick_temp_bytes(args);
		return GS_OK;
	}
	args->algorithm_used = GS_ALGO_QUICK;
	switch (gs_type_size(args->type))
	{
		case 2:
			return gs_quick_typed<uint16_t>(args, err);
		case 4:
			return gs_quick_typed<uint32_t>(args, err);
		default:
			return gs_quick_typed<uint64_t>(args, err);
	}
}
