/*
 * merge_common.cuh: what the comparison sorts of kernels/ (merge_sort.cu,
 * bitonic_sort.cu, quick_sort.cu) share: the device side of the key
 * transforms of keys.h (a "codec" applied on the first load and undone on
 * the last store), the mapping from gs_type to an unsigned key width, and a
 * few small helpers.  Internal to kernels/.
 */
#ifndef GPUSORT_MERGE_COMMON_CUH
#define GPUSORT_MERGE_COMMON_CUH

#include <stdint.h>
#include <atomic>
#include <mutex>
#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"
#include "keys.h"

/*
 * How raw element bits become ordered keys and back.  encode/decode are
 * cleared when a sort works on keys that are already ordered (a sub-sort
 * started by another algorithm), so one kernel serves both cases.
 */
typedef struct gs_key_codec
{
	int			is_float;
	int			descending;
} gs_key_codec;

template <typename K>
static __host__ __device__ __forceinline__ K
gs_encode_key(K bits, gs_key_codec c);

template <>
__host__ __device__ __forceinline__ uint16_t
gs_encode_key<uint16_t>(uint16_t bits, gs_key_codec c)
{
	return gs_to_key16(bits, c.descending);
}

template <>
__host__ __device__ __forceinline__ uint32_t
gs_encode_key<uint32_t>(uint32_t bits, gs_key_codec c)
{
	return gs_to_key32(bits, c.is_float, c.descending);
}

template <>
__host__ __device__ __forceinline__ uint64_t
gs_encode_key<uint64_t>(uint64_t bits, gs_key_codec c)
{
	return gs_to_key64(bits, c.is_float, c.descending);
}

template <typename K>
static __host__ __device__ __forceinline__ K
gs_decode_key(K key, gs_key_codec c);

template <>
__host__ __device__ __forceinline__ uint16_t
gs_decode_key<uint16_t>(uint16_t key, gs_key_codec c)
{
	return gs_from_key16(key, c.descending);
}

template <>
__host__ __device__ __forceinline__ uint32_t
gs_decode_key<uint32_t>(uint32_t key, gs_key_codec c)
{
	return gs_from_key32(key, c.is_float, c.descending);
}

template <>
__host__ __device__ __forceinline__ uint64_t
gs_decode_key<uint64_t>(uint64_t key, gs_key_codec c)
{
	return gs_from_key64(key, c.is_float, c.descending);
}

/* The largest ordered key of width K: the sentinel that pads partial tiles. */
template <typename K>
static __host__ __device__ __forceinline__ K
gs_key_max(void)
{
	return (K) ~(K) 0;
}

/* The codec of a sort request. */
static inline gs_key_codec
gs_codec_of(const gs_gpu_sort_args *args)
{
	gs_key_codec c;

	c.is_float = (args->type == GS_FLOAT4 || args->type == GS_FLOAT8);
	c.descending = args->descending ? 1 : 0;
	return c;
}

static inline size_t
gs_align_up(size_t x, size_t a)
{
	return (x + a - 1) / a * a;
}

/*
 * Devices whose per-kernel settings the caches below keep.  These caches, and
 * those of radix_dispatch.cuh, hold for the life of the process: the library
 * never resets a device (no cudaDeviceReset), and after a sticky error the
 * context is marked broken and refused, the GPU server's process restarting
 * instead, so a setting once made in a context stays made.
 */
#define GS_CACHED_DEVICES 64

/*
 * Makes a kernel's dynamic shared memory limit at least bytes on the current
 * device.  The limit belongs to the context, which the GPU server's threads
 * share, so it only ever goes up: lowering it to one launch's size would fail
 * another thread's larger launch between its own raise and launch.  The
 * limit set so far is kept per kernel (the template argument) and device, so
 * that a launch that fits costs one atomic load (the call itself costs
 * microseconds, which small sorts notice); raising it is under the kernel's
 * mutex, and the recorded limit is the one set.
 */
