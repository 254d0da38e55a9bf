/*
 * device_internal.h: what the runtime files of kernels/ (device.cu,
 * host_job.cu, host_sort.cu, worker.cu, no_cuda.c) share with each other,
 * and the few knobs that test/ and bench/ use to force a transfer strategy.
 * Not part of the API: src/ never includes it.
 */
#ifndef GPUSORT_DEVICE_INTERNAL_H
#define GPUSORT_DEVICE_INTERNAL_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Device memory the pool keeps between calls.  A sort that needs more gets
 * a larger allocation that is freed again at the end of that call, so a
 * backend holds at most this much device memory while idle.
 */
#define GS_POOL_RETAINED_BYTES	((size_t) 256 << 20)

/* Device memory is allocated in multiples of this (cudaMalloc's own granule). */
#define GS_POOL_GRANULE			((size_t) 2 << 20)

/*
 * Size of each of the two pinned staging buffers.  AUTO stages only arrays
 * under GS_PAGEABLE_MIN_BYTES, so one chunk holds any of them; a backend
 * holds at most twice this much pinned host memory.
 */
#define GS_STAGING_CHUNK_BYTES	((size_t) 1 << 20)

/*
 * How gs_host_sort moves the caller's pageable arrays:
 *  - PAGEABLE: plain cudaMemcpyAsync from pageable memory (the driver stages
 *    through its own pinned buffers, synchronously);
 *  - STAGED: our two pinned staging buffers, memcpy of one chunk overlapping
 *    the DMA of the other;
 *  - REGISTER: cudaHostRegister of the caller's arrays for the duration of
 *    the call, then DMA straight from and to them;
 *  - AUTO: chosen by size from the measurements.
 */
typedef enum gs_transfer
{
	GS_TRANSFER_AUTO = 0,
	GS_TRANSFER_PAGEABLE,
	GS_TRANSFER_STAGED,
	GS_TRANSFER_REGISTER,
	GS_NUM_TRANSFERS
} gs_transfer;

/*
 * AUTO, from the H100 host's measurements (bench/results/transfer-h100.md):
 * the input (just written by the caller, so its pages are resident) goes
 * STAGED under 1 MiB (lowest latency), PAGEABLE up to 16 MiB (the driver's
 * staging beats ours and pinning in place has a fixed cost), REGISTER from
 * there (pinning 20 GB/s then DMA 55 GB/s beats any CPU copy).  The outputs
 * go REGISTER from 1 MiB: they are usually fresh allocations, and pinning
 * faults their pages in faster than a copy into them does.
 */
#define GS_PAGEABLE_MIN_BYTES	((size_t) 1 << 20)
#define GS_REGISTER_IN_MIN_BYTES ((size_t) 16 << 20)
#define GS_REGISTER_OUT_MIN_BYTES ((size_t) 1 << 20)

const char *gs_transfer_name(gs_transfer t);

#ifdef GS_TEST_HOOKS
/*
 * Forces a strategy and a staging chunk size (0: GS_STAGING_CHUNK_BYTES) for
 * later gs_host_sort calls of this process.  Only in the library that tests
 * and benchmarks link (built with -DGS_TEST_HOOKS; see the Makefile).
 */
void		gs_host_sort_set_transfer(gs_transfer t, size_t chunk_bytes);
#endif

/* The strategy the last gs_host_sort (or gs_copy_*) used for its input (what AUTO resolved to). */
gs_transfer gs_host_sort_last_transfer(void);

/*
 * The transfers of gs_host_sort on their own (host_sort.cu), for the
 * benchmark: copy bytes between pageable host memory and device memory of
 * the opened device with the configured strategy, polling interrupt between
 * chunks.  Both synchronise before returning.
 */
gs_status	gs_copy_to_device(void *device, const void *host, size_t bytes,
							  gs_interrupt_fn interrupt, void *interrupt_arg, gs_error *err);
gs_status	gs_copy_from_device(void *host, const void *device, size_t bytes,
								gs_interrupt_fn interrupt, void *interrupt_arg, gs_error *err);

#ifdef __cplusplus
}
#endif

/* A monotonic clock in milliseconds (host_job.cu), for the run reports. */
double		gs_clock_ms(void);

/*
 * One sort of host data on a device as both host paths run it (host_job.cu):
 * n > 1 keys sorted, or for 0 < limit < n the first limit of their order
 * selected (gs_gpu_topk); the sorted keys, their 0-based positions or both
 * copied out, limit (or n) of each.
 */
