/*
 * quick_sort.cu: GPU quicksort (gs_quick_sort_gpu), after the thesis of seed
 * 002, chapter 4 (Cederman and Tsigas' design): a first phase in which many
 * blocks partition each large task together, then a second phase in which
 * one block sorts a task alone, by quicksort in shared memory with bitonic
 * sort at the leaves.
 *
 * Changes to the thesis, for robustness:
 *   - three-way partitions (<, =, > pivot): keys equal to the pivot are
 *     final at once and never recurse, so all-equal and few-distinct inputs
 *     finish in a level or two;
 *   - the pivot is the median of 32 evenly spaced samples (one warp sorts
 *     them), not of three, so sorted, reversed and staggered inputs split
 *     near the middle;
 *   - a depth limit: a first-phase task deeper than 2 log2(n) + 8 levels is
 *     sorted by the merge sort (O(n log n)), a second-phase range deeper than
 *     2 log2(block capacity) + 4 by an in-place bitonic sort, so the work
 *     never degrades to quadratic;
 *   - leaves of at most 32*E keys are sorted by one warp in registers
 *     (bitonic network, shuffles), many warps at once.
 * Argsort sorts (key, position) pairs, which makes the result stable; the
 * final writes gather values[0] by position.  Results go to keys[1] and
 * values[1].  The first phase reads back one counter per level (the host
 * loop of algorithm 4.3.1).
 */
#include <stdint.h>
#include <string.h>

#include <cub/block/block_scan.cuh>

#include "bitonic_block.cuh"
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

static int	gs_quick_depth_first = -1;
static int	gs_quick_depth_second = -1;

extern "C" void
gs_quick_set_depth_limits(int first_phase, int second_phase)
{
	gs_quick_depth_first = first_phase;
	gs_quick_depth_second = second_phase;
}

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

/* The whole input as the first task. */
template <typename K, bool PAIR>
__global__ void
gs_quick_init_kernel(gs_qctx<K> c, gs_qtask<K> *tasks, int *ntasks)
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
		*ntasks = 1;
	}
}

/* Block offsets of the tasks (each takes ceil(len / CHUNK) partition blocks); one block. */
template <typename K>
__global__ void __launch_bounds__(1024)
gs_quick_blocks_kernel(const gs_qtask<K> *tasks, const int *ntasks, unsigned *first, int *counters)
{
	typedef cub::BlockScan<unsigned, 1024> scan_t;
	__shared__ typename scan_t::TempStorage ts;
	__shared__ unsigned carry;
	const int	nt = *ntasks;

	if (threadIdx.x == 0)
		carry = 0;
	__syncthreads();
	for (int base = 0; base < nt; base += 1024)
	{
		int			t = base + threadIdx.x;
		unsigned	v = 0,
					pos,
					total;

		if (t < nt)
			v = (unsigned) ((tasks[t].end - tasks[t].begin + GS_QUICK_CHUNK(K) - 1) / GS_QUICK_CHUNK(K));
		scan_t(ts).ExclusiveSum(v, pos, total);
		if (t < nt)
			first[t] = carry + pos;
		__syncthreads();
		if (threadIdx.x == 0)
			carry += total;
		__syncthreads();
	}
	/* lists the finish step fills: next tasks, small ranges, fills */
	if (threadIdx.x < 3)
		counters[threadIdx.x] = 0;
}

/*
 * Multi-block partition (algorithm 4.3.2): block = one chunk of one task.
 * Counts keys below and above the pivot per thread, scans them over the
 * block, reserves room at the task's left and right ends with one atomic
 * each, and writes through shared memory so that both writes are coalesced.
 * Keys equal to the pivot are dropped here and written by the fill step.
 */
