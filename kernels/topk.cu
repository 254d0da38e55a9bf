/*
 * topk.cu: gs_gpu_topk, the first k elements of the stable sort on device
 * buffers, by radix select: 8-bit digit histograms of the ordered keys
 * (keys.h), most significant first, each counting only the keys that match
 * the digits chosen so far, find the k-th key T exactly; one compaction keeps,
 * in input order, every key below T and the first of those equal to T, k in
 * all; gs_gpu_sort orders those k with their positions (stable, so ties stay
 * in input order).
 *
 * Nothing is read back to the host: the chosen digits and the rank still
 * sought live in a small device struct that each pass reads, so the whole
 * select is queued on the stream.  It reads the n keys once per digit (2, 4
 * or 8 times) and twice more for the compaction, then sorts k elements.
 */
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cub/block/block_scan.cuh>

#include "gpusort.h"
#include "internal.h"
#include "keys.h"

#define GS_TOPK_THREADS		256
#define GS_TOPK_ITEMS		16		/* keys per thread in the compaction */
#define GS_TOPK_TILE		(GS_TOPK_THREADS * GS_TOPK_ITEMS)
#define GS_TOPK_RADIX		256
#define GS_TOPK_SCAN_THREADS 1024
#define GS_TOPK_MAX_GRID	4096	/* histogram blocks (grid-stride beyond) */
#define GS_TOPK_ALIGN		((size_t) 256)

/* The select's progress, on the device. */
struct gs_topk_state
{
	unsigned long long prefix;	/* the digits of T chosen so far, in place */
	unsigned long long want;	/* the rank sought among the keys that match them */
};

template <typename K> struct gs_topk_key_ops;

template <> struct gs_topk_key_ops<uint16_t>
{
	static __device__ __forceinline__ uint64_t key(uint16_t bits, bool is_float, bool desc)
	{
		(void) is_float;
		return gs_to_key16(bits, desc);
	}
};

template <> struct gs_topk_key_ops<uint32_t>
{
	static __device__ __forceinline__ uint64_t key(uint32_t bits, bool is_float, bool desc)
	{
		return gs_to_key32(bits, is_float, desc);
	}
};

template <> struct gs_topk_key_ops<uint64_t>
{
	static __device__ __forceinline__ uint64_t key(uint64_t bits, bool is_float, bool desc)
	{
		return gs_to_key64(bits, is_float, desc);
	}
};

__global__ void
gs_topk_init_kernel(gs_topk_state *state, size_t k)
{
	state->prefix = 0;
	state->want = k;
}

/*
 * The histogram of digit (key >> shift) & 255 over the keys whose digits
 * above it equal the state's prefix.
 */
template <typename K>
__global__ void
__launch_bounds__(GS_TOPK_THREADS)
gs_topk_histogram_kernel(const K *keys, size_t n, int shift, bool is_float, bool desc,
						 const gs_topk_state *state, unsigned int *hist)
{
	__shared__ unsigned int local[GS_TOPK_RADIX];
	const int	key_bits = 8 * (int) sizeof(K);
	uint64_t	above = shift + 8 >= key_bits ? 0 : (~UINT64_C(0) << (shift + 8)) &
		(key_bits == 64 ? ~UINT64_C(0) : ((UINT64_C(1) << key_bits) - 1));
	uint64_t	prefix = state->prefix & above;

	for (int b = threadIdx.x; b < GS_TOPK_RADIX; b += blockDim.x)
		local[b] = 0;
	__syncthreads();
	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
	{
		uint64_t	key = gs_topk_key_ops<K>::key(keys[i], is_float, desc);

		if ((key & above) == prefix)
			atomicAdd(&local[(key >> shift) & (GS_TOPK_RADIX - 1)], 1u);
	}
	__syncthreads();
	for (int b = threadIdx.x; b < GS_TOPK_RADIX; b += blockDim.x)
		if (local[b] != 0)
			atomicAdd(&hist[b], local[b]);
}

