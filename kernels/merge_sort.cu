/*
 * merge_sort.cu: GPU merge sort (gs_merge_sort_gpu).
 *
 * Merge-path variant (seed 003's account of Thrust / Modern GPU, as in CUB):
 * each block sorts a tile of b*E keys (E per thread in registers by a
 * sorting network, then log2(b) merge-path rounds in shared memory); then
 * log2(tiles) pairwise passes each merge runs of L into runs of 2L, one
 * block per output tile: a warp finds the tile's split of the two runs (merge
 * path in global memory), the block stages both pieces in shared memory and
 * every thread merges E outputs.  Stable (ties go to the left run).  The
 * bank-conflict-free variant of seed 000 lives in merge_bcf.cuh.
 */
#include <stdint.h>

#include "merge_block.cuh"
#include "merge_common.cuh"
#include "merge_sort.cuh"

/*
 * Tuning for sm_90, one entry per key width and values or not (CUB style:
 * retuning touches no algorithm code).  E is odd so that E and the 32 banks
 * are co-prime: with even E sorted input would already be a worst case
 * (seed 003, section III).  64-bit keys take two banks each, so E odd
 * again avoids the half-warp pattern.
 */
template <typename K, bool VALUES>
struct gs_merge_policy
{
	static constexpr int THREADS = 512;
	static constexpr int ITEMS = sizeof(K) == 8 ? (VALUES ? 9 : 11) : (VALUES ? 11 : 15);
	static constexpr int TILE = THREADS * ITEMS;
	static constexpr size_t SMEM = (size_t) TILE * (sizeof(K) + (VALUES ? sizeof(uint32_t) : 0));

	/*
	 * The merge passes' blocks, smaller than the block sort's, with a floor on
	 * resident blocks per SM (so a register cap; 0 = none).  Each pass block
	 * starts with a chain of dependent global loads (its merge-path split), so
	 * more, smaller blocks per SM overlap more of those chains.  Measured on
	 * the H100 (bench/results/merge-pass-shape-h100-2026-11-23.md), Gkeys/s at
	 * 10^7 / 10^8: 32-bit keys 16.5 / 15.1 with 512x15 at 3 blocks per SM,
	 * 18.1 / 17.5 with 256x15 at 8 (32 registers); 32-bit argsort 8.5 / 7.4 ->
	 * 9.2 / 7.9; 64-bit keys 10.2 / 8.8 -> 10.7 / 9.2 with 256x11 at 6 (at 8
	 * they spill and lose 5%).  Shapes not measured keep 512 threads.  A pass
	 * tile must divide twice the block sort's tile.
	 */
	static constexpr bool MEASURED = sizeof(K) == 4 || (sizeof(K) == 8 && !VALUES);
	static constexpr int PASS_THREADS = MEASURED ? 256 : THREADS;
	static constexpr int PASS_MIN_BLOCKS = !MEASURED ? 0 : sizeof(K) == 8 ? 6 : 8;
	static constexpr int PASS_TILE = PASS_THREADS * ITEMS;
	static constexpr size_t PASS_SMEM = (size_t) PASS_TILE * (sizeof(K) + (VALUES ? sizeof(uint32_t) : 0));
	static_assert((2 * TILE) % PASS_TILE == 0, "a pass tile must divide twice the block sort's tile");
};

static gs_merge_variant gs_merge_current_variant = GS_MERGE_PATH;

extern "C" void
gs_merge_set_variant(gs_merge_variant v)
{
	if ((unsigned) v < GS_NUM_MERGE_VARIANTS)
		gs_merge_current_variant = v;
}

extern "C" gs_merge_variant
gs_merge_get_variant(void)
{
	return gs_merge_current_variant;
}

extern "C" const char *
gs_merge_variant_name(gs_merge_variant v)
{
	return v == GS_MERGE_BCF ? "bcf" : v == GS_MERGE_PATH ? "path" : "unknown";
}

