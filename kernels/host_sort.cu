/*
 * host_sort.cu: gs_host_sort, the GPU sort of host arrays that src/ calls:
 * copy in, sort with gs_gpu_sort (or select the first limit with
 * gs_gpu_topk), copy out, with timings.
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
 * The report: copy_in_ms from the call's start until the input is on the
 * device (pinning it included); sort_ms the sort's device time (CUDA events);
 * copy_out_ms the rest up to the last unpinning (pinning the outputs, which
 * overlaps the sort, the DMA, unpinning), so the three add up to the call;
 * total_ms the whole call's wall clock (also the pool's trimming).
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"
#include "device_internal.h"

/* Test and benchmark knobs (device_internal.h). */
static gs_transfer gs_forced_transfer = GS_TRANSFER_AUTO;
static size_t gs_chunk_bytes = GS_STAGING_CHUNK_BYTES;
static gs_transfer gs_last_transfer = GS_TRANSFER_AUTO;

/*
 * DMA straight from or to memory that is pinned (registered) or pageable is
 * issued in pieces of this size so that the interrupt callback is polled
 * every millisecond or so; one piece stays queued behind the running one, so
 * the copy engine does not idle while we poll.
 */
#define GS_DIRECT_PIECE_BYTES	((size_t) 64 << 20)

/* Device buffers are laid out at this alignment (a full memory transaction set). */
#define GS_ALIGN				((size_t) 256)

const char *
gs_transfer_name(gs_transfer t)
{
	static const char *const names[GS_NUM_TRANSFERS] = {"auto", "pageable", "staged", "register"};

	return (unsigned) t < GS_NUM_TRANSFERS ? names[t] : "unknown";
}

void
gs_host_sort_set_transfer(gs_transfer t, size_t chunk_bytes)
{
	gs_forced_transfer = ((unsigned) t < GS_NUM_TRANSFERS) ? t : GS_TRANSFER_AUTO;
	gs_chunk_bytes = (chunk_bytes != 0) ? chunk_bytes : GS_STAGING_CHUNK_BYTES;
}

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

double
gs_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static size_t
gs_align_up(size_t x)
{
	return (x + GS_ALIGN - 1) & ~(GS_ALIGN - 1);
}

static bool
gs_poll(gs_interrupt_fn interrupt, void *arg)
{
	return interrupt != NULL && interrupt(arg);
}

/* values[i] = i: the argsort payload, made on the device instead of copied in. */
__global__ void
gs_iota_kernel(uint32_t *values, size_t n)
{
	size_t		i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	size_t		stride = (size_t) gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		values[i] = (uint32_t) i;
}

