/*
 * bitonic_sort.cu: GPU bitonic sort (gs_bitonic_sort_gpu), after chapter 3
 * of Nguyen Xuan Thang's thesis "Development of parallel sorting algorithms
 * for GPU": any length by virtual padding, shared memory for every stage
 * that fits in a block.
 *
 * Up to a block's capacity (16K to 64K keys by width) one block sorts
 * everything in shared memory in a single launch.  Beyond, blocks first sort
 * chunks of GS_BITONIC_CHUNK keys in shared memory; then each merge size s
 * takes one global launch for the flip stage, one per half-cleaner stride
 * that spans chunks, and one shared-memory launch for all strides inside a
 * chunk (thesis, 3.4.2).  In place on keys[0]; the last launch writes
 * the decoded keys to keys[1].
 *
 * Argsort: bitonic sort is not stable, so it sorts (key, position) pairs,
 * positions kept in values[1], and the last launch gathers values[0] by
 * position into values[1]; any values, not only 0..n-1, come out right.
 */
#include <stdint.h>

#include "bitonic_block.cuh"
#include "merge_common.cuh"

#define GS_BITONIC_THREADS 1024
#define GS_BITONIC_CHUNK 8192	/* keys per block in the multi-block sort */
#define GS_BITONIC_SMEM_MAX (200 * 1024)

/* Keys one block sorts alone: the largest power of two that fits the shared memory budget. */
template <typename K, bool PAIR>
static size_t
gs_bitonic_capacity(void)
{
	size_t		per = sizeof(K) + (PAIR ? sizeof(uint32_t) : 0);
	size_t		cap = 1;

	while (cap * 2 * per <= GS_BITONIC_SMEM_MAX)
		cap *= 2;
	return cap;
}

/*
 * Loads keys [base, base + p) (encoding, padding past n), optionally with
 * positions, into shared memory.
 */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_bitonic_load(const K *keys, const uint32_t *pos, size_t base, size_t n, int p,
				K *sk, uint32_t *sv, gs_key_codec codec, bool encode)
{
	for (int i = threadIdx.x; i < p; i += blockDim.x)
	{
		size_t		g = base + (size_t) i;
		bool		in = g < n;

		sk[i] = in ? (encode ? gs_encode_key<K>(keys[g], codec) : keys[g]) : gs_key_max<K>();
		if (PAIR)
			sv[i] = in ? (pos != NULL ? pos[g] : (uint32_t) g) : UINT32_MAX;
	}
	__syncthreads();
}

/*
 * Stores shared keys [0, p) to [base, ..) up to n.  final: decode the keys and
 * write values[pos] (gathered from vals_in) instead of the positions.
 */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_bitonic_store(K *keys, uint32_t *pos, const uint32_t *vals_in, size_t base, size_t n, int p,
				 const K *sk, const uint32_t *sv, gs_key_codec codec, bool final)
{
	for (int i = threadIdx.x; i < p; i += blockDim.x)
	{
		size_t		g = base + (size_t) i;

		if (g < n)
		{
			keys[g] = final ? gs_decode_key<K>(sk[i], codec) : sk[i];
			if (PAIR)
				pos[g] = final ? vals_in[sv[i]] : sv[i];
		}
	}
}

/* Whole array in one block (n <= capacity): load, sort, store decoded into the out buffers. */
template <typename K, bool PAIR>
__global__ void __launch_bounds__(GS_BITONIC_THREADS)
gs_bitonic_single_kernel(const K *keys_in, K *keys_out, const uint32_t *vals_in, uint32_t *vals_out,
						 size_t n, int p, gs_key_codec codec)
{
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem;
	uint32_t   *sv = (uint32_t *) (sk + p);

	gs_bitonic_load<K, PAIR>(keys_in, NULL, 0, n, p, sk, sv, codec, true);
	gs_bitonic_sort_smem<K, PAIR>(sk, sv, p);
	gs_bitonic_store<K, PAIR>(keys_out, vals_out, vals_in, 0, n, p, sk, sv, codec, true);
}

