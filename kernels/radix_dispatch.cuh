/*
 * radix_dispatch.cuh: the device-wide layer of the GPU radix sort: the
 * kernels, the layout of the scratch memory, and the host code that plans
 * and launches the passes for a policy (tuning constants, radix_sort.cu).
 * A header so that a benchmark can instantiate other policies to tune them.
 */
#ifndef GPUSORT_RADIX_DISPATCH_CUH
#define GPUSORT_RADIX_DISPATCH_CUH

#include <atomic>
#include <mutex>

#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"
#include "device_internal.h"
#include "radix_agent.cuh"

/*
 * A look-back status word holds 30 bits of count, so passes go over the
 * keys in portions of at most 2^28 keys (whole tiles), one launch each; the
 * last tile of a portion hands the digit offsets on to the next.
 */
#define GS_RADIX_PORTION_LIMIT (UINT32_C(1) << 28)

template <typename KeyT, class Policy>
__global__ void __launch_bounds__(Policy::HIST_THREADS)
gs_radix_histogram_kernel(typename gs_radix_histogram_agent<KeyT, Policy>::params p)
{
	typedef gs_radix_histogram_agent<KeyT, Policy> agent;
	__shared__ typename agent::storage s;

	agent(s, p).process();
}

template <typename KeyT, bool HAS_VALUES, class Policy, int RANK, class Instrument>
__global__ void __launch_bounds__(Policy::THREADS, Policy::MIN_BLOCKS)
gs_radix_onesweep_kernel(gs_radix_pass_params<KeyT> p)
{
	typedef gs_radix_onesweep_agent<KeyT, HAS_VALUES, Policy, RANK, Instrument> agent;
	extern __shared__ __align__(16) unsigned char smem[];
	__shared__ typename agent::static_storage ss;

	agent(p, smem, ss).process();
}

template <typename KeyT, bool HAS_VALUES, int THREADS, int ITEMS, int RANK>
__global__ void __launch_bounds__(THREADS)
gs_radix_block_sort_kernel(gs_radix_block_sort_params<KeyT> p)
{
	typedef gs_radix_block_sort_agent<KeyT, HAS_VALUES, THREADS, ITEMS, RANK> agent;
	extern __shared__ __align__(16) unsigned char smem[];
	__shared__ typename agent::static_storage ss;

	agent(p, smem, ss).process();
}

/*
 * GS_RADIX_RANK_ATOMIC's premise, checked on the device: one warp's
 * shared-memory atomicAdd(address, 1), lanes hitting the same address, must
 * return to those lanes the counter plus the number of lower lanes among
 * them.  Each of 4 warps tries 48 address patterns (all lanes on one word,
 * a few words, words sharing a bank, hashed) three rounds deep;
 * gs_radix_probe_wrong gets the number of lanes that got anything else.
 */
static __device__ uint32_t gs_radix_probe_wrong;

static __global__ void
gs_radix_probe_kernel(void)
{
	__shared__ uint32_t counters[4][64];
	__shared__ uint32_t total;
	const uint32_t lane = gs_lane_id();
	uint32_t   *c = counters[threadIdx.x / 32];
	uint32_t	bad = 0;

	if (threadIdx.x == 0)
		total = 0;
	__syncthreads();

	for (uint32_t pattern = 0; pattern < 48; pattern++)
	{
		const uint32_t words[8] = {1, 2, 3, 4, 7, 32, 33, 64};

		c[lane] = 0;
		c[lane + 32] = 0;
		__syncwarp();
		for (uint32_t round = 0; round < 3; round++)
		{
			uint32_t	x = (lane + 1) * 0x9E3779B9u ^ (pattern + 1) * 0x85EBCA6Bu ^ (round + 1) * 0xC2B2AE35u;
			uint32_t	a;

			x ^= x >> 15;
			switch (pattern % 4)
			{
				case 0:
					a = x % words[pattern / 4 % 8];
					break;
				case 1:
					a = lane / (1 + pattern / 4 % 8);
					break;
				case 2:
					a = (31 - lane) / (1 + pattern / 4 % 8) * 32 % 64;
					break;
				default:
					a = lane % (1 + pattern / 4 % 8) * 32 % 64 + round;
					break;
			}

			uint32_t	peers = __match_any_sync(0xffffffffu, a);
			uint32_t	expect = c[a] + __popc(peers & gs_lanemask_lt());

			__syncwarp();
			bad += atomicAdd(&c[a], 1) != expect;
			__syncwarp();
		}
	}
	if (bad)
		atomicAdd(&total, bad);
	__syncthreads();
	if (threadIdx.x == 0)
		gs_radix_probe_wrong = total;
}