extern "C" void
gs_merge_path_tuning(gs_type type, bool values, int *threads, int *items)
{
	size_t		w = gs_type_size(type);

	if (w == 8)
	{
		*threads = values ? gs_merge_policy<uint64_t, true>::THREADS : gs_merge_policy<uint64_t, false>::THREADS;
		*items = values ? gs_merge_policy<uint64_t, true>::ITEMS : gs_merge_policy<uint64_t, false>::ITEMS;
	}
	else if (w == 4)
	{
		*threads = values ? gs_merge_policy<uint32_t, true>::THREADS : gs_merge_policy<uint32_t, false>::THREADS;
		*items = values ? gs_merge_policy<uint32_t, true>::ITEMS : gs_merge_policy<uint32_t, false>::ITEMS;
	}
	else
	{
		*threads = values ? gs_merge_policy<uint16_t, true>::THREADS : gs_merge_policy<uint16_t, false>::THREADS;
		*items = values ? gs_merge_policy<uint16_t, true>::ITEMS : gs_merge_policy<uint16_t, false>::ITEMS;
	}
}

/* ------------------------------------------------------------------------
 * Agents
 * ------------------------------------------------------------------------ */

/*
 * Block sort of one tile: load (coalesced, striped) with the key transform,
 * transpose through shared memory to E consecutive keys per thread, sort
 * those in registers, merge pairs of runs log2(b) times in shared memory,
 * store (coalesced) with the inverse transform if this is the last step.
 * The last, partial tile is padded with the largest key; padding sorts after
 * real keys equal to it because the sort is stable and padding comes last.
 */
template <typename K, bool VALUES, bool PAIR, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
gs_merge_block_sort_kernel(const K *keys_in, K *keys_out,
						   const uint32_t *vals_in, uint32_t *vals_out,
						   size_t n, gs_key_codec codec, int encode, int decode)
{
	constexpr int TILE = THREADS * ITEMS;
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem;
	uint32_t   *sv = (uint32_t *) (sk + TILE);
	const size_t base = (size_t) blockIdx.x * TILE;
	const int	count = (int) min((size_t) TILE, n - base);
	const int	tid = threadIdx.x;

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		int			j = tid + i * THREADS;
		K			key = gs_key_max<K>();

		if (j < count)
		{
			key = keys_in[base + j];
			if (encode)
				key = gs_encode_key<K>(key, codec);
		}
		sk[j] = key;
		if (VALUES)
			sv[j] = j < count ? vals_in[base + j] : UINT32_MAX;
	}
	__syncthreads();
	gs_block_merge_sort<K, THREADS, ITEMS, VALUES, PAIR>(sk, sv, TILE);
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		int			j = tid + i * THREADS;

		if (j < count)
		{
			K			key = sk[j];

			keys_out[base + j] = decode ? gs_decode_key<K>(key, codec) : key;
			if (VALUES)
				vals_out[base + j] = sv[j];
		}
	}
}

/*
 * One pairwise merge pass: sorted runs of length run become runs of 2*run.
 * Block = one output tile of PASS_THREADS*E elements (the policy's pass
 * shape), which never straddles two pairs (2*run is a multiple of the tile).  Warps 0 and 1 find where the tile
 * starts and ends in the left run (merge path in global memory, fused here
 * instead of a separate partition kernel so its latency overlaps other
 * blocks' work); the block then stages both pieces contiguously in shared
 * memory, each thread merges E outputs, and the tile goes out coalesced.
 */
