/*
 * merge_fixed.cuh: the merge-path sort's kernels in the fixed merge order
 * that "Engineering Worst-Case Inputs for Pairwise Merge Sort on GPUs"
 * (Berney) describes (each thread merges forwards, the two runs of a tile
 * side by side, two predicated loads a step), and the persistent pass that
 * prefetches its next tile.  Built on kernels/merge_path.cuh's steps; the
 * library ships only the randomized order.  For bench_comparison and
 * test_comparison_sorts (merge_variants.cuh selects them).
 */
#ifndef GPUSORT_MERGE_FIXED_CUH
#define GPUSORT_MERGE_FIXED_CUH

#include <cuda_pipeline.h>

#include "merge_path.cuh"

/* Shared memory of a fixed-order tile of tile keys: the keys, the values, and the merge's over-read. */
template <typename K, bool VALUES, int ITEMS>
static constexpr size_t
gs_fixed_tile_smem(int tile)
{
	return gs_merge_tile_smem<K, VALUES>(tile) + gs_merge_smem_pad<K, ITEMS>();
}

/*
 * A pass thread's share of merging the tile staged in sk/sv: the left piece
 * at [0, na), the right one at [na, total); the thread's ITEMS outputs from
 * output d on, keys into k and, with VALUES, values into v.  Threads whose d
 * is past the tile do nothing.
 */
template <typename K, bool VALUES, bool PAIR, int ITEMS>
static __device__ __forceinline__ void
gs_merge_tile_items(const K *sk, const uint32_t *sv, int na, int total, int d,
					K (&k)[ITEMS], uint32_t (&v)[ITEMS])
{
	int			idx[ITEMS];

	if (d < total)
	{
		int			a = gs_merge_path<K, PAIR>(sk, sv, na, sk + na, sv + na, total - na, d);

		gs_serial_merge<K, ITEMS, PAIR>(sk, sv, a, na, na + d - a, total, k, idx);
		if (VALUES)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
				v[i] = d + i < total ? sv[idx[i]] : 0;
		}
	}
}

/* The block sort in the fixed order (gs_block_merge_sort). */
template <typename K, bool VALUES, bool PAIR, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
gs_fixed_block_sort_kernel(const K *keys_in, K *keys_out,
						   const uint32_t *vals_in, uint32_t *vals_out,
						   size_t n, gs_key_codec codec, int encode, int decode)
{
	constexpr int TILE = THREADS * ITEMS;
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem;
	uint32_t   *sv = (uint32_t *) (sk + TILE);
	const size_t base = (size_t) blockIdx.x * TILE;
	const int	count = (int) min((size_t) TILE, n - base);

	gs_pdl_wait();
	gs_merge_tile_load<K, VALUES, THREADS, ITEMS>(keys_in, vals_in, base, count, encode, codec, sk, sv);
	__syncthreads();
	gs_pdl_trigger();
	gs_block_merge_sort<K, THREADS, ITEMS, VALUES, PAIR>(sk, sv, TILE);
	gs_merge_tile_store<K, VALUES, THREADS, ITEMS>(sk, sv, base, count, decode, codec, keys_out, vals_out);
}

/* One pairwise pass in the fixed order: both pieces side by side, every thread forwards. */
template <typename K, bool VALUES, bool PAIR, int THREADS, int ITEMS, int MIN_BLOCKS, bool FUSED>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
gs_fixed_pass_kernel(const K *keys_in, K *keys_out,
					 const uint32_t *vals_in, uint32_t *vals_out,
					 size_t n, size_t run, const size_t *splits, gs_key_codec codec, int decode)
{
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem;
	uint32_t   *sv = (uint32_t *) (sk + THREADS * ITEMS);
	/* from the parameters alone: worked out while the kernel before finishes */
	const gs_merge_span span = gs_merge_tile_span(blockIdx.x, THREADS * ITEMS, n, run);
	gs_merge_tile g;
	K			k[ITEMS];
	uint32_t	v[ITEMS];

	gs_pdl_wait();
	gs_pdl_trigger();
	g = gs_merge_tile_at(span, gs_merge_tile_split<K, PAIR, FUSED>(span, blockIdx.x, keys_in, vals_in, splits));
	gs_load_pieces<K, VALUES, THREADS, ITEMS, VALUES || !FUSED>(keys_in, vals_in, g.a0, g.b0, g.na, g.total,
																 sk, sv);
	__syncthreads();
	gs_merge_tile_items<K, VALUES, PAIR, ITEMS>(sk, sv, g.na, g.total, threadIdx.x * ITEMS, k, v);
	gs_store_merged<K, VALUES, THREADS, ITEMS>(sk, sv, k, v, g.total, keys_out + g.out_begin,
											  vals_out + g.out_begin, decode, codec);
}