/*
 * What the dispatch needs to know about the device, read once per device by
 * the first thread that sorts there (under gs_radix_devices_lock; ready is
 * set last, with release order, and read with acquire order).
 */
typedef struct gs_radix_device
{
	std::atomic<int> ready;
	int			sm_count;
	bool		atomics_ordered;	/* gs_radix_probe_kernel found no wrong lane */
} gs_radix_device;

#define GS_RADIX_MAX_DEVICES 64

static gs_radix_device gs_radix_devices[GS_RADIX_MAX_DEVICES];
static std::mutex gs_radix_devices_lock;

/*
 * The passes of one policy (radix_policy.cuh).  Instrument: the onesweep
 * agent's (gs_radix_no_instrument in the library; a benchmark's times or
 * changes its steps).
 */
template <typename KeyT, bool HAS_VALUES, class Policy, class Instrument = gs_radix_no_instrument>
struct gs_radix_dispatch
{
	typedef gs_radix_histogram_agent<KeyT, Policy> histogram_agent;
	/* the tile and its shared memory are the same whatever the rank */
	typedef gs_radix_onesweep_agent<KeyT, HAS_VALUES, Policy, GS_RADIX_RANK_BALLOT, Instrument> onesweep_agent;

	/* the rank where the device fails the probe of GS_RADIX_RANK_ATOMIC */
	static constexpr int FALLBACK_RANK = Policy::RANK == GS_RADIX_RANK_ATOMIC ? GS_RADIX_RANK_BALLOT : Policy::RANK;

	static constexpr int BINS = histogram_agent::BINS;
	static constexpr int PASSES = histogram_agent::PASSES;
	static constexpr uint32_t TILE = onesweep_agent::TILE;
	static constexpr uint32_t TILES_PER_PORTION = GS_RADIX_PORTION_LIMIT / TILE;
	static constexpr uint32_t PORTION = TILES_PER_PORTION * TILE;

	/* Where each piece of scratch lies in temp (byte offsets, 256-aligned). */
	struct layout
	{
		uint32_t	tiles;			/* tiles over all n keys */
		uint32_t	portions;
		uint32_t	max_tiles;		/* tiles in the largest portion */
		size_t		hist;			/* [PASSES][BINS] digit counts */
		size_t		blocks_done;	/* the histogram kernel's finishing counter */
		size_t		plan;			/* the histogram's plan: 2 words */
		size_t		tile_counters;	/* one per launch */
		size_t		zeroed_bytes;	/* all of the above, cleared by one memset */
		size_t		bin_base;		/* [PASSES][portions + 1][BINS] */
		size_t		lookback[2];	/* two areas of [max_tiles][BINS], used by turns */
		size_t		total;
	};

	static size_t
	align_up(size_t x)
	{
		return (x + 255) & ~(size_t) 255;
	}

