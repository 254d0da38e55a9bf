/*
 * host_sort.cu: gs_host_sort, the GPU sort of host arrays that src/ calls:
 * the caller's arrays moved to and from the device, around the job core of
 * host_job.cu (copy in, sort with gs_gpu_sort or select the first limit
 * with gs_gpu_topk, copy out, with timings).
 *
 * The arrays come from palloc, so they are pageable, and the copies are the
 * cost: pinned memory moves 55 GB/s each way on the H100 host, pageable
 * memory 7-13 GB/s, one CPU thread copies 7-9 GB/s, and cudaHostRegister
 * pins touched memory at 20 GB/s (bench/results/transfer-h100.md).  So
 * arrays under 1 MiB go through two small pinned staging buffers kept per
 * process (lowest latency), mid-size inputs through the driver's pageable
 * path, and large inputs and all but small outputs are pinned in place for
 * the call and moved by DMA straight from and into the caller's arrays
 * (device_internal.h has the rule).  The outputs are pinned while the sort
 * runs on the device.
 *
 * The report (host_job.cu): copy_in_ms from the call's start until the input
 * is on the device (pinning it included); sort_ms the sort's device time;
 * copy_out_ms the rest up to the last unpinning (pinning the outputs, which
 * overlaps the sort, the DMA, unpinning), so the three add up to the call;
 * total_ms the whole call's wall clock (also the pool's trimming).
 */
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"
#include "device_internal.h"

/* The strategy and the staging chunk: AUTO's rule and GS_STAGING_CHUNK_BYTES, or a test's (device_internal.h). */
#ifdef GS_TEST_HOOKS
static gs_transfer gs_forced_transfer = GS_TRANSFER_AUTO;
static size_t gs_chunk_bytes = GS_STAGING_CHUNK_BYTES;
#else
static const gs_transfer gs_forced_transfer = GS_TRANSFER_AUTO;
static const size_t gs_chunk_bytes = GS_STAGING_CHUNK_BYTES;
#endif
static gs_transfer gs_last_transfer = GS_TRANSFER_AUTO;

/*
 * DMA straight from or to memory that is pinned (registered) or pageable is
 * issued in pieces of this size so that the interrupt callback is polled
 * every millisecond or so; one piece stays queued behind the running one, so
 * the copy engine does not idle while we poll.
 */
#define GS_DIRECT_PIECE_BYTES	((size_t) 64 << 20)

const char *
gs_transfer_name(gs_transfer t)
{
	static const char *const names[GS_NUM_TRANSFERS] = {"auto", "pageable", "staged", "register"};

	return (unsigned) t < GS_NUM_TRANSFERS ? names[t] : "unknown";
}

#ifdef GS_TEST_HOOKS
void
gs_host_sort_set_transfer(gs_transfer t, size_t chunk_bytes)
{
	gs_forced_transfer = ((unsigned) t < GS_NUM_TRANSFERS) ? t : GS_TRANSFER_AUTO;
	gs_chunk_bytes = (chunk_bytes != 0) ? chunk_bytes : GS_STAGING_CHUNK_BYTES;
}
#endif

gs_transfer
gs_host_sort_last_transfer(void)
{
	return gs_last_transfer;
}

/* AUTO's rule (device_internal.h); output: the array is written, not read. */
static gs_transfer
gs_choose_transfer(size_t bytes, bool output)
{
	if (gs_forced_transfer != GS_TRANSFER_AUTO)
		return gs_forced_transfer;
	if (bytes < GS_PAGEABLE_MIN_BYTES)
		return GS_TRANSFER_STAGED;
	if (output)
		return bytes >= GS_REGISTER_OUT_MIN_BYTES ? GS_TRANSFER_REGISTER : GS_TRANSFER_PAGEABLE;
	return bytes >= GS_REGISTER_IN_MIN_BYTES ? GS_TRANSFER_REGISTER : GS_TRANSFER_PAGEABLE;
}

static bool
gs_poll(gs_interrupt_fn interrupt, void *arg)
{
	return interrupt != NULL && interrupt(arg);
}

/* A checked CUDA call on the opened device's stream (GS_RT_CHECK). */
#define GS_HS_CHECK(call, what) GS_RT_CHECK(call, what, gs_device_stream())

