/*
 * merge_sort.cuh: the merge sort's internal interface to the rest of
 * kernels/ and to the benchmark (not part of the API): the variant switch
 * between the merge-path design (seed 003) and the bank-conflict-free design
 * (seed 000), the tuning (E, b) of a variant for the worst-case generator, and
 * a sort of already ordered keys on a sub-range for other algorithms (the
 * quicksort's depth-limit fallback).
 */
#ifndef GPUSORT_MERGE_SORT_CUH
#define GPUSORT_MERGE_SORT_CUH

#include "gpusort.h"

typedef enum gs_merge_variant
{
	GS_MERGE_PATH = 0,			/* block sort + pairwise merge path (Thrust/ModernGPU/CUB) */
	GS_MERGE_BCF,				/* ShearSort base case, conflict-free merge, splitter buckets */
	GS_NUM_MERGE_VARIANTS
} gs_merge_variant;

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Selects the variant behind GS_ALGO_MERGE for this process (the default is
 * the faster one, measured: see bench/NOTES-comparison.md).  For benchmarks
 * and tests; not thread safe.
 */
void		gs_merge_set_variant(gs_merge_variant v);
gs_merge_variant gs_merge_get_variant(void);
const char *gs_merge_variant_name(gs_merge_variant v);

/*
 * Run-time choices inside the merge-path variant, for benchmarks and tests
 * (not thread safe; the defaults are the measured best, see
 * bench/NOTES-comparison.md).
 *
 * split: how a merge pass learns where each of its tiles starts in the two
 * runs it merges.  FUSED: warps 0 and 1 of every pass block search for the
 * tile's two ends (a 32-way merge-path search in global memory) before the
 * block can load anything.  The others launch a partition kernel before
 * every pass that writes each tile's start to temporary memory (one search
 * per tile instead of two), so pass blocks start loading at once: THREAD
 * searches with a binary search per thread (the longest dependent chain, the
 * least traffic), LANES8 with 8 lanes testing 8 candidates per step, WARP
 * with 32.  PREFETCH: THREAD's partition kernel, then a persistent pass
 * kernel (as many blocks as fit, each looping over tiles) that copies its
 * next tile into a second shared-memory buffer (cp.async) while it merges
 * the current one.  QUAD: four-way passes (kernels/merge_quad.cuh), each
 * with a partition kernel of one warp per tile, so half the passes over
 * global memory; a pairwise pass (FUSED) first when the number of pairwise
 * levels is odd.  AUTO (the default): FUSED below GS_MERGE_AUTO_THREAD_MIN
 * keys, THREAD from there (measured, bench/NOTES-comparison.md); FUSED
 * whenever the caller gives no temporary memory.
 *
 * shape: the block sort's (b, E) and the passes' (b, E) for 32-bit keys
 * without values (the other key widths and argsort always take shape 0,
 * the policy's); GS_MERGE_DEFAULT_SHAPE is the default.
 * gs_merge_shape_name() names them; see gs_merge_path_tuning.
 *
 * max_passes: stops after that many merge passes (-1: all); the result is
 * then not sorted.  Only for timing the block sort alone.
 *
 * prefetch_blocks: with PREFETCH, at most that many pass blocks (0: as many
 * as fit on the device), so that tests can make every block loop over
 * several tiles at small n.
 *
 * pdl: nonzero (the default) launches the block sort and the passes with
 * programmatic dependent launch on devices of compute capability 9.0 and
 * later, so that a pass's blocks are resident and waiting when the kernel
 * before it ends, instead of the launch starting then.  Zero launches them
 * as plain stream-ordered kernels.
 *
 * order: FIXED merges as seed 003 describes it (each thread forwards, the
 * two runs of a tile side by side, two predicated loads a step).  RANDOM
 * randomizes the merge order per kernel launch in the block sort's rounds
 * and the passes (merge_block.cuh): each thread's direction, the gap before
 * the right run, one load a step; so no input can make a warp's threads
 * read one bank at every step (seed 003's worst case).  RANDOM_PASSES: in
 * the passes only.  The prefetching and four-way splits keep the fixed
 * order.  seed: nonzero fixes the launches' seed (tests); zero draws one
 * per launch.  RANDOM is the default (GS_MERGE_DEFAULT_ORDER): on the
 * H100, int4, of CUB at 10^7 / 10^8 it is 1.00 / 1.00 and +3% on its own
 * worst case, FIXED 1.18 / 1.04 and +25% (bench/NOTES-comparison.md,
 * round 6).
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
#define GS_MERGE_DEFAULT_SHAPE 4
#define GS_MERGE_DEFAULT_ORDER GS_MERGE_ORDER_RANDOM
#define GS_MERGE_AUTO_THREAD_MIN ((size_t) 40000000)

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

void		gs_merge_path_set_options(const gs_merge_path_options *o);
void		gs_merge_path_get_options(gs_merge_path_options *o);
void		gs_merge_path_default_options(gs_merge_path_options *o);
const char *gs_merge_split_name(gs_merge_split s);
const char *gs_merge_shape_name(int shape);
const char *gs_merge_order_name(gs_merge_order o);

/*
 * Threads per block (b) and elements per thread (E) of the merge-path
 * variant for a key type, with or without values, under the current
 * options: the block sort's (gs_merge_path_tuning) and the merge passes'
 * (gs_merge_path_pass_tuning; either pointer may be NULL).  These are the
 * parameters of its merges, which the worst-case inputs of seed 003 are
 * built for.
 */
void		gs_merge_path_tuning(gs_type type, bool values, int *threads, int *items);
void		gs_merge_path_pass_tuning(gs_type type, bool values, int *pass_threads, int *pass_items);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>

/*
 * Stable merge sort of n ordered keys (width K: uint16_t, uint32_t or
 * uint64_t) already in device memory, no key transform: keys[0] holds the
 * input, keys[1] is scratch; with vals (vals[0] input, vals[1] scratch) the
 * values move with the keys, and pair = true orders by (key, value).  The
 * result lands in keys[0]/vals[0].  No temporary memory; asynchronous.
 */
template <typename K>
gs_status	gs_merge_sort_ordered(K *keys[2], uint32_t *vals[2], size_t n, bool pair,
								  cudaStream_t stream, gs_error *err);
#endif

#endif							/* GPUSORT_MERGE_SORT_CUH */
