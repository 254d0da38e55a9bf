/*
 * bitonic_block.cuh: bitonic sorting in the shared memory of one block
 * (chapter 3 of Nguyen Xuan Thang's thesis "Development of parallel
 * sorting algorithms for GPU"), for the bitonic sort itself and for other
 * paths that need a small in-block sort (the quicksort's leaves, small
 * arrays).
 *
 * The network is Batcher's bitonic sort in the form whose comparators all
 * point the same way: merging two sorted halves of size s/2 starts with a
 * "flip" stage (key i against key s-1-i of the block of s) and continues
 * with half-cleaners of strides s/4 .. 1.  Every sorted run is ascending, so
 * an array of any length is sorted by padding it virtually with +infinity:
 * a comparator whose upper key is past the end never moves anything (thesis,
 * 3.1.5), and in shared memory the padding is simply the largest key.
 *
 * With PAIR the order is (key, position), which makes the result the stable
 * one (positions are distinct; padding carries UINT32_MAX).
 */
#ifndef GPUSORT_BITONIC_BLOCK_CUH
#define GPUSORT_BITONIC_BLOCK_CUH

#include "merge_common.cuh"

/* Orders sk[lo] <= sk[hi] (and moves the positions along when PAIR). */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_bitonic_cas_smem(K *sk, uint32_t *sv, int lo, int hi)
{
	K			a = sk[lo],
				b = sk[hi];

	if (PAIR)
	{
		uint32_t	pa = sv[lo],
					pb = sv[hi];

		if (gs_pair_less<K>(b, pb, a, pa))
		{
			sk[lo] = b;
			sk[hi] = a;
			sv[lo] = pb;
			sv[hi] = pa;
		}
	}
	else if (b < a)
	{
		sk[lo] = b;
		sk[hi] = a;
	}
}

/* Low index of comparator i in a half-cleaner of stride j (j a power of two). */
static __device__ __forceinline__ int
gs_bitonic_low(int i, int j)
{
	return ((i & ~(j - 1)) << 1) | (i & (j - 1));
}

/*
 * Half-cleaners of strides jmax, jmax/2, .. 1 over sk[0 .. p) (p a power of
 * two), all threads of the block.  Ends with a barrier.
 */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_bitonic_half_cleaners_smem(K *sk, uint32_t *sv, int p, int jmax)
{
	for (int j = jmax; j >= 1; j >>= 1)
	{
		for (int i = threadIdx.x; i < p / 2; i += blockDim.x)
		{
			int			lo = gs_bitonic_low(i, j);

			gs_bitonic_cas_smem<K, PAIR>(sk, sv, lo, lo + j);
		}
		__syncthreads();
	}
}

/*
 * Sorts sk[0 .. p) ascending, p a power of two (pad with the largest key, and
 * UINT32_MAX positions when PAIR, beforehand).  All threads of the block must
 * call it; the data must be visible to all of them (barrier before).  Ends
 * with a barrier.
 */
template <typename K, bool PAIR>
static __device__ void
gs_bitonic_sort_smem(K *sk, uint32_t *sv, int p)
{
	for (int s = 2; s <= p; s <<= 1)
	{
		const int	half = s >> 1;

		for (int i = threadIdx.x; i < p / 2; i += blockDim.x)
		{
			int			base = (i / half) * s;
			int			off = i % half;

			gs_bitonic_cas_smem<K, PAIR>(sk, sv, base + off, base + s - 1 - off);
		}
		__syncthreads();
		if (s >= 4)
			gs_bitonic_half_cleaners_smem<K, PAIR>(sk, sv, p, s >> 2);
	}
}

/*
 * Sorts sk[0 .. len) in place, any len, by the same network over the next
 * power of two with the comparators that reach past len skipped (virtual
 * +infinity padding: a key past the end would never move).  For ranges
 * inside a larger shared array, where real padding has no room.
 */
template <typename K, bool PAIR>
static __device__ void
gs_bitonic_sort_smem_n(K *sk, uint32_t *sv, int len)
{
	int			p = 1;

	while (p < len)
		p <<= 1;
	for (int s = 2; s <= p; s <<= 1)
	{
		const int	half = s >> 1;

		for (int i = threadIdx.x; i < p / 2; i += blockDim.x)
		{
			int			base = (i / half) * s;
			int			off = i % half;
			int			hi = base + s - 1 - off;

			if (hi < len)
				gs_bitonic_cas_smem<K, PAIR>(sk, sv, base + off, hi);
		}
		__syncthreads();
		for (int j = s >> 2; j >= 1; j >>= 1)
		{
			for (int i = threadIdx.x; i < p / 2; i += blockDim.x)
			{
				int			lo = gs_bitonic_low(i, j);

				if (lo + j < len)
					gs_bitonic_cas_smem<K, PAIR>(sk, sv, lo, lo + j);
			}
			__syncthreads();
		}
	}
}

