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
#include <atomic>
#include <chrono>
#include <cuda_pipeline.h>

#include "merge_block.cuh"
#include "merge_common.cuh"
#include "merge_sort.cuh"

/*
 * A shape of the merge-path sort: the block sort's threads and items per
 * thread (b, E), with a floor on its resident blocks per SM (0 = none), and
 * the same for the merge passes.  The passes may use other (b, E) than the
 * block sort: a pass block merges whatever part of two runs its output tile
 * needs, so only its tile must divide twice the block sort's tile (a pass
 * tile then never straddles two pairs of runs).
 */
template <int SORT_THREADS_, int SORT_ITEMS_, int SORT_MIN_BLOCKS_,
		  int PASS_THREADS_, int PASS_ITEMS_, int PASS_MIN_BLOCKS_, int SPLIT_MIN_BLOCKS_ = PASS_MIN_BLOCKS_>
struct gs_merge_shape
{
	static constexpr int THREADS = SORT_THREADS_;
	static constexpr int ITEMS = SORT_ITEMS_;
	static constexpr int MIN_BLOCKS = SORT_MIN_BLOCKS_;
	static constexpr int TILE = THREADS * ITEMS;
	static constexpr int PASS_THREADS = PASS_THREADS_;
	static constexpr int PASS_ITEMS = PASS_ITEMS_;
	static constexpr int PASS_MIN_BLOCKS = PASS_MIN_BLOCKS_;	/* fused split */
	static constexpr int SPLIT_MIN_BLOCKS = SPLIT_MIN_BLOCKS_;	/* splits from a partition kernel */
	static constexpr int PASS_TILE = PASS_THREADS * PASS_ITEMS;
	static_assert((2 * TILE) % PASS_TILE == 0, "a pass tile must divide twice the block sort's tile");
};

/* resident pass blocks per SM for 32-bit keys alone with a partition kernel (see below) */
#ifndef GS_MERGE_SPLIT_MIN_BLOCKS_32
#define GS_MERGE_SPLIT_MIN_BLOCKS_32 6
#endif

/*
 * Tuning for sm_90, one entry per key width and values or not (CUB style:
 * retuning touches no algorithm code).  E is odd so that E and the 32 banks
 * are co-prime: with even E sorted input would already be a worst case
 * (seed 003, section III).  64-bit keys take two banks each, so E odd
 * again avoids the half-warp pattern.
 *
 * The merge passes' blocks are smaller than the block sort's, with a floor
 * on resident blocks per SM (so a register cap; 0 = none).  Measured on the
 * H100 (bench/results/merge-pass-shape-h100-2026-11-23.md), Gkeys/s at 10^7
 * / 10^8 with the fused split: 32-bit keys 16.5 / 15.1 with 512x15 at 3
 * blocks per SM, 18.1 / 17.5 with 256x15 at 8 (32 registers); 32-bit argsort
 * 8.5 / 7.4 -> 9.2 / 7.9; 64-bit keys 10.2 / 8.8 -> 10.7 / 9.2 with 256x11 at
 * 6 (at 8 they spill and lose 5%).  Shapes not measured keep 512 threads.
 * 32-bit keys alone take 6 blocks per SM (40 registers) in passes whose
 * splits come from the partition kernel: 0.958 -> 0.975 of CUB at 10^8
 * with the thread split (5 blocks: 0.930, 4: 0.887), while the fused split
 * keeps 8 (at 6 it fell from 1.04 to 0.97 at 10^7: its blocks wait for
 * their search, and more of them hide it; bench/NOTES-comparison.md).
 */
template <typename K, bool VALUES>
struct gs_merge_policy
{
	static constexpr int ITEMS = sizeof(K) == 8 ? (VALUES ? 9 : 11) : (VALUES ? 11 : 15);
	static constexpr bool MEASURED = sizeof(K) == 4 || (sizeof(K) == 8 && !VALUES);
	static constexpr int PASS_MIN_BLOCKS = !MEASURED ? 0 : sizeof(K) == 8 ? 6 : 8;
	typedef gs_merge_shape<512, ITEMS, 0,
						   MEASURED ? 256 : 512, ITEMS,
						   PASS_MIN_BLOCKS, sizeof(K) == 4 && !VALUES ? GS_MERGE_SPLIT_MIN_BLOCKS_32 : PASS_MIN_BLOCKS> shape;
};

/*
 * The shapes selectable for 32-bit keys without values (gs_merge_path_options;
 * shape 0 is the policy's).  The worst-case input of seed 003 makes E threads
 * of a warp read one bank at each of the E steps of a merge, E^2 wavefronts
 * per warp, so its extra cost per key grows with E (bench/worst_case_gen's
 * model, worst / random per warp: 225 / 51 for E = 15, 49 / 22 for 7, 25 /
 * 15 for 5): shapes 1 and 2 merge 5 keys per thread in the passes, shape 3
 * also sorts its tiles with E = 7 (1024 threads, 7168 keys: the same number
 * of passes as 7680 up to 1.1 * 10^8 keys).  Smaller E costs a merge-path
 * search in shared memory per fewer outputs.
 */
typedef gs_merge_shape<512, 15, 0, 256, 5, 8> gs_merge_shape_1;
typedef gs_merge_shape<512, 15, 0, 512, 5, 4> gs_merge_shape_2;
typedef gs_merge_shape<1024, 7, 0, 256, 7, 8> gs_merge_shape_3;

