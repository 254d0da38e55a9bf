/*
 * worker.cu: workers, the thread-safe way to sort on a device that the GPU
 * server's threads use.  Each worker owns a stream and its events; its
 * device memory comes per job from the device's stream-ordered pool, which
 * keeps freed memory for the next job (gs_device_pool_keep), so several
 * workers sort at once on one device and small jobs never wait for a large
 * one's allocation.
 *
 * A job that wants only the first limit of the order runs the radix select
 * (gs_gpu_topk) instead of the sort, and streams out only those.
 *
 * The data stream through a ring of pinned host buffers that the caller
 * fills and drains (gs_stream_io): input chunk i is copied to the device as
 * soon as it is ready while the caller writes chunk i + 1, and output chunks
 * likewise, so the host copies on the caller's side overlap the DMA.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <pthread.h>

#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"
#include "device_internal.h"

/* One event per ring slot, plus the two that time the sort. */
#define GS_WORKER_MAX_SLOTS	8

struct gs_worker
{
	int			device;
	cudaStream_t stream;
	cudaEvent_t slot_events[GS_WORKER_MAX_SLOTS];
	cudaEvent_t timing[2];
	size_t		device_bytes;	/* held by the job in progress */
};

/* A checked CUDA call of the worker, through the fault hook. */
#define GS_W_CHECK(call, what) \
	do { \
		bool		gs_inj_; \
		cudaError_t gs_e_ = GS_RT_CALL((call), gs_inj_); \
		if (gs_e_ != cudaSuccess) \
		{ \
			s = gs_runtime_fail(err, gs_e_, gs_inj_, (what), w->stream); \
			goto out; \
		} \
	} while (0)

gs_status
gs_worker_create(int id, gs_worker **worker, gs_error *err)
{
	gs_worker  *w;
	cudaError_t e;
	int			i;

	*worker = NULL;
	if (gs_device_context_broken())
		return gs_fail(err, GS_ERR_CUDA,
					   "the CUDA context is unusable after an earlier error: restart the process to use the GPU again");
	w = (gs_worker *) calloc(1, sizeof(gs_worker));
	if (w == NULL)
		return gs_fail(err, GS_ERR_HOST_MEMORY, "out of host memory for a worker");
	w->device = id;

	/* the context and the runtime's threads start here: no signal may reach them */
	e = gs_context_create(id);
	{
		gs_signals_blocked blocked;

		if (e == cudaSuccess)
			e = gs_stream_make(&w->stream);
		for (i = 0; i < GS_WORKER_MAX_SLOTS && e == cudaSuccess; i++)
			e = gs_event_make(&w->slot_events[i], cudaEventDisableTiming);
		for (i = 0; i < 2 && e == cudaSuccess; i++)
			e = gs_event_make(&w->timing[i], cudaEventDefault);
	}
	if (e != cudaSuccess)
	{
		gs_status	s = gs_cuda_fail(err, e, "could not set up a worker on the device");

		(void) cudaGetLastError();
		gs_worker_destroy(w);
		return s;
	}
	gs_fault_arm();
	*worker = w;
	return GS_OK;
}

void
gs_worker_destroy(gs_worker *w)
{
	int			i;

	if (w == NULL)
		return;
	if (w->stream != NULL)
	{
		(void) cudaStreamSynchronize(w->stream);
		(void) cudaStreamDestroy(w->stream);
	}
	for (i = 0; i < GS_WORKER_MAX_SLOTS; i++)
		if (w->slot_events[i] != NULL)
			(void) cudaEventDestroy(w->slot_events[i]);
	for (i = 0; i < 2; i++)
		if (w->timing[i] != NULL)
			(void) cudaEventDestroy(w->timing[i]);
	gs_readback_free_idle();
	(void) cudaGetLastError();
	free(w);
}

size_t
gs_worker_device_bytes(const gs_worker *w)
{
	return w != NULL ? w->device_bytes : 0;
}

/*
 * gs_host_pin, gs_host_unpin and gs_device_pool_keep may be the first CUDA
 * calls of the process (the GPU server's main thread makes them before its
 * workers start), and each can create the primary context: signals stay
 * blocked over them.
 */
gs_status
gs_host_pin(void *p, size_t bytes, gs_error *err)
{
	gs_signals_blocked blocked;
	cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);

	if (e != cudaSuccess)
	{
		(void) cudaGetLastError();
		return gs_cuda_fail(err, e, "could not pin the transfer area");
	}
	return GS_OK;
}

void
gs_host_unpin(void *p)
{
	gs_signals_blocked blocked;

	(void) cudaHostUnregister(p);
	(void) cudaGetLastError();
}

gs_status
gs_device_pool_keep(int id, size_t keep_bytes, gs_error *err)
{
	gs_signals_blocked blocked;
	cudaMemPool_t pool;
	uint64_t	keep = keep_bytes;

	GS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, id), err);
	GS_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), err);
	return GS_OK;
}

