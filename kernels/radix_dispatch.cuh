/*
 * radix_dispatch.cuh: the device-wide layer of the GPU radix sort: the
 * kernels, the layout of the scratch memory, and the host code that plans
 * and launches the passes for a policy (tuning constants, radix_sort.cu).
 * A header so that a benchmark can instantiate other policies to tune them.
 */
#ifndef GPUSORT_RADIX_DISPATCH_CUH
#define GPUSORT_RADIX_DISPATCH_CUH

#include <atomic>

#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"
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

	agent(s, p).run();
}

template <typename KeyT, bool HAS_VALUES, class Policy>
__global__ void __launch_bounds__(Policy::THREADS, Policy::MIN_BLOCKS)
gs_radix_onesweep_kernel(gs_radix_pass_params<KeyT> p)
{
	typedef gs_radix_onesweep_agent<KeyT, HAS_VALUES, Policy> agent;
	extern __shared__ __align__(16) unsigned char smem[];
	__shared__ typename agent::static_storage ss;

	agent::run(p, smem, ss);
}

/* What the dispatch needs to know about the device, read once per device. */
typedef struct gs_radix_device
{
	std::atomic<int> ready;
	int			sm_count;
} gs_radix_device;

#define GS_RADIX_MAX_DEVICES 64

static gs_radix_device gs_radix_devices[GS_RADIX_MAX_DEVICES];

template <typename KeyT, bool HAS_VALUES, class Policy>
struct gs_radix_dispatch
{
	typedef gs_radix_histogram_agent<KeyT, Policy> histogram_agent;
	typedef gs_radix_onesweep_agent<KeyT, HAS_VALUES, Policy> onesweep_agent;

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
		size_t		plan;			/* the pass mask read back by the host */
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
		at += sizeof(uint32_t);
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

	/* Raises the kernel's dynamic shared memory limit, once per device. */
	static gs_status
	configure(int device, gs_error *err)
	{
		static std::atomic<uint64_t> configured(0);
		uint64_t	bit = UINT64_C(1) << device;

		if (configured.load(std::memory_order_relaxed) & bit)
			return GS_OK;
		GS_CUDA_CHECK(cudaFuncSetAttribute(gs_radix_onesweep_kernel<KeyT, HAS_VALUES, Policy>,
										   cudaFuncAttributeMaxDynamicSharedMemorySize,
										   (int) onesweep_agent::SMEM_BYTES), err);
		configured.fetch_or(bit, std::memory_order_relaxed);
		return GS_OK;
	}

