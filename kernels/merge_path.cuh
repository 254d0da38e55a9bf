/*
 * merge_path.cuh: the kernels and launch steps of the merge-path merge sort
 * (merge_sort.cu), after the Thrust / Modern GPU design that "Engineering
 * Worst-Case Inputs for Pairwise Merge Sort on GPUs" (Berney) analyses:
 * each block sorts a tile of b*E keys (E per thread in registers by a
 * sorting network, then log2(b) merge-path rounds in shared memory); then
 * log2(tiles) pairwise passes each merge runs of L into runs of 2L, one block
 * per output tile: the tile's split of the two runs is found by a merge-path
 * search in global memory (by the pass block itself, or beforehand by a
 * partition kernel), the block stages both pieces in shared memory and every
 * thread merges E outputs.  Stable (ties go to the left run).
 *
 * The merge order is randomized under a seed drawn per launch
 * (merge_block.cuh), so that no input can make the threads of a warp read
 * one shared-memory bank at every step, which Berney's worst-case inputs do
 * to the fixed order.
 *
 * Internal to kernels/; bench/merge_variants/ builds the benchmarked
 * alternatives (other shapes, splits and merge orders) on these pieces.
 */
#ifndef GPUSORT_MERGE_PATH_CUH
#define GPUSORT_MERGE_PATH_CUH

#include <stdint.h>
#include <atomic>
#include <chrono>

#include "merge_block.cuh"
#include "merge_common.cuh"

/*
 * A shape of the sort: the block sort's threads and items per thread (b, E)
 * and the merge passes' (b, E), with a floor on the passes' resident blocks
 * per SM (0 = none).  The passes may use other (b, E) than the block sort: a
 * pass block merges whatever part of two runs its output tile needs, so only
 * its tile must divide twice the block sort's tile (a pass tile then never
 * straddles two pairs of runs).
 */
template <int SORT_THREADS_, int SORT_ITEMS_, int PASS_THREADS_, int PASS_ITEMS_, int PASS_MIN_BLOCKS_>
struct gs_merge_shape
{
	static constexpr int THREADS = SORT_THREADS_;
	static constexpr int ITEMS = SORT_ITEMS_;
	static constexpr int TILE = THREADS * ITEMS;
	static constexpr int PASS_THREADS = PASS_THREADS_;
	static constexpr int PASS_ITEMS = PASS_ITEMS_;
	static constexpr int PASS_MIN_BLOCKS = PASS_MIN_BLOCKS_;
	static constexpr int PASS_TILE = PASS_THREADS * PASS_ITEMS;
	static_assert((2 * TILE) % PASS_TILE == 0, "a pass tile must divide twice the block sort's tile");
};

/*
 * The shape of each key width, with values or not, for sm_90 (CUB style:
 * retuning touches no algorithm code).  E is odd so that E and the 32 banks
 * are co-prime: with even E sorted input would already be a worst case
 * (Berney, section III); 64-bit keys take two banks each, so E odd again
 * avoids the half-warp pattern.  32-bit keys alone sort tiles of 1024 x 15
 * keys (one merge pass fewer than 512 x 15 for a tenth block-sort round).
 * The passes of the measured widths (32-bit keys, 64-bit keys alone) take
 * blocks of 256 threads, at least 6 resident per SM (40 registers: the
 * randomized merge keeps more live values than 32 registers hold); the
 * others keep 512 threads and no floor.  bench/NOTES-comparison.md has the
 * measurements behind each number.
 */
template <typename K, bool VALUES>
struct gs_merge_policy
{
	static constexpr int ITEMS = sizeof(K) == 8 ? (VALUES ? 9 : 11) : (VALUES ? 11 : 15);
	static constexpr bool MEASURED = sizeof(K) == 4 || (sizeof(K) == 8 && !VALUES);
	typedef gs_merge_shape<sizeof(K) == 4 && !VALUES ? 1024 : 512, ITEMS,
						   MEASURED ? 256 : 512, ITEMS, MEASURED ? 6 : 0> shape;
};

/*
 * From this many keys the passes read their splits from a partition kernel
 * (one binary search per tile, written to temporary memory) instead of
 * searching for them in the pass block: the partition kernel's fixed cost a
 * pass is paid back from about 3-4 * 10^7 keys.  Below, and whenever the
 * caller gives no temporary memory, the pass blocks search (fused).
 */
#define GS_MERGE_PARTITION_MIN ((size_t) 40000000)

