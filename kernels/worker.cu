/*
 * worker.cu: workers, the thread-safe way to sort on a device that the GPU
 * server's threads use.  Each worker owns a stream and its events; its
 * device memory comes per job from the device's stream-ordered pool, which
 * keeps freed memory for the next job (gs_device_pool_keep), so several
 * workers sort at once on one device and small jobs never wait for a large
 * one's allocation.
 *
 * A job runs through the job core of host_job.cu, as gs_host_sort's do:
 * a sort, or for one that wants only the first limit of the order the radix
 * select (gs_gpu_topk), streaming out only those.  What is the worker's own
 * is the transfer: the data stream through a ring of pinned host buffers
 * that the caller fills and drains (gs_stream_io): input chunk i is copied to
 * the device as soon as it is ready while the caller writes chunk i + 1, and
 * output chunks likewise, so the host copies on the caller's side overlap
 * the DMA.
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

/* The job core's view of a stream job (host_job.cu). */
static void
gs_stream_job_core(const gs_stream_job *job, gs_job *j)
{
	memset(j, 0, sizeof(*j));
	j->type = job->type;
	j->algorithm = job->algorithm;
	j->n = job->n;
	j->limit = job->limit < job->n ? job->limit : 0;
	j->descending = job->descending;
	j->want_keys = job->want_keys;
	j->want_perm = job->want_perm;
	j->max_device_bytes = job->max_device_bytes;
}