/* Picks the bucket that holds the want-th key; one thread (256 buckets). */
__global__ void
gs_topk_choose_kernel(const unsigned int *hist, int shift, gs_topk_state *state)
{
	unsigned long long want = state->want;
	unsigned long long below = 0;
	int			b = 0;

	while (b < GS_TOPK_RADIX - 1 && below + hist[b] < want)
		below += hist[b++];
	state->want = want - below;
	state->prefix |= (unsigned long long) b << shift;
}

/* Per tile: how many keys are below T (high half) and equal to T (low half). */
template <typename K>
__global__ void
__launch_bounds__(GS_TOPK_THREADS)
gs_topk_count_kernel(const K *keys, size_t n, bool is_float, bool desc,
					 const gs_topk_state *state, unsigned long long *tile_counts)
{
	typedef cub::BlockScan<unsigned long long, GS_TOPK_THREADS> block_scan;
	__shared__ typename block_scan::TempStorage scan_storage;
	uint64_t	t = state->prefix;
	size_t		base = (size_t) blockIdx.x * GS_TOPK_TILE;
	unsigned long long mine = 0;
	unsigned long long total;

	for (int j = 0; j < GS_TOPK_ITEMS; j++)
	{
		size_t		i = base + (size_t) j * GS_TOPK_THREADS + threadIdx.x;

		if (i < n)
		{
			uint64_t	key = gs_topk_key_ops<K>::key(keys[i], is_float, desc);

			mine += key < t ? (1ull << 32) : key == t ? 1ull : 0ull;
		}
	}
	block_scan(scan_storage).ExclusiveSum(mine, mine, total);
	if (threadIdx.x == 0)
		tile_counts[blockIdx.x] = total;
}

/* Exclusive sums of the tiles' counts, in place; one block. */
__global__ void
__launch_bounds__(GS_TOPK_SCAN_THREADS)
gs_topk_scan_kernel(unsigned long long *tile_counts, size_t tiles)
{
	typedef cub::BlockScan<unsigned long long, GS_TOPK_SCAN_THREADS> block_scan;
	__shared__ typename block_scan::TempStorage scan_storage;
	size_t		per = (tiles + GS_TOPK_SCAN_THREADS - 1) / GS_TOPK_SCAN_THREADS;
	size_t		begin = threadIdx.x * per;
	size_t		end = begin + per < tiles ? begin + per : tiles;
	unsigned long long sum = 0;
	unsigned long long offset;

	for (size_t i = begin; i < end; i++)
		sum += tile_counts[i];
	block_scan(scan_storage).ExclusiveSum(sum, offset);
	for (size_t i = begin; i < end; i++)
	{
		unsigned long long c = tile_counts[i];

		tile_counts[i] = offset;
		offset += c;
	}
}

/*
 * Writes the selected keys (their bits) and positions in input order: a key
 * below T goes to (keys below T before it) + min(keys equal to T before it,
 * want); a key equal to T is taken while the equal ones before it are fewer
 * than want.  Each thread walks GS_TOPK_ITEMS consecutive keys of the tile,
 * so a block scan of the per-thread counts gives every key its rank.
 */
template <typename K>
__global__ void
__launch_bounds__(GS_TOPK_THREADS)
gs_topk_scatter_kernel(const K *keys, size_t n, bool is_float, bool desc,
					   const gs_topk_state *state, const unsigned long long *tile_offsets,
					   K *out_keys, uint32_t *out_positions)
{
	typedef cub::BlockScan<unsigned long long, GS_TOPK_THREADS> block_scan;
	__shared__ typename block_scan::TempStorage scan_storage;
	uint64_t	t = state->prefix;
	unsigned long long want = state->want;
	size_t		base = (size_t) blockIdx.x * GS_TOPK_TILE + (size_t) threadIdx.x * GS_TOPK_ITEMS;
	unsigned long long mine = 0;
	unsigned long long before;

	for (int j = 0; j < GS_TOPK_ITEMS; j++)
	{
		size_t		i = base + j;

		if (i < n)
		{
			uint64_t	key = gs_topk_key_ops<K>::key(keys[i], is_float, desc);

			mine += key < t ? (1ull << 32) : key == t ? 1ull : 0ull;
		}
	}
	block_scan(scan_storage).ExclusiveSum(mine, before);
	before += tile_offsets[blockIdx.x];
	{
		unsigned long long less = before >> 32;
		unsigned long long equal = before & 0xFFFFFFFFull;

		for (int j = 0; j < GS_TOPK_ITEMS; j++)
		{
			size_t		i = base + j;
			uint64_t	key;

			if (i >= n)
				break;
			key = gs_topk_key_ops<K>::key(keys[i], is_float, desc);
			if (key < t)
			{
				size_t		at = less + (equal < want ? equal : want);

				out_keys[at] = keys[i];
				out_positions[at] = (uint32_t) i;
				less++;
			}
			else if (key == t)
			{
				if (equal < want)
				{
					size_t		at = less + equal;

					out_keys[at] = keys[i];
					out_positions[at] = (uint32_t) i;
				}
				equal++;
			}
		}
	}
}