template <auto KERNEL>
static cudaError_t
gs_smem_limit(size_t bytes)
{
	static std::atomic<size_t> done[GS_CACHED_DEVICES];
	static std::mutex raising;
	int			dev = 0;
	cudaError_t e = cudaGetDevice(&dev);

	if (e != cudaSuccess)
		return e;
	if (dev < 0 || dev >= GS_CACHED_DEVICES)
		return cudaErrorInvalidDevice;
	if (done[dev].load(std::memory_order_acquire) >= bytes)
		return cudaSuccess;

	std::lock_guard<std::mutex> hold(raising);

	if (done[dev].load(std::memory_order_relaxed) >= bytes)
		return cudaSuccess;
	e = cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) bytes);
	if (e == cudaSuccess)
		done[dev].store(bytes, std::memory_order_release);
	return e;
}

/* Checks the launch that just happened (launch errors only; no sync). */
#define GS_LAUNCH_CHECK(what, err) \
	do { \
		cudaError_t gs_le_ = cudaGetLastError(); \
		if (gs_le_ != cudaSuccess) \
			return gs_cuda_fail((err), gs_le_, (what)); \
	} while (0)

/*
 * Programmatic dependent launch (sm_90): a kernel launched with
 * gs_launch(pdl = true) may start while the kernel before it in the stream
 * is finishing, once every block of that kernel has called
 * gs_pdl_trigger().  So every such kernel calls gs_pdl_wait() before it
 * touches global memory: the wait returns when the kernel before has
 * completed and its writes are visible.  Both are no-ops in a kernel
 * launched without the attribute, and below sm_90.
 */
static __device__ __forceinline__ void
gs_pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

static __device__ __forceinline__ void
gs_pdl_trigger(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/*
 * Whether the current device can launch dependents early (compute capability
 * 9.0 or later).  The major version is kept per device (0: not read yet);
 * threads that read it at once store the same value.
 */
static inline bool
gs_pdl_supported(void)
{
	static std::atomic<int> majors[GS_CACHED_DEVICES];
	int			dev = 0;
	int			major;

	if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= GS_CACHED_DEVICES)
		return false;
	major = majors[dev].load(std::memory_order_relaxed);
	if (major == 0)
	{
		if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
			return false;
		majors[dev].store(major, std::memory_order_relaxed);
	}
	return major >= 9;
}

/*
 * Launches kernel<<<grid, block, smem, stream>>>(args), with programmatic
 * stream serialization when pdl (the caller checked gs_pdl_supported()).
 */
template <typename... P, typename... A>
static cudaError_t
gs_launch(bool pdl, void (*kernel)(P...), unsigned grid, unsigned block, size_t smem, cudaStream_t stream,
		  A... args)
{
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute attr[1];

	cfg.gridDim = dim3(grid);
	cfg.blockDim = dim3(block);
	cfg.dynamicSmemBytes = smem;
	cfg.stream = stream;
	attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	attr[0].val.programmaticStreamSerializationAllowed = 1;
	cfg.attrs = attr;
	cfg.numAttrs = pdl ? 1 : 0;
	return cudaLaunchKernelEx(&cfg, kernel, ((P) args)...);
}

/* Checks a launch made by gs_launch (launch errors only; no sync). */
#define GS_LAUNCH_OK(call, what, err) \
	do { \
		cudaError_t gs_lo_ = (call); \
		if (gs_lo_ != cudaSuccess) \
			return gs_cuda_fail((err), gs_lo_, (what)); \
	} while (0)

/*
 * Composite (key, position) comparison used where an algorithm is not stable
 * by nature (bitonic, quick): with positions distinct, the order is total
 * and the result is the stable one.
 */
template <typename K>
static __device__ __forceinline__ bool
gs_pair_less(K ka, uint32_t pa, K kb, uint32_t pb)
{
	return ka < kb || (ka == kb && pa < pb);
}

#endif							/* GPUSORT_MERGE_COMMON_CUH */