	static layout
	make_layout(uint32_t n)
	{
		layout		l;
		size_t		at = 0;

		l.tiles = (uint32_t) (((uint64_t) n + TILE - 1) / TILE);
		l.portions = (l.tiles + TILES_PER_PORTION - 1) / TILES_PER_PORTION;
		l.max_tiles = l.tiles < TILES_PER_PORTION ? l.tiles : TILES_PER_PORTION;
		l.hist = at;
		at += (size_t) PASSES * BINS * sizeof(uint32_t);
		l.blocks_done = at;
		at += sizeof(uint32_t);
		l.plan = at;
		at += 2 * sizeof(uint32_t);
		l.tile_counters = at;
		at += (size_t) PASSES * l.portions * sizeof(uint32_t);
		l.zeroed_bytes = at;
		at = align_up(at);
		l.bin_base = at;
		at = align_up(at + (size_t) PASSES * (l.portions + 1) * BINS * sizeof(uint32_t));
		for (int a = 0; a < 2; a++)
		{
			l.lookback[a] = at;
			at = align_up(at + (size_t) l.max_tiles * BINS * sizeof(uint32_t));
		}
		l.total = at;
		return l;
	}

	/*
	 * Small sorts, up to Policy::SMALL_MAX keys, run in one block
	 * (gs_radix_block_sort_agent): 256 threads (one per bin) of 4 keys up to
	 * 1024 keys, of 8 up to 2048, 512 of 8 up to 4096, 512 of 16 up to 8192
	 * (1024 threads would cap registers at 64 and spill).  Every key of the
	 * tile, padding included, takes part in every digit's pass, so the
	 * smallest tile that holds the keys is the fastest.
	 */
	typedef gs_radix_block_sort_agent<KeyT, HAS_VALUES, 256, 4, GS_RADIX_RANK_BALLOT> tiny_agent;
	typedef gs_radix_block_sort_agent<KeyT, HAS_VALUES, 256, 8, GS_RADIX_RANK_BALLOT> small_agent;
	typedef gs_radix_block_sort_agent<KeyT, HAS_VALUES, 512, 8, GS_RADIX_RANK_BALLOT> medium_agent;
	typedef gs_radix_block_sort_agent<KeyT, HAS_VALUES, 512, 16, GS_RADIX_RANK_BALLOT> large_agent;

	static_assert(Policy::SMALL_MAX <= large_agent::TILE, "SMALL_MAX fits one block");

	/*
	 * Raises the kernels' dynamic shared memory limits, once per device and
	 * rank.  Each kernel's limit is a constant (its largest launch), so
	 * threads that configure at once set the same values and none is ever
	 * lowered; the bit is set after every value has been.
	 */
	template <int RANK>
	static gs_status
	configure(int device, gs_error *err)
	{
		static std::atomic<uint64_t> configured(0);
		uint64_t	bit = UINT64_C(1) << device;

		if (configured.load(std::memory_order_acquire) & bit)
			return GS_OK;
		GS_CUDA_CHECK(cudaFuncSetAttribute(gs_radix_onesweep_kernel<KeyT, HAS_VALUES, Policy, RANK, Instrument>,
										   cudaFuncAttributeMaxDynamicSharedMemorySize,
										   (int) onesweep_agent::SMEM_BYTES), err);
		GS_CUDA_CHECK(cudaFuncSetAttribute(gs_radix_block_sort_kernel<KeyT, HAS_VALUES, 256, 4, RANK>,
										   cudaFuncAttributeMaxDynamicSharedMemorySize,
										   (int) tiny_agent::SMEM_BYTES), err);
		GS_CUDA_CHECK(cudaFuncSetAttribute(gs_radix_block_sort_kernel<KeyT, HAS_VALUES, 256, 8, RANK>,
										   cudaFuncAttributeMaxDynamicSharedMemorySize,
										   (int) small_agent::SMEM_BYTES), err);
		GS_CUDA_CHECK(cudaFuncSetAttribute(gs_radix_block_sort_kernel<KeyT, HAS_VALUES, 512, 8, RANK>,
										   cudaFuncAttributeMaxDynamicSharedMemorySize,
										   (int) medium_agent::SMEM_BYTES), err);
		GS_CUDA_CHECK(cudaFuncSetAttribute(gs_radix_block_sort_kernel<KeyT, HAS_VALUES, 512, 16, RANK>,
										   cudaFuncAttributeMaxDynamicSharedMemorySize,
										   (int) large_agent::SMEM_BYTES), err);
		configured.fetch_or(bit, std::memory_order_release);
		return GS_OK;
	}