/*
 * Shapes 4 and 5 sort tiles of 15360 keys (1024 x 15, 60 KB, 2 blocks per SM),
 * twice shape 0's: one pass fewer at 10^7, 3 * 10^7 and 10^8 keys (10, 11 and
 * 13 instead of 11, 12 and 14) for a tenth block-sort round.  Shape 4 keeps
 * shape 0's passes; shape 5 merges 5 keys per thread in them (shape 1's, for
 * the worst case) and needs the pass it saves to pay for its smaller E.
 *
 * Shape 4 is the default (GS_MERGE_DEFAULT_SHAPE) since the merge became
 * branch-free (gs_serial_merge): H100, int4 keys, of CUB at 10^7 / 3 * 10^7 /
 * 10^8, 1.180 / 1.046 / 1.040 against shape 0's 1.142 / 1.021 / 1.020; on
 * the worst case built for each, 0.929 ms against 0.935 at 15.7M keys
 * (+25.6% and +23.0% of their random inputs; bench/NOTES-comparison.md).
 */
typedef gs_merge_shape<1024, 15, 0, 256, 15, 8, GS_MERGE_SPLIT_MIN_BLOCKS_32> gs_merge_shape_4;
typedef gs_merge_shape<1024, 15, 0, 256, 5, 8> gs_merge_shape_5;

/* Calls F::template run<shape>() for the shape a key width uses under shape index s. */
template <typename K, bool VALUES, typename F>
static gs_status
gs_merge_with_shape(int s, F &f)
{
	if constexpr (sizeof(K) == 4 && !VALUES)
	{
		switch (s)
		{
			case 1:
				return f.template run<gs_merge_shape_1>();
			case 2:
				return f.template run<gs_merge_shape_2>();
			case 3:
				return f.template run<gs_merge_shape_3>();
			case 4:
				return f.template run<gs_merge_shape_4>();
			case 5:
				return f.template run<gs_merge_shape_5>();
			default:
				break;
		}
	}
	return f.template run<typename gs_merge_policy<K, VALUES>::shape>();
}

/* gs_merge_with_shape for keys of type's width, with values or not. */
template <typename F>
static gs_status
gs_merge_with_width(gs_type type, bool values, int s, F &f)
{
	switch (gs_type_size(type))
	{
		case 8:
			return values ? gs_merge_with_shape<uint64_t, true>(s, f) : gs_merge_with_shape<uint64_t, false>(s, f);
		case 4:
			return values ? gs_merge_with_shape<uint32_t, true>(s, f) : gs_merge_with_shape<uint32_t, false>(s, f);
		default:
			return values ? gs_merge_with_shape<uint16_t, true>(s, f) : gs_merge_with_shape<uint16_t, false>(s, f);
	}
}

static gs_merge_variant gs_merge_current_variant = GS_MERGE_PATH;
static gs_merge_path_options gs_merge_path_current = {GS_MERGE_SPLIT_AUTO, GS_MERGE_DEFAULT_SHAPE, -1, 0, 1,
	GS_MERGE_DEFAULT_ORDER, 0};

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
gs_merge_path_default_options(gs_merge_path_options *o)
{
	o->split = GS_MERGE_SPLIT_AUTO;
	o->shape = GS_MERGE_DEFAULT_SHAPE;
	o->max_passes = -1;
	o->prefetch_blocks = 0;
	o->pdl = 1;
	o->order = GS_MERGE_DEFAULT_ORDER;
	o->seed = 0;
}

/*
 * The split a sort of n keys uses: AUTO is FUSED below
 * GS_MERGE_AUTO_THREAD_MIN keys and THREAD from there (H100, int4 keys,
 * shape 4: fused 1.179 / 1.049 / 0.996 of CUB at 10^7 / 3 * 10^7 / 10^8,
 * thread 1.048 / 1.047 / 1.042; the partition kernel's fixed cost a pass is
 * paid back from about 3-4 * 10^7 keys; argsort and float8 cross over
 * between 10^7 and 10^8 as well).  Without temporary memory every split is
 * FUSED.
 */
static gs_merge_split
gs_merge_split_for(gs_merge_split s, size_t n, bool have_temp)
{
	if (!have_temp)
		return GS_MERGE_SPLIT_FUSED;
	if (s == GS_MERGE_SPLIT_AUTO)
		return n >= GS_MERGE_AUTO_THREAD_MIN ? GS_MERGE_SPLIT_THREAD : GS_MERGE_SPLIT_FUSED;
	return s;
}

extern "C" void
gs_merge_path_set_options(const gs_merge_path_options *o)
{
	if ((unsigned) o->split < GS_NUM_MERGE_SPLITS && o->shape >= 0 && o->shape < GS_NUM_MERGE_SHAPES &&
		o->prefetch_blocks >= 0 && (unsigned) o->order < GS_NUM_MERGE_ORDERS)
		gs_merge_path_current = *o;
}

extern "C" void
gs_merge_path_get_options(gs_merge_path_options *o)
{
	*o = gs_merge_path_current;
}

extern "C" const char *
gs_merge_split_name(gs_merge_split s)
{
	switch (s)
	{
		case GS_MERGE_SPLIT_FUSED:
			return "fused";
		case GS_MERGE_SPLIT_THREAD:
			return "thread";
		case GS_MERGE_SPLIT_LANES8:
			return "lanes8";
		case GS_MERGE_SPLIT_WARP:
			return "warp";
		case GS_MERGE_SPLIT_PREFETCH:
			return "prefetch";
		case GS_MERGE_SPLIT_QUAD:
			return "quad";
		case GS_MERGE_SPLIT_AUTO:
			return "auto";
		default:
			return "unknown";
	}
}

extern "C" const char *
gs_merge_order_name(gs_merge_order o)
{
	switch (o)
	{
		case GS_MERGE_ORDER_FIXED:
			return "fixed";
		case GS_MERGE_ORDER_RANDOM:
			return "rand";
		case GS_MERGE_ORDER_RANDOM_PASSES:
			return "randp";
		default:
			return "unknown";
	}
}