	static gs_status
	sort(gs_gpu_sort_args *a, int sm_count, int device, gs_error *err)
	{
		const uint32_t n = (uint32_t) a->n;
		const layout l = make_layout(n);
		const bool	is_float = a->type == GS_FLOAT4 || a->type == GS_FLOAT8;
		cudaStream_t stream = (cudaStream_t) a->stream;
		unsigned char *temp = (unsigned char *) a->temp;
		uint32_t   *hist = (uint32_t *) (temp + l.hist);
		uint32_t   *bin_base = (uint32_t *) (temp + l.bin_base);
		uint32_t   *tile_counters = (uint32_t *) (temp + l.tile_counters);
		uint32_t   *lookback[2] = {(uint32_t *) (temp + l.lookback[0]), (uint32_t *) (temp + l.lookback[1])};
		const size_t bin_base_pass_stride = (size_t) (l.portions + 1) * BINS;
		uint32_t	plan = 0;

		if (a->temp == NULL)
		{
			a->temp_bytes = l.total;
			return GS_OK;
		}
		if (a->temp_bytes < l.total)
			return gs_fail(err, GS_ERR_INVALID_ARGUMENT,
						   "temp_bytes is %zu, the radix sort of %zu %s keys needs %zu",
						   a->temp_bytes, a->n, gs_type_name(a->type), l.total);
		if (configure(device, err) != GS_OK)
			return err ? err->status : GS_ERR_CUDA;

		/* 1. all digit histograms, the offsets of each digit, and the plan */
		GS_CUDA_CHECK(cudaMemsetAsync(temp, 0, l.zeroed_bytes, stream), err);
		{
			typename histogram_agent::params hp;
			const size_t per_block = (size_t) Policy::HIST_THREADS * Policy::HIST_UNROLL * histogram_agent::VEC;
			size_t		blocks = (n + per_block - 1) / per_block;
			size_t		full = (size_t) sm_count * Policy::HIST_BLOCKS_PER_SM;

			hp.keys = (const KeyT *) a->keys[0];
			hp.n = n;
			hp.is_float = is_float;
			hp.descending = a->descending;
			hp.hist = hist;
			hp.blocks_done = (uint32_t *) (temp + l.blocks_done);
			hp.bin_base = bin_base;
			hp.bin_base_pass_stride = bin_base_pass_stride;
			hp.plan = (uint32_t *) (temp + l.plan);
			hp.lookback0 = lookback[0];
			hp.lookback0_words = (size_t) l.max_tiles * BINS;
			if (blocks > full)
				blocks = full;
			gs_radix_histogram_kernel<KeyT, Policy><<<(unsigned) blocks, Policy::HIST_THREADS, 0, stream>>>(hp);
			GS_CUDA_CHECK(cudaGetLastError(), err);
		}

		/*
		 * 2. which digits vary.  Large sorts read the plan back (one stream
		 * sync and a 4-byte copy) and launch only those passes.  Small sorts
		 * cannot afford the round trip: they launch every pass, and a pass
		 * whose digit is constant reads the plan on the device and copies
		 * its keys in place of sorting them; the result is then always in
		 * buffer PASSES % 2 = 0.
		 */
		const bool	device_plan = (size_t) n + 1 <= Policy::SYNC_MIN_KEYS && l.portions == 1;

		if (device_plan)
			plan = (1u << PASSES) - 1;
		else
		{
			GS_CUDA_CHECK(cudaMemcpyAsync(&plan, temp + l.plan, sizeof(plan), cudaMemcpyDeviceToHost, stream), err);
			GS_CUDA_CHECK(cudaStreamSynchronize(stream), err);
		}

		int			active = __builtin_popcount(plan);
		int			done = 0;
		int			selector = 0;
		uint32_t	launch = 0;

		/* 3. one onesweep pass per digit that varies, one launch per portion */
		for (int d = 0; d < PASSES; d++)
		{
			if (!(plan & (1u << d)))
				continue;
			for (uint32_t q = 0; q < l.portions; q++)
			{
				gs_radix_pass_params<KeyT> pp;
				size_t		start = (size_t) q * PORTION;
				uint32_t	count = (uint32_t) ((size_t) n - start < PORTION ? (size_t) n - start : PORTION);
				uint32_t	tiles = (count + TILE - 1) / TILE;
				bool		more = q + 1 < l.portions || done + 1 < active;
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
				pp.first = done == 0;
				pp.last = done == active - 1;
				pp.is_float = is_float;
				pp.descending = a->descending;
				pp.plan = device_plan ? (const uint32_t *) (temp + l.plan) : NULL;
				pp.bin_base_in = bin_base + d * bin_base_pass_stride + (size_t) q * BINS;
				pp.bin_base_out = bin_base + d * bin_base_pass_stride + (size_t) (q + 1) * BINS;
				pp.lookback = lookback[launch % 2];
				pp.lookback_clear = lookback[(launch + 1) % 2];
				pp.lookback_clear_words = more ? (size_t) next_tiles * BINS : 0;
				pp.tile_counter = tile_counters + launch;
				gs_radix_onesweep_kernel<KeyT, HAS_VALUES, Policy>
					<<<tiles, Policy::THREADS, onesweep_agent::SMEM_BYTES, stream>>>(pp);
				GS_CUDA_CHECK(cudaGetLastError(), err);
				launch++;
			}
			selector ^= 1;
			done++;
		}
		a->result_selector = selector;
		return GS_OK;
	}
};

/* The current device and its SM count (read once per device). */
static inline gs_status
gs_radix_device_info(int *device, int *sm_count, gs_error *err)
{
	GS_CUDA_CHECK(cudaGetDevice(device), err);
	if (*device < 0 || *device >= GS_RADIX_MAX_DEVICES)
		return gs_fail(err, GS_ERR_NO_DEVICE, "device %d is beyond the %d the radix sort supports",
					   *device, GS_RADIX_MAX_DEVICES);

	gs_radix_device *d = &gs_radix_devices[*device];

	if (!d->ready.load(std::memory_order_acquire))
	{
		GS_CUDA_CHECK(cudaDeviceGetAttribute(&d->sm_count, cudaDevAttrMultiProcessorCount, *device), err);
		d->ready.store(1, std::memory_order_release);
	}
	*sm_count = d->sm_count;
	return GS_OK;
}

#endif							/* GPUSORT_RADIX_DISPATCH_CUH */