/* Merge passes after a block sort into tiles blocks: log2(tiles), rounded up. */
static inline int
gs_merge_pass_count(size_t tiles)
{
	int			passes = 0;

	while (((size_t) 1 << passes) < tiles)
		passes++;
	return passes;
}

/*
 * Elements of a tile's key array in shared memory before its values start
 * (the values array is as long): the room before the tile that a backward
 * merge reads, the tile, and after it the right runs' shifts and the
 * merge's over-read (merge_block.cuh).  A multiple of 8 elements, so that
 * the values after 2-byte keys are aligned.
 */
template <int THREADS, int ITEMS>
static __host__ __device__ constexpr int
gs_merge_sort_extent(void)
{
	return (gs_merge_front_pad<ITEMS>() + THREADS * ITEMS + gs_block_rand_room<THREADS, ITEMS>() + 7) / 8 * 8;
}

template <int THREADS, int ITEMS>
static __host__ __device__ constexpr int
gs_merge_pass_extent(void)
{
	return (gs_merge_front_pad<ITEMS>() + THREADS * ITEMS + GS_MERGE_MAX_DELTA + ITEMS + 1 + 7) / 8 * 8;
}

/* Shared memory of a tile whose key array has extent elements (and the values as many, with VALUES). */
template <typename K, bool VALUES>
static constexpr size_t
gs_merge_tile_smem(int extent)
{
	return (size_t) extent * (sizeof(K) + (VALUES ? sizeof(uint32_t) : 0));
}

/*
 * Resident blocks per SM the block sort asks the compiler for: for 32-bit
 * keys alone a full SM of threads (32 registers), which the randomized
 * order's extra live values would otherwise halve; no floor for the others.
 */
template <typename K, bool VALUES, int THREADS>
static constexpr int
gs_merge_sort_min_blocks(void)
{
	return sizeof(K) == 4 && !VALUES ? 2048 / THREADS : 0;
}

/*
 * The merge order's seed for one kernel launch: from a process-wide sequence
 * started from the clock and the sequence's address, so that no input can
 * know it.
 */
static std::atomic<uint64_t> gs_merge_seed_sequence{0};