extern "C" const char *
gs_merge_shape_name(int shape)
{
	switch (shape)
	{
		case 0:
			return "sort 512x15, pass 256x15";
		case 1:
			return "sort 512x15, pass 256x5";
		case 2:
			return "sort 512x15, pass 512x5";
		case 3:
			return "sort 1024x7, pass 256x7";
		case 4:
			return "sort 1024x15, pass 256x15";
		case 5:
			return "sort 1024x15, pass 256x5";
		default:
			return "unknown";
	}
}

/* Reports a shape's four numbers (the F of gs_merge_with_shape). */
struct gs_merge_shape_numbers
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

static gs_merge_shape_numbers
gs_merge_numbers(gs_type type, bool values)
{
	gs_merge_shape_numbers f;
	int			s = gs_merge_path_current.shape;

	(void) gs_merge_with_width(type, values, s, f);
	return f;
}

extern "C" void
gs_merge_path_tuning(gs_type type, bool values, int *threads, int *items)
{
	gs_merge_shape_numbers f = gs_merge_numbers(type, values);

	*threads = f.threads;
	*items = f.items;
}

extern "C" void
gs_merge_path_pass_tuning(gs_type type, bool values, int *pass_threads, int *pass_items)
{
	gs_merge_shape_numbers f = gs_merge_numbers(type, values);

	if (pass_threads != NULL)
		*pass_threads = f.pass_threads;
	if (pass_items != NULL)
		*pass_items = f.pass_items;
}

/*
 * Elements of a tile's key array in shared memory before its values start
 * (the values array is as long): the tile and the merge's over-read into the
 * values (gs_merge_smem_pad); with the merge order randomized
 * (merge_block.cuh), the room before the tile, the tile, the right runs'
 * shifts and the over-read after it.
 */
template <bool RAND, int THREADS, int ITEMS>
static __host__ __device__ constexpr int
gs_merge_sort_extent(void)
{
	/* a multiple of 8 elements, so that the values after 2-byte keys are aligned */
	return RAND ? (gs_merge_front_pad<ITEMS>() + THREADS * ITEMS + gs_block_rand_room<THREADS, ITEMS>() + 7) / 8 * 8
		: THREADS * ITEMS;
}

template <bool RAND, int THREADS, int ITEMS>
static __host__ __device__ constexpr int
gs_merge_pass_extent(void)
{
	return RAND ? (gs_merge_front_pad<ITEMS>() + THREADS * ITEMS + GS_MERGE_MAX_DELTA + ITEMS + 1 + 7) / 8 * 8
		: THREADS * ITEMS;
}

/* Shared memory of a tile whose key array has extent elements (and the values as many, with VALUES). */
template <typename K, bool VALUES, bool RAND, int ITEMS>
static constexpr size_t
gs_merge_tile_smem(int extent)
{
	return (size_t) extent * (sizeof(K) + (VALUES ? sizeof(uint32_t) : 0)) +
		(RAND ? 0 : gs_merge_smem_pad<K, ITEMS>());
}

/*
 * Resident blocks per SM the block sort asks the compiler for: the shape's,
 * or for 32-bit keys alone in random order as many as the fixed order's
 * kernel reaches unasked (32 registers, a full SM of threads), which the
 * random order's extra live values would otherwise halve.
 */
template <typename K, bool VALUES, int THREADS, int MIN_BLOCKS, bool RAND>
static constexpr int
gs_merge_sort_min_blocks(void)
{
	return RAND && sizeof(K) == 4 && !VALUES && MIN_BLOCKS < 2048 / THREADS ? 2048 / THREADS : MIN_BLOCKS;
}

/*
 * The randomized merge order's seed for one kernel launch: from a
 * process-wide sequence started from the clock and the sequence's address,
 * so that no input can know it; fixed when the options name one (tests).
 */
static std::atomic<uint64_t> gs_merge_seed_sequence{0};