size_t
gs_stream_job_device_bytes(const gs_stream_job *job)
{
	gs_job		j;

	if (job == NULL)
		return 0;
	gs_stream_job_core(job, &j);
	return gs_job_device_bytes(&j);
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

/* The transfer's state: the worker and the caller's ring. */
typedef struct gs_ring_transfer
{
	gs_worker  *w;
	const gs_stream_io *io;
} gs_ring_transfer;

/* Device memory from the device's stream-ordered pool, on the worker's stream. */
static gs_status
gs_ring_acquire(void *arg, size_t bytes, size_t limit, char **base, gs_error *err)
{
	gs_worker  *w = ((gs_ring_transfer *) arg)->w;

	(void) limit;				/* gs_job_run checked the plan against it */
	GS_RT_CHECK(cudaMallocAsync((void **) base, bytes, w->stream), "could not allocate device memory", w->stream);
	w->device_bytes = bytes;
	return GS_OK;
}

static void
gs_ring_release(void *arg, char *base)
{
	gs_worker  *w = ((gs_ring_transfer *) arg)->w;

	(void) cudaFreeAsync(base, w->stream);
	(void) cudaStreamSynchronize(w->stream);
	(void) cudaGetLastError();
	w->device_bytes = 0;
}

/*
 * Copy in: chunk i goes to the device as soon as the producer has it; its
 * slot is handed back once the copy is done, one chunk later, so one copy
 * is always queued while the producer writes the next.
 */
static gs_status
gs_ring_copy_in(void *arg, void *dev, size_t bytes, gs_error *err)
{
	gs_worker  *w = ((gs_ring_transfer *) arg)->w;
	const gs_stream_io *io = ((gs_ring_transfer *) arg)->io;
	size_t		chunks = (bytes + io->chunk_bytes - 1) / io->chunk_bytes;
	gs_segments in;

	in.count = 1;
	in.ptr[0] = (char *) dev;
	in.bytes[0] = bytes;
	for (size_t i = 0; i < chunks; i++)
	{
		size_t		off = i * io->chunk_bytes;
		size_t		len = bytes - off < io->chunk_bytes ? bytes - off : io->chunk_bytes;
		int			slot = (int) (i % io->slots);

		if (!io->input_ready(io->arg, i))
			return gs_fail(err, GS_ERR_INTERRUPTED, "the job was withdrawn while its input was copied");
		GS_RT_CHECK(gs_copy_segments(&in, io->ring + (size_t) slot * io->chunk_bytes, off, len, true, w->stream),
					"could not copy to the device", w->stream);
		GS_RT_CHECK(cudaEventRecord(w->slot_events[slot], w->stream), "could not record a CUDA event", w->stream);
		if (i > 0)
		{
			GS_RT_CHECK(cudaEventSynchronize(w->slot_events[(i - 1) % io->slots]), "could not copy to the device",
						w->stream);
			io->input_done(io->arg, i - 1);
		}
	}
	GS_RT_CHECK(cudaStreamSynchronize(w->stream), "could not copy to the device", w->stream);
	io->input_done(io->arg, chunks - 1);
	return GS_OK;
}

/* Copy out: the keys, then the positions, as one stream, chunk by chunk. */
static gs_status
gs_ring_copy_out(void *arg, const void *keys, size_t key_bytes, const void *perm, size_t perm_bytes,
				 gs_error *err)
{
	gs_worker  *w = ((gs_ring_transfer *) arg)->w;
	const gs_stream_io *io = ((gs_ring_transfer *) arg)->io;
	gs_segments outs;
	size_t		total,
				chunks;

	outs.count = 0;
	if (keys != NULL)
	{
		outs.ptr[outs.count] = (char *) keys;
		outs.bytes[outs.count++] = key_bytes;
	}
	if (perm != NULL)
	{
		outs.ptr[outs.count] = (char *) perm;
		outs.bytes[outs.count++] = perm_bytes;
	}
	total = outs.bytes[0] + (outs.count > 1 ? outs.bytes[1] : 0);
	chunks = (total + io->chunk_bytes - 1) / io->chunk_bytes;
	for (size_t i = 0; i < chunks + 1; i++)
	{
		/* step i: issue chunk i, then hand over chunk i - 1 once it has landed */
		if (i < chunks)
		{
			size_t		off = i * io->chunk_bytes;
			size_t		len = total - off < io->chunk_bytes ? total - off : io->chunk_bytes;
			int			slot = (int) (i % io->slots);

			if (!io->output_free(io->arg, i))
				return gs_fail(err, GS_ERR_INTERRUPTED, "the job was withdrawn while its output was copied");
			GS_RT_CHECK(gs_copy_segments(&outs, io->ring + (size_t) slot * io->chunk_bytes, off, len, false,
										 w->stream), "could not copy from the device", w->stream);
			GS_RT_CHECK(cudaEventRecord(w->slot_events[slot], w->stream), "could not record a CUDA event",
						w->stream);
		}
		if (i > 0)
		{
			GS_RT_CHECK(cudaEventSynchronize(w->slot_events[(i - 1) % io->slots]),
						"could not copy from the device", w->stream);
			io->output_ready(io->arg, i - 1);
		}
	}
	return GS_OK;
}

gs_status
gs_worker_sort(gs_worker *w, const gs_stream_job *job, const gs_stream_io *io,
			   gs_run_report *report, gs_error *err)
{
	double		start = gs_clock_ms();
	gs_run_report rep;
	gs_ring_transfer r;
	gs_job_transfer t;
	gs_job		j;
	gs_status	s;

	memset(&rep, 0, sizeof(rep));
	rep.device = w->device;
	rep.algorithm = job->algorithm;
	if (gs_type_size(job->type) == 0 || job->n < 2 || io->slots < 2 || io->slots > GS_WORKER_MAX_SLOTS ||
		io->chunk_bytes == 0 || (!job->want_keys && !job->want_perm) ||
		(job->want_perm && job->n > (size_t) UINT32_MAX))
		s = gs_fail(err, GS_ERR_INVALID_ARGUMENT, "invalid stream job");
	else
	{
		gs_stream_job_core(job, &j);
		r.w = w;
		r.io = io;
		memset(&t, 0, sizeof(t));
		t.stream = w->stream;
		t.timing[0] = w->timing[0];
		t.timing[1] = w->timing[1];
		t.arg = &r;
		t.acquire = gs_ring_acquire;
		t.release = gs_ring_release;
		t.copy_in = gs_ring_copy_in;
		t.copy_out = gs_ring_copy_out;
		s = gs_job_run(&j, &t, start, &rep, err);
	}
	rep.total_ms = gs_clock_ms() - start;
	if (report != NULL)
		*report = rep;
	return s;
}
