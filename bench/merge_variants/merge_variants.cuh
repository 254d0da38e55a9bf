/*
 * merge_variants.cuh: the merge sorts that were measured against the
 * library's merge sort and lost, kept so that bench_comparison can measure
 * them again and test_comparison_sorts can check them: the bank-conflict-free
 * sort of "Bank Conflict Free Comparison-based Sorting On GPUs" (Sitchinava
 * and Weichert; merge_bcf.cuh), and the merge-path sort of
 * kernels/merge_path.cuh under other shapes, other ways of finding a pass
 * tile's split (merge_fixed.cuh, merge_quad.cuh) and the fixed merge order.
 * bench/NOTES-comparison.md has what each measured.
 *
 * One translation unit (the program) includes this once.  bench_gpu_sort()
 * is gs_gpu_sort with GS_ALGO_MERGE sent to the variant that
 * bench_merge_use() or bench_merge_use_bcf() selected, until
 * bench_merge_use_library() (the start) sends it back to the library.
 */
#ifndef GPUSORT_MERGE_VARIANTS_CUH
#define GPUSORT_MERGE_VARIANTS_CUH

#include "merge_path.cuh"
#include "merge_sort.cuh"
#include "merge_fixed.cuh"
#include "merge_quad.cuh"
#include "merge_bcf.cuh"

/*
 * split: how a merge pass learns where each of its tiles starts in the two
 * runs it merges.  FUSED: warps 0 and 1 of every pass block search for the
 * tile's two ends (a 32-way merge-path search in global memory) before the
 * block can load anything.  THREAD, LANES8, WARP: a partition kernel before
 * every pass writes each tile's start to temporary memory (one search per
 * tile instead of two), so pass blocks start loading at once; it searches
 * with a binary search per thread, 8 lanes testing 8 candidates per step, or
 * 32.  PREFETCH: THREAD's partition kernel, then a persistent pass kernel
 * (as many blocks as fit, each looping over tiles) that copies its next
 * tile into a second shared-memory buffer (cp.async) while it merges the
 * current one.  QUAD: four-way passes (merge_quad.cuh), each with a
 * partition kernel of one warp per tile, so half the passes over global
 * memory; a pairwise pass (FUSED) first when the number of pairwise levels
 * is odd.  AUTO: the library's rule, FUSED below GS_MERGE_PARTITION_MIN
 * keys and THREAD from there.  Every split is FUSED when the caller gives
 * no temporary memory.
 *
 * order: FIXED merges as Berney describes it (each thread forwards, the two
 * runs of a tile side by side).  RANDOM: the library's order, randomized
 * per launch in the block sort's rounds and the passes (merge_block.cuh).
 * RANDOM_PASSES: in the passes only.  The prefetching and four-way passes
 * keep the fixed order.  seed: nonzero fixes the launches' seed (tests);
 * zero draws one per launch.
 *
 * shape: the block sort's (b, E) and the passes' (b, E) for 32-bit keys
 * without values (bench_merge_shape_name); the other key widths and argsort
 * always take the library's shape.  Shape 4 is the library's.
 *
 * max_passes: stops after that many merge passes (-1: all); the result is
 * then not sorted.  Only for timing the block sort alone.  prefetch_blocks:
 * with PREFETCH, at most that many pass blocks (0: as many as fit), so that
 * tests can make every block loop over several tiles at small n.  pdl:
 * nonzero launches the block sort and the passes with programmatic
 * dependent launch where the device has it, as the library does.
 */
typedef enum gs_merge_order
{
	GS_MERGE_ORDER_FIXED = 0,
	GS_MERGE_ORDER_RANDOM,
	GS_MERGE_ORDER_RANDOM_PASSES,
	GS_NUM_MERGE_ORDERS
} gs_merge_order;
typedef enum gs_merge_split
{
	GS_MERGE_SPLIT_FUSED = 0,
	GS_MERGE_SPLIT_THREAD,
	GS_MERGE_SPLIT_LANES8,
	GS_MERGE_SPLIT_WARP,
	GS_MERGE_SPLIT_PREFETCH,
	GS_MERGE_SPLIT_QUAD,
	GS_MERGE_SPLIT_AUTO,
	GS_NUM_MERGE_SPLITS
} gs_merge_split;