static uint32_t
gs_merge_launch_seed(uint32_t fixed)
{
	uint64_t	x;

	if (fixed != 0)
		return fixed;
	x = gs_merge_seed_sequence.fetch_add(0x9E3779B97F4A7C15ull, std::memory_order_relaxed);
	if (x == 0)
	{
		/*
		 * first use: start the sequence somewhere no input can guess (a call
		 * racing this one may take a draw before the clock joins the
		 * sequence: a known seed for one launch, never a wrong sort)
		 */
		x = (uint64_t) std::chrono::steady_clock::now().time_since_epoch().count() ^
			(uint64_t) (uintptr_t) &gs_merge_seed_sequence;
		gs_merge_seed_sequence.fetch_add(x | 1, std::memory_order_relaxed);
	}
	/* splitmix64's finaliser */
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	x ^= x >> 31;
	return (uint32_t) x;
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
template <typename K, bool VALUES, bool PAIR, int THREADS, int ITEMS, int MIN_BLOCKS, bool RAND>
__global__ void __launch_bounds__(THREADS, gs_merge_sort_min_blocks<K, VALUES, THREADS, MIN_BLOCKS, RAND>())
gs_merge_block_sort_kernel(const K *keys_in, K *keys_out,
						   const uint32_t *vals_in, uint32_t *vals_out,
						   size_t n, gs_key_codec codec, int encode, int decode, uint32_t seed)
{
	constexpr int TILE = THREADS * ITEMS;
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem + (RAND ? gs_merge_front_pad<ITEMS>() : 0);
	uint32_t   *sv = (uint32_t *) ((K *) gs_smem + gs_merge_sort_extent<RAND, THREADS, ITEMS>()) +
		(RAND ? gs_merge_front_pad<ITEMS>() : 0);
	const size_t base = (size_t) blockIdx.x * TILE;
	const int	count = (int) min((size_t) TILE, n - base);
	const int	tid = threadIdx.x;

	gs_pdl_wait();
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
	gs_pdl_trigger();
	if constexpr (RAND)
		gs_block_merge_sort_rand<K, THREADS, ITEMS, VALUES, PAIR>(sk, sv, seed);
	else
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
 * Where each output tile of a merge pass starts in the left run of its pair
 * (its merge-path split), for the pass that merges runs of length run into
 * runs of 2*run: splits[g] for tile g of tile keys.  LANES lanes search for
 * one tile (1: a binary search per thread).  Launched before every pass when
 * the split is not fused, so that the pass blocks can start loading at once.
 * Its blocks let the pass launch as soon as they run (gs_pdl_trigger): the
 * pass's blocks then wait, resident, for the splits.
 */
template <typename K, bool PAIR, int LANES>
__global__ void __launch_bounds__(256)
gs_merge_partition_kernel(const K *keys, const uint32_t *vals, size_t n, size_t run,
						  int tile, size_t tiles, size_t *splits)
{
	const size_t g = ((size_t) blockIdx.x * blockDim.x + threadIdx.x) / LANES;
	size_t		out_begin,
				pair_start,
				a_end,
				b_end,
				s;

	gs_pdl_wait();
	gs_pdl_trigger();
	/* whole groups leave together: LANES divides the block */
	if (g >= tiles)
		return;
	out_begin = g * (size_t) tile;
	pair_start = out_begin / (2 * run) * (2 * run);
	a_end = min(pair_start + run, n);
	b_end = min(pair_start + 2 * run, n);
	if constexpr (LANES == 1)
		s = gs_thread_merge_path<K, PAIR>(keys + pair_start, vals + pair_start, a_end - pair_start,
										  keys + a_end, vals + a_end, b_end - a_end, out_begin - pair_start);
	else
		s = gs_group_merge_path<K, PAIR, LANES>(keys + pair_start, vals + pair_start, a_end - pair_start,
												keys + a_end, vals + a_end, b_end - a_end, out_begin - pair_start);
	if ((threadIdx.x & (LANES - 1)) == 0)
		splits[g] = s;
}

/*
 * The end of a pass tile: each thread's ITEMS merged keys (and values), in
 * order from tid * ITEMS (or taken backwards, back), go through shared
 * memory (sk, sv) so that the block writes its total outputs to keys_out
 * and vals_out coalesced, decoded if decode.
 */
template <typename K, bool VALUES, int THREADS, int ITEMS>
static __device__ __forceinline__ void
gs_store_merged(K *sk, uint32_t *sv, const K (&k)[ITEMS], const uint32_t (&v)[ITEMS], int total,
				K *keys_out, uint32_t *vals_out, bool decode, gs_key_codec codec, bool back = false)
{
	const int	tid = threadIdx.x;

	__syncthreads();
	if (tid * ITEMS < total)
	{
		/*
		 * back: the thread took its keys backwards (gs_serial_merge_dir; only
		 * a thread with ITEMS outputs does), so k[0] is its last output.  In
		 * output order, each key picked by a select, so that every store of
		 * the warp keeps the forward stride (ITEMS: no bank conflict, where
		 * storing backwards measured 0.48 conflicts a store).
		 */
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			if (tid * ITEMS + i < total)
			{
				sk[tid * ITEMS + i] = back ? k[ITEMS - 1 - i] : k[i];
				if (VALUES)
					sv[tid * ITEMS + i] = back ? v[ITEMS - 1 - i] : v[i];
			}
		}
	}
	__syncthreads();
	/* a full tile (all but the last of a pair) skips the bounds; the decode test is uniform */
	if (total == THREADS * ITEMS && !decode)
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			keys_out[tid + i * THREADS] = sk[tid + i * THREADS];
			if (VALUES)
				vals_out[tid + i * THREADS] = sv[tid + i * THREADS];
		}
		return;
	}
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		int			j = tid + i * THREADS;

		if (j < total)
		{
			K			key = sk[j];

			keys_out[j] = decode ? gs_decode_key<K>(key, codec) : key;
			if (VALUES)
				vals_out[j] = sv[j];
		}
	}
}

/*
 * The start of a pass tile: its total keys, the first na from the left run
 * at a0 and the rest from the right run at b0, into sk/sv (left piece
 * first, the right one gap elements after its end), striped over the
 * block.  FULL_PATH: a full tile skips the bound test per key (with the
 * randomized order's gap that kept the pass kernel of 32-bit keys under its
 * 40 registers, 0.90 -> 0.99 of CUB at 10^8 on the H100; for the fixed order,
 * argsorts and 64-bit keys it measured slower).  SELECT: offsets within the tile are
 * 32-bit and one select picks the source pointer (the right piece's is set
 * back by na); otherwise a 64-bit index per key, which measured faster for
 * keys alone at 32 registers (8 blocks per SM: the fused split), where the
 * two pointers cost registers.
 */
template <typename K, bool VALUES, int THREADS, int ITEMS, bool SELECT, bool FULL_PATH = false>
static __device__ __forceinline__ void
gs_load_pieces(const K *keys_in, const uint32_t *vals_in, size_t a0, size_t b0, int na, int total,
			   K *sk, uint32_t *sv, int gap = 0)
{
	const int	tid = threadIdx.x;

	if constexpr (SELECT)
	{
		/* b0 >= na: the right run starts after the left piece */
		const K    *ka = keys_in + a0;
		const K    *kb = keys_in + (b0 - (size_t) na);
		const uint32_t *va = VALUES ? vals_in + a0 : NULL;
		const uint32_t *vb = VALUES ? vals_in + (b0 - (size_t) na) : NULL;

		if (FULL_PATH && total == THREADS * ITEMS)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				int			j = tid + i * THREADS;

				(j < na ? sk : sk + gap)[j] = (j < na ? ka : kb)[j];
				if (VALUES)
					(j < na ? sv : sv + gap)[j] = (j < na ? va : vb)[j];
			}
			return;
		}
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			int			j = tid + i * THREADS;

			if (j < total)
			{
				(j < na ? sk : sk + gap)[j] = (j < na ? ka : kb)[j];
				if (VALUES)
					(j < na ? sv : sv + gap)[j] = (j < na ? va : vb)[j];
			}
		}
	}
	else
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			int			j = tid + i * THREADS;

			if (j < total)
			{
				size_t		src = j < na ? a0 + j : b0 + (j - na);
				int			p = j < na ? j : j + gap;

				sk[p] = keys_in[src];
				if (VALUES)
					sv[p] = vals_in[src];
			}
		}
	}
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