cudaError_t
gs_launch_iota(uint32_t *values, size_t n, cudaStream_t stream)
{
	int			blocks = (int) ((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);

	gs_iota_kernel<<<blocks, 256, 0, stream>>>(values, n);
	return cudaGetLastError();
}

/* Evaluates a CUDA call through the fault hook; on failure sets s and jumps to done. */
#define GS_HS_CHECK(call, what) \
	do { \
		bool		gs_inj_; \
		cudaError_t gs_e_ = GS_RT_CALL((call), gs_inj_); \
		if (gs_e_ != cudaSuccess) \
			return gs_runtime_fail(err, gs_e_, gs_inj_, (what), gs_device_stream()); \
	} while (0)

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
 * The sort of host arrays.
 * ------------------------------------------------------------------------ */

gs_status
gs_plan(gs_type type, gs_algorithm algorithm, size_t n, bool argsort, gs_layout *l, gs_error *err)
{
	gs_gpu_sort_args a;
	gs_status	s;

	memset(l, 0, sizeof(*l));
	if (n <= 1)
		return GS_OK;
	memset(&a, 0, sizeof(a));
	a.type = type;
	a.algorithm = algorithm;
	a.n = n;
	a.temp = NULL;				/* size query */

	/*
	 * The query reads no buffer, but the arguments are checked as for a
	 * sort, and non-null values say that there will be values: distinct
	 * aligned non-null addresses serve.
	 */
	a.keys[0] = (void *) (1 * GS_ALIGN);
	a.keys[1] = (void *) (2 * GS_ALIGN);
	if (argsort)
	{
		a.values[0] = (uint32_t *) (3 * GS_ALIGN);
		a.values[1] = (uint32_t *) (4 * GS_ALIGN);
	}
	s = gs_gpu_sort(&a, err);
	if (s != GS_OK)
		return s;
	l->key_bytes = gs_align_up(n * gs_type_size(type));
	l->value_bytes = argsort ? gs_align_up(n * sizeof(uint32_t)) : 0;
	l->temp_bytes = a.temp_bytes;
	l->total = 2 * l->key_bytes + 2 * l->value_bytes + gs_align_up(a.temp_bytes);
	return GS_OK;
}

void
gs_layout_args(const gs_layout *l, char *base, gs_type type, gs_algorithm algorithm, size_t n,
			   bool descending, bool argsort, void *stream, gs_gpu_sort_args *a)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->algorithm = algorithm;
	a->n = n;
	a->descending = descending;
	a->keys[0] = base;
	a->keys[1] = base + l->key_bytes;
	if (argsort)
	{
		a->values[0] = (uint32_t *) (base + 2 * l->key_bytes);
		a->values[1] = (uint32_t *) (base + 2 * l->key_bytes + l->value_bytes);
	}
	a->temp = base + 2 * l->key_bytes + 2 * l->value_bytes;
	a->temp_bytes = l->temp_bytes;
	a->stream = stream;
}

gs_status
gs_plan_topk(gs_type type, size_t n, size_t limit, bool descending, gs_layout *l, gs_gpu_topk_args *ta,
			 gs_error *err)
{
	size_t		w = gs_type_size(type);
	gs_status	s;

	memset(ta, 0, sizeof(*ta));
	ta->type = type;
	ta->n = n;
	ta->k = limit;
	ta->descending = descending;
	ta->temp = NULL;			/* size query */
	s = gs_gpu_topk(ta, err);
	if (s != GS_OK)
		return s;
	memset(l, 0, sizeof(*l));
	l->key_bytes = gs_align_up(n * w);
	l->value_bytes = gs_align_up(limit * w) + gs_align_up(limit * sizeof(uint32_t));
	l->temp_bytes = ta->temp_bytes;
	l->total = l->key_bytes + l->value_bytes + gs_align_up(ta->temp_bytes);
	return GS_OK;
}

void
gs_layout_topk_args(const gs_layout *l, char *base, bool keys, bool positions, void *stream,
					gs_gpu_topk_args *ta)
{
	ta->keys_in = base;
	ta->keys_out = keys ? base + l->key_bytes : NULL;
	ta->positions_out = positions ?
		(uint32_t *) (base + l->key_bytes + gs_align_up(ta->k * gs_type_size(ta->type))) : NULL;
	ta->temp = base + l->key_bytes + l->value_bytes;
	ta->temp_bytes = l->temp_bytes;
	ta->stream = stream;
}