#define GS_NUM_MERGE_SHAPES 6

typedef struct gs_merge_path_options
{
	gs_merge_split split;
	int			shape;			/* 0 .. GS_NUM_MERGE_SHAPES - 1 */
	int			max_passes;
	int			prefetch_blocks;
	int			pdl;
	gs_merge_order order;
	uint32_t	seed;
} gs_merge_path_options;

/* The library's combination. */
static void __attribute__((unused))
bench_merge_default_options(gs_merge_path_options *o)
{
	o->split = GS_MERGE_SPLIT_AUTO;
	o->shape = 4;
	o->max_passes = -1;
	o->prefetch_blocks = 0;
	o->pdl = 1;
	o->order = GS_MERGE_ORDER_RANDOM;
	o->seed = 0;
}

static __attribute__((unused)) const char *
bench_merge_split_name(gs_merge_split s)
{
	static const char *const names[GS_NUM_MERGE_SPLITS] = {"fused", "thread", "lanes8", "warp", "prefetch",
	"quad", "auto"};

	return (unsigned) s < GS_NUM_MERGE_SPLITS ? names[s] : "unknown";
}

static __attribute__((unused)) const char *
bench_merge_order_name(gs_merge_order o)
{
	static const char *const names[GS_NUM_MERGE_ORDERS] = {"fixed", "rand", "randp"};

	return (unsigned) o < GS_NUM_MERGE_ORDERS ? names[o] : "unknown";
}

static __attribute__((unused)) const char *
bench_merge_shape_name(int shape)
{
	static const char *const names[GS_NUM_MERGE_SHAPES] = {
		"sort 512x15, pass 256x15", "sort 512x15, pass 256x5", "sort 512x15, pass 512x5",
		"sort 1024x7, pass 256x7", "sort 1024x15, pass 256x15", "sort 1024x15, pass 256x5"
	};

	return shape >= 0 && shape < GS_NUM_MERGE_SHAPES ? names[shape] : "unknown";
}

/* ------------------------------------------------------------------------
 * Shapes
 * ------------------------------------------------------------------------ */

/*
 * A shape of kernels/merge_path.cuh with the floors on resident pass blocks
 * per SM that the fixed-order passes were tuned with: FUSED_MIN for the
 * fused split, SPLIT_MIN for splits from a partition kernel.  The
 * randomized passes take the base shape's PASS_MIN_BLOCKS.
 */
template <typename BASE, int FUSED_MIN, int SPLIT_MIN>
struct gs_bench_shape : BASE
{
	static constexpr int FIXED_FUSED_MIN_BLOCKS = FUSED_MIN;
	static constexpr int FIXED_SPLIT_MIN_BLOCKS = SPLIT_MIN;
};

/* The library's shape of a key width with the fixed order's floors (8 blocks for 32-bit keys; 6 split alone). */
template <typename K, bool VALUES>
struct gs_bench_policy
{
	static constexpr int FUSED_MIN = sizeof(K) == 4 ? 8 : sizeof(K) == 8 && !VALUES ? 6 : 0;
	typedef gs_bench_shape<typename gs_merge_policy<K, VALUES>::shape, FUSED_MIN,
						   sizeof(K) == 4 && !VALUES ? 6 : FUSED_MIN> shape;
};

/* The shapes for 32-bit keys without values other than the library's (shape 4). */
typedef gs_bench_shape<gs_merge_shape<512, 15, 256, 15, 6>, 8, 6> gs_bench_shape_0;
typedef gs_bench_shape<gs_merge_shape<512, 15, 256, 5, 6>, 8, 8> gs_bench_shape_1;
typedef gs_bench_shape<gs_merge_shape<512, 15, 512, 5, 4>, 4, 4> gs_bench_shape_2;
typedef gs_bench_shape<gs_merge_shape<1024, 7, 256, 7, 6>, 8, 8> gs_bench_shape_3;
typedef gs_bench_shape<gs_merge_shape<1024, 15, 256, 5, 6>, 8, 8> gs_bench_shape_5;