/* ------------------------------------------------------------------------
 * Transfers.  Each returns with its copies complete (stream synchronised),
 * except on error or interrupt, where the caller synchronises.
 * ------------------------------------------------------------------------ */

/*
 * Host memory the device can read directly (registered) or any memory
 * through the driver's own staging (pageable: each cudaMemcpyAsync then
 * returns only once its data is staged).
 */
static gs_status
gs_direct_copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
			   gs_interrupt_fn interrupt, void *interrupt_arg, gs_error *err)
{
	cudaStream_t stream = gs_device_stream();
	size_t		off;
	int			i;

	for (off = 0, i = 0; off < bytes; i++)
	{
		size_t		len = bytes - off < GS_DIRECT_PIECE_BYTES ? bytes - off : GS_DIRECT_PIECE_BYTES;

		GS_HS_CHECK(cudaMemcpyAsync((char *) dst + off, (const char *) src + off, len, kind, stream),
					kind == cudaMemcpyHostToDevice ? "could not copy to the device" : "could not copy from the device");
		GS_HS_CHECK(cudaEventRecord(gs_device_event(i), stream), "could not record a CUDA event");
		off += len;
		if (i > 0)
			GS_HS_CHECK(cudaEventSynchronize(gs_device_event(i - 1)), "could not wait for a copy");
		if (gs_poll(interrupt, interrupt_arg))
			return gs_fail(err, GS_ERR_INTERRUPTED, "interrupted while copying");
	}
	GS_HS_CHECK(cudaStreamSynchronize(stream), "could not finish a copy");
	return GS_OK;
}

/* Pageable host -> device through the staging buffers, chunk by chunk. */
static gs_status
gs_staged_to_device(char *dev, const char *host, size_t bytes,
					gs_interrupt_fn interrupt, void *interrupt_arg, gs_error *err)
{
	cudaStream_t stream = gs_device_stream();
	size_t		chunk = gs_chunk_bytes;
	void	   *stage[2];
	size_t		off;
	int			i;
	gs_status	s;

	s = gs_staging_acquire(chunk, stage, err);
	if (s != GS_OK)
		return s;
	for (off = 0, i = 0; off < bytes; i++)
	{
		size_t		len = bytes - off < chunk ? bytes - off : chunk;
		int			b = i & 1;

		/* Buffer b was last used by chunk i-2: wait until its DMA is done. */
		if (i >= 2)
			GS_HS_CHECK(cudaEventSynchronize(gs_device_event(b)), "could not wait for a copy to the device");
		memcpy(stage[b], host + off, len);
		GS_HS_CHECK(cudaMemcpyAsync(dev + off, stage[b], len, cudaMemcpyHostToDevice, stream),
					"could not copy to the device");
		GS_HS_CHECK(cudaEventRecord(gs_device_event(b), stream), "could not record a CUDA event");
		off += len;
		if (gs_poll(interrupt, interrupt_arg))
			return gs_fail(err, GS_ERR_INTERRUPTED, "interrupted while copying to the device");
	}
	GS_HS_CHECK(cudaStreamSynchronize(stream), "could not finish a copy to the device");
	return GS_OK;
}

/* Device -> pageable host through the staging buffers: two chunks in flight. */
static gs_status
gs_staged_from_device(char *host, const char *dev, size_t bytes,
					  gs_interrupt_fn interrupt, void *interrupt_arg, gs_error *err)
{
	cudaStream_t stream = gs_device_stream();
	size_t		chunk = gs_chunk_bytes;
	size_t		chunks = (bytes + chunk - 1) / chunk;
	void	   *stage[2];
	size_t		i;
	gs_status	s;

	s = gs_staging_acquire(chunk, stage, err);
	if (s != GS_OK)
		return s;
	for (i = 0; i < chunks + 2; i++)
	{
		/* Step i: drain chunk i-2 (if any), then issue chunk i into the buffer it freed. */
		if (i >= 2)
		{
			size_t		k = i - 2;
			size_t		off = k * chunk;
			size_t		len = bytes - off < chunk ? bytes - off : chunk;

			GS_HS_CHECK(cudaEventSynchronize(gs_device_event((int) (k & 1))),
						"could not wait for a copy from the device");
			memcpy(host + off, stage[k & 1], len);
			if (gs_poll(interrupt, interrupt_arg))
				return gs_fail(err, GS_ERR_INTERRUPTED, "interrupted while copying from the device");
		}
		if (i < chunks)
		{
			size_t		off = i * chunk;
			size_t		len = bytes - off < chunk ? bytes - off : chunk;

			GS_HS_CHECK(cudaMemcpyAsync(stage[i & 1], dev + off, len, cudaMemcpyDeviceToHost, stream),
						"could not copy from the device");
			GS_HS_CHECK(cudaEventRecord(gs_device_event((int) (i & 1)), stream), "could not record a CUDA event");
		}
	}
	return GS_OK;
}