#include "merge_quad.cuh"

/*
 * One pairwise merge pass: sorted runs of length run become runs of 2*run.
 * Block = one output tile of THREADS*ITEMS elements (the shape's pass
 * tile), which never straddles two pairs (2*run is a multiple of the tile).
 * The tile's start and end in the left run (merge path in global memory)
 * come from splits[] (written by the partition kernel; a tile that ends its
 * pair ends at the left run's end), or, when FUSED, are searched here by
 * warps 0 and 1 while the other warps wait.  The block then stages
 * both pieces contiguously in shared memory (the left piece first), each
 * thread merges ITEMS outputs, and the tile goes out coalesced.  RAND:
 * the merge order randomized under seed (merge_block.cuh): the right piece
 * staged a random 0 .. 31 elements after the left one, each thread forwards
 * or backwards.  Like every
 * kernel of this sort, it waits for the kernel before it (gs_pdl_wait)
 * before touching global memory, and lets the next one launch at once.
 */
template <typename K, bool VALUES, bool PAIR, int THREADS, int ITEMS, int MIN_BLOCKS, bool FUSED, bool RAND>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
gs_merge_pass_kernel(const K *keys_in, K *keys_out,
					 const uint32_t *vals_in, uint32_t *vals_out,
					 size_t n, size_t run, const size_t *splits, gs_key_codec codec, int decode, uint32_t seed)
{
	constexpr int TILE = THREADS * ITEMS;
	extern __shared__ __align__(16) unsigned char gs_smem[];
	__shared__ size_t split_found[2];
	K		   *sk = (K *) gs_smem + (RAND ? gs_merge_front_pad<ITEMS>() : 0);
	uint32_t   *sv = (uint32_t *) ((K *) gs_smem + gs_merge_pass_extent<RAND, THREADS, ITEMS>()) +
		(RAND ? gs_merge_front_pad<ITEMS>() : 0);
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
	size_t		split0,
				split1;
	int			na;

	gs_pdl_wait();
	gs_pdl_trigger();
	if (!FUSED)
	{
		/* the same two addresses for every thread: one load per warp each */
		split0 = splits[blockIdx.x];
		split1 = diag1 == la + lb ? la : splits[blockIdx.x + 1];
	}
	else
	{
		if (tid < 64)
		{
			size_t		d = tid < 32 ? diag0 : diag1;
			size_t		s = gs_group_merge_path<K, PAIR, 32>(keys_in + pair_start, vals_in + pair_start, la,
															 keys_in + a_end, vals_in + a_end, lb, d);

			if ((tid & 31) == 0)
				split_found[tid >> 5] = s;
		}
		__syncthreads();
		split0 = split_found[0];
		split1 = split_found[1];
	}
	na = (int) (split1 - split0);
	if constexpr (RAND)
	{
		const int	delta = (int) (gs_merge_rand_bits(seed, blockIdx.x, THREADS) & GS_MERGE_MAX_DELTA);
		const int	d = tid * ITEMS;
		bool		back;

		gs_load_pieces<K, VALUES, THREADS, ITEMS, VALUES || !FUSED, !VALUES && sizeof(K) == 4>(
			keys_in, vals_in, pair_start + split0, a_end + (diag0 - split0), na, total, sk, sv, delta);
		__syncthreads();
		/* drawn after the staging, which is short of registers; the tile's last thread (fewer than ITEMS outputs) goes forwards */
		back = (gs_merge_rand_bits(seed, blockIdx.x, tid) & 1) && d + ITEMS <= total;
		if (d < total)
			gs_merge_dir_items<K, ITEMS, VALUES, PAIR>(sk, sv, 0, na, na + delta, total - na, d,
													   min(d + ITEMS, total), back, k, v);
		gs_store_merged<K, VALUES, THREADS, ITEMS>(sk, sv, k, v, total, keys_out + out_begin, vals_out + out_begin,
												  decode, codec, back);
	}
	else
	{
		gs_load_pieces<K, VALUES, THREADS, ITEMS, VALUES || !FUSED>(keys_in, vals_in, pair_start + split0,
																	 a_end + (diag0 - split0), na, total, sk, sv);
		__syncthreads();
		gs_merge_tile_items<K, VALUES, PAIR, ITEMS>(sk, sv, na, total, tid * ITEMS, k, v);
		gs_store_merged<K, VALUES, THREADS, ITEMS>(sk, sv, k, v, total, keys_out + out_begin,
												  vals_out + out_begin, decode, codec);
	}
}

/* Where pass tile t of a pass lies: its pair, its split and its length. */
struct gs_merge_tile
{
	size_t		out_begin,
				a0,				/* first key of the left piece */
				b0;				/* first key of the right piece */
	int			total,			/* outputs of the tile */
				na;				/* of them from the left run */
};