/*
 * Starts copying tile g's two pieces into sk/sv (left piece first) without
 * waiting: cp.async for 4- and 8-byte elements (2-byte keys are loaded
 * synchronously: cp.async has no 2-byte form).  Commits one group per
 * thread, even an empty one, so that every thread counts the same groups.
 */
template <typename K, bool VALUES, int THREADS, int ITEMS>
static __device__ __forceinline__ void
gs_merge_tile_fetch(const gs_merge_tile &g, const K *keys_in, const uint32_t *vals_in, K *sk, uint32_t *sv)
{
	const int	tid = threadIdx.x;

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		int			j = tid + i * THREADS;

		if (j < g.total)
		{
			size_t		src = j < g.na ? g.a0 + j : g.b0 + (j - g.na);

			if constexpr (sizeof(K) >= 4)
				__pipeline_memcpy_async(sk + j, keys_in + src, sizeof(K));
			else
				sk[j] = keys_in[src];
			if (VALUES)
				__pipeline_memcpy_async(sv + j, vals_in + src, sizeof(uint32_t));
		}
	}
	__pipeline_commit();
}

/*
 * A merge pass as gs_fixed_pass_kernel with splits from the partition
 * kernel, but persistent and double-buffered: block i takes tiles i, i +
 * grid, i + 2 * grid, ...; while it merges and stores one tile from one
 * shared buffer, the next tile's pieces are on their way into the other.
 * Three barriers per tile: after the current tile has landed (which also
 * frees the other buffer, whose store has finished), after the merge, after
 * the merged keys are staged for the coalesced store.  Each buffer is
 * followed by the room gs_serial_merge may read past a tile's end, so that
 * those reads never touch the buffer being filled.
 */
template <typename K, bool VALUES, bool PAIR, int THREADS, int ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
gs_merge_pass_prefetch_kernel(const K *keys_in, K *keys_out,
							  const uint32_t *vals_in, uint32_t *vals_out,
							  size_t n, size_t run, const size_t *splits, size_t tiles,
							  gs_key_codec codec, int decode)
{
	constexpr int TILE = THREADS * ITEMS;
	constexpr int STRIDE = TILE + ITEMS + 1;	/* a buffer and the room read past its end */
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *skb = (K *) gs_smem;	/* keys: buffer 0, buffer 1 */
	uint32_t   *svb = (uint32_t *) (skb + 2 * STRIDE);	/* values likewise */
	const int	tid = threadIdx.x;
	int			buf = 0;

	gs_pdl_wait();
	gs_pdl_trigger();
	if (blockIdx.x < tiles)
		gs_merge_tile_fetch<K, VALUES, THREADS, ITEMS>(
			gs_merge_tile_find<K, PAIR, false>(blockIdx.x, TILE, keys_in, vals_in, n, run, splits),
			keys_in, vals_in, skb, svb);
	for (size_t t = blockIdx.x; t < tiles; t += gridDim.x, buf ^= 1)
	{
		const gs_merge_tile g = gs_merge_tile_find<K, PAIR, false>(t, TILE, keys_in, vals_in, n, run, splits);
		K		   *sk = skb + buf * STRIDE;
		uint32_t   *sv = svb + buf * STRIDE;
		K			k[ITEMS];
		uint32_t	v[ITEMS];

		__pipeline_wait_prior(0);
		__syncthreads();
		if (t + gridDim.x < tiles)
			gs_merge_tile_fetch<K, VALUES, THREADS, ITEMS>(
				gs_merge_tile_find<K, PAIR, false>(t + gridDim.x, TILE, keys_in, vals_in, n, run, splits),
				keys_in, vals_in, skb + (buf ^ 1) * STRIDE, svb + (buf ^ 1) * STRIDE);
		gs_merge_tile_items<K, VALUES, PAIR, ITEMS>(sk, sv, g.na, g.total, tid * ITEMS, k, v);
		gs_store_merged<K, VALUES, THREADS, ITEMS>(sk, sv, k, v, g.total, keys_out + g.out_begin,
												  vals_out + g.out_begin, decode, codec);
	}
}

#endif							/* GPUSORT_MERGE_FIXED_CUH */