template <typename K, bool PAIR>
__global__ void __launch_bounds__(GS_QUICK_THREADS)
gs_quick_partition_kernel(gs_qctx<K> c, gs_qtask<K> *tasks, const int *ntasks, const unsigned *first,
						  int raw)
{
	typedef cub::BlockScan<unsigned, GS_QUICK_THREADS> scan_t;
	__shared__ typename scan_t::TempStorage ts;
	__shared__ K sk[GS_QUICK_CHUNK(K)];
	__shared__ uint32_t sv[PAIR ? GS_QUICK_CHUNK(K) : 1];
	__shared__ unsigned long long base_lt,
				base_gt;
	const int	nt = *ntasks;
	const int	tid = threadIdx.x;
	int			lo = 0,
				hi = nt - 1,
				t;
	K			k[GS_QUICK_ITEMS(K)];
	uint32_t	v[GS_QUICK_ITEMS(K)];
	unsigned	cls = 0;		/* 2 bits per item: 1 = less, 2 = greater */
	unsigned	nlt = 0,
				ngt = 0,
				scanned,
				totals;

	if (nt == 0 || blockIdx.x >= first[nt - 1] +
		(unsigned) ((tasks[nt - 1].end - tasks[nt - 1].begin + GS_QUICK_CHUNK(K) - 1) / GS_QUICK_CHUNK(K)))
		return;
	/* the task whose blocks include this one */
	while (lo < hi)
	{
		int			mid = (lo + hi + 1) >> 1;

		if (first[mid] <= blockIdx.x)
			lo = mid;
		else
			hi = mid - 1;
	}
	t = lo;
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
 * After a partition: the keys equal to the pivot are final (a fill range);
 * each side becomes a next-level task (with its pivot), a second-phase range
 * when small, or a fallback range when too deep.  A warp per task.
 */
template <typename K, bool PAIR>
__global__ void
gs_quick_finish_kernel(gs_qctx<K> c, const gs_qtask<K> *tasks, const int *ntasks,
					   gs_qtask<K> *next, int *counters, gs_qrange<K> *small, gs_qrange<K> *fills,
					   gs_qrange<K> *fallback, int *nfallback, int small_cap, int depth_limit)
{
	const int	lane = threadIdx.x & 31;
	const int	t = (int) ((blockIdx.x * (size_t) blockDim.x + threadIdx.x) >> 5);

	if (t >= *ntasks)
		return;
	{
		const gs_qtask<K> task = tasks[t];
		const int	dst = task.buf ^ 1;
		const unsigned long long mid_b = task.begin + task.lt;
		const unsigned long long mid_e = task.end - task.gt;

		if (lane == 0 && mid_e > mid_b)
		{
			gs_qrange<K> f;
			int			at = atomicAdd(&counters[2], 1);

			f.begin = mid_b;
			f.end = mid_e;
			f.key = task.pivot;
			f.pos = task.pivot_pos;
			f.buf = dst;
			f.raw = 0;
			fills[at] = f;
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
					int			at = atomicAdd(small_one ? &counters[1] : nfallback, 1);

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
					int			at = atomicAdd(&counters[0], 1);

					nt.begin = b;
					nt.end = e;
					nt.lt = nt.gt = 0;
					nt.pivot = pk;
					nt.pivot_pos = pp;
					nt.buf = dst;
					nt.depth = task.depth + 1;
					next[at] = nt;
				}
			}
		}
	}
}