static uint32_t
gs_merge_launch_seed(void)
{
	uint64_t	x = gs_merge_seed_sequence.fetch_add(0x9E3779B97F4A7C15ull, std::memory_order_relaxed);

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
 * Device steps
 * ------------------------------------------------------------------------ */

/*
 * A block sort's load of its tile of count keys from base (coalesced,
 * striped) into sk/sv, with the key transform when encode.  The last,
 * partial tile is padded with the largest key; padding sorts after real
 * keys equal to it because the sort is stable and padding comes last.
 */
template <typename K, bool VALUES, int THREADS, int ITEMS>
static __device__ __forceinline__ void
gs_merge_tile_load(const K *keys_in, const uint32_t *vals_in, size_t base, int count, bool encode,
				   gs_key_codec codec, K *sk, uint32_t *sv)
{
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
}

/* The block sort's store of its sorted tile's count real keys to base (coalesced), decoded if decode. */
template <typename K, bool VALUES, int THREADS, int ITEMS>
static __device__ __forceinline__ void
gs_merge_tile_store(const K *sk, const uint32_t *sv, size_t base, int count, bool decode, gs_key_codec codec,
					K *keys_out, uint32_t *vals_out)
{
	const int	tid = threadIdx.x;

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

/* Where pass tile t of a pass lies in its pair of runs (from the kernel's parameters alone). */
struct gs_merge_span
{
	size_t		out_begin,
				pair_start,
				a_end,			/* end of the left run, start of the right one */
				la,				/* the two runs' lengths */
				lb,
				diag0,			/* the tile's first and last output within the pair, plus one */
				diag1;
	int			total;			/* outputs of the tile */
};

/* Where pass tile t of a pass lies: its place in the output, its two pieces and its length. */
struct gs_merge_tile
{
	size_t		out_begin,
				a0,				/* first key of the left piece */
				b0;				/* first key of the right piece */
	int			total,			/* outputs of the tile */
				na;				/* of them from the left run */
};

/*
 * The span of pass tile t of tile keys in the pass that merges runs of
 * length run into runs of 2*run.  It reads no memory, so that a pass kernel
 * computes it before gs_pdl_wait(), while the kernel before it finishes.
 */
static __device__ __forceinline__ gs_merge_span
gs_merge_tile_span(size_t t, int tile, size_t n, size_t run)
{
	gs_merge_span p;
	size_t		b_end;

	p.out_begin = t * (size_t) tile;
	p.pair_start = p.out_begin / (2 * run) * (2 * run);
	p.a_end = min(p.pair_start + run, n);
	b_end = min(p.pair_start + 2 * run, n);
	p.la = p.a_end - p.pair_start;
	p.lb = b_end - p.a_end;
	p.diag0 = p.out_begin - p.pair_start;
	p.diag1 = min(p.diag0 + tile, p.la + p.lb);
	p.total = (int) (p.diag1 - p.diag0);
	return p;
}

/* A pass tile's split of its pair: where it starts in the left run, and how many of its outputs come from there. */
struct gs_merge_cut
{
	size_t		split0;
	int			na;
};

/*
 * The cut of pass tile t, whose span is p: its start and end in the left
 * run (its merge-path split) come from splits[] (the partition kernel's; a
 * tile that ends its pair ends at the left run's end), or, when FUSED, are
 * searched here by warps 0 and 1 while the other warps wait (every thread
 * of the block calls it then).
 */
template <typename K, bool PAIR, bool FUSED>
static __device__ __forceinline__ gs_merge_cut
gs_merge_tile_split(const gs_merge_span &p, size_t t, const K *keys, const uint32_t *vals, const size_t *splits)
{
	gs_merge_cut c;
	size_t		split1;

	if constexpr (!FUSED)
	{
		/* the same two addresses for every thread: one load per warp each */
		c.split0 = splits[t];
		split1 = p.diag1 == p.la + p.lb ? p.la : splits[t + 1];
	}
	else
	{
		__shared__ size_t split_found[2];
		const int	tid = threadIdx.x;

		if (tid < 64)
		{
			size_t		d = tid < 32 ? p.diag0 : p.diag1;
			size_t		s = gs_group_merge_path<K, PAIR, 32>(keys + p.pair_start, vals + p.pair_start, p.la,
															 keys + p.a_end, vals + p.a_end, p.lb, d);

			if ((tid & 31) == 0)
				split_found[tid >> 5] = s;
		}
		__syncthreads();
		c.split0 = split_found[0];
		split1 = split_found[1];
	}
	c.na = (int) (split1 - c.split0);
	return c;
}

/* The tile of span p cut at c. */
static __device__ __forceinline__ gs_merge_tile
gs_merge_tile_at(const gs_merge_span &p, const gs_merge_cut &c)
{
	gs_merge_tile g;

	g.out_begin = p.out_begin;
	g.a0 = p.pair_start + c.split0;
	g.b0 = p.a_end + (p.diag0 - c.split0);
	g.total = p.total;
	g.na = c.na;
	return g;
}

/* gs_merge_tile_split of pass tile t of tile keys in the pass over runs of length run. */
template <typename K, bool PAIR, bool FUSED>
static __device__ __forceinline__ gs_merge_tile
gs_merge_tile_find(size_t t, int tile, const K *keys, const uint32_t *vals, size_t n, size_t run,
				   const size_t *splits)
{
	const gs_merge_span p = gs_merge_tile_span(t, tile, n, run);

	return gs_merge_tile_at(p, gs_merge_tile_split<K, PAIR, FUSED>(p, t, keys, vals, splits));
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
		 * the warp keeps the forward stride (ITEMS: no bank conflict).
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
	gs_merge_tile_store<K, VALUES, THREADS, ITEMS>(sk, sv, 0, total, decode, codec, keys_out, vals_out);
}

/*
 * The start of a pass tile: its total keys, the first na from the left run
 * at a0 and the rest from the right run at b0, into sk/sv (left piece
 * first, the right one gap elements after its end), striped over the
 * block.  FULL_PATH: a full tile skips the bound test per key (fewer
 * registers in the pass kernel of 32-bit keys alone).  SELECT: offsets
 * within the tile are 32-bit and one select picks the source pointer (the
 * right piece's is set back by na); otherwise a 64-bit index per key, which
 * takes fewer registers where the pass block searches for its split itself
 * and there are no values.
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

/* ------------------------------------------------------------------------
 * Kernels
 * ------------------------------------------------------------------------ */

/*
 * Block sort of one tile: load with the key transform, sort in shared
 * memory (merge_block.cuh, the merge order randomized under seed), store
 * with the inverse transform if this is the last step.
 */
template <typename K, bool VALUES, bool PAIR, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS, gs_merge_sort_min_blocks<K, VALUES, THREADS>())
gs_merge_block_sort_kernel(const K *keys_in, K *keys_out,
						   const uint32_t *vals_in, uint32_t *vals_out,
						   size_t n, gs_key_codec codec, int encode, int decode, uint32_t seed)
{
	constexpr int TILE = THREADS * ITEMS;
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem + gs_merge_front_pad<ITEMS>();
	uint32_t   *sv = (uint32_t *) ((K *) gs_smem + gs_merge_sort_extent<THREADS, ITEMS>()) +
		gs_merge_front_pad<ITEMS>();
	const size_t base = (size_t) blockIdx.x * TILE;
	const int	count = (int) min((size_t) TILE, n - base);

	gs_pdl_wait();
	gs_merge_tile_load<K, VALUES, THREADS, ITEMS>(keys_in, vals_in, base, count, encode, codec, sk, sv);
	__syncthreads();
	gs_pdl_trigger();
	gs_block_merge_sort_rand<K, THREADS, ITEMS, VALUES, PAIR>(sk, sv, seed);
	gs_merge_tile_store<K, VALUES, THREADS, ITEMS>(sk, sv, base, count, decode, codec, keys_out, vals_out);
}

/*
 * Where each output tile of a merge pass starts in the left run of its pair
 * (its merge-path split), for the pass that merges runs of length run into
 * runs of 2*run: splits[g] for tile g of tile keys.  LANES lanes search for
 * one tile (1: a binary search per thread).  Its blocks let the pass launch
 * as soon as they run (gs_pdl_trigger): the pass's blocks then wait,
 * resident, for the splits.
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
 * One pairwise merge pass: sorted runs of length run become runs of 2*run.
 * Block = one output tile of THREADS*ITEMS elements, which never straddles
 * two pairs (2*run is a multiple of the tile); its split comes from splits[]
 * or, FUSED, from the block's own search (gs_merge_tile_split).  The block
 * stages the right piece a random 0 .. 31 elements after the left one, each
 * thread merges its ITEMS outputs forwards or backwards (drawn under seed,
 * merge_block.cuh), and the tile goes out coalesced.  Like every kernel of
 * this sort, it waits for the kernel before it (gs_pdl_wait) before
 * touching global memory, and lets the next one launch at once.  At 40
 * registers ptxas schedules the staging's loads differently from one
 * order of these steps to the next: this order keeps more of them in
 * flight (the tile's span before the wait, the merge order's draw after
 * the split).
 */
template <typename K, bool VALUES, bool PAIR, int THREADS, int ITEMS, int MIN_BLOCKS, bool FUSED>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
gs_merge_pass_kernel(const K *keys_in, K *keys_out,
					 const uint32_t *vals_in, uint32_t *vals_out,
					 size_t n, size_t run, const size_t *splits, gs_key_codec codec, int decode, uint32_t seed)
{
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem + gs_merge_front_pad<ITEMS>();
	uint32_t   *sv = (uint32_t *) ((K *) gs_smem + gs_merge_pass_extent<THREADS, ITEMS>()) +
		gs_merge_front_pad<ITEMS>();
	const int	tid = threadIdx.x;
	/* from the parameters alone: worked out while the kernel before finishes */
	const gs_merge_span span = gs_merge_tile_span(blockIdx.x, THREADS * ITEMS, n, run);
	gs_merge_cut cut;
	gs_merge_tile g;
	K			k[ITEMS];
	uint32_t	v[ITEMS];
	int			delta,
				d;
	bool		back;

	gs_pdl_wait();
	gs_pdl_trigger();
	cut = gs_merge_tile_split<K, PAIR, FUSED>(span, blockIdx.x, keys_in, vals_in, splits);
	/* drawn after the split: drawn before, it made the staging wait on its first loads one at a time */
	delta = (int) (gs_merge_rand_bits(seed, blockIdx.x, THREADS) & GS_MERGE_MAX_DELTA);
	d = tid * ITEMS;
	g = gs_merge_tile_at(span, cut);
	gs_load_pieces<K, VALUES, THREADS, ITEMS, VALUES || !FUSED, !VALUES && sizeof(K) == 4>(
		keys_in, vals_in, g.a0, g.b0, g.na, g.total, sk, sv, delta);
	__syncthreads();
	/* drawn after the staging, which is short of registers; the tile's last thread (fewer than ITEMS outputs) goes forwards */
	back = (gs_merge_rand_bits(seed, blockIdx.x, tid) & 1) && d + ITEMS <= g.total;
	if (d < g.total)
		gs_merge_dir_items<K, ITEMS, VALUES, PAIR>(sk, sv, 0, g.na, g.na + delta, g.total - g.na, d,
												   min(d + ITEMS, g.total), back, k, v);
	gs_store_merged<K, VALUES, THREADS, ITEMS>(sk, sv, k, v, g.total, keys_out + g.out_begin,
											  vals_out + g.out_begin, decode, codec, back);
}

/* ------------------------------------------------------------------------
 * Launch steps (host)
 * ------------------------------------------------------------------------ */

/*
 * The block sort of shape S: keys_in's n keys sorted tile by tile into
 * keys_out (and values likewise when VALUES), encoded first if encode,
 * decoded at the end if decode.  pdl: a programmatic launch (the caller
 * checked gs_pdl_supported()).
 */
template <typename K, bool VALUES, bool PAIR, typename S>
static gs_status
gs_merge_launch_block_sort(const K *keys_in, K *keys_out, const uint32_t *vals_in, uint32_t *vals_out, size_t n,
						   gs_key_codec codec, bool encode, bool decode, bool pdl, uint32_t seed,
						   cudaStream_t stream, gs_error *err)
{
	constexpr auto kernel = gs_merge_block_sort_kernel<K, VALUES, PAIR, S::THREADS, S::ITEMS>;
	const size_t smem = gs_merge_tile_smem<K, VALUES>(gs_merge_sort_extent<S::THREADS, S::ITEMS>());
	const unsigned tiles = (unsigned) ((n + S::TILE - 1) / S::TILE);

	GS_CUDA_CHECK(gs_smem_limit<kernel>(smem), err);
	GS_LAUNCH_OK((gs_launch(pdl, kernel, tiles, S::THREADS, smem, stream, keys_in, keys_out, vals_in, vals_out,
							n, codec, (int) encode, (int) decode, seed)),
				 "merge sort: block sort launch", err);
	return GS_OK;
}

/*
 * The partition kernel before a pass of pass tiles of tile keys over runs
 * of length run (LANES lanes a split).  A plain launch, so that its few
 * blocks spread over idle SMs (launched early, they land on the first SMs
 * the previous pass frees).
 */
template <typename K, bool PAIR, int LANES>
static gs_status
gs_merge_launch_partition(const K *keys, const uint32_t *vals, size_t n, size_t run, int tile, size_t *splits,
						  cudaStream_t stream, gs_error *err)
{
	const size_t tiles = (n + tile - 1) / tile;

	GS_LAUNCH_OK((gs_launch(false, gs_merge_partition_kernel<K, PAIR, LANES>,
							(unsigned) ((tiles * LANES + 255) / 256), 256, 0, stream,
							keys, vals, n, run, tile, tiles, splits)),
				 "merge sort: partition launch", err);
	return GS_OK;
}

/*
 * One merge pass of shape S over runs of length run, from keys_in to
 * keys_out; splits: the partition kernel's, or NULL for the fused search.
 */
template <typename K, bool VALUES, bool PAIR, typename S>
static gs_status
gs_merge_launch_pass(const K *keys_in, K *keys_out, const uint32_t *vals_in, uint32_t *vals_out, size_t n,
					 size_t run, const size_t *splits, gs_key_codec codec, bool decode, bool pdl, uint32_t seed,
					 cudaStream_t stream, gs_error *err)
{
	constexpr auto fused = gs_merge_pass_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
												S::PASS_MIN_BLOCKS, true>;
	constexpr auto split = gs_merge_pass_kernel<K, VALUES, PAIR, S::PASS_THREADS, S::PASS_ITEMS,
												S::PASS_MIN_BLOCKS, false>;
	const size_t smem = gs_merge_tile_smem<K, VALUES>(gs_merge_pass_extent<S::PASS_THREADS, S::PASS_ITEMS>());
	const unsigned tiles = (unsigned) ((n + S::PASS_TILE - 1) / S::PASS_TILE);

	GS_CUDA_CHECK(splits == NULL ? gs_smem_limit<fused>(smem) : gs_smem_limit<split>(smem), err);
	GS_LAUNCH_OK((gs_launch(pdl, splits == NULL ? fused : split, tiles, S::PASS_THREADS, smem, stream,
							keys_in, keys_out, vals_in, vals_out, n, run, splits, codec, (int) decode, seed)),
				 "merge sort: merge pass launch", err);
	return GS_OK;
}

#endif							/* GPUSORT_MERGE_PATH_CUH */