size_t
gs_stream_job_device_bytes(const gs_stream_job *job)
{
	size_t		w = job != NULL ? gs_type_size(job->type) : 0;
	gs_layout	l;
	gs_gpu_topk_args ta;
	gs_error	err;

	if (w == 0 || job->n <= 1)
		return 0;
	if (job->limit == 0 || job->limit >= job->n)
		return gs_host_sort_device_bytes(job->type, job->algorithm, job->n, job->want_perm);
	if (gs_plan_topk(job->type, job->n, job->limit, job->descending, &l, &ta, &err) != GS_OK)
	{
		/* the buffers without the select's scratch: what can be known without it */
		return job->n * w + job->limit * (w + sizeof(uint32_t));
	}
	return l.total;
}

/*
 * A stream of bytes in up to two device segments (keys, then positions): the
 * piece of chunk [off, off + len) that falls into each is copied with its own
 * call.
 */
typedef struct gs_segments
{
	char	   *ptr[2];
	size_t		bytes[2];
	int			count;
} gs_segments;

static cudaError_t
gs_copy_segments(const gs_segments *seg, char *host, size_t off, size_t len, bool to_device,
				 cudaStream_t stream)
{
	size_t		base = 0;

	for (int i = 0; i < seg->count && len > 0; i++)
	{
		size_t		end = base + seg->bytes[i];

		if (off < end)
		{
			size_t		in = off - base;
			size_t		piece = len < end - off ? len : end - off;
			cudaError_t e;

			if (to_device)
				e = cudaMemcpyAsync(seg->ptr[i] + in, host, piece, cudaMemcpyHostToDevice, stream);
			else
				e = cudaMemcpyAsync(host, seg->ptr[i] + in, piece, cudaMemcpyDeviceToHost, stream);
			if (e != cudaSuccess)
				return e;
			host += piece;
			off += piece;
			len -= piece;
		}
		base = end;
	}
	return cudaSuccess;
}