/* Writes the runs of keys equal to their pivot (all blocks share every run). */
template <typename K, bool PAIR>
__global__ void
gs_quick_fill_kernel(gs_qctx<K> c, const gs_qrange<K> *fills, const int *counters)
{
	const int	nf = counters[2];

	for (int f = 0; f < nf; f++)
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
 * Sorts one range of at most the block capacity: load into shared memory,
 * quicksort with an explicit stack (the smaller side first, so the stack
 * stays logarithmic), partitions ping-ponging between two shared buffers;
 * leaves go to a batch that all warps sort together; keys equal to a pivot
 * and sorted leaves are written straight to the result.
 */
template <typename K, bool PAIR>
__global__ void __launch_bounds__(GS_QUICK_BLOCK_THREADS)
gs_quick_block_kernel(gs_qctx<K> c, const gs_qrange<K> *ranges, const int *nranges, int depth_limit)
{
	constexpr int CAP = gs_quick_block_cap<K, PAIR>();
	constexpr int LEAF = 32 * gs_quick_leaf_items<K, PAIR>();
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
	K		   *const sk0 = (K *) gs_smem;
	uint32_t   *const sv0 = (uint32_t *) ((K *) gs_smem + 2 * CAP);

	const int	tid = threadIdx.x;

	if ((int) blockIdx.x >= *nranges)
		return;
	{
		const gs_qrange<K> range = ranges[blockIdx.x];
		const size_t gbase = range.begin;
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
			st_b[0] = 0;
			st_e[0] = len;
			st_buf[0] = 0;
			st_d[0] = 0;
			nstack = 1;
			nleaves = 0;
		}
		__syncthreads();

		for (;;)
		{
			/* thread 0 decides: 0 = done, 1 = flush leaves, 2 = partition, 3 = bitonic fallback, 4 = leaf added */
			if (tid == 0)
			{
				if (nstack == 0)
					action = nleaves > 0 ? 1 : 0;
				else
				{
					nstack--;
					cur_b = st_b[nstack];
					cur_e = st_e[nstack];
					cur_buf = st_buf[nstack];
					cur_d = st_d[nstack];
					if (cur_e - cur_b <= LEAF)
					{
						leaf_b[nleaves] = cur_b;
						leaf_e[nleaves] = cur_e;
						leaf_buf[nleaves] = cur_buf;
						nleaves++;
						action = nleaves == GS_QUICK_LEAVES ? 1 : 4;
					}
					else
						action = cur_d > depth_limit ? 3 : 2;
				}
			}
			__syncthreads();
			{
				const int	act = action,
							b = cur_b,
							e = cur_e,
							x = cur_buf,
							d = cur_d;

				/* everyone has the decision before thread 0 may make the next one */
				__syncthreads();
				if (act == 0)
					break;
				if (act == 4)
					continue;
				if (act == 1)
				{
				gs_quick_flush_leaves<K, PAIR>(c, gbase, sk0, sv0, leaf_b, leaf_e, leaf_buf, nleaves);
				__syncthreads();
				if (tid == 0)
					nleaves = 0;
				continue;
			}
				if (act == 3)
				{
					gs_bitonic_sort_smem_n<K, PAIR>(GS_SK(x) + b, GS_SV(x) + b, e - b);
					for (int i = b + tid; i < e; i += GS_QUICK_BLOCK_THREADS)
						gs_quick_final<K, PAIR>(c, gbase + i, GS_SK(x)[i], PAIR ? GS_SV(x)[i] : 0);
					__syncthreads();
					continue;
				}
				/* pivot: median of 32 evenly spaced keys, sorted by warp 0 */
				if (tid < 32)
				{
					K			pk[1];
					uint32_t	pp[1];
					int			i = b + (int) (((2 * (size_t) tid + 1) * (size_t) (e - b)) / 64);

					pk[0] = GS_SK(x)[i];
					pp[0] = PAIR ? GS_SV(x)[i] : 0;
					gs_bitonic_sort_warp<K, PAIR, 1>(pk, pp, tid);
					if (tid == 15)
					{
						piv_k = pk[0];
						piv_p = pp[0];
					}
				}
				__syncthreads();
				{
					const K		pk = piv_k;
					const uint32_t pp = piv_p;
					unsigned	nlt = 0,
								ngt = 0,
								scanned,
								totals;

					for (int i = b + tid; i < e; i += GS_QUICK_BLOCK_THREADS)
					{
						K			k = GS_SK(x)[i];
						uint32_t	p = PAIR ? GS_SV(x)[i] : 0;

						if (PAIR ? gs_pair_less<K>(k, p, pk, pp) : k < pk)
							nlt++;
						else if (PAIR ? gs_pair_less<K>(pk, pp, k, p) : pk < k)
							ngt++;
					}
					scan_t(ts).ExclusiveSum(nlt | (ngt << 16), scanned, totals);
					{
						const int	lt_total = (int) (totals & 0xFFFF),
									gt_total = (int) (totals >> 16);
						int			lt_at = b + (int) (scanned & 0xFFFF),
									gt_at = e - gt_total + (int) (scanned >> 16);

						for (int i = b + tid; i < e; i += GS_QUICK_BLOCK_THREADS)
						{
							K			k = GS_SK(x)[i];
							uint32_t	p = PAIR ? GS_SV(x)[i] : 0;

							if (PAIR ? gs_pair_less<K>(k, p, pk, pp) : k < pk)
							{
								GS_SK(x ^ 1)[lt_at] = k;
								if (PAIR)
									GS_SV(x ^ 1)[lt_at] = p;
								lt_at++;
							}
							else if (PAIR ? gs_pair_less<K>(pk, pp, k, p) : pk < k)
							{
								GS_SK(x ^ 1)[gt_at] = k;
								if (PAIR)
									GS_SV(x ^ 1)[gt_at] = p;
								gt_at++;
							}
						}
						/* keys equal to the pivot are final */
						for (int i = b + lt_total + tid; i < e - gt_total; i += GS_QUICK_BLOCK_THREADS)
							gs_quick_final<K, PAIR>(c, gbase + i, pk, pp);
						__syncthreads();
						if (tid == 0)
						{
							int			lb = b,
										le = b + lt_total,
										rb = e - gt_total,
										re = e;
							bool		left_small = le - lb <= re - rb;

							/* push the larger side first so the smaller is sorted first */
							if (left_small)
							{
								if (re > rb)
								{
									st_b[nstack] = rb;
									st_e[nstack] = re;
									st_buf[nstack] = x ^ 1;
									st_d[nstack] = d + 1;
									nstack++;
								}
								if (le > lb)
								{
									st_b[nstack] = lb;
									st_e[nstack] = le;
									st_buf[nstack] = x ^ 1;
									st_d[nstack] = d + 1;
									nstack++;
								}
							}
							else
							{
								if (le > lb)
								{
									st_b[nstack] = lb;
									st_e[nstack] = le;
									st_buf[nstack] = x ^ 1;
									st_d[nstack] = d + 1;
									nstack++;
								}
								if (re > rb)
								{
									st_b[nstack] = rb;
									st_e[nstack] = re;
									st_buf[nstack] = x ^ 1;
									st_d[nstack] = d + 1;
									nstack++;
								}
							}
						}
						__syncthreads();
					}
				}
			}
		}
	}
}