static size_t
gs_topk_align(size_t x)
{
	return (x + GS_TOPK_ALIGN - 1) & ~(GS_TOPK_ALIGN - 1);
}

/* The temp layout: state, histogram, tile counts, two buffers each of k keys and k positions, the sort's temp. */
struct gs_topk_layout
{
	size_t		state;
	size_t		hist;
	size_t		tiles;
	size_t		keys[2];
	size_t		positions[2];
	size_t		sort_temp;
	size_t		sort_temp_bytes;
	size_t		total;
};

static gs_status
gs_topk_plan(const gs_gpu_topk_args *a, gs_topk_layout *l, gs_error *err)
{
	size_t		w = gs_type_size(a->type);
	size_t		tiles = (a->n + GS_TOPK_TILE - 1) / GS_TOPK_TILE;
	size_t		at = 0;
	gs_gpu_sort_args s;
	gs_status	st;

	memset(&s, 0, sizeof(s));
	s.type = a->type;
	s.n = a->k;
	s.descending = a->descending;
	s.keys[0] = (void *) (1 * GS_TOPK_ALIGN);
	s.keys[1] = (void *) (2 * GS_TOPK_ALIGN);
	s.values[0] = (uint32_t *) (3 * GS_TOPK_ALIGN);
	s.values[1] = (uint32_t *) (4 * GS_TOPK_ALIGN);
	st = gs_gpu_sort(&s, err);
	if (st != GS_OK)
		return st;

	l->state = at;
	at += gs_topk_align(sizeof(gs_topk_state));
	l->hist = at;
	at += gs_topk_align(GS_TOPK_RADIX * sizeof(unsigned int));
	l->tiles = at;
	at += gs_topk_align(tiles * sizeof(unsigned long long));
	for (int i = 0; i < 2; i++)
	{
		l->keys[i] = at;
		at += gs_topk_align(a->k * w);
		l->positions[i] = at;
		at += gs_topk_align(a->k * sizeof(uint32_t));
	}
	l->sort_temp = at;
	l->sort_temp_bytes = s.temp_bytes;
	at += gs_topk_align(s.temp_bytes);
	l->total = at;
	return GS_OK;
}