/* Calls F::template run<shape>() for the shape a key width uses under shape index s. */
template <typename K, bool VALUES, typename F>
static gs_status
gs_bench_with_shape(int s, F &f)
{
	if constexpr (sizeof(K) == 4 && !VALUES)
	{
		switch (s)
		{
			case 0:
				return f.template run<gs_bench_shape_0>();
			case 1:
				return f.template run<gs_bench_shape_1>();
			case 2:
				return f.template run<gs_bench_shape_2>();
			case 3:
				return f.template run<gs_bench_shape_3>();
			case 5:
				return f.template run<gs_bench_shape_5>();
			default:
				break;
		}
	}
	return f.template run<typename gs_bench_policy<K, VALUES>::shape>();
}

/* gs_bench_with_shape for keys of type's width, with values or not. */
template <typename F>
static gs_status
gs_bench_with_width(gs_type type, bool values, int s, F &f)
{
	switch (gs_type_size(type))
	{
		case 8:
			return values ? gs_bench_with_shape<uint64_t, true>(s, f) : gs_bench_with_shape<uint64_t, false>(s, f);
		case 4:
			return values ? gs_bench_with_shape<uint32_t, true>(s, f) : gs_bench_with_shape<uint32_t, false>(s, f);
		default:
			return values ? gs_bench_with_shape<uint16_t, true>(s, f) : gs_bench_with_shape<uint16_t, false>(s, f);
	}
}

/* A shape's numbers (the F of gs_bench_with_shape). */
struct gs_bench_shape_numbers
{
	int			threads,
				items,
				pass_threads,
				pass_items;

	template <typename S>
	gs_status	run(void)
	{
		threads = S::THREADS;
		items = S::ITEMS;
		pass_threads = S::PASS_THREADS;
		pass_items = S::PASS_ITEMS;
		return GS_OK;
	}
};

/* ------------------------------------------------------------------------
 * Dispatch
 * ------------------------------------------------------------------------ */

/* The split a sort of n keys uses (AUTO as the library decides it; FUSED without temporary memory). */
static gs_merge_split
gs_bench_split_for(gs_merge_split s, size_t n, bool have_temp)
{
	if (!have_temp)
		return GS_MERGE_SPLIT_FUSED;
	if (s == GS_MERGE_SPLIT_AUTO)
		return n >= GS_MERGE_PARTITION_MIN ? GS_MERGE_SPLIT_THREAD : GS_MERGE_SPLIT_FUSED;
	return s;
}

/* The fixed-order block sort of shape S (the other arguments as gs_merge_launch_block_sort's). */
template <typename K, bool VALUES, bool PAIR, typename S>
static gs_status
gs_bench_fixed_block_sort(const K *keys_in, K *keys_out, const uint32_t *vals_in, uint32_t *vals_out, size_t n,
						  gs_key_codec codec, bool encode, bool decode, bool pdl, cudaStream_t stream, gs_error *err)
{
	constexpr auto kernel = gs_fixed_block_sort_kernel<K, VALUES, PAIR, S::THREADS, S::ITEMS>;
	const size_t smem = gs_fixed_tile_smem<K, VALUES, S::ITEMS>(S::TILE);

	GS_CUDA_CHECK(gs_smem_limit<kernel>(smem), err);
	GS_LAUNCH_OK((gs_launch(pdl, kernel, (unsigned) ((n + S::TILE - 1) / S::TILE), S::THREADS, smem, stream,
							keys_in, keys_out, vals_in, vals_out, n, codec, (int) encode, (int) decode)),
				 "merge sort: block sort launch", err);
	return GS_OK;
}