static __device__ __forceinline__ gs_merge_tile
gs_merge_tile_at(size_t t, int tile, size_t n, size_t run, const size_t *splits)
{
	gs_merge_tile g;
	const size_t out_begin = t * (size_t) tile;
	const size_t pair_start = out_begin / (2 * run) * (2 * run);
	const size_t a_end = min(pair_start + run, n);
	const size_t b_end = min(pair_start + 2 * run, n);
	const size_t la = a_end - pair_start;
	const size_t diag0 = out_begin - pair_start;
	const size_t diag1 = min(diag0 + tile, la + (b_end - a_end));
	const size_t split0 = splits[t];
	const size_t split1 = diag1 == la + (b_end - a_end) ? la : splits[t + 1];

	g.out_begin = out_begin;
	g.a0 = pair_start + split0;
	g.b0 = a_end + (diag0 - split0);
	g.total = (int) (diag1 - diag0);
	g.na = (int) (split1 - split0);
	return g;
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
 * A merge pass as gs_merge_pass_kernel with splits from the partition
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
		gs_merge_tile_fetch<K, VALUES, THREADS, ITEMS>(gs_merge_tile_at(blockIdx.x, TILE, n, run, splits),
													   keys_in, vals_in, skb, svb);
	for (size_t t = blockIdx.x; t < tiles; t += gridDim.x, buf ^= 1)
	{
		const gs_merge_tile g = gs_merge_tile_at(t, TILE, n, run, splits);
		K		   *sk = skb + buf * STRIDE;
		uint32_t   *sv = svb + buf * STRIDE;
		K			k[ITEMS];
		uint32_t	v[ITEMS];

		__pipeline_wait_prior(0);
		__syncthreads();
		if (t + gridDim.x < tiles)
			gs_merge_tile_fetch<K, VALUES, THREADS, ITEMS>(gs_merge_tile_at(t + gridDim.x, TILE, n, run, splits),
														   keys_in, vals_in, skb + (buf ^ 1) * STRIDE,
														   svb + (buf ^ 1) * STRIDE);
		gs_merge_tile_items<K, VALUES, PAIR, ITEMS>(sk, sv, g.na, g.total, tid * ITEMS, k, v);
		gs_store_merged<K, VALUES, THREADS, ITEMS>(sk, sv, k, v, g.total, keys_out + g.out_begin,
												  vals_out + g.out_begin, decode, codec);
	}
}

/* ------------------------------------------------------------------------
 * Dispatch
 * ------------------------------------------------------------------------ */

/*
 * Runs the block sort and the merge passes of shape S.  Ping-pong between
 * the two buffers; the block sort writes to whichever makes the last pass
 * end in buffer 0, so the result is always in keys[0]/vals[0].  splits:
 * room for one size_t per pass tile, for a split other than FUSED (AUTO and
 * every other split become FUSED without it).
 */