typedef struct gs_job
{
	gs_type		type;
	gs_algorithm algorithm;
	size_t		n;
	size_t		limit;			/* 0 (or >= n): the whole order */
	bool		descending;
	bool		want_keys;
	bool		want_perm;
	size_t		max_device_bytes;	/* 0: no limit */
} gs_job;

/* Bytes of device memory gs_job_run takes for job (0 for n <= 1). */
size_t		gs_job_device_bytes(const gs_job *job);

#ifdef __CUDACC__
#include <pthread.h>
#include <signal.h>
#include <cuda_runtime.h>

/*
 * The opened device's stream, the two staging events and the two timing
 * events (gs_device_open made them).
 */
cudaStream_t gs_device_stream(void);

cudaEvent_t gs_device_event(int i);
cudaEvent_t gs_device_timing_event(int i);

/*
 * The memory pool: *ptr receives at least bytes of device memory, valid until
 * gs_pool_end_call().  One allocation, grown as needed (the old one freed
 * first, so peak use is the new size), never past limit (0: none) by its own
 * rounding or growth.  Growth rounds up to twice the old size; when that is
 * not free it is tried again at the size asked for.  A failure is
 * GS_ERR_DEVICE_MEMORY naming the CUDA error.
 */
gs_status	gs_pool_acquire(size_t bytes, size_t limit, void **ptr, gs_error *err);

/* Ends the call that used the pool: an allocation over the retained cap is freed. */
void		gs_pool_end_call(void);

/*
 * The two pinned staging buffers of chunk_bytes each, allocated on first use
 * and reallocated only when chunk_bytes changes.
 */
gs_status	gs_staging_acquire(size_t chunk_bytes, void *bufs[2], gs_error *err);

/*
 * Test-only fault injection (test/hardening/faults.sh, test_host_sort),
 * compiled only with -DGS_INJECTION_POINTS (make INJECTION_POINTS=1); a
 * release build has none of it and GS_RT_CALL is the call itself.
 *
 * GPUSORT_FAULT_INJECT=N (N >= 1) in the environment as gs_device_open sets
 * up its stream (the first open, and the first open after each
 * gs_device_release) or as gs_worker_create runs: the N-th CUDA call made
 * through GS_RT_CALL afterwards, by any thread of the process, is not made
 * and fails as cudaErrorUnknown instead, once.  Each value arms once per
 * process: a later open with the same value does not arm again (unset it,
 * or set another N, to arm again), so a server started with it fails one
 * sort.  The countdown is atomic.
 *
 * gs_fault_set_device_memory(bytes): a pool allocation (gs_pool_acquire) of
 * more than bytes fails as cudaErrorMemoryAllocation without being made, as
 * on a device with only that much free memory (0: off).
 */
bool		gs_fault_built(void);	/* whether this build has the above */
void		gs_fault_set_device_memory(size_t bytes);

#ifdef GS_INJECTION_POINTS
bool		gs_fault_fire(void);
void		gs_fault_arm(void);		/* gs_device_open and gs_worker_create call it */

#define GS_RT_CALL(call, injected) \
	(((injected) = gs_fault_fire()) ? cudaErrorUnknown : (call))
#else
static inline void
gs_fault_arm(void)
{
}

#define GS_RT_CALL(call, injected) \
	((injected) = false, (call))
#endif

/*
 * Evaluates a CUDA call of the runtime path through the fault hook; on
 * failure returns gs_runtime_fail's status (err: the enclosing function's).
 */
#define GS_RT_CHECK(call, what, stream) \
	do { \
		bool		gs_inj_; \
		cudaError_t gs_e_ = GS_RT_CALL((call), gs_inj_); \
		if (gs_e_ != cudaSuccess) \
			return gs_runtime_fail(err, gs_e_, gs_inj_, (what), (stream)); \
	} while (0)

/*
 * The data's way between the host and the device for gs_job_run: the part
 * of a job that differs between gs_host_sort (the caller's arrays, staged or
 * pinned in place) and gs_worker_sort (the server's ring of pinned chunks).
 * Each call gets arg; the ones marked optional may be NULL.
 */