template <typename K>
static gs_status
gs_topk_select(const gs_gpu_topk_args *a, const gs_topk_layout *l, gs_error *err)
{
	cudaStream_t stream = (cudaStream_t) a->stream;
	char	   *temp = (char *) a->temp;
	gs_topk_state *state = (gs_topk_state *) (temp + l->state);
	unsigned int *hist = (unsigned int *) (temp + l->hist);
	unsigned long long *tile_counts = (unsigned long long *) (temp + l->tiles);
	const K    *keys = (const K *) a->keys_in;
	bool		is_float = a->type == GS_FLOAT4 || a->type == GS_FLOAT8;
	size_t		tiles = (a->n + GS_TOPK_TILE - 1) / GS_TOPK_TILE;
	size_t		hist_blocks = (a->n + GS_TOPK_THREADS - 1) / GS_TOPK_THREADS;
	const int	key_bits = 8 * (int) sizeof(K);

	if (hist_blocks > GS_TOPK_MAX_GRID)
		hist_blocks = GS_TOPK_MAX_GRID;
	gs_topk_init_kernel<<<1, 1, 0, stream>>>(state, a->k);
	for (int shift = key_bits - 8; shift >= 0; shift -= 8)
	{
		GS_CUDA_CHECK(cudaMemsetAsync(hist, 0, GS_TOPK_RADIX * sizeof(unsigned int), stream),
					  err);
		gs_topk_histogram_kernel<K><<<(unsigned) hist_blocks, GS_TOPK_THREADS, 0, stream>>>(
			keys, a->n, shift, is_float, a->descending, state, hist);
		gs_topk_choose_kernel<<<1, 1, 0, stream>>>(hist, shift, state);
	}
	gs_topk_count_kernel<K><<<(unsigned) tiles, GS_TOPK_THREADS, 0, stream>>>(
		keys, a->n, is_float, a->descending, state, tile_counts);
	gs_topk_scan_kernel<<<1, GS_TOPK_SCAN_THREADS, 0, stream>>>(tile_counts, tiles);
	gs_topk_scatter_kernel<K><<<(unsigned) tiles, GS_TOPK_THREADS, 0, stream>>>(
		keys, a->n, is_float, a->descending, state, tile_counts,
		(K *) (temp + l->keys[0]), (uint32_t *) (temp + l->positions[0]));
	GS_CUDA_CHECK(cudaGetLastError(), err);
	return GS_OK;
}

extern "C" gs_status
gs_gpu_topk(gs_gpu_topk_args *args, gs_error *err)
{
	gs_topk_layout l;
	gs_gpu_sort_args s;
	size_t		w;
	gs_status	st;
	char	   *temp;

	if (args == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "args is NULL");
	w = gs_type_size(args->type);
	if (w == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "unknown element type %d", (int) args->type);
	if (args->n > UINT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE, "a top-k takes at most %u elements, not %zu",
					   UINT32_MAX, args->n);
	if (args->k > args->n)
		args->k = args->n;
	if (args->k == 0)
	{
		if (args->temp == NULL)
			args->temp_bytes = 0;
		return GS_OK;
	}
	if ((st = gs_topk_plan(args, &l, err)) != GS_OK)
		return st;
	if (args->temp == NULL)
	{
		args->temp_bytes = l.total;
		return GS_OK;
	}
	if (args->temp_bytes < l.total)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "temp has %zu bytes, the top-k needs %zu",
					   args->temp_bytes, l.total);
	if (args->keys_in == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "keys_in is NULL");
	if (args->keys_out == NULL && args->positions_out == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "neither keys nor positions are wanted");

	if (w == 2)
		st = gs_topk_select<uint16_t>(args, &l, err);
	else if (w == 4)
		st = gs_topk_select<uint32_t>(args, &l, err);
	else
		st = gs_topk_select<uint64_t>(args, &l, err);
	if (st != GS_OK)
		return st;

	/* order the k selected, positions along (stable: they are in input order) */
	temp = (char *) args->temp;
	memset(&s, 0, sizeof(s));
	s.type = args->type;
	s.n = args->k;
	s.descending = args->descending;
	s.keys[0] = temp + l.keys[0];
	s.keys[1] = temp + l.keys[1];
	s.values[0] = (uint32_t *) (temp + l.positions[0]);
	s.values[1] = (uint32_t *) (temp + l.positions[1]);
	s.temp = temp + l.sort_temp;
	s.temp_bytes = l.sort_temp_bytes;
	s.stream = args->stream;
	if ((st = gs_gpu_sort(&s, err)) != GS_OK)
		return st;
	args->algorithm_used = s.algorithm_used;

	if (args->keys_out != NULL)
		GS_CUDA_CHECK(cudaMemcpyAsync(args->keys_out, s.keys[s.result_selector], args->k * w,
									  cudaMemcpyDeviceToDevice, (cudaStream_t) args->stream), err);
	if (args->positions_out != NULL)
		GS_CUDA_CHECK(cudaMemcpyAsync(args->positions_out, s.values[s.result_selector],
									  args->k * sizeof(uint32_t), cudaMemcpyDeviceToDevice,
									  (cudaStream_t) args->stream), err);
	return GS_OK;
}