template <typename K, bool VALUES, bool PAIR, typename S>
static gs_status
gs_merge_path_run_shape(K *keys[2], uint32_t *vals[2], size_t n, gs_key_codec codec,
						bool encode, bool decode, gs_merge_split split, size_t *splits,
						int max_passes, int prefetch_blocks, bool use_pdl, gs_merge_order order, uint32_t seed,
						cudaStream_t stream, gs_error *err)
{
	const size_t tiles = (n + S::TILE - 1) / S::TILE;
	const size_t pass_tiles = (n + S::PASS_TILE - 1) / S::PASS_TILE;
	const bool	rand_sort = order == GS_MERGE_ORDER_RANDOM;
	const bool	rand_pass = order == GS_MERGE_ORDER_RANDOM || order == GS_MERGE_ORDER_RANDOM_PASSES;
	const size_t smem = rand_sort
		? gs_merge_tile_smem<K, VALUES, true, S::ITEMS>(gs_merge_sort_extent<true, S::THREADS, S::ITEMS>())
		: gs_merge_tile_smem<K, VALUES, false, S::ITEMS>(S::TILE);
	/* the prefetching and four-way passes keep the fixed order */
	const size_t fixed_pass_smem = gs_merge_tile_smem<K, VALUES, false, S::PASS_ITEMS>(S::PASS_TILE);
	const size_t pass_smem = rand_pass
		? gs_merge_tile_smem<K, VALUES, true, S::PASS_ITEMS>(gs_merge_pass_extent<true, S::PASS_THREADS, S::PASS_ITEMS>())
		: fixed_pass_smem;
	constexpr auto prefetch_kernel = gs_merge_pass_prefetch_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
																 S::PASS_MIN_BLOCKS>;
	constexpr auto sort_kernel = gs_merge_block_sort_kernel<K, VALUES, PAIR, S::THREADS, S::ITEMS, S::MIN_BLOCKS,
															false>;
	constexpr auto rand_sort_kernel = gs_merge_block_sort_kernel<K, VALUES, PAIR, S::THREADS, S::ITEMS,
																 S::MIN_BLOCKS, true>;
	constexpr auto fused_kernel = gs_merge_pass_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
													   S::PASS_MIN_BLOCKS, true, false>;
	constexpr auto split_kernel = gs_merge_pass_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
													   S::SPLIT_MIN_BLOCKS, false, false>;
	/*
	 * The randomized passes keep more live values than 32 registers hold
	 * (28-36 bytes of spills at 8 blocks per SM): at most 6 blocks per SM,
	 * 40 registers (H100, of CUB: int4 keys at 10^7 0.95 -> 0.99, the int4
	 * argsort at 10^8 0.71 -> 0.97).
	 */
	constexpr auto rand_fused_kernel = gs_merge_pass_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
															(S::PASS_MIN_BLOCKS > 6 ? 6 : S::PASS_MIN_BLOCKS), true, true>;
	constexpr auto rand_split_kernel = gs_merge_pass_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
															(S::SPLIT_MIN_BLOCKS > 6 ? 6 : S::SPLIT_MIN_BLOCKS), false, true>;
	const bool	pdl = use_pdl && gs_pdl_supported();
	constexpr auto quad_kernel = gs_merge_quad_pass_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
															S::PASS_MIN_BLOCKS>;
	int			lanes;
	unsigned	partition_blocks,
				prefetch_grid = 0;
	int			passes = 0;
	int			pair_passes;
	int			cur;

	if (pass_tiles > (size_t) INT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE, "merge sort: %zu keys are too many", n);
	while (((size_t) 1 << passes) < tiles)
		passes++;
	split = gs_merge_split_for(split, n, splits != NULL);
	pair_passes = passes;
	if (split == GS_MERGE_SPLIT_QUAD)
	{
		/* log2(tiles) pairwise levels: one fused pairwise pass if odd, then four-way passes */
		pair_passes = passes & 1;
		passes = pair_passes + passes / 2;
		GS_CUDA_CHECK((gs_smem_limit<quad_kernel>(fixed_pass_smem)), err);
	}
	if (split == GS_MERGE_SPLIT_FUSED)
		splits = NULL;
	lanes = split == GS_MERGE_SPLIT_WARP || split == GS_MERGE_SPLIT_QUAD ? 32
		: split == GS_MERGE_SPLIT_LANES8 ? 8 : 1;
	partition_blocks = (unsigned) ((pass_tiles * lanes + 255) / 256);

	if (rand_sort)
		GS_CUDA_CHECK((gs_smem_limit<rand_sort_kernel>(smem)), err);
	else
		GS_CUDA_CHECK((gs_smem_limit<sort_kernel>(smem)), err);
	if (split == GS_MERGE_SPLIT_QUAD)
		GS_CUDA_CHECK((gs_smem_limit<fused_kernel>(fixed_pass_smem)), err);
	else if (splits == NULL)
		GS_CUDA_CHECK(rand_pass ? gs_smem_limit<rand_fused_kernel>(pass_smem) : gs_smem_limit<fused_kernel>(pass_smem),
					  err);
	else if (split != GS_MERGE_SPLIT_PREFETCH)
		GS_CUDA_CHECK(rand_pass ? gs_smem_limit<rand_split_kernel>(pass_smem) : gs_smem_limit<split_kernel>(pass_smem),
					  err);
	else if (passes > 0)
	{
		/* as many persistent blocks as fit at once (two tile buffers each), or fewer if asked */
		int			dev = 0,
					sms = 0,
					per_sm = 0;

		GS_CUDA_CHECK((gs_smem_limit<prefetch_kernel>(2 * fixed_pass_smem)), err);
		GS_CUDA_CHECK(cudaGetDevice(&dev), err);
		GS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err);
		GS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, prefetch_kernel, S::PASS_THREADS,
																	2 * fixed_pass_smem), err);
		prefetch_grid = (unsigned) min((size_t) (per_sm > 0 ? per_sm : 1) * (size_t) sms, pass_tiles);
		if (prefetch_blocks > 0 && (unsigned) prefetch_blocks < prefetch_grid)
			prefetch_grid = (unsigned) prefetch_blocks;
	}

	/*
	 * Programmatic launches for the block sort and the passes; the partition
	 * kernels start as usual, so that their few blocks spread over idle SMs
	 * (launched early, they land on the first SMs the previous pass frees:
	 * argsort and float8 keys measured 1-1.6% slower at 10^8 keys,
	 * bench/NOTES-comparison.md).
	 */
	cur = passes & 1;
	GS_LAUNCH_OK((gs_launch(pdl, rand_sort ? rand_sort_kernel : sort_kernel, (unsigned) tiles, S::THREADS, smem, stream,
							(const K *) keys[0], keys[cur], (const uint32_t *) (VALUES ? vals[0] : NULL),
							VALUES ? vals[cur] : NULL, n, codec, (int) encode, (int) (decode && passes == 0),
							rand_sort ? gs_merge_launch_seed(seed) : 0u)),
				 "merge sort: block sort launch", err);

	for (int p = 0; p < passes && (max_passes < 0 || p < max_passes); p++)
	{
		size_t		run = (size_t) S::TILE << p;
		const K    *kin = keys[cur];
		const uint32_t *vin = VALUES ? vals[cur] : NULL;
		K		   *kout = keys[cur ^ 1];
		uint32_t   *vout = VALUES ? vals[cur ^ 1] : NULL;
		const int	last = decode && p == passes - 1;

		if (p >= pair_passes)
		{
			/* a four-way pass after the pairwise one, if any: four runs of this length merge into one */
			run = (size_t) S::TILE << (pair_passes + 2 * (p - pair_passes));
			GS_LAUNCH_OK((gs_launch(false, gs_merge_quad_partition_kernel<K, PAIR>, partition_blocks, 256, 0,
									stream, kin, vin, n, run, (int) S::PASS_TILE, pass_tiles, splits)),
						 "merge sort: partition launch", err);
			GS_LAUNCH_OK((gs_launch(pdl, quad_kernel, (unsigned) pass_tiles, S::PASS_THREADS, fixed_pass_smem, stream,
									kin, kout, vin, vout, n, run, splits, codec, last)),
						 "merge sort: merge pass launch", err);
			cur ^= 1;
			continue;
		}
		if (split == GS_MERGE_SPLIT_THREAD || split == GS_MERGE_SPLIT_PREFETCH)
			GS_LAUNCH_OK((gs_launch(false, gs_merge_partition_kernel<K, PAIR, 1>, partition_blocks, 256, 0, stream,
									kin, vin, n, run, (int) S::PASS_TILE, pass_tiles, splits)),
						 "merge sort: partition launch", err);
		else if (split == GS_MERGE_SPLIT_LANES8)
			GS_LAUNCH_OK((gs_launch(false, gs_merge_partition_kernel<K, PAIR, 8>, partition_blocks, 256, 0, stream,
									kin, vin, n, run, (int) S::PASS_TILE, pass_tiles, splits)),
						 "merge sort: partition launch", err);
		else if (split == GS_MERGE_SPLIT_WARP)
			GS_LAUNCH_OK((gs_launch(false, gs_merge_partition_kernel<K, PAIR, 32>, partition_blocks, 256, 0, stream,
									kin, vin, n, run, (int) S::PASS_TILE, pass_tiles, splits)),
						 "merge sort: partition launch", err);
		if (split == GS_MERGE_SPLIT_QUAD)
			GS_LAUNCH_OK((gs_launch(pdl, fused_kernel, (unsigned) pass_tiles, S::PASS_THREADS, fixed_pass_smem,
									stream, kin, kout, vin, vout, n, run, (const size_t *) NULL, codec, last, 0u)),
						 "merge sort: merge pass launch", err);
		else if (split == GS_MERGE_SPLIT_PREFETCH)
			GS_LAUNCH_OK((gs_launch(pdl, prefetch_kernel, prefetch_grid, S::PASS_THREADS, 2 * fixed_pass_smem,
									stream, kin, kout, vin, vout, n, run, splits, pass_tiles, codec, last)),
						 "merge sort: merge pass launch", err);
		else
		{
			/* fused when there are no splits to read */
			const bool	fused = splits == NULL;

			GS_LAUNCH_OK((gs_launch(pdl, fused ? (rand_pass ? rand_fused_kernel : fused_kernel)
									: (rand_pass ? rand_split_kernel : split_kernel),
									(unsigned) pass_tiles, S::PASS_THREADS, pass_smem, stream,
									kin, kout, vin, vout, n, run, (const size_t *) splits, codec, last,
									rand_pass ? gs_merge_launch_seed(seed) : 0u)),
						 "merge sort: merge pass launch", err);
		}
		cur ^= 1;
	}
	return GS_OK;
}