/*
 * Pins [p, p + bytes) for the call.  Refusals that only mean "not this
 * memory" (already registered, e.g. by an overlapping page of an array
 * registered just before; not supported; no room to pin) leave *registered
 * false and the caller moves that array through the staging buffers.
 */
static gs_status
gs_register(const void *p, size_t bytes, bool *registered, gs_error *err)
{
	bool		injected;
	cudaError_t e = GS_RT_CALL(cudaHostRegister((void *) p, bytes, cudaHostRegisterDefault), injected);

	*registered = false;
	if (e == cudaSuccess)
	{
		*registered = true;
		return GS_OK;
	}
	if (!injected && (e == cudaErrorHostMemoryAlreadyRegistered || e == cudaErrorNotSupported ||
					  e == cudaErrorMemoryAllocation || e == cudaErrorInvalidValue))
	{
		(void) cudaGetLastError();
		return GS_OK;
	}
	return gs_runtime_fail(err, e, injected, "could not pin host memory", gs_device_stream());
}

/* Unpins what gs_host_sort pinned (the flags say what). */
static void
gs_unregister_all(const gs_host_sort_job *job, bool *input, bool *output, bool *perm)
{
	if (*input)
		(void) cudaHostUnregister((void *) job->input);
	if (*output)
		(void) cudaHostUnregister(job->output);
	if (*perm)
		(void) cudaHostUnregister(job->perm);
	*input = *output = *perm = false;
}

static gs_status
gs_to_device(void *dev, const void *host, size_t bytes, gs_transfer t, bool registered,
			 gs_interrupt_fn interrupt, void *interrupt_arg, gs_error *err)
{
	if (registered || t == GS_TRANSFER_PAGEABLE)
		return gs_direct_copy(dev, host, bytes, cudaMemcpyHostToDevice, interrupt, interrupt_arg, err);
	return gs_staged_to_device((char *) dev, (const char *) host, bytes, interrupt, interrupt_arg, err);
}

static gs_status
gs_from_device(void *host, const void *dev, size_t bytes, gs_transfer t, bool registered,
			   gs_interrupt_fn interrupt, void *interrupt_arg, gs_error *err)
{
	if (registered || t == GS_TRANSFER_PAGEABLE)
		return gs_direct_copy(host, dev, bytes, cudaMemcpyDeviceToHost, interrupt, interrupt_arg, err);
	return gs_staged_from_device((char *) host, (const char *) dev, bytes, interrupt, interrupt_arg, err);
}

/*
 * The benchmark's entry points: one transfer with the configured strategy,
 * registration included.  to_host says the direction; host is whichever of
 * dst and src lives in host memory.
 */
static gs_status
gs_copy_one(void *dst, const void *src, size_t bytes, bool to_host,
			gs_interrupt_fn interrupt, void *interrupt_arg, gs_error *err)
{
	void	   *host = to_host ? dst : (void *) src;
	gs_transfer t = gs_choose_transfer(bytes, to_host);
	bool		registered = false;
	gs_status	s = GS_OK;

	if (gs_device_current() < 0 || gs_device_stream() == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "no device is open");
	if (t == GS_TRANSFER_REGISTER)
		s = gs_register(host, bytes, &registered, err);
	if (s == GS_OK)
		s = to_host ? gs_from_device(dst, src, bytes, t, registered, interrupt, interrupt_arg, err)
			: gs_to_device(dst, src, bytes, t, registered, interrupt, interrupt_arg, err);
	if (s != GS_OK)
		(void) cudaStreamSynchronize(gs_device_stream());
	if (registered)
		(void) cudaHostUnregister(host);
	gs_last_transfer = t;
	return s;
}