/* First step of the multi-block sort: every chunk sorted ascending, keys encoded, positions made. */
template <typename K, bool PAIR>
__global__ void __launch_bounds__(GS_BITONIC_THREADS)
gs_bitonic_chunk_kernel(K *keys, uint32_t *pos, size_t n, gs_key_codec codec)
{
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem;
	uint32_t   *sv = (uint32_t *) (sk + GS_BITONIC_CHUNK);
	size_t		base = (size_t) blockIdx.x * GS_BITONIC_CHUNK;

	gs_bitonic_load<K, PAIR>(keys, NULL, base, n, GS_BITONIC_CHUNK, sk, sv, codec, true);
	gs_bitonic_sort_smem<K, PAIR>(sk, sv, GS_BITONIC_CHUNK);
	gs_bitonic_store<K, PAIR>(keys, pos, NULL, base, n, GS_BITONIC_CHUNK, sk, sv, codec, false);
}

/* One comparator on global memory (lo < hi < n). */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_bitonic_cas_global(K *keys, uint32_t *pos, size_t lo, size_t hi)
{
	K			a = keys[lo],
				b = keys[hi];

	if (PAIR)
	{
		uint32_t	pa = pos[lo],
					pb = pos[hi];

		if (gs_pair_less<K>(b, pb, a, pa))
		{
			keys[lo] = b;
			keys[hi] = a;
			pos[lo] = pb;
			pos[hi] = pa;
		}
	}
	else if (b < a)
	{
		keys[lo] = b;
		keys[hi] = a;
	}
}

/*
 * A stage across chunks: flip (partner s-1-i inside blocks of s) when flip,
 * else a half-cleaner of stride j.  Comparators whose upper key is past n
 * meet virtual +infinity and are skipped.
 */
template <typename K, bool PAIR>
__global__ void __launch_bounds__(256)
gs_bitonic_global_kernel(K *keys, uint32_t *pos, size_t n, size_t pairs, size_t s, int flip)
{
	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < pairs;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		size_t		lo,
					hi;

		if (flip)
		{
			size_t		half = s >> 1;
			size_t		b = (i / half) * s;
			size_t		off = i % half;

			lo = b + off;
			hi = b + s - 1 - off;
		}
		else
		{
			lo = ((i & ~(s - 1)) << 1) | (i & (s - 1));
			hi = lo + s;
		}
		if (hi < n)
			gs_bitonic_cas_global<K, PAIR>(keys, pos, lo, hi);
	}
}

/*
 * The strides jmax .. 1 of a merge, inside each chunk, in shared memory; the
 * last one writes decoded keys (and gathered values) to the out buffers.
 */
template <typename K, bool PAIR>
__global__ void __launch_bounds__(GS_BITONIC_THREADS)
gs_bitonic_tail_kernel(K *keys, uint32_t *pos, K *keys_out, const uint32_t *vals_in, uint32_t *vals_out,
					   size_t n, int jmax, gs_key_codec codec, int final)
{
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem;
	uint32_t   *sv = (uint32_t *) (sk + GS_BITONIC_CHUNK);
	size_t		base = (size_t) blockIdx.x * GS_BITONIC_CHUNK;

	gs_bitonic_load<K, PAIR>(keys, pos, base, n, GS_BITONIC_CHUNK, sk, sv, codec, false);
	gs_bitonic_half_cleaners_smem<K, PAIR>(sk, sv, GS_BITONIC_CHUNK, jmax);
	if (final)
		gs_bitonic_store<K, PAIR>(keys_out, vals_out, vals_in, base, n, GS_BITONIC_CHUNK, sk, sv, codec, true);
	else
		gs_bitonic_store<K, PAIR>(keys, pos, NULL, base, n, GS_BITONIC_CHUNK, sk, sv, codec, false);
}