/* gs_merge_path_run_shape with the shape picked at run time (the F of gs_merge_with_shape). */
template <typename K, bool VALUES, bool PAIR>
struct gs_merge_path_call
{
	K		  **keys;
	uint32_t  **vals;
	size_t		n;
	gs_key_codec codec;
	bool		encode,
				decode;
	gs_merge_path_options opt;
	size_t	   *splits;
	cudaStream_t stream;
	gs_error   *err;

	template <typename S>
	gs_status	run(void)
	{
		return gs_merge_path_run_shape<K, VALUES, PAIR, S>(keys, vals, n, codec, encode, decode, opt.split,
														   splits, opt.max_passes, opt.prefetch_blocks, opt.pdl != 0,
														   opt.order, opt.seed, stream, err);
	}
};

template <typename K, bool VALUES, bool PAIR>
static gs_status
gs_merge_path_run(K *keys[2], uint32_t *vals[2], size_t n, gs_key_codec codec, bool encode, bool decode,
				  const gs_merge_path_options *opt, size_t *splits, cudaStream_t stream, gs_error *err)
{
	gs_merge_path_call<K, VALUES, PAIR> f = {keys, vals, n, codec, encode, decode, *opt, splits, stream, err};

	return gs_merge_with_shape<K, VALUES>(opt->shape, f);
}

/* Pass tiles of n keys under the current options (the partition kernel writes a split per tile). */
struct gs_merge_pass_tiles
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

/* Temporary memory of the merge-path variant: the splits when a partition kernel writes them. */
static size_t
gs_merge_path_temp_bytes(const gs_gpu_sort_args *args)
{
	gs_merge_pass_tiles f = {args->n, 0};
	int			s = gs_merge_path_current.shape;
	bool		values = args->values[0] != NULL;

	gs_merge_split split = gs_merge_split_for(gs_merge_path_current.split, args->n, true);

	if (gs_merge_current_variant != GS_MERGE_PATH || split == GS_MERGE_SPLIT_FUSED)
		return 256;
	(void) gs_merge_with_width(args->type, values, s, f);
	/* the four-way passes keep three counts per tile */
	return gs_align_up(f.tiles * sizeof(size_t) * (split == GS_MERGE_SPLIT_QUAD ? 3 : 1), 256);
}

#include "merge_bcf.cuh"

template <typename K>
gs_status
gs_merge_sort_ordered(K *keys[2], uint32_t *vals[2], size_t n, bool pair,
					  cudaStream_t stream, gs_error *err)
{
	gs_key_codec codec = {0, 0};
	gs_merge_path_options opt;

	/* no temporary memory here: the fused split and the policy's shape */
	gs_merge_path_default_options(&opt);
	if (n <= 1)
		return GS_OK;
	if (vals == NULL || vals[0] == NULL)
		return gs_merge_path_run<K, false, false>(keys, NULL, n, codec, false, false, &opt, NULL, stream, err);
	if (pair)
		return gs_merge_path_run<K, true, true>(keys, vals, n, codec, false, false, &opt, NULL, stream, err);
	return gs_merge_path_run<K, true, false>(keys, vals, n, codec, false, false, &opt, NULL, stream, err);
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
		return gs_merge_path_run<K, true, false>(keys, vals, args->n, codec, true, true, &gs_merge_path_current,
												 (size_t *) args->temp, stream, err);
	return gs_merge_path_run<K, false, false>(keys, vals, args->n, codec, true, true, &gs_merge_path_current,
											  (size_t *) args->temp, stream, err);
}

extern "C" gs_status
gs_merge_sort_gpu(gs_gpu_sort_args *args, gs_error *err)
{
	size_t		w = gs_type_size(args->type);
	size_t		need;

	if (w == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "merge sort: unknown key type %d", (int) args->type);
	need = gs_merge_bcf_temp_bytes(args);
	if (need < gs_merge_path_temp_bytes(args))
		need = gs_merge_path_temp_bytes(args);
	if (args->temp == NULL)
	{
		/* the merge path's splits (none when fused), or the BCF variant's buffers */
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