	/* One launch sorts keys[0] (and values[0]) in place; the result is in buffer 0. */
	template <int RANK>
	static gs_status
	sort_small(gs_gpu_sort_args *a, gs_error *err)
	{
		gs_radix_block_sort_params<KeyT> bp;
		cudaStream_t stream = (cudaStream_t) a->stream;

		bp.keys = (KeyT *) a->keys[0];
		bp.values = HAS_VALUES ? a->values[0] : NULL;
		bp.n = (uint32_t) a->n;
		bp.is_float = a->type == GS_FLOAT4 || a->type == GS_FLOAT8;
		bp.descending = a->descending;
		if (a->n <= (size_t) tiny_agent::TILE)
			gs_radix_block_sort_kernel<KeyT, HAS_VALUES, 256, 4, RANK>
				<<<1, 256, tiny_agent::SMEM_BYTES, stream>>>(bp);
		else if (a->n <= (size_t) small_agent::TILE)
			gs_radix_block_sort_kernel<KeyT, HAS_VALUES, 256, 8, RANK>
				<<<1, 256, small_agent::SMEM_BYTES, stream>>>(bp);
		else if (a->n <= (size_t) medium_agent::TILE)
			gs_radix_block_sort_kernel<KeyT, HAS_VALUES, 512, 8, RANK>
				<<<1, 512, medium_agent::SMEM_BYTES, stream>>>(bp);
		else
			gs_radix_block_sort_kernel<KeyT, HAS_VALUES, 512, 16, RANK>
				<<<1, 512, large_agent::SMEM_BYTES, stream>>>(bp);
		GS_CUDA_CHECK(cudaGetLastError(), err);
		a->result_selector = 0;
		return GS_OK;
	}

	/*
	 * Sorts (or answers the size query) with the policy's rank where the
	 * device returned atomics in lane order to gs_radix_probe_kernel, else
	 * with FALLBACK_RANK.
	 */
	static gs_status
	sort(gs_gpu_sort_args *a, int sm_count, int device, bool atomics_ordered, gs_error *err)
	{
		if constexpr (Policy::RANK == GS_RADIX_RANK_ATOMIC)
		{
			if (atomics_ordered)
				return sort_ranked<GS_RADIX_RANK_ATOMIC>(a, sm_count, device, err);
		}
		return sort_ranked<FALLBACK_RANK>(a, sm_count, device, err);
	}

	/*
	 * The size query (a->temp NULL), the small sort in one block, or the
	 * onesweep sort: 1. all digit histograms, the offsets of each digit and
	 * the plan (which digits vary), in one read of the keys; 2. the plan
	 * read on the device or the host; 3. one onesweep pass per digit that
	 * varies.
	 */
	template <int RANK>
	static gs_status
	sort_ranked(gs_gpu_sort_args *a, int sm_count, int device, gs_error *err)
	{
		const layout l = make_layout((uint32_t) a->n);
		const bool	small = a->n <= (size_t) Policy::SMALL_MAX;
		/* the small sort needs no scratch; never 0, so the second call is not a query again */
		const size_t need = small ? 256 : l.total;

		if (a->temp == NULL)
		{
			a->temp_bytes = need;
			return GS_OK;
		}
		if (a->temp_bytes < need)
			return gs_fail(err, GS_ERR_INVALID_ARGUMENT,
						   "temp_bytes is %zu, the radix sort of %zu %s keys needs %zu",
						   a->temp_bytes, a->n, gs_type_name(a->type), need);
		if (configure<RANK>(device, err) != GS_OK)
			return err ? err->status : GS_ERR_CUDA;
		if (small)
			return sort_small<RANK>(a, err);
		GS_CUDA_CHECK(cudaMemsetAsync(a->temp, 0, l.zeroed_bytes, (cudaStream_t) a->stream), err);
		launch_histogram(a, l, sm_count);
		GS_CUDA_CHECK(cudaGetLastError(), err);

		/*
		 * Small sorts cannot afford a round trip to the host: they launch
		 * every pass and let each read the plan on the device
		 * (GS_RADIX_PLAN_DEVICE).  Larger ones wait for the plan on the host
		 * (sort_host_plan).
		 */
		if ((size_t) a->n + 1 <= Policy::SYNC_MIN_KEYS && l.portions == 1)
			return sort_device_plan<RANK>(a, l, err);
		return sort_host_plan<RANK>(a, l, device, err);
	}