gs_status
gs_copy_to_device(void *device, const void *host, size_t bytes,
				  gs_interrupt_fn interrupt, void *interrupt_arg, gs_error *err)
{
	return gs_copy_one(device, host, bytes, false, interrupt, interrupt_arg, err);
}

gs_status
gs_copy_from_device(void *host, const void *device, size_t bytes,
					gs_interrupt_fn interrupt, void *interrupt_arg, gs_error *err)
{
	return gs_copy_one(host, device, bytes, true, interrupt, interrupt_arg, err);
}

/* ------------------------------------------------------------------------
 * The sort of host arrays: gs_job_run with the caller's arrays as the
 * transfer's ends.
 * ------------------------------------------------------------------------ */

size_t
gs_host_sort_device_bytes(gs_type type, gs_algorithm algorithm, size_t n, bool argsort)
{
	gs_job		job;

	memset(&job, 0, sizeof(job));
	job.type = type;
	job.algorithm = algorithm;
	job.n = n;
	job.want_keys = true;
	job.want_perm = argsort;
	return gs_job_device_bytes(&job);
}

static gs_status
gs_check_job(const gs_host_sort_job *job, gs_error *err)
{
	size_t		w;

	if (job == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "job must not be null");
	w = gs_type_size(job->type);
	if (w == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "unknown element type %d", (int) job->type);
	if (job->n > 0 && job->input == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "input must not be null");
	if (job->output == NULL && job->perm == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "neither sorted keys nor a permutation was asked for");
	if (job->perm != NULL && job->n > (size_t) UINT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE, "argsort of %zu elements: at most %u are supported",
					   job->n, UINT32_MAX);
	if (job->limit > 0 && job->limit < job->n && job->output != NULL && job->output == job->input)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "a top-k cannot write its output over its input");
	if (job->n > SIZE_MAX / 32)
		return gs_fail(err, GS_ERR_TOO_LARGE, "%zu elements are too many", job->n);
	return GS_OK;
}

/* The transfer's state: the caller's job, how its outputs move, what is pinned now. */
typedef struct gs_host_transfer
{
	const gs_host_sort_job *job;
	gs_transfer t_keys;
	gs_transfer t_perm;
	bool		reg_input;
	bool		reg_output;
	bool		reg_perm;
} gs_host_transfer;

/* Device memory from the per-process pool, valid until gs_pool_end_call. */
static gs_status
gs_host_acquire(void *arg, size_t bytes, size_t limit, char **base, gs_error *err)
{
	(void) arg;
	return gs_pool_acquire(bytes, limit, (void **) base, err);
}

static void
gs_host_release(void *arg, char *base)
{
	(void) arg;
	(void) base;
	gs_pool_end_call();
}

/* The input by AUTO's rule (pinned in place when large), straight from the caller's array. */
static gs_status
gs_host_copy_in(void *arg, void *dev, size_t bytes, gs_error *err)
{
	gs_host_transfer *h = (gs_host_transfer *) arg;
	const gs_host_sort_job *job = h->job;
	gs_transfer t = gs_choose_transfer(bytes, false);
	gs_status	s = GS_OK;

	gs_last_transfer = t;
	if (t == GS_TRANSFER_REGISTER)
		s = gs_register(job->input, bytes, &h->reg_input, err);
	if (s == GS_OK)
		s = gs_to_device(dev, job->input, bytes, t, h->reg_input, job->interrupt, job->interrupt_arg, err);
	return s;
}

/*
 * While the sort runs: pins the output arrays, so that this CPU share of
 * the copy out overlaps the GPU's work.  (The input, when pinned, serves an
 * output in place.)
 */
static gs_status
gs_host_during_sort(void *arg, size_t out_n, gs_error *err)
{
	gs_host_transfer *h = (gs_host_transfer *) arg;
	const gs_host_sort_job *job = h->job;
	gs_status	s = GS_OK;

	if (job->output != NULL && h->t_keys == GS_TRANSFER_REGISTER && !(job->output == job->input && h->reg_input))
		s = gs_register(job->output, out_n * gs_type_size(job->type), &h->reg_output, err);
	if (s == GS_OK && job->perm != NULL && h->t_perm == GS_TRANSFER_REGISTER)
		s = gs_register(job->perm, out_n * sizeof(uint32_t), &h->reg_perm, err);
	return s;
}