/* Shuffles of any key width (16-bit keys travel as 32-bit). */
template <typename K>
static __device__ __forceinline__ K
gs_shfl_xor_key(K v, int mask)
{
	return (K) __shfl_xor_sync(0xFFFFFFFFu, (unsigned) v, mask);
}

template <>
__device__ __forceinline__ uint64_t
gs_shfl_xor_key<uint64_t>(uint64_t v, int mask)
{
	return (uint64_t) __shfl_xor_sync(0xFFFFFFFFu, (unsigned long long) v, mask);
}

/* Keeps the smaller (lower = true) or larger of (k, v) and (xk, xv). */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_bitonic_keep(K &k, uint32_t &v, K xk, uint32_t xv, bool lower)
{
	bool		x_less = PAIR ? gs_pair_less<K>(xk, xv, k, v) : xk < k;

	if (x_less == lower)
	{
		k = xk;
		if (PAIR)
			v = xv;
	}
}

/*
 * Bitonic sort of a warp's 32*E keys in registers (key e = r*32 + lane), no
 * shared memory: strides of 32 and more pair registers of one lane, smaller
 * strides pair lanes through shuffles.  Same all-ascending network as above.
 * All indices are compile-time constants after unrolling.
 */
template <typename K, bool PAIR, int E>
static __device__ __forceinline__ void
gs_bitonic_sort_warp(K (&k)[E], uint32_t (&v)[E], int lane)
{
#pragma unroll
	for (int s = 2; s <= 32 * E; s <<= 1)
	{
		/* flip: key e against e ^ (s - 1) */
		if (s <= 32)
		{
#pragma unroll
			for (int r = 0; r < E; r++)
			{
				K			xk = gs_shfl_xor_key<K>(k[r], s - 1);
				uint32_t	xv = PAIR ? __shfl_xor_sync(0xFFFFFFFFu, v[r], s - 1) : 0;

				gs_bitonic_keep<K, PAIR>(k[r], v[r], xk, xv, (lane & (s >> 1)) == 0);
			}
		}
		else
		{
			const int	rm = s / 32 - 1;

#pragma unroll
			for (int r = 0; r < E; r++)
			{
				if ((r & (s / 64)) == 0)
				{
					const int	q = r ^ rm;
					K			xk = gs_shfl_xor_key<K>(k[q], 31);
					K			yk = gs_shfl_xor_key<K>(k[r], 31);
					uint32_t	xv = PAIR ? __shfl_xor_sync(0xFFFFFFFFu, v[q], 31) : 0;
					uint32_t	yv = PAIR ? __shfl_xor_sync(0xFFFFFFFFu, v[r], 31) : 0;

					gs_bitonic_keep<K, PAIR>(k[r], v[r], xk, xv, true);
					gs_bitonic_keep<K, PAIR>(k[q], v[q], yk, yv, false);
				}
			}
		}
		/* half-cleaners */
#pragma unroll
		for (int j = s >> 2; j >= 1; j >>= 1)
		{
			if (j >= 32)
			{
				const int	rj = j / 32;

#pragma unroll
				for (int r = 0; r < E; r++)
				{
					if ((r & rj) == 0)
					{
						bool		swap = PAIR ? gs_pair_less<K>(k[r + rj], v[r + rj], k[r], v[r])
							: k[r + rj] < k[r];

						if (swap)
						{
							K			t = k[r];

							k[r] = k[r + rj];
							k[r + rj] = t;
							if (PAIR)
							{
								uint32_t	u = v[r];

								v[r] = v[r + rj];
								v[r + rj] = u;
							}
						}
					}
				}
			}
			else
			{
#pragma unroll
				for (int r = 0; r < E; r++)
				{
					K			xk = gs_shfl_xor_key<K>(k[r], j);
					uint32_t	xv = PAIR ? __shfl_xor_sync(0xFFFFFFFFu, v[r], j) : 0;

					gs_bitonic_keep<K, PAIR>(k[r], v[r], xk, xv, (lane & j) == 0);
				}
			}
		}
	}
}

/* The smallest power of two >= n (n >= 1). */
static __host__ __device__ __forceinline__ size_t
gs_pow2_ceil(size_t n)
{
	size_t		p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

#endif							/* GPUSORT_BITONIC_BLOCK_CUH */