size_t
gs_host_sort_device_bytes(gs_type type, gs_algorithm algorithm, size_t n, bool argsort)
{
	gs_layout	l;
	gs_error	err;

	if (gs_type_size(type) == 0 || n <= 1)
		return 0;
	if (gs_plan(type, algorithm, n, argsort, &l, &err) != GS_OK)
	{
		/* The buffers without the sort's scratch: what can be known without it. */
		return 2 * gs_align_up(n * gs_type_size(type)) +
			(argsort ? 2 * gs_align_up(n * sizeof(uint32_t)) : 0);
	}
	return l.total;
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

gs_status
gs_host_sort(const gs_host_sort_job *job, gs_run_report *report, gs_error *err)
{
	double		start = gs_clock_ms();
	gs_run_report rep;
	gs_layout	l;
	gs_gpu_sort_args a;
	gs_gpu_topk_args ta;
	bool		topk;
	size_t		out_n;
	gs_transfer t_in,
				t_keys,
				t_perm;
	cudaStream_t stream;
	float		sort_device_ms = 0;
	char	   *base = NULL;
	size_t		w,
				key_total;
	bool		reg_input = false,
				reg_output = false,
				reg_perm = false,
				pool_taken = false;
	bool		injected;
	cudaError_t e;
	gs_status	s;

	memset(&rep, 0, sizeof(rep));
	rep.device = -1;
	rep.algorithm = job != NULL ? job->algorithm : GS_ALGO_AUTO;

	s = gs_check_job(job, err);
	if (s == GS_OK)
		s = gs_device_open(job->device_id, err);
	if (s != GS_OK)
		goto out;
	rep.device = job->device_id;
	w = gs_type_size(job->type);
	key_total = job->n * w;
	stream = gs_device_stream();

	/* Nothing to sort: no device memory, no transfers. */
	if (job->n <= 1)
	{
		if (job->n == 1 && job->output != NULL && job->output != job->input)
			memcpy(job->output, job->input, w);
		if (job->n == 1 && job->perm != NULL)
			job->perm[0] = 0;
		goto out;
	}

	topk = job->limit > 0 && job->limit < job->n;
	out_n = topk ? job->limit : job->n;
	if (topk)
		s = gs_plan_topk(job->type, job->n, job->limit, job->descending, &l, &ta, err);
	else
		s = gs_plan(job->type, job->algorithm, job->n, job->perm != NULL, &l, err);
	if (s != GS_OK)
		goto out;
	if (job->max_device_bytes != 0 && l.total > job->max_device_bytes)
	{
		s = gs_fail(err, GS_ERR_MEMORY_LIMIT,
					"the sort needs %.1f MB of device memory, more than the limit of %.1f MB",
					l.total / 1048576.0, job->max_device_bytes / 1048576.0);
		goto out;
	}
	s = gs_pool_acquire(l.total, job->max_device_bytes, (void **) &base, err);
	if (s != GS_OK)
		goto out;
	pool_taken = true;
	rep.device_bytes = l.total;

	memset(&a, 0, sizeof(a));
	if (!topk)
		gs_layout_args(&l, base, job->type, job->algorithm, job->n, job->descending, job->perm != NULL,
					   stream, &a);
	else
		gs_layout_topk_args(&l, base, job->output != NULL, job->perm != NULL, stream, &ta);

	/* Copy in. */
	t_in = gs_choose_transfer(key_total, false);
	t_keys = gs_choose_transfer(out_n * w, true);
	t_perm = gs_choose_transfer(out_n * sizeof(uint32_t), true);
	gs_last_transfer = t_in;
	if (t_in == GS_TRANSFER_REGISTER)
	{
		s = gs_register(job->input, key_total, &reg_input, err);
		if (s != GS_OK)
			goto out;
	}
	if (job->perm != NULL && !topk)
	{
		e = GS_RT_CALL(gs_launch_iota(a.values[0], job->n, stream), injected);
		if (e != cudaSuccess)
		{
			s = gs_runtime_fail(err, e, injected, "could not launch the argsort payload kernel",
								gs_device_stream());
			goto out;
		}
	}
	s = gs_to_device(topk ? (void *) ta.keys_in : a.keys[0], job->input, key_total, t_in, reg_input,
					 job->interrupt, job->interrupt_arg, err);
	if (s != GS_OK)
		goto out;
	rep.copy_in_ms = gs_clock_ms() - start;

	/* Sort, timed on the device. */
	if (gs_poll(job->interrupt, job->interrupt_arg))
	{
		s = gs_fail(err, GS_ERR_INTERRUPTED, "interrupted before the sort");
		goto out;
	}
	e = GS_RT_CALL(cudaEventRecord(gs_device_timing_event(0), stream), injected);
	if (e != cudaSuccess)
	{
		s = gs_runtime_fail(err, e, injected, "could not record a CUDA event", gs_device_stream());
		goto out;
	}
	if (topk)
	{
		s = gs_gpu_topk(&ta, err);
		rep.algorithm = ta.algorithm_used;
	}
	else
	{
		s = gs_gpu_sort(&a, err);
		rep.algorithm = a.algorithm_used;
	}
	if (s != GS_OK)
	{
		if (s == GS_ERR_CUDA)
			s = gs_context_check(s, err, gs_device_stream());	/* gs_gpu_sort named the error; did the context survive it? */
		goto out;
	}
	e = GS_RT_CALL(cudaEventRecord(gs_device_timing_event(1), stream), injected);
	if (e != cudaSuccess)
	{
		s = gs_runtime_fail(err, e, injected, "could not record a CUDA event", gs_device_stream());
		goto out;
	}

	/*
	 * gs_gpu_sort returns once its passes are queued: pin the output arrays
	 * while they run, so that this CPU share of the copy out overlaps the
	 * GPU's work.  (The input, when pinned, serves an output in place.)
	 */
	if (job->output != NULL && t_keys == GS_TRANSFER_REGISTER && !(job->output == job->input && reg_input))
		s = gs_register(job->output, out_n * w, &reg_output, err);
	if (s == GS_OK && job->perm != NULL && t_perm == GS_TRANSFER_REGISTER)
		s = gs_register(job->perm, out_n * sizeof(uint32_t), &reg_perm, err);
	if (s != GS_OK)
		goto out;
	e = GS_RT_CALL(cudaEventSynchronize(gs_device_timing_event(1)), injected);
	if (e == cudaSuccess)
		e = GS_RT_CALL(cudaEventElapsedTime(&sort_device_ms, gs_device_timing_event(0),
											gs_device_timing_event(1)), injected);
	if (e != cudaSuccess)
	{
		s = gs_runtime_fail(err, e, injected, "the sort failed on the device", gs_device_stream());
		goto out;
	}
	if (gs_poll(job->interrupt, job->interrupt_arg))
	{
		s = gs_fail(err, GS_ERR_INTERRUPTED, "interrupted after the sort");
		goto out;
	}

	/* Copy out, straight into the caller's arrays. */
	if (job->output != NULL)
	{
		s = gs_from_device(job->output, topk ? ta.keys_out : a.keys[a.result_selector], out_n * w, t_keys,
						   reg_output || (job->output == job->input && reg_input),
						   job->interrupt, job->interrupt_arg, err);
		if (s != GS_OK)
			goto out;
	}
	if (job->perm != NULL)
	{
		s = gs_from_device(job->perm, topk ? ta.positions_out : a.values[a.result_selector],
						   out_n * sizeof(uint32_t), t_perm,
						   reg_perm, job->interrupt, job->interrupt_arg, err);
		if (s != GS_OK)
			goto out;
	}

	/* Unpinning is part of the copy's cost. */
	gs_unregister_all(job, &reg_input, &reg_output, &reg_perm);

	/*
	 * The sort's own time is its device time; the copy out is the rest of
	 * the call after the copy in (pinning the outputs, which overlapped the
	 * sort, the DMA, unpinning), so that the three add up to the call.
	 */
	rep.sort_ms = sort_device_ms;
	rep.copy_out_ms = gs_clock_ms() - start - rep.copy_in_ms - rep.sort_ms;
	if (rep.copy_out_ms < 0)
		rep.copy_out_ms = 0;

out:

	/*
	 * Whatever happened, leave no copy in flight into memory we are about to
	 * hand back or unpin, and keep the pool within its cap.  (A broken
	 * context answers these with errors, which change nothing here.)
	 */
	if (s != GS_OK && rep.device >= 0)
	{
		(void) cudaStreamSynchronize(gs_device_stream());
		(void) cudaGetLastError();
	}
	gs_unregister_all(job, &reg_input, &reg_output, &reg_perm);
	if (pool_taken)
		gs_pool_end_call();
	rep.total_ms = gs_clock_ms() - start;
	if (report != NULL)
		*report = rep;
	return s;
}