template <typename K, bool VALUES, bool PAIR, int THREADS, int ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
gs_merge_pass_kernel(const K *keys_in, K *keys_out,
					 const uint32_t *vals_in, uint32_t *vals_out,
					 size_t n, size_t run, gs_key_codec codec, int decode)
{
	constexpr int TILE = THREADS * ITEMS;
	extern __shared__ __align__(16) unsigned char gs_smem[];
	__shared__ size_t split[2];
	K		   *sk = (K *) gs_smem;
	uint32_t   *sv = (uint32_t *) (sk + TILE);
	const int	tid = threadIdx.x;
	const size_t out_begin = (size_t) blockIdx.x * TILE;
	const size_t pair_start = out_begin / (2 * run) * (2 * run);
	const size_t a_end = min(pair_start + run, n);
	const size_t b_end = min(pair_start + 2 * run, n);
	const size_t la = a_end - pair_start;
	const size_t lb = b_end - a_end;
	const size_t diag0 = out_begin - pair_start;
	const size_t diag1 = min(diag0 + TILE, la + lb);
	const int	total = (int) (diag1 - diag0);
	K			k[ITEMS];
	uint32_t	v[ITEMS];
	int			idx[ITEMS];
	int			na,
				nb;

	if (tid < 64)
	{
		size_t		d = tid < 32 ? diag0 : diag1;
		size_t		s = gs_warp_merge_path<K, PAIR>(keys_in + pair_start, vals_in + pair_start, la,
													keys_in + a_end, vals_in + a_end, lb, d);

		if ((tid & 31) == 0)
			split[tid >> 5] = s;
	}
	__syncthreads();
	na = (int) (split[1] - split[0]);
	nb = total - na;
	{
		const size_t a0 = pair_start + split[0];
		const size_t b0 = a_end + (diag0 - split[0]);

#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			int			j = tid + i * THREADS;

			if (j < total)
			{
				size_t		src = j < na ? a0 + j : b0 + (j - na);

				sk[j] = keys_in[src];
				if (VALUES)
					sv[j] = vals_in[src];
			}
		}
	}
	__syncthreads();
	{
		int			d = tid * ITEMS;

		if (d < total)
		{
			int			a = gs_merge_path<K, PAIR>(sk, sv, na, sk + na, sv + na, nb, d);

			gs_serial_merge<K, ITEMS, PAIR>(sk, sv, a, na, na + d - a, total, k, idx);
			if (VALUES)
			{
#pragma unroll
				for (int i = 0; i < ITEMS; i++)
					v[i] = d + i < total ? sv[idx[i]] : 0;
			}
		}
	}
	__syncthreads();
	if (tid * ITEMS < total)
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			if (tid * ITEMS + i < total)
			{
				sk[tid * ITEMS + i] = k[i];
				if (VALUES)
					sv[tid * ITEMS + i] = v[i];
			}
		}
	}
	__syncthreads();
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		int			j = tid + i * THREADS;

		if (j < total)
		{
			K			key = sk[j];

			keys_out[out_begin + j] = decode ? gs_decode_key<K>(key, codec) : key;
			if (VALUES)
				vals_out[out_begin + j] = sv[j];
		}
	}
}

/* ------------------------------------------------------------------------
 * Dispatch
 * ------------------------------------------------------------------------ */

/*
 * Runs the block sort and the merge passes.  Ping-pong between the two
 * buffers; the block sort writes to whichever makes the last pass end in
 * buffer 0, so the result is always in keys[0]/vals[0].
 */
template <typename K, bool VALUES, bool PAIR>
static gs_status
gs_merge_path_run(K *keys[2], uint32_t *vals[2], size_t n, gs_key_codec codec,
				  bool encode, bool decode, cudaStream_t stream, gs_error *err)
{
	typedef gs_merge_policy<K, VALUES> P;
	const size_t tiles = (n + P::TILE - 1) / P::TILE;
	const size_t pass_tiles = (n + P::PASS_TILE - 1) / P::PASS_TILE;
	int			passes = 0;
	int			cur;

	if (pass_tiles > (size_t) INT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE, "merge sort: %zu keys are too many", n);
	while (((size_t) 1 << passes) < tiles)
		passes++;

	GS_CUDA_CHECK((gs_smem_limit<gs_merge_block_sort_kernel<K, VALUES, PAIR, P::THREADS, P::ITEMS>>(P::SMEM)), err);
	GS_CUDA_CHECK((gs_smem_limit<gs_merge_pass_kernel<K, VALUES, PAIR, P::PASS_THREADS, P::ITEMS, P::PASS_MIN_BLOCKS>>(P::PASS_SMEM)), err);

	cur = passes & 1;
	gs_merge_block_sort_kernel<K, VALUES, PAIR, P::THREADS, P::ITEMS>
		<<<(unsigned) tiles, P::THREADS, P::SMEM, stream>>>
		(keys[0], keys[cur], VALUES ? vals[0] : NULL, VALUES ? vals[cur] : NULL,
		 n, codec, encode, decode && passes == 0);
	GS_LAUNCH_CHECK("merge sort: block sort launch", err);

	for (int p = 0; p < passes; p++)
	{
		size_t		run = (size_t) P::TILE << p;

		gs_merge_pass_kernel<K, VALUES, PAIR, P::PASS_THREADS, P::ITEMS, P::PASS_MIN_BLOCKS>
			<<<(unsigned) pass_tiles, P::PASS_THREADS, P::PASS_SMEM, stream>>>
			(keys[cur], keys[cur ^ 1], VALUES ? vals[cur] : NULL, VALUES ? vals[cur ^ 1] : NULL,
			 n, run, codec, decode && p == passes - 1);
		GS_LAUNCH_CHECK("merge sort: merge pass launch", err);
		cur ^= 1;
	}
	return GS_OK;
}