/* Copy out, straight into the caller's arrays. */
static gs_status
gs_host_copy_out(void *arg, const void *keys, size_t key_bytes, const void *perm, size_t perm_bytes,
				 gs_error *err)
{
	gs_host_transfer *h = (gs_host_transfer *) arg;
	const gs_host_sort_job *job = h->job;
	gs_status	s = GS_OK;

	if (keys != NULL)
		s = gs_from_device(job->output, keys, key_bytes, h->t_keys,
						   h->reg_output || (job->output == job->input && h->reg_input),
						   job->interrupt, job->interrupt_arg, err);
	if (s == GS_OK && perm != NULL)
		s = gs_from_device(job->perm, perm, perm_bytes, h->t_perm, h->reg_perm,
						   job->interrupt, job->interrupt_arg, err);
	return s;
}

/* Unpinning is part of the copy's cost. */
static void
gs_host_finish(void *arg)
{
	gs_host_transfer *h = (gs_host_transfer *) arg;

	gs_unregister_all(h->job, &h->reg_input, &h->reg_output, &h->reg_perm);
}

static bool
gs_host_interrupted(void *arg)
{
	const gs_host_sort_job *job = ((gs_host_transfer *) arg)->job;

	return gs_poll(job->interrupt, job->interrupt_arg);
}

/* n <= 1: sorted already; no device memory, no transfers. */
static void
gs_host_sort_trivial(const gs_host_sort_job *job)
{
	if (job->n == 1 && job->output != NULL && job->output != job->input)
		memcpy(job->output, job->input, gs_type_size(job->type));
	if (job->n == 1 && job->perm != NULL)
		job->perm[0] = 0;
}

/* n > 1 on the opened device. */
static gs_status
gs_host_sort_run(const gs_host_sort_job *job, double start, gs_run_report *rep, gs_error *err)
{
	gs_host_transfer h;
	gs_job_transfer t;
	gs_job		j;
	size_t		out_n;

	memset(&j, 0, sizeof(j));
	j.type = job->type;
	j.algorithm = job->algorithm;
	j.n = job->n;
	j.limit = job->limit < job->n ? job->limit : 0;
	j.descending = job->descending;
	j.want_keys = job->output != NULL;
	j.want_perm = job->perm != NULL;
	j.max_device_bytes = job->max_device_bytes;
	out_n = j.limit > 0 ? j.limit : j.n;

	memset(&h, 0, sizeof(h));
	h.job = job;
	h.t_keys = gs_choose_transfer(out_n * gs_type_size(job->type), true);
	h.t_perm = gs_choose_transfer(out_n * sizeof(uint32_t), true);

	memset(&t, 0, sizeof(t));
	t.stream = gs_device_stream();
	t.timing[0] = gs_device_timing_event(0);
	t.timing[1] = gs_device_timing_event(1);
	t.arg = &h;
	t.acquire = gs_host_acquire;
	t.release = gs_host_release;
	t.copy_in = gs_host_copy_in;
	t.during_sort = gs_host_during_sort;
	t.copy_out = gs_host_copy_out;
	t.finish = gs_host_finish;
	t.interrupted = gs_host_interrupted;
	return gs_job_run(&j, &t, start, rep, err);
}

gs_status
gs_host_sort(const gs_host_sort_job *job, gs_run_report *report, gs_error *err)
{
	double		start = gs_clock_ms();
	gs_run_report rep;
	gs_status	s;

	memset(&rep, 0, sizeof(rep));
	rep.device = -1;
	rep.algorithm = job != NULL ? job->algorithm : GS_ALGO_AUTO;

	s = gs_check_job(job, err);
	if (s == GS_OK)
		s = gs_device_open(job->device_id, err);
	if (s == GS_OK)
	{
		rep.device = job->device_id;
		if (job->n <= 1)
			gs_host_sort_trivial(job);
		else
			s = gs_host_sort_run(job, start, &rep, err);
	}
	rep.total_ms = gs_clock_ms() - start;
	if (report != NULL)
		*report = rep;
	return s;
}