#undef GS_SK
#undef GS_SV

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
gs_quick_one_range_kernel(gs_qrange<K> *ranges, int *nranges, size_t n)
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
	size_t		max_tasks;
	size_t		off_tasks[2],
				off_small,
				off_fills,
				off_fallback,
				off_first,
				off_counters,
				off_pos;
	size_t		bytes;
} gs_quick_layout;

template <typename K, bool PAIR>
static void
gs_quick_make_layout(size_t n, gs_quick_layout *l)
{
	size_t		t = 0;

	/* tasks of one level are disjoint and larger than the block capacity */
	l->max_tasks = n / gs_quick_block_cap<K, PAIR>() + 2;
#define GS_QUICK_TAKE(field, bytes) do { t = gs_align_up(t, 256); l->field = t; t += (bytes); } while (0)
	GS_QUICK_TAKE(off_tasks[0], l->max_tasks * sizeof(gs_qtask<K>));
	GS_QUICK_TAKE(off_tasks[1], l->max_tasks * sizeof(gs_qtask<K>));
	GS_QUICK_TAKE(off_small, 2 * l->max_tasks * sizeof(gs_qrange<K>));
	GS_QUICK_TAKE(off_fills, l->max_tasks * sizeof(gs_qrange<K>));
	GS_QUICK_TAKE(off_fallback, l->max_tasks * sizeof(gs_qrange<K>));
	GS_QUICK_TAKE(off_first, l->max_tasks * sizeof(unsigned));
	GS_QUICK_TAKE(off_counters, 8 * sizeof(int));
	GS_QUICK_TAKE(off_pos, PAIR ? n * sizeof(uint32_t) : 0);
#undef GS_QUICK_TAKE
	l->bytes = gs_align_up(t, 256);
}

static int
gs_log2_ceil(size_t n)
{
	int			l = 0;

	while (((size_t) 1 << l) < n)
		l++;
	return l;
}