	/* the histogram kernel: at most HIST_BLOCKS_PER_SM blocks per SM, each looping over its share */
	static void
	launch_histogram(gs_gpu_sort_args *a, const layout &l, int sm_count)
	{
		unsigned char *temp = (unsigned char *) a->temp;
		typename histogram_agent::params hp;
		const size_t per_block = (size_t) Policy::HIST_THREADS * Policy::HIST_UNROLL * histogram_agent::VEC;
		size_t		blocks = (a->n + per_block - 1) / per_block;
		size_t		full = (size_t) sm_count * Policy::HIST_BLOCKS_PER_SM;

		hp.keys = (const KeyT *) a->keys[0];
		hp.n = (uint32_t) a->n;
		hp.is_float = a->type == GS_FLOAT4 || a->type == GS_FLOAT8;
		hp.descending = a->descending;
		hp.hist = (uint32_t *) (temp + l.hist);
		hp.blocks_done = (uint32_t *) (temp + l.blocks_done);
		hp.bin_base = (uint32_t *) (temp + l.bin_base);
		hp.bin_base_pass_stride = (size_t) (l.portions + 1) * BINS;
		hp.plan = (uint32_t *) (temp + l.plan);
		hp.lookback0 = (uint32_t *) (temp + l.lookback[0]);
		hp.lookback0_words = (size_t) l.max_tiles * BINS;
		if (blocks > full)
			blocks = full;
		gs_radix_histogram_kernel<KeyT, Policy>
			<<<(unsigned) blocks, Policy::HIST_THREADS, 0, (cudaStream_t) a->stream>>>(hp);
	}

	/*
	 * Every pass launched over buffers 0 and 1; each reads the plan, picks
	 * its buffers, and does nothing where its digit is constant, or copies
	 * the keys where that keeps the result in buffer 0.
	 */
	template <int RANK>
	static gs_status
	sort_device_plan(gs_gpu_sort_args *a, const layout &l, gs_error *err)
	{
		unsigned char *temp = (unsigned char *) a->temp;
		uint32_t	launch = 0;

		for (int d = 0; d < PASSES; d++)
			launch_pass<RANK>(a, l, temp, d, 0, 0, GS_RADIX_PLAN_DEVICE, d == 0, d == PASSES - 1,
							  d + 1 < PASSES, &launch, (cudaStream_t) a->stream);
		GS_CUDA_CHECK(cudaGetLastError(), err);
		a->result_selector = 0;
		return GS_OK;
	}