#include "merge_bcf.cuh"

template <typename K>
gs_status
gs_merge_sort_ordered(K *keys[2], uint32_t *vals[2], size_t n, bool pair,
					  cudaStream_t stream, gs_error *err)
{
	gs_key_codec codec = {0, 0};

	if (n <= 1)
		return GS_OK;
	if (vals == NULL || vals[0] == NULL)
		return gs_merge_path_run<K, false, false>(keys, NULL, n, codec, false, false, stream, err);
	if (pair)
		return gs_merge_path_run<K, true, true>(keys, vals, n, codec, false, false, stream, err);
	return gs_merge_path_run<K, true, false>(keys, vals, n, codec, false, false, stream, err);
}

template gs_status gs_merge_sort_ordered<uint16_t>(uint16_t *keys[2], uint32_t *vals[2], size_t n,
												   bool pair, cudaStream_t stream, gs_error *err);
template gs_status gs_merge_sort_ordered<uint32_t>(uint32_t *keys[2], uint32_t *vals[2], size_t n,
												   bool pair, cudaStream_t stream, gs_error *err);
template gs_status gs_merge_sort_ordered<uint64_t>(uint64_t *keys[2], uint32_t *vals[2], size_t n,
												   bool pair, cudaStream_t stream, gs_error *err);

/* One key width: picks the variant and whether values ride along. */
template <typename K>
static gs_status
gs_merge_sort_typed(gs_gpu_sort_args *args, gs_error *err)
{
	K		   *keys[2] = {(K *) args->keys[0], (K *) args->keys[1]};
	uint32_t   *vals[2] = {args->values[0], args->values[1]};
	gs_key_codec codec = gs_codec_of(args);
	cudaStream_t stream = (cudaStream_t) args->stream;
	gs_merge_variant variant = gs_merge_current_variant;

	if (variant == GS_MERGE_BCF)
		return gs_merge_bcf_run<K>(args, err);

	args->result_selector = 0;
	if (vals[0] != NULL)
		return gs_merge_path_run<K, true, false>(keys, vals, args->n, codec, true, true, stream, err);
	return gs_merge_path_run<K, false, false>(keys, vals, args->n, codec, true, true, stream, err);
}

extern "C" gs_status
gs_merge_sort_gpu(gs_gpu_sort_args *args, gs_error *err)
{
	size_t		w = gs_type_size(args->type);

	if (w == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "merge sort: unknown key type %d", (int) args->type);
	if (args->temp == NULL)
	{
		/* the merge-path variant needs none; the BCF variant a little */
		args->temp_bytes = gs_merge_bcf_temp_bytes(args);
		return GS_OK;
	}
	if (args->temp_bytes < gs_merge_bcf_temp_bytes(args))
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "merge sort: temp_bytes %zu is too small (need %zu)",
					   args->temp_bytes, gs_merge_bcf_temp_bytes(args));
	args->algorithm_used = GS_ALGO_MERGE;
	if (args->n <= 1)
	{
		args->result_selector = 0;
		return GS_OK;
	}
	switch (w)
	{
		case 2:
			return gs_merge_sort_typed<uint16_t>(args, err);
		case 4:
			return gs_merge_sort_typed<uint32_t>(args, err);
		default:
			return gs_merge_sort_typed<uint64_t>(args, err);
	}
}