/* A fixed-order pairwise pass of shape S (splits NULL: fused). */
template <typename K, bool VALUES, bool PAIR, typename S>
static gs_status
gs_bench_fixed_pass(const K *keys_in, K *keys_out, const uint32_t *vals_in, uint32_t *vals_out, size_t n,
					size_t run, const size_t *splits, gs_key_codec codec, bool decode, bool pdl,
					cudaStream_t stream, gs_error *err)
{
	constexpr auto fused = gs_fixed_pass_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
												S::FIXED_FUSED_MIN_BLOCKS, true>;
	constexpr auto split = gs_fixed_pass_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
												S::FIXED_SPLIT_MIN_BLOCKS, false>;
	const size_t smem = gs_fixed_tile_smem<K, VALUES, S::PASS_ITEMS>(S::PASS_TILE);

	GS_CUDA_CHECK(splits == NULL ? gs_smem_limit<fused>(smem) : gs_smem_limit<split>(smem), err);
	GS_LAUNCH_OK((gs_launch(pdl, splits == NULL ? fused : split, (unsigned) ((n + S::PASS_TILE - 1) / S::PASS_TILE),
							S::PASS_THREADS, smem, stream, keys_in, keys_out, vals_in, vals_out, n, run, splits,
							codec, (int) decode)),
				 "merge sort: merge pass launch", err);
	return GS_OK;
}

/* The prefetching pass of shape S: as many persistent blocks as fit at once (two tile buffers each), or blocks. */
template <typename K, bool VALUES, bool PAIR, typename S>
static gs_status
gs_bench_prefetch_pass(const K *keys_in, K *keys_out, const uint32_t *vals_in, uint32_t *vals_out, size_t n,
					   size_t run, const size_t *splits, gs_key_codec codec, bool decode, bool pdl, int blocks,
					   cudaStream_t stream, gs_error *err)
{
	constexpr auto kernel = gs_merge_pass_prefetch_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
														  S::FIXED_FUSED_MIN_BLOCKS>;
	const size_t smem = 2 * gs_fixed_tile_smem<K, VALUES, S::PASS_ITEMS>(S::PASS_TILE);
	const size_t tiles = (n + S::PASS_TILE - 1) / S::PASS_TILE;
	int			dev = 0,
				sms = 0,
				per_sm = 0;
	unsigned	grid;

	GS_CUDA_CHECK(gs_smem_limit<kernel>(smem), err);
	GS_CUDA_CHECK(cudaGetDevice(&dev), err);
	GS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err);
	GS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, S::PASS_THREADS, smem), err);
	grid = (unsigned) min((size_t) (per_sm > 0 ? per_sm : 1) * (size_t) sms, tiles);
	if (blocks > 0 && (unsigned) blocks < grid)
		grid = (unsigned) blocks;
	GS_LAUNCH_OK((gs_launch(pdl, kernel, grid, S::PASS_THREADS, smem, stream, keys_in, keys_out, vals_in, vals_out,
							n, run, splits, tiles, codec, (int) decode)),
				 "merge sort: merge pass launch", err);
	return GS_OK;
}

/* A four-way pass of shape S over runs of length run, with its partition kernel. */
template <typename K, bool VALUES, bool PAIR, typename S>
static gs_status
gs_bench_quad_pass(const K *keys_in, K *keys_out, const uint32_t *vals_in, uint32_t *vals_out, size_t n,
				   size_t run, size_t *splits, gs_key_codec codec, bool decode, bool pdl,
				   cudaStream_t stream, gs_error *err)
{
	constexpr auto kernel = gs_merge_quad_pass_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
													  S::FIXED_FUSED_MIN_BLOCKS>;
	const size_t smem = gs_fixed_tile_smem<K, VALUES, S::PASS_ITEMS>(S::PASS_TILE);
	const size_t tiles = (n + S::PASS_TILE - 1) / S::PASS_TILE;

	GS_CUDA_CHECK(gs_smem_limit<kernel>(smem), err);
	GS_LAUNCH_OK((gs_launch(false, gs_merge_quad_partition_kernel<K, PAIR>, (unsigned) ((tiles * 32 + 255) / 256),
							256, 0, stream, keys_in, vals_in, n, run, (int) S::PASS_TILE, tiles, splits)),
				 "merge sort: partition launch", err);
	GS_LAUNCH_OK((gs_launch(pdl, kernel, (unsigned) tiles, S::PASS_THREADS, smem, stream, keys_in, keys_out,
							vals_in, vals_out, n, run, (const size_t *) splits, codec, (int) decode)),
				 "merge sort: merge pass launch", err);
	return GS_OK;
}