	/*
	 * The first pass launched the device-plan way (GS_RADIX_PLAN_AHEAD: it
	 * does nothing if its digit is constant), and only then the wait for
	 * the plan, which the histogram kernel wrote: the GPU sorts while the
	 * host wakes up, and the host launches just the passes whose digit
	 * varies, one launch per portion.  Past one portion the plan is read
	 * first.
	 */
	template <int RANK>
	static gs_status
	sort_host_plan(gs_gpu_sort_args *a, const layout &l, int device, gs_error *err)
	{
		unsigned char *temp = (unsigned char *) a->temp;
		const int	first_digit = l.portions == 1 ? 1 : 0;
		uint32_t	launch = 0;
		uint32_t	plan = 0;
		int			selector = 0;
		int			done = 0;
		gs_status	s = read_plan<RANK>(a, l, temp, device, &launch, &plan, err);

		if (s != GS_OK)
			return s;

		const int	active = __builtin_popcount(plan);

		if (first_digit == 1 && (plan & 1))
		{
			selector = 1;
			done = 1;
		}
		for (int d = first_digit; d < PASSES; d++)
		{
			if (!(plan & (1u << d)))
				continue;
			for (uint32_t q = 0; q < l.portions; q++)
				launch_pass<RANK>(a, l, temp, d, q, selector, GS_RADIX_PLAN_HOST, done == 0, done == active - 1,
								  q + 1 < l.portions || done + 1 < active, &launch, (cudaStream_t) a->stream);
			GS_CUDA_CHECK(cudaGetLastError(), err);
			selector ^= 1;
			done++;
		}
		a->result_selector = selector;
		return GS_OK;
	}

	/*
	 * Copies the plan (which digits vary) to the host and waits for it; with
	 * one portion the first pass is launched before the wait (PLAN_AHEAD).
	 * The readback is taken for this and handed back after, once nothing is
	 * in flight into it (after an error, once the stream is drained).
	 */
	template <int RANK>
	static gs_status
	read_plan(gs_gpu_sort_args *a, const layout &l, unsigned char *temp, int device, uint32_t *launch,
			  uint32_t *plan, gs_error *err)
	{
		cudaStream_t stream = (cudaStream_t) a->stream;
		gs_readback *rb;
		cudaError_t e;
		const char *what = "cudaMemcpyAsync of the radix sort's plan";

		GS_CUDA_CHECK(gs_readback_acquire(device, &rb), err);
		e = cudaMemcpyAsync(rb->word, temp + l.plan, sizeof(uint32_t), cudaMemcpyDeviceToHost, stream);
		if (e == cudaSuccess && (e = cudaEventRecord(rb->event, stream)) != cudaSuccess)
			what = "cudaEventRecord after the radix sort's plan";
		if (e == cudaSuccess && l.portions == 1)
		{
			launch_pass<RANK>(a, l, temp, 0, 0, 0, GS_RADIX_PLAN_AHEAD, true, false, true, launch, stream);
			if ((e = cudaGetLastError()) != cudaSuccess)
				what = "the radix sort's first pass";
		}
		if (e == cudaSuccess && (e = cudaEventSynchronize(rb->event)) != cudaSuccess)
			what = "cudaEventSynchronize on the radix sort's plan";
		if (e == cudaSuccess)
			*plan = *rb->word;
		else
			(void) cudaStreamSynchronize(stream);
		gs_readback_release(rb);
		return e == cudaSuccess ? GS_OK : gs_cuda_fail(err, e, what);
	}