template <typename K, bool PAIR>
static gs_status
gs_quick_run(gs_gpu_sort_args *args, gs_error *err)
{
	constexpr int CAP = gs_quick_block_cap<K, PAIR>();
	const size_t n = args->n;
	const size_t block_smem = 2 * (size_t) CAP * (sizeof(K) + (PAIR ? 4 : 0));
	const int	block_depth = gs_quick_depth_second >= 0 ? gs_quick_depth_second : 2 * gs_log2_ceil(CAP) + 4;
	const int	depth_limit = gs_quick_depth_first >= 0 ? gs_quick_depth_first : 2 * gs_log2_ceil(n) + 8;
	cudaStream_t stream = (cudaStream_t) args->stream;
	unsigned char *temp = (unsigned char *) args->temp;
	gs_quick_layout l;
	gs_qctx<K>	c;
	gs_qtask<K> *tasks[2];
	gs_qrange<K> *small,
			   *fills,
			   *fallback;
	unsigned   *first;
	int		   *counters;		/* 0 next tasks, 1 small, 2 fills, 3 fallback, 4.. task counts */
	int			cur = 0;

	gs_quick_make_layout<K, PAIR>(n, &l);
	if (args->temp_bytes < l.bytes)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "quicksort: temp_bytes %zu is too small (need %zu)",
					   args->temp_bytes, l.bytes);
	c.keys[0] = (K *) args->keys[0];
	c.keys[1] = (K *) args->keys[1];
	c.pos[0] = PAIR ? (uint32_t *) (temp + l.off_pos) : NULL;
	c.pos[1] = PAIR ? args->values[1] : NULL;
	c.vals_in = args->values[0];
	c.keys_out = (K *) args->keys[1];
	c.vals_out = args->values[1];
	c.n = n;
	c.codec = gs_codec_of(args);
	tasks[0] = (gs_qtask<K> *) (temp + l.off_tasks[0]);
	tasks[1] = (gs_qtask<K> *) (temp + l.off_tasks[1]);
	small = (gs_qrange<K> *) (temp + l.off_small);
	fills = (gs_qrange<K> *) (temp + l.off_fills);
	fallback = (gs_qrange<K> *) (temp + l.off_fallback);
	first = (unsigned *) (temp + l.off_first);
	counters = (int *) (temp + l.off_counters);
	args->result_selector = 1;

	GS_CUDA_CHECK((gs_smem_limit<gs_quick_block_kernel<K, PAIR>>(block_smem)), err);
	GS_CUDA_CHECK(cudaMemsetAsync(counters, 0, 8 * sizeof(int), stream), err);

	if (n <= (size_t) CAP)
	{
		/* the whole input is one second-phase range */
		gs_quick_one_range_kernel<K><<<1, 1, 0, stream>>>(small, counters + 1, n);
		GS_LAUNCH_CHECK("quicksort: range launch", err);
		gs_quick_block_kernel<K, PAIR><<<1, GS_QUICK_BLOCK_THREADS, block_smem, stream>>>
			(c, small, counters + 1, block_depth);
		GS_LAUNCH_CHECK("quicksort: block launch", err);
		return GS_OK;
	}

	gs_quick_init_kernel<K, PAIR><<<1, 32, 0, stream>>>(c, tasks[0], counters + 4);
	GS_LAUNCH_CHECK("quicksort: init launch", err);
	for (int level = 0;; level++)
	{
		const size_t part_blocks = (n + GS_QUICK_CHUNK(K) - 1) / GS_QUICK_CHUNK(K) + l.max_tasks;
		int			ntask_next = 0;

		gs_quick_blocks_kernel<K><<<1, 1024, 0, stream>>>(tasks[cur], counters + 4 + cur, first, counters);
		GS_LAUNCH_CHECK("quicksort: block-offset launch", err);
		gs_quick_partition_kernel<K, PAIR><<<(unsigned) part_blocks, GS_QUICK_THREADS, 0, stream>>>
			(c, tasks[cur], counters + 4 + cur, first, level == 0);
		GS_LAUNCH_CHECK("quicksort: partition launch", err);
		gs_quick_finish_kernel<K, PAIR><<<(unsigned) ((l.max_tasks * 32 + 255) / 256), 256, 0, stream>>>
			(c, tasks[cur], counters + 4 + cur, tasks[cur ^ 1], counters, small, fills, fallback,
			 counters + 3, CAP, depth_limit);
		GS_LAUNCH_CHECK("quicksort: finish launch", err);
		gs_quick_fill_kernel<K, PAIR><<<264, 256, 0, stream>>>(c, fills, counters);
		GS_LAUNCH_CHECK("quicksort: fill launch", err);
		gs_quick_block_kernel<K, PAIR><<<(unsigned) (2 * l.max_tasks), GS_QUICK_BLOCK_THREADS, block_smem, stream>>>
			(c, small, counters + 1, block_depth);
		GS_LAUNCH_CHECK("quicksort: block launch", err);
		/* the next level's task count, for the loop and for the next launches */
		GS_CUDA_CHECK(cudaMemcpyAsync(counters + 4 + (cur ^ 1), counters, sizeof(int),
									  cudaMemcpyDeviceToDevice, stream), err);
		GS_CUDA_CHECK(cudaMemcpyAsync(&ntask_next, counters, sizeof(int), cudaMemcpyDeviceToHost, stream), err);
		GS_CUDA_CHECK(cudaStreamSynchronize(stream), err);
		if (ntask_next == 0)
			break;
		cur ^= 1;
	}

	/* fallback ranges (rare): merge sort each, then decode and gather */
	{
		int			nfb = 0;

		GS_CUDA_CHECK(cudaMemcpyAsync(&nfb, counters + 3, sizeof(int), cudaMemcpyDeviceToHost, stream), err);
		GS_CUDA_CHECK(cudaStreamSynchronize(stream), err);
		for (int i = 0; i < nfb; i++)
		{
			gs_qrange<K> r;
			K		   *kb[2];
			uint32_t   *vb[2];
			gs_status	st;

			GS_CUDA_CHECK(cudaMemcpy(&r, fallback + i, sizeof(r), cudaMemcpyDeviceToHost), err);
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
	}
	return GS_OK;
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