/* The partition kernel a split launches before a pairwise pass, if any. */
template <typename K, bool PAIR, typename S>
static gs_status
gs_bench_partition(gs_merge_split split, const K *keys, const uint32_t *vals, size_t n, size_t run, size_t *splits,
				   cudaStream_t stream, gs_error *err)
{
	switch (split)
	{
		case GS_MERGE_SPLIT_THREAD:
		case GS_MERGE_SPLIT_PREFETCH:
			return gs_merge_launch_partition<K, PAIR, 1>(keys, vals, n, run, S::PASS_TILE, splits, stream, err);
		case GS_MERGE_SPLIT_LANES8:
			return gs_merge_launch_partition<K, PAIR, 8>(keys, vals, n, run, S::PASS_TILE, splits, stream, err);
		case GS_MERGE_SPLIT_WARP:
			return gs_merge_launch_partition<K, PAIR, 32>(keys, vals, n, run, S::PASS_TILE, splits, stream, err);
		default:
			return GS_OK;
	}
}

static uint32_t
gs_bench_seed(uint32_t fixed)
{
	return fixed != 0 ? fixed : gs_merge_launch_seed();
}

/*
 * The sort of shape S under options o, as the library's gs_merge_path_run
 * (merge_sort.cu) with every option: the block sort in o's order, then
 * log2(tiles) pairwise levels, of which QUAD makes four-way passes (one
 * pairwise pass first when their number is odd), each pass with the
 * partition kernel and pass kernel of its split and order.
 */
template <typename K, bool VALUES, bool PAIR, typename S>
static gs_status
gs_bench_run_shape(K *keys[2], uint32_t *vals[2], size_t n, gs_key_codec codec, bool encode, bool decode,
				   const gs_merge_path_options &o, size_t *splits, cudaStream_t stream, gs_error *err)
{
	const size_t tiles = (n + S::TILE - 1) / S::TILE;
	const gs_merge_split split = gs_bench_split_for(o.split, n, splits != NULL);
	const bool	pdl = o.pdl && gs_pdl_supported();
	const bool	rand_pass = o.order != GS_MERGE_ORDER_FIXED && split != GS_MERGE_SPLIT_PREFETCH;
	int			passes = gs_merge_pass_count(tiles);
	int			pair_passes = passes;
	int			cur;
	gs_status	s;

	if ((n + S::PASS_TILE - 1) / S::PASS_TILE > (size_t) INT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE, "merge sort: %zu keys are too many", n);
	if (split == GS_MERGE_SPLIT_QUAD)
	{
		pair_passes = passes & 1;
		passes = pair_passes + passes / 2;
	}
	cur = passes & 1;
	if (o.order == GS_MERGE_ORDER_RANDOM)
		s = gs_merge_launch_block_sort<K, VALUES, PAIR, S>(keys[0], keys[cur], VALUES ? vals[0] : NULL,
														   VALUES ? vals[cur] : NULL, n, codec, encode,
														   decode && passes == 0, pdl, gs_bench_seed(o.seed),
														   stream, err);
	else
		s = gs_bench_fixed_block_sort<K, VALUES, PAIR, S>(keys[0], keys[cur], VALUES ? vals[0] : NULL,
														  VALUES ? vals[cur] : NULL, n, codec, encode,
														  decode && passes == 0, pdl, stream, err);
	for (int p = 0; s == GS_OK && p < passes && (o.max_passes < 0 || p < o.max_passes); p++, cur ^= 1)
	{
		const K    *kin = keys[cur];
		const uint32_t *vin = VALUES ? vals[cur] : NULL;
		K		   *kout = keys[cur ^ 1];
		uint32_t   *vout = VALUES ? vals[cur ^ 1] : NULL;
		const bool	last = decode && p == passes - 1;
		const size_t run = (size_t) S::TILE << p;
		const size_t *pass_splits = split == GS_MERGE_SPLIT_FUSED || split == GS_MERGE_SPLIT_QUAD ? NULL : splits;

		if (p >= pair_passes)
			s = gs_bench_quad_pass<K, VALUES, PAIR, S>(kin, kout, vin, vout, n,
													   (size_t) S::TILE << (pair_passes + 2 * (p - pair_passes)),
													   splits, codec, last, pdl, stream, err);
		else if ((s = gs_bench_partition<K, PAIR, S>(split, kin, vin, n, run, splits, stream, err)) != GS_OK)
			break;
		else if (split == GS_MERGE_SPLIT_PREFETCH)
			s = gs_bench_prefetch_pass<K, VALUES, PAIR, S>(kin, kout, vin, vout, n, run, pass_splits, codec, last,
														   pdl, o.prefetch_blocks, stream, err);
		else if (rand_pass && split != GS_MERGE_SPLIT_QUAD)
			s = gs_merge_launch_pass<K, VALUES, PAIR, S>(kin, kout, vin, vout, n, run, pass_splits, codec, last, pdl,
														 gs_bench_seed(o.seed), stream, err);
		else
			s = gs_bench_fixed_pass<K, VALUES, PAIR, S>(kin, kout, vin, vout, n, run, pass_splits, codec, last, pdl,
														stream, err);
	}
	return s;
}

