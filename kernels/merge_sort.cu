/*
 * merge_sort.cu: GPU merge sort (gs_merge_sort_gpu): the merge-path sort of
 * merge_path.cuh with its shape per key width (gs_merge_policy), the merge
 * order randomized, and the passes' splits searched in the pass blocks
 * below GS_MERGE_PARTITION_MIN keys and read from a partition kernel from
 * there.  Every kernel is launched with programmatic dependent launch where
 * the device has it (compute capability 9.0), so that a pass's blocks are
 * resident and waiting when the kernel before it ends.
 */
#include <stdint.h>

#include "merge_path.cuh"
#include "merge_sort.cuh"

/*
 * Sorts keys[0] (and vals[0] with VALUES) of shape S: the block sort into
 * whichever buffer makes the last pass end in buffer 0, then the passes,
 * ping-pong between the two buffers.  splits: room for one size_t per pass
 * tile, or NULL (the passes then search for their splits themselves).
 */
template <typename K, bool VALUES, bool PAIR>
static gs_status
gs_merge_path_run(K *keys[2], uint32_t *vals[2], size_t n, gs_key_codec codec, bool encode, bool decode,
				  size_t *splits, cudaStream_t stream, gs_error *err)
{
	typedef typename gs_merge_policy<K, VALUES>::shape S;
	const size_t tiles = (n + S::TILE - 1) / S::TILE;
	const int	passes = gs_merge_pass_count(tiles);
	const bool	pdl = gs_pdl_supported();
	int			cur = passes & 1;
	gs_status	s;

	if ((n + S::PASS_TILE - 1) / S::PASS_TILE > (size_t) INT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE, "merge sort: %zu keys are too many", n);
	if (n < GS_MERGE_PARTITION_MIN)
		splits = NULL;
	s = gs_merge_launch_block_sort<K, VALUES, PAIR, S>(keys[0], keys[cur], VALUES ? vals[0] : NULL,
													   VALUES ? vals[cur] : NULL, n, codec, encode,
													   decode && passes == 0, pdl, gs_merge_launch_seed(),
													   stream, err);
	for (int p = 0; p < passes && s == GS_OK; p++, cur ^= 1)
	{
		const size_t run = (size_t) S::TILE << p;

		if (splits != NULL)
			s = gs_merge_launch_partition<K, PAIR, 1>(keys[cur], VALUES ? vals[cur] : NULL, n, run, S::PASS_TILE,
													  splits, stream, err);
		if (s == GS_OK)
			s = gs_merge_launch_pass<K, VALUES, PAIR, S>(keys[cur], keys[cur ^ 1], VALUES ? vals[cur] : NULL,
														 VALUES ? vals[cur ^ 1] : NULL, n, run, splits, codec,
														 decode && p == passes - 1, pdl, gs_merge_launch_seed(),
														 stream, err);
	}
	return s;
}

/* Temporary memory: the partition kernel's splits, one per pass tile, from GS_MERGE_PARTITION_MIN keys. */
template <typename K, bool VALUES>
static size_t
gs_merge_splits_bytes(size_t n)
{
	typedef typename gs_merge_policy<K, VALUES>::shape S;

	return gs_align_up((n + S::PASS_TILE - 1) / S::PASS_TILE * sizeof(size_t), 256);
}

/* Never 0, so that a second call is not a size query again. */
static size_t
gs_merge_temp_bytes(const gs_gpu_sort_args *args)
{
	bool		values = args->values[0] != NULL;

	if (args->n < GS_MERGE_PARTITION_MIN)
		return 256;
	switch (gs_type_size(args->type))
	{
		case 8:
			return values ? gs_merge_splits_bytes<uint64_t, true>(args->n) : gs_merge_splits_bytes<uint64_t, false>(args->n);
		case 4:
			return values ? gs_merge_splits_bytes<uint32_t, true>(args->n) : gs_merge_splits_bytes<uint32_t, false>(args->n);
		default:
			return values ? gs_merge_splits_bytes<uint16_t, true>(args->n) : gs_merge_splits_bytes<uint16_t, false>(args->n);
	}
}

template <typename K>
gs_status
gs_merge_sort_ordered(K *keys[2], uint32_t *vals[2], size_t n, bool pair,
					  cudaStream_t stream, gs_error *err)
{
	gs_key_codec codec = {0, 0};

	/* no temporary memory here: the passes search for their splits */
	if (n <= 1)
		return GS_OK;
	if (vals == NULL || vals[0] == NULL)
		return gs_merge_path_run<K, false, false>(keys, NULL, n, codec, false, false, NULL, stream, err);
	if (pair)
		return gs_merge_path_run<K, true, true>(keys, vals, n, codec, false, false, NULL, stream, err);
	return gs_merge_path_run<K, true, false>(keys, vals, n, codec, false, false, NULL, stream, err);
}

template gs_status gs_merge_sort_ordered<uint16_t>(uint16_t *keys[2], uint32_t *vals[2], size_t n,
												   bool pair, cudaStream_t stream, gs_error *err);
template gs_status gs_merge_sort_ordered<uint32_t>(uint32_t *keys[2], uint32_t *vals[2], size_t n,
												   bool pair, cudaStream_t stream, gs_error *err);
template gs_status gs_merge_sort_ordered<uint64_t>(uint64_t *keys[2], uint32_t *vals[2], size_t n,
												   bool pair, cudaStream_t stream, gs_error *err);

/* One key width, with values riding along or not. */
template <typename K>
static gs_status
gs_merge_sort_typed(gs_gpu_sort_args *args, gs_error *err)
{
	K		   *keys[2] = {(K *) args->keys[0], (K *) args->keys[1]};
	uint32_t   *vals[2] = {args->values[0], args->values[1]};
	gs_key_codec codec = gs_codec_of(args);
	cudaStream_t stream = (cudaStream_t) args->stream;

	args->result_selector = 0;
	if (vals[0] != NULL)
		return gs_merge_path_run<K, true, false>(keys, vals, args->n, codec, true, true, (size_t *) args->temp,
												 stream, err);
	return gs_merge_path_run<K, false, false>(keys, vals, args->n, codec, true, true, (size_t *) args->temp,
											  stream, err);
}

extern "C" gs_status
gs_merge_sort_gpu(gs_gpu_sort_args *args, gs_error *err)
{
	size_t		w = gs_type_size(args->type);
	size_t		need;

	if (w == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "merge sort: unknown key type %d", (int) args->type);
	need = gs_merge_temp_bytes(args);
	if (args->temp == NULL)
	{
		args->temp_bytes = need;
		return GS_OK;
	}
	if (args->temp_bytes < need)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "merge sort: temp_bytes %zu is too small (need %zu)",
					   args->temp_bytes, need);
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