	/*
	 * Launches the pass over digit d of portion q, reading buffer selector
	 * (with GS_RADIX_PLAN_DEVICE the kernel picks its buffers).  more: a
	 * launch follows, whose status words this one clears.
	 */
	template <int RANK>
	static void
	launch_pass(const gs_gpu_sort_args *a, const layout &l, unsigned char *temp, int d, uint32_t q,
				int selector, int plan_mode, bool first, bool last, bool more, uint32_t *launch,
				cudaStream_t stream)
	{
		const uint32_t n = (uint32_t) a->n;
		uint32_t   *bin_base = (uint32_t *) (temp + l.bin_base);
		uint32_t   *lookback[2] = {(uint32_t *) (temp + l.lookback[0]), (uint32_t *) (temp + l.lookback[1])};
		const size_t bin_base_pass_stride = (size_t) (l.portions + 1) * BINS;
		gs_radix_pass_params<KeyT> pp;
		size_t		start = (size_t) q * PORTION;
		uint32_t	count = (uint32_t) ((size_t) n - start < PORTION ? (size_t) n - start : PORTION);
		uint32_t	tiles = (count + TILE - 1) / TILE;
		/* the next launch covers portion q + 1, or portion 0 of the next pass */
		uint32_t	next_tiles = q + 1 < l.portions ?
			(uint32_t) (((size_t) n - start - count < PORTION ? (size_t) n - start - count : PORTION) + TILE - 1) / TILE :
			l.max_tiles;

		pp.keys_in = (const KeyT *) a->keys[selector] + start;
		pp.keys_out = (KeyT *) a->keys[selector ^ 1];
		pp.values_in = HAS_VALUES ? a->values[selector] + start : NULL;
		pp.values_out = HAS_VALUES ? a->values[selector ^ 1] : NULL;
		pp.n = count;
		pp.digit = d;
		pp.first = first;
		pp.last = last;
		pp.is_float = a->type == GS_FLOAT4 || a->type == GS_FLOAT8;
		pp.descending = a->descending;
		pp.plan_mode = plan_mode;
		pp.plan = (const uint32_t *) (temp + l.plan);
		pp.bin_base_in = bin_base + d * bin_base_pass_stride + (size_t) q * BINS;
		pp.bin_base_out = bin_base + d * bin_base_pass_stride + (size_t) (q + 1) * BINS;
		pp.lookback = lookback[*launch % 2];
		pp.lookback_clear = lookback[(*launch + 1) % 2];
		pp.lookback_clear_words = more ? (size_t) next_tiles * BINS : 0;
		pp.tile_counter = (uint32_t *) (temp + l.tile_counters) + *launch;
		gs_radix_onesweep_kernel<KeyT, HAS_VALUES, Policy, RANK, Instrument>
			<<<tiles, Policy::THREADS, onesweep_agent::SMEM_BYTES, stream>>>(pp);
		(*launch)++;
	}
};

/*
 * Reads device's SM count and runs the probe of GS_RADIX_RANK_ATOMIC on
 * stream (the probe's word is one per device: the caller holds
 * gs_radix_devices_lock).
 */
static inline gs_status
gs_radix_probe_device(int device, gs_radix_device *d, cudaStream_t stream, gs_error *err)
{
	uint32_t	wrong = 1;
	int			sm_count = 0;

	GS_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device), err);
	gs_radix_probe_kernel<<<1, 128, 0, stream>>>();
	GS_CUDA_CHECK(cudaGetLastError(), err);
	GS_CUDA_CHECK(cudaStreamSynchronize(stream), err);
	GS_CUDA_CHECK(cudaMemcpyFromSymbol(&wrong, gs_radix_probe_wrong, sizeof(wrong)), err);
	d->sm_count = sm_count;
	d->atomics_ordered = wrong == 0;
	d->ready.store(1, std::memory_order_release);
	return GS_OK;
}

/*
 * The current device, its SM count, and whether it passes the probe of
 * GS_RADIX_RANK_ATOMIC (run on stream, which it synchronises, the first time
 * a device is seen; one thread probes while the others wait).
 */
static inline gs_status
gs_radix_device_info(int *device, int *sm_count, bool *atomics_ordered, cudaStream_t stream, gs_error *err)
{
	GS_CUDA_CHECK(cudaGetDevice(device), err);
	if (*device < 0 || *device >= GS_RADIX_MAX_DEVICES)
		return gs_fail(err, GS_ERR_NO_DEVICE, "device %d is beyond the %d the radix sort supports",
					   *device, GS_RADIX_MAX_DEVICES);

	gs_radix_device *d = &gs_radix_devices[*device];

	if (!d->ready.load(std::memory_order_acquire))
	{
		std::lock_guard<std::mutex> hold(gs_radix_devices_lock);

		if (!d->ready.load(std::memory_order_relaxed))
		{
			gs_status	s = gs_radix_probe_device(*device, d, stream, err);

			if (s != GS_OK)
				return s;
		}
	}
	*sm_count = d->sm_count;
	*atomics_ordered = d->atomics_ordered;
	return GS_OK;
}

#endif							/* GPUSORT_RADIX_DISPATCH_CUH */