/* gs_bench_run_shape with the shape picked at run time (the F of gs_bench_with_shape). */
template <typename K, bool VALUES, bool PAIR>
struct gs_bench_call
{
	K		  **keys;
	uint32_t  **vals;
	size_t		n;
	gs_key_codec codec;
	const gs_merge_path_options *o;
	size_t	   *splits;
	cudaStream_t stream;
	gs_error   *err;

	template <typename S>
	gs_status	run(void)
	{
		return gs_bench_run_shape<K, VALUES, PAIR, S>(keys, vals, n, codec, true, true, *o, splits, stream, err);
	}
};

/* Pass tiles of n keys under a shape (the partition kernels write one split, or three, per tile). */
struct gs_bench_pass_tiles
{
	size_t		n,
				tiles;

	template <typename S>
	gs_status	run(void)
	{
		tiles = (n + S::PASS_TILE - 1) / S::PASS_TILE;
		return GS_OK;
	}
};

/* ------------------------------------------------------------------------
 * The selection and the entry point
 * ------------------------------------------------------------------------ */

enum bench_merge_kind
{
	BENCH_MERGE_LIBRARY,
	BENCH_MERGE_PATH,
	BENCH_MERGE_BCF
};

static enum bench_merge_kind bench_merge_kind_now = BENCH_MERGE_LIBRARY;
static gs_merge_path_options bench_merge_options_now = {GS_MERGE_SPLIT_AUTO, 4, -1, 0, 1, GS_MERGE_ORDER_RANDOM, 0};

/* GS_ALGO_MERGE runs the merge-path sort under o (copied) until another call; bad options are ignored. */
static void __attribute__((unused))
bench_merge_use(const gs_merge_path_options *o)
{
	if ((unsigned) o->split < GS_NUM_MERGE_SPLITS && o->shape >= 0 && o->shape < GS_NUM_MERGE_SHAPES &&
		o->prefetch_blocks >= 0 && (unsigned) o->order < GS_NUM_MERGE_ORDERS)
	{
		bench_merge_options_now = *o;
		bench_merge_kind_now = BENCH_MERGE_PATH;
	}
}

/* GS_ALGO_MERGE runs the bank-conflict-free sort (keys only). */
static void __attribute__((unused))
bench_merge_use_bcf(void)
{
	bench_merge_kind_now = BENCH_MERGE_BCF;
}

/* GS_ALGO_MERGE runs the library's merge sort. */
static void __attribute__((unused))
bench_merge_use_library(void)
{
	bench_merge_kind_now = BENCH_MERGE_LIBRARY;
}

/*
 * Threads per block (b) and elements per thread (E) of the merge-path sort
 * for a key type, with or without values, under the options selected last
 * (the library's when none): the block sort's and the passes' (either
 * pointer may be NULL).  The worst-case inputs of Berney are built for them.
 */
static void __attribute__((unused))
bench_merge_tuning(gs_type type, bool values, int *threads, int *items, int *pass_threads, int *pass_items)
{
	gs_bench_shape_numbers f;
	int			shape = bench_merge_kind_now == BENCH_MERGE_PATH ? bench_merge_options_now.shape : 4;

	(void) gs_bench_with_width(type, values, shape, f);
	if (threads != NULL)
		*threads = f.threads;
	if (items != NULL)
		*items = f.items;
	if (pass_threads != NULL)
		*pass_threads = f.pass_threads;
	if (pass_items != NULL)
		*pass_items = f.pass_items;
}

