/*
 * host_job.cu: one sort of host data on a device, the core of both host
 * paths: gs_host_sort (host_sort.cu: the caller's arrays, staged or pinned
 * in place) and gs_worker_sort (worker.cu: the GPU server's ring of pinned
 * chunks).  Plan (a sort with gs_gpu_sort, or for 0 < limit < n the radix
 * select of gs_gpu_topk), allocate, copy in, sort or select, copy out, with
 * timings.  What differs between the paths is the transfer (gs_job_transfer):
 * where the device memory comes from, how the data move, what is polled.
 *
 * The report: copy_in_ms from the caller's start until the input is on the
 * device; sort_ms the sort's device time (CUDA events); copy_out_ms the rest
 * up to the end of the copy out (the transfer's work while the sort runs
 * included), so that the three add up to the job.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"
#include "device_internal.h"

/* Device buffers are laid out at this alignment (a full memory transaction set). */
#define GS_ALIGN				((size_t) 256)

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

/* values[i] = i: the argsort payload, made on the device instead of copied in. */
__global__ void
gs_iota_kernel(uint32_t *values, size_t n)
{
	size_t		i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	size_t		stride = (size_t) gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		values[i] = (uint32_t) i;
}

static cudaError_t
gs_launch_iota(uint32_t *values, size_t n, cudaStream_t stream)
{
	int			blocks = (int) ((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);

	gs_iota_kernel<<<blocks, 256, 0, stream>>>(values, n);
	return cudaGetLastError();
}

/* ------------------------------------------------------------------------
 * The plan: device memory of one job, each buffer 256-byte aligned.
 *  - a sort: the two key buffers, the two value buffers (argsort), then
 *    gs_gpu_sort's temp;
 *  - a select: the input, the limit keys out, the limit positions out, then
 *    gs_gpu_topk's temp.
 * ------------------------------------------------------------------------ */

typedef struct gs_job_plan
{
	bool		select;			/* 0 < limit < n */
	size_t		out_n;			/* entries of each output: limit or n */
	size_t		key_bytes;		/* sort: one key buffer; select: the input */
	size_t		value_bytes;	/* sort: one value buffer (0 without argsort); select: both outputs */
	size_t		temp_bytes;		/* what gs_gpu_sort or gs_gpu_topk asked for */
	size_t		total;
	gs_gpu_sort_args sort;		/* the sort's arguments (a sort) */
	gs_gpu_topk_args topk;		/* the select's (a select) */
} gs_job_plan;

static gs_status
gs_plan_sort(const gs_job *job, gs_job_plan *p, gs_error *err)
{
	gs_gpu_sort_args a;
	gs_status	s;

	memset(&a, 0, sizeof(a));
	a.type = job->type;
	a.algorithm = job->algorithm;
	a.n = job->n;
	a.temp = NULL;				/* size query */

	/*
	 * The query reads no buffer, but the arguments are checked as for a
	 * sort, and non-null values say that there will be values: distinct
	 * aligned non-null addresses serve.
	 */
	a.keys[0] = (void *) (1 * GS_ALIGN);
	a.keys[1] = (void *) (2 * GS_ALIGN);
	if (job->want_perm)
	{
		a.values[0] = (uint32_t *) (3 * GS_ALIGN);
		a.values[1] = (uint32_t *) (4 * GS_ALIGN);
	}
	s = gs_gpu_sort(&a, err);
	if (s != GS_OK)
		return s;
	p->key_bytes = gs_align_up(job->n * gs_type_size(job->type));
	p->value_bytes = job->want_perm ? gs_align_up(job->n * sizeof(uint32_t)) : 0;
	p->temp_bytes = a.temp_bytes;
	p->total = 2 * p->key_bytes + 2 * p->value_bytes + gs_align_up(a.temp_bytes);
	return GS_OK;
}

static gs_status
gs_plan_select(const gs_job *job, gs_job_plan *p, gs_error *err)
{
	gs_gpu_topk_args *ta = &p->topk;
	size_t		w = gs_type_size(job->type);
	gs_status	s;

	ta->type = job->type;
	ta->n = job->n;
	ta->k = job->limit;
	ta->descending = job->descending;
	ta->temp = NULL;			/* size query */
	s = gs_gpu_topk(ta, err);
	if (s != GS_OK)
		return s;
	p->key_bytes = gs_align_up(job->n * w);
	p->value_bytes = gs_align_up(job->limit * w) + gs_align_up(job->limit * sizeof(uint32_t));
	p->temp_bytes = ta->temp_bytes;
	p->total = p->key_bytes + p->value_bytes + gs_align_up(ta->temp_bytes);
	return GS_OK;
}

/* Plans job (n > 1): p's sizes, and for a select its arguments but the buffers. */
static gs_status
gs_plan_job(const gs_job *job, gs_job_plan *p, gs_error *err)
{
	memset(p, 0, sizeof(*p));
	p->select = job->limit > 0 && job->limit < job->n;
	p->out_n = p->select ? job->limit : job->n;
	return p->select ? gs_plan_select(job, p, err) : gs_plan_sort(job, p, err);
}

/* Places p's buffers in the device memory at base. */
static void
gs_place_job(const gs_job *job, gs_job_plan *p, char *base, cudaStream_t stream)
{
	if (p->select)
	{
		gs_gpu_topk_args *ta = &p->topk;

		ta->keys_in = base;
		ta->keys_out = job->want_keys ? base + p->key_bytes : NULL;
		ta->positions_out = job->want_perm ?
			(uint32_t *) (base + p->key_bytes + gs_align_up(job->limit * gs_type_size(job->type))) : NULL;
		ta->temp = base + p->key_bytes + p->value_bytes;
		ta->temp_bytes = p->temp_bytes;
		ta->stream = stream;
	}
	else
	{
		gs_gpu_sort_args *a = &p->sort;

		memset(a, 0, sizeof(*a));
		a->type = job->type;
		a->algorithm = job->algorithm;
		a->n = job->n;
		a->descending = job->descending;
		a->keys[0] = base;
		a->keys[1] = base + p->key_bytes;
		if (job->want_perm)
		{
			a->values[0] = (uint32_t *) (base + 2 * p->key_bytes);
			a->values[1] = (uint32_t *) (base + 2 * p->key_bytes + p->value_bytes);
		}
		a->temp = base + 2 * p->key_bytes + 2 * p->value_bytes;
		a->temp_bytes = p->temp_bytes;
		a->stream = stream;
	}
}

size_t
gs_job_device_bytes(const gs_job *job)
{
	size_t		w = gs_type_size(job->type);
	gs_job_plan p;
	gs_error	err;

	if (w == 0 || job->n <= 1)
		return 0;
	if (gs_plan_job(job, &p, &err) == GS_OK)
		return p.total;

	/* The buffers without the scratch: what can be known without it. */
	if (p.select)
		return gs_align_up(job->n * w) + gs_align_up(job->limit * w) +
			gs_align_up(job->limit * sizeof(uint32_t));
	return 2 * gs_align_up(job->n * w) + (job->want_perm ? 2 * gs_align_up(job->n * sizeof(uint32_t)) : 0);
}

/* ------------------------------------------------------------------------
 * The steps of a job on its device.
 * ------------------------------------------------------------------------ */

/* The argsort payload made on the device, then the keys copied in. */
static gs_status
gs_job_copy_in(const gs_job *job, const gs_job_transfer *t, gs_job_plan *p, gs_error *err)
{
	if (job->want_perm && !p->select)
		GS_RT_CHECK(gs_launch_iota(p->sort.values[0], job->n, t->stream),
					"could not launch the argsort payload kernel", t->stream);
	return t->copy_in(t->arg, p->select ? (void *) p->topk.keys_in : p->sort.keys[0],
					  job->n * gs_type_size(job->type), err);
}

/* The sort or the select, timed on the device (sort_ms), the transfer's work overlapping it. */
static gs_status
gs_job_sort(const gs_job_transfer *t, gs_job_plan *p, gs_run_report *rep, gs_error *err)
{
	float		ms = 0;
	gs_status	s;

	GS_RT_CHECK(cudaEventRecord(t->timing[0], t->stream), "could not record a CUDA event", t->stream);
	if (p->select)
	{
		s = gs_gpu_topk(&p->topk, err);
		rep->algorithm = p->topk.algorithm_used;
	}
	else
	{
		s = gs_gpu_sort(&p->sort, err);
		rep->algorithm = p->sort.algorithm_used;
	}
	if (s != GS_OK)
	{
		/* the sort named the error; did the context survive it? */
		return s == GS_ERR_CUDA ? gs_context_check(s, err, t->stream) : s;
	}
	GS_RT_CHECK(cudaEventRecord(t->timing[1], t->stream), "could not record a CUDA event", t->stream);

	/* the sort returns once its passes are queued: the transfer's share runs meanwhile */
	if (t->during_sort != NULL && (s = t->during_sort(t->arg, p->out_n, err)) != GS_OK)
		return s;
	GS_RT_CHECK(cudaEventSynchronize(t->timing[1]), "the sort failed on the device", t->stream);
	GS_RT_CHECK(cudaEventElapsedTime(&ms, t->timing[0], t->timing[1]), "the sort failed on the device",
				t->stream);
	rep->sort_ms = ms;
	return GS_OK;
}

/* The first out_n keys, then the first out_n positions, whichever are wanted. */
static gs_status
gs_job_copy_out(const gs_job *job, const gs_job_transfer *t, const gs_job_plan *p, gs_error *err)
{
	const void *keys = NULL;
	const void *perm = NULL;

	if (job->want_keys)
		keys = p->select ? p->topk.keys_out : p->sort.keys[p->sort.result_selector];
	if (job->want_perm)
		perm = p->select ? (const void *) p->topk.positions_out : p->sort.values[p->sort.result_selector];
	return t->copy_out(t->arg, keys, keys != NULL ? p->out_n * gs_type_size(job->type) : 0,
					   perm, perm != NULL ? p->out_n * sizeof(uint32_t) : 0, err);
}

static bool
gs_job_interrupted(const gs_job_transfer *t)
{
	return t->interrupted != NULL && t->interrupted(t->arg);
}

/* Copy in, sort, copy out on device memory placed by p. */
static gs_status
gs_job_steps(const gs_job *job, const gs_job_transfer *t, gs_job_plan *p, double start,
			 gs_run_report *rep, gs_error *err)
{
	gs_status	s;

	if ((s = gs_job_copy_in(job, t, p, err)) != GS_OK)
		return s;
	rep->copy_in_ms = gs_clock_ms() - start;
	if (gs_job_interrupted(t))
		return gs_fail(err, GS_ERR_INTERRUPTED, "interrupted before the sort");
	if ((s = gs_job_sort(t, p, rep, err)) != GS_OK)
		return s;
	if (gs_job_interrupted(t))
		return gs_fail(err, GS_ERR_INTERRUPTED, "interrupted after the sort");
	if ((s = gs_job_copy_out(job, t, p, err)) != GS_OK)
		return s;
	if (t->finish != NULL)
		t->finish(t->arg);
	rep->copy_out_ms = gs_clock_ms() - start - rep->copy_in_ms - rep->sort_ms;
	if (rep->copy_out_ms < 0)
		rep->copy_out_ms = 0;
	return GS_OK;
}

gs_status
gs_job_run(const gs_job *job, const gs_job_transfer *t, double start, gs_run_report *rep, gs_error *err)
{
	gs_job_plan p;
	char	   *base = NULL;
	gs_status	s;

	s = gs_plan_job(job, &p, err);
	if (s == GS_OK && job->max_device_bytes != 0 && p.total > job->max_device_bytes)
		s = gs_fail(err, GS_ERR_MEMORY_LIMIT,
					"the sort needs %.1f MB of device memory, more than the limit of %.1f MB",
					p.total / 1048576.0, job->max_device_bytes / 1048576.0);
	if (s == GS_OK && (s = t->acquire(t->arg, p.total, job->max_device_bytes, &base, err)) != GS_OK)
		base = NULL;
	if (s == GS_OK)
	{
		rep->device_bytes = p.total;
		gs_place_job(job, &p, base, t->stream);
		s = gs_job_steps(job, t, &p, start, rep, err);
	}

	/*
	 * Whatever happened, leave no copy in flight into memory that is about
	 * to be handed back or unpinned.  (A broken context answers these with
	 * errors, which change nothing here.)
	 */
	if (s != GS_OK)
	{
		(void) cudaStreamSynchronize(t->stream);
		(void) cudaGetLastError();
	}
	if (t->finish != NULL)
		t->finish(t->arg);
	if (base != NULL)
		t->release(t->arg, base);
	return s;
}