typedef struct gs_job_transfer
{
	cudaStream_t stream;		/* the job's stream, on the current device */
	cudaEvent_t timing[2];		/* two timing events of that device */
	void	   *arg;

	/* bytes of device memory into *base, limit (0: none) included */
	gs_status	(*acquire) (void *arg, size_t bytes, size_t limit, char **base, gs_error *err);
	/* gives base back (the stream has nothing left that uses it) */
	void		(*release) (void *arg, char *base);
	/* bytes of input to dev, returning once they are on the device */
	gs_status	(*copy_in) (void *arg, void *dev, size_t bytes, gs_error *err);
	/* optional: work while the sort runs, which wants out_n entries of each output */
	gs_status	(*during_sort) (void *arg, size_t out_n, gs_error *err);
	/* key_bytes from keys then perm_bytes from perm (either NULL: not wanted) out, until done */
	gs_status	(*copy_out) (void *arg, const void *keys, size_t key_bytes, const void *perm,
							 size_t perm_bytes, gs_error *err);
	/* optional: after the copy out and after any failure, once the stream is idle */
	void		(*finish) (void *arg);
	/* optional: true when the job is to stop, polled before and after the sort */
	bool		(*interrupted) (void *arg);
} gs_job_transfer;

/*
 * Runs job on the current device through t: plans, checks the plan against
 * max_device_bytes, acquires device memory, makes the argsort payload,
 * copies in, sorts or selects, copies out, gives everything back.  start is
 * the caller's gs_clock_ms() at the job's start; rep receives device_bytes,
 * algorithm and the three times (the caller sets device and total_ms).
 */
gs_status	gs_job_run(const gs_job *job, const gs_job_transfer *t, double start, gs_run_report *rep,
					   gs_error *err);

/*
 * A CUDA error of the runtime path as a gs_error: gs_cuda_fail's message,
 * marked when the fault was injected, and, when the error left the context
 * unusable (a sticky error: every later call fails the same way), saying so,
 * since the caller cannot recover from that in this process.  stream: the
 * stream of the job that failed (gs_context_check).
 */
gs_status	gs_runtime_fail(gs_error *err, cudaError_t e, bool injected, const char *what,
							cudaStream_t stream);

/*
 * After an error s that err already describes: if the context is unusable
 * now, says so in err, marks the process's context broken and returns
 * GS_ERR_CUDA; else returns s.  It synchronises only stream (the failed
 * job's own), never the device, so other threads' work goes on: a sticky
 * error makes that call fail as well.
 */
gs_status	gs_context_check(gs_status s, gs_error *err, cudaStream_t stream);

/*
 * Makes device id current for the calling thread and its primary context
 * exist, with every signal blocked meanwhile (gs_signals_blocked), so that
 * the threads the CUDA runtime starts with the context never take the
 * caller's signals.  Cheap once the context exists.
 */
cudaError_t gs_context_create(int id);

/*
 * cudaEventCreateWithFlags and cudaStreamCreateWithFlags that leave the
 * handle NULL when they fail, so that cleanup destroys only what was made.
 */
static inline cudaError_t
gs_event_make(cudaEvent_t *event, unsigned int flags)
{
	cudaEvent_t made = NULL;
	cudaError_t e = cudaEventCreateWithFlags(&made, flags);

	*event = e == cudaSuccess ? made : NULL;
	return e;
}

static inline cudaError_t
gs_stream_make(cudaStream_t *stream)
{
	cudaStream_t made = NULL;
	cudaError_t e = cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking);

	*stream = e == cudaSuccess ? made : NULL;
	return e;
}

/*
 * Blocks every signal of the calling thread for its lifetime, then restores
 * the mask: around any CUDA call that can initialise the driver or create a
 * context (threads inherit the mask of the thread that starts them).
 */
struct gs_signals_blocked
{
	sigset_t	old;

	gs_signals_blocked()
	{
		sigset_t	all;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
	}
	~gs_signals_blocked()
	{
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	gs_signals_blocked(const gs_signals_blocked &) = delete;
	gs_signals_blocked &operator=(const gs_signals_blocked &) = delete;
};

/*
 * Where the radix sort's plan comes back to the host: a pinned word and an
 * event that says it has arrived.  Taken for one sort and handed back
 * (acquire / release, any thread); the idle ones are kept per device for
 * the next sort and freed by gs_device_release and gs_worker_destroy.
 * gs_pinned_bytes_held counts every one that exists.
 */
typedef struct gs_readback
{
	uint32_t   *word;
	cudaEvent_t event;
	int			device;
	struct gs_readback *next;	/* in the idle list */
} gs_readback;

cudaError_t gs_readback_acquire(int device, gs_readback **rb);
void		gs_readback_release(gs_readback *rb);
void		gs_readback_free_idle(void);
#endif							/* __CUDACC__ */

#endif							/* GPUSORT_DEVICE_INTERNAL_H */