/* Temporary memory of the selected merge-path options: the splits, when a partition kernel writes them. */
static size_t
gs_bench_path_temp_bytes(const gs_gpu_sort_args *args, const gs_merge_path_options *o)
{
	gs_bench_pass_tiles f = {args->n, 0};
	gs_merge_split split = gs_bench_split_for(o->split, args->n, true);

	if (split == GS_MERGE_SPLIT_FUSED)
		return 256;
	(void) gs_bench_with_width(args->type, args->values[0] != NULL, o->shape, f);
	/* the four-way passes keep three counts per tile */
	return gs_align_up(f.tiles * sizeof(size_t) * (split == GS_MERGE_SPLIT_QUAD ? 3 : 1), 256);
}

template <typename K>
static gs_status
gs_bench_path_typed(gs_gpu_sort_args *args, const gs_merge_path_options *o, gs_error *err)
{
	K		   *keys[2] = {(K *) args->keys[0], (K *) args->keys[1]};
	uint32_t   *vals[2] = {args->values[0], args->values[1]};
	cudaStream_t stream = (cudaStream_t) args->stream;
	size_t	   *splits = (size_t *) args->temp;

	args->result_selector = 0;
	if (vals[0] != NULL)
	{
		gs_bench_call<K, true, false> f = {keys, vals, args->n, gs_codec_of(args), o, splits, stream, err};

		return gs_bench_with_shape<K, true>(o->shape, f);
	}
	gs_bench_call<K, false, false> f = {keys, vals, args->n, gs_codec_of(args), o, splits, stream, err};

	return gs_bench_with_shape<K, false>(o->shape, f);
}

/* The selected variant's sort, with gs_merge_sort_gpu's contract (size query when temp is NULL). */
static gs_status
gs_bench_merge_sort(gs_gpu_sort_args *args, gs_error *err)
{
	const bool	bcf = bench_merge_kind_now == BENCH_MERGE_BCF;
	const size_t need = bcf ? gs_merge_bcf_temp_bytes(args) : gs_bench_path_temp_bytes(args, &bench_merge_options_now);

	if (args->temp == NULL)
	{
		args->temp_bytes = need;
		return GS_OK;
	}
	if (args->temp_bytes < need)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "merge sort: temp_bytes %zu is too small (need %zu)",
					   args->temp_bytes, need);
	switch (gs_type_size(args->type))
	{
		case 2:
			return bcf ? gs_merge_bcf_run<uint16_t>(args, err)
				: gs_bench_path_typed<uint16_t>(args, &bench_merge_options_now, err);
		case 4:
			return bcf ? gs_merge_bcf_run<uint32_t>(args, err)
				: gs_bench_path_typed<uint32_t>(args, &bench_merge_options_now, err);
		default:
			return bcf ? gs_merge_bcf_run<uint64_t>(args, err)
				: gs_bench_path_typed<uint64_t>(args, &bench_merge_options_now, err);
	}
}

/*
 * gs_gpu_sort, with GS_ALGO_MERGE sent to the selected variant (its
 * arguments checked and n <= 1 settled by gs_gpu_sort's own rules first).
 */
static gs_status __attribute__((unused))
bench_gpu_sort(gs_gpu_sort_args *args, gs_error *err)
{
	gs_gpu_sort_args probe;
	gs_status	s;

	if (bench_merge_kind_now == BENCH_MERGE_LIBRARY || args == NULL || args->algorithm != GS_ALGO_MERGE ||
		args->n <= 1)
		return gs_gpu_sort(args, err);
	/* the library checks the arguments; a size query of its own does nothing else */
	probe = *args;
	probe.temp = NULL;
	if ((s = gs_gpu_sort(&probe, err)) != GS_OK)
		return s;
	args->algorithm_used = GS_ALGO_MERGE;
	return gs_bench_merge_sort(args, err);
}

#endif							/* GPUSORT_MERGE_VARIANTS_CUH */