gs_status
gs_worker_sort(gs_worker *w, const gs_stream_job *job, const gs_stream_io *io,
			   gs_run_report *report, gs_error *err)
{
	double		start = gs_clock_ms();
	gs_run_report rep;
	gs_layout	l;
	gs_gpu_sort_args a;
	gs_gpu_topk_args ta;
	bool		topk;
	gs_segments in,
				outs;
	char	   *base = NULL;
	size_t		w_bytes,
				out_n,
				total,
				chunks,
				i;
	float		sort_ms = 0;
	bool		injected;
	cudaError_t e;
	gs_status	s = GS_OK;

	memset(&rep, 0, sizeof(rep));
	rep.device = w->device;
	rep.algorithm = job->algorithm;
	w_bytes = gs_type_size(job->type);
	if (w_bytes == 0 || job->n < 2 || io->slots < 2 || io->slots > GS_WORKER_MAX_SLOTS ||
		io->chunk_bytes == 0 || (!job->want_keys && !job->want_perm) ||
		(job->want_perm && job->n > (size_t) UINT32_MAX))
	{
		s = gs_fail(err, GS_ERR_INVALID_ARGUMENT, "invalid stream job");
		goto done;
	}

	topk = job->limit > 0 && job->limit < job->n;
	out_n = topk ? job->limit : job->n;
	if (topk)
		s = gs_plan_topk(job->type, job->n, job->limit, job->descending, &l, &ta, err);
	else
		s = gs_plan(job->type, job->algorithm, job->n, job->want_perm, &l, err);
	if (s != GS_OK)
		goto done;
	if (job->max_device_bytes != 0 && l.total > job->max_device_bytes)
	{
		s = gs_fail(err, GS_ERR_MEMORY_LIMIT,
					"the sort needs %.1f MB of device memory, more than the limit of %.1f MB",
					l.total / 1048576.0, job->max_device_bytes / 1048576.0);
		goto done;
	}

	e = GS_RT_CALL(cudaMallocAsync((void **) &base, l.total, w->stream), injected);
	if (e != cudaSuccess)
	{
		base = NULL;
		s = gs_runtime_fail(err, e, injected, "could not allocate device memory", w->stream);
		goto done;
	}
	w->device_bytes = l.total;
	rep.device_bytes = l.total;

	memset(&a, 0, sizeof(a));
	if (topk)
		gs_layout_topk_args(&l, base, job->want_keys, job->want_perm, w->stream, &ta);
	else
		gs_layout_args(&l, base, job->type, job->algorithm, job->n, job->descending, job->want_perm,
					   w->stream, &a);

	if (job->want_perm && !topk)
		GS_W_CHECK(gs_launch_iota(a.values[0], job->n, w->stream), "could not launch the argsort payload kernel");

	/*
	 * Copy in: chunk i goes to the device as soon as the producer has it;
	 * its slot is handed back once the copy is done, one chunk later, so one
	 * copy is always queued while the producer writes the next.
	 */
	in.count = 1;
	in.ptr[0] = topk ? (char *) ta.keys_in : (char *) a.keys[0];
	in.bytes[0] = job->n * w_bytes;
	total = in.bytes[0];
	chunks = (total + io->chunk_bytes - 1) / io->chunk_bytes;
	for (i = 0; i < chunks; i++)
	{
		size_t		off = i * io->chunk_bytes;
		size_t		len = total - off < io->chunk_bytes ? total - off : io->chunk_bytes;
		int			slot = (int) (i % io->slots);

		if (!io->input_ready(io->arg, i))
		{
			s = gs_fail(err, GS_ERR_INTERRUPTED, "the job was withdrawn while its input was copied");
			goto out;
		}
		GS_W_CHECK(gs_copy_segments(&in, io->ring + (size_t) slot * io->chunk_bytes, off, len, true, w->stream),
				   "could not copy to the device");
		GS_W_CHECK(cudaEventRecord(w->slot_events[slot], w->stream), "could not record a CUDA event");
		if (i > 0)
		{
			GS_W_CHECK(cudaEventSynchronize(w->slot_events[(i - 1) % io->slots]), "could not copy to the device");
			io->input_done(io->arg, i - 1);
		}
	}
	GS_W_CHECK(cudaStreamSynchronize(w->stream), "could not copy to the device");
	io->input_done(io->arg, chunks - 1);
	rep.copy_in_ms = gs_clock_ms() - start;

	/* Sort (or select the first limit), timed on the device. */
	GS_W_CHECK(cudaEventRecord(w->timing[0], w->stream), "could not record a CUDA event");
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
			s = gs_context_check(s, err, w->stream);
		goto out;
	}
	GS_W_CHECK(cudaEventRecord(w->timing[1], w->stream), "could not record a CUDA event");
	GS_W_CHECK(cudaEventSynchronize(w->timing[1]), "the sort failed on the device");
	GS_W_CHECK(cudaEventElapsedTime(&sort_ms, w->timing[0], w->timing[1]), "could not time the sort");
	rep.sort_ms = sort_ms;

	/* Copy out: the keys, then the positions, as one stream of out_n each. */
	outs.count = 0;
	if (job->want_keys)
	{
		outs.ptr[outs.count] = topk ? (char *) ta.keys_out : (char *) a.keys[a.result_selector];
		outs.bytes[outs.count++] = out_n * w_bytes;
	}
	if (job->want_perm)
	{
		outs.ptr[outs.count] = topk ? (char *) ta.positions_out : (char *) a.values[a.result_selector];
		outs.bytes[outs.count++] = out_n * sizeof(uint32_t);
	}
	total = outs.bytes[0] + (outs.count > 1 ? outs.bytes[1] : 0);
	chunks = (total + io->chunk_bytes - 1) / io->chunk_bytes;
	for (i = 0; i < chunks + 1; i++)
	{
		/* step i: issue chunk i, then hand over chunk i - 1 once it has landed */
		if (i < chunks)
		{
			size_t		off = i * io->chunk_bytes;
			size_t		len = total - off < io->chunk_bytes ? total - off : io->chunk_bytes;
			int			slot = (int) (i % io->slots);

			if (!io->output_free(io->arg, i))
			{
				s = gs_fail(err, GS_ERR_INTERRUPTED, "the job was withdrawn while its output was copied");
				goto out;
			}
			GS_W_CHECK(gs_copy_segments(&outs, io->ring + (size_t) slot * io->chunk_bytes, off, len, false,
										w->stream), "could not copy from the device");
			GS_W_CHECK(cudaEventRecord(w->slot_events[slot], w->stream), "could not record a CUDA event");
		}
		if (i > 0)
		{
			GS_W_CHECK(cudaEventSynchronize(w->slot_events[(i - 1) % io->slots]), "could not copy from the device");
			io->output_ready(io->arg, i - 1);
		}
	}

out:
	if (s != GS_OK)
	{
		(void) cudaStreamSynchronize(w->stream);
		(void) cudaGetLastError();
	}
	if (base != NULL)
	{
		(void) cudaFreeAsync(base, w->stream);
		(void) cudaStreamSynchronize(w->stream);
		(void) cudaGetLastError();
	}
	w->device_bytes = 0;
	if (s == GS_OK)
		rep.copy_out_ms = gs_clock_ms() - start - rep.copy_in_ms - rep.sort_ms;
	if (rep.copy_out_ms < 0)
		rep.copy_out_ms = 0;
done:
	rep.total_ms = gs_clock_ms() - start;
	if (report != NULL)
		*report = rep;
	return s;
}