template <typename K, bool PAIR>
static gs_status
gs_bitonic_run(gs_gpu_sort_args *args, gs_error *err)
{
	K		   *keys0 = (K *) args->keys[0];
	K		   *keys1 = (K *) args->keys[1];
	uint32_t   *vals0 = args->values[0];
	uint32_t   *vals1 = args->values[1];
	const size_t n = args->n;
	gs_key_codec codec = gs_codec_of(args);
	cudaStream_t stream = (cudaStream_t) args->stream;
	const size_t per = sizeof(K) + (PAIR ? sizeof(uint32_t) : 0);

	args->result_selector = 1;
	if (n <= gs_bitonic_capacity<K, PAIR>())
	{
		int			p = (int) gs_pow2_ceil(n);
		size_t		smem = (size_t) p * per;

		GS_CUDA_CHECK((gs_smem_limit<gs_bitonic_single_kernel<K, PAIR>>(smem)), err);
		gs_bitonic_single_kernel<K, PAIR><<<1, min(GS_BITONIC_THREADS, max(32, p / 2)), smem, stream>>>
			(keys0, keys1, vals0, vals1, n, p, codec);
		GS_LAUNCH_CHECK("bitonic sort: single-block launch", err);
		return GS_OK;
	}
	{
		const size_t chunks = (n + GS_BITONIC_CHUNK - 1) / GS_BITONIC_CHUNK;
		const size_t p = gs_pow2_ceil(n);
		const size_t smem = (size_t) GS_BITONIC_CHUNK * per;
		const size_t pairs = p / 2;
		const unsigned grid = (unsigned) min((pairs + 255) / 256, (size_t) 132 * 64);

		GS_CUDA_CHECK((gs_smem_limit<gs_bitonic_chunk_kernel<K, PAIR>>(smem)), err);
		GS_CUDA_CHECK((gs_smem_limit<gs_bitonic_tail_kernel<K, PAIR>>(smem)), err);
		gs_bitonic_chunk_kernel<K, PAIR><<<(unsigned) chunks, GS_BITONIC_THREADS, smem, stream>>>
			(keys0, vals1, n, codec);
		GS_LAUNCH_CHECK("bitonic sort: chunk launch", err);

		for (size_t s = 2 * GS_BITONIC_CHUNK; s <= p; s <<= 1)
		{
			gs_bitonic_global_kernel<K, PAIR><<<grid, 256, 0, stream>>>(keys0, vals1, n, pairs, s, 1);
			GS_LAUNCH_CHECK("bitonic sort: flip launch", err);
			for (size_t j = s >> 2; j >= GS_BITONIC_CHUNK; j >>= 1)
			{
				gs_bitonic_global_kernel<K, PAIR><<<grid, 256, 0, stream>>>(keys0, vals1, n, pairs, j, 0);
				GS_LAUNCH_CHECK("bitonic sort: half-cleaner launch", err);
			}
			gs_bitonic_tail_kernel<K, PAIR><<<(unsigned) chunks, GS_BITONIC_THREADS, smem, stream>>>
				(keys0, vals1, keys1, vals0, vals1, n, GS_BITONIC_CHUNK / 2, codec, s == p);
			GS_LAUNCH_CHECK("bitonic sort: tail launch", err);
		}
	}
	return GS_OK;
}

template <typename K>
static gs_status
gs_bitonic_typed(gs_gpu_sort_args *args, gs_error *err)
{
	if (args->values[0] != NULL)
	{
		if (args->n > UINT32_MAX)
			return gs_fail(err, GS_ERR_TOO_LARGE, "bitonic sort: argsort of %zu keys (2^32-1 at most)", args->n);
		return gs_bitonic_run<K, true>(args, err);
	}
	return gs_bitonic_run<K, false>(args, err);
}

extern "C" gs_status
gs_bitonic_sort_gpu(gs_gpu_sort_args *args, gs_error *err)
{
	if (gs_type_size(args->type) == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "bitonic sort: unknown key type %d", (int) args->type);
	if (args->temp == NULL)
	{
		args->temp_bytes = 256;	/* none needed; never 0, so the second call is not a query again */
		return GS_OK;
	}
	if (args->temp_bytes < 256)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "bitonic sort: temp_bytes %zu is too small (need 256)",
					   args->temp_bytes);
	args->algorithm_used = GS_ALGO_BITONIC;
	switch (gs_type_size(args->type))
	{
		case 2:
			return gs_bitonic_typed<uint16_t>(args, err);
		case 4:
			return gs_bitonic_typed<uint32_t>(args, err);
		default:
			return gs_bitonic_typed<uint64_t>(args, err);
	}
}
