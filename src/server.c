/*
 * server.c: the GPU server, a background worker that owns the CUDA contexts
 * and sorts for every backend (server.h describes the shared memory).
 *
 * The process has one main thread, which alone talks to PostgreSQL: it
 * admits queued jobs (submission order; a job waits while no worker thread,
 * no device memory within the budget or no region of the transfer area is
 * free), and sets the latches of the backends the worker threads want to
 * wake.  The worker threads, gpusort.server_streams per GPU, each run one
 * job at a time with kernels/ (gs_worker_sort on a stream of their own) and
 * call nothing of PostgreSQL: they read and write the job's slot with
 * atomics and tell the main thread what to do through a pipe.
 *
 * Faults: a CUDA error fails the job it happened in.  One that leaves the
 * context unusable ends the process with code 1; the postmaster starts the
 * server again a second later with fresh contexts, and queued jobs wait for
 * it.  However the server ends, its exit settles every job it had admitted
 * (settle_orphaned_jobs): withdrawn ones are freed, the others fail or keep
 * their result, their backends woken at once.
 */
#include "postgres.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "gpusort_pg.h"
#include "server.h"

PGDLLEXPORT void gpusort_server_main(Datum main_arg);

/* What a worker thread asks of the main thread. */
typedef enum RelayKind
{
	RELAY_WAKE,					/* set the latch of the slot's backend */
	RELAY_FINISHED				/* the worker is done with the slot's job */
} RelayKind;

typedef struct RelayMessage
{
	int32		kind;
	int32		worker;
	int32		slot;
	int32		status;			/* RELAY_FINISHED: the job's gs_status */
	uint64		seq;
} RelayMessage;

typedef struct Worker
{
	int			index;
	int			device;
	pthread_t	thread;
	gs_worker  *gw;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	int			slot;			/* the job handed over, -1: none */
	uint64		seq;
	bool		stop;
	volatile int started;		/* 1: ready, -1: failed (error says why) */
	gs_error	error;
	bool		busy;			/* main thread's view */
} Worker;

static Worker *workers;
static int	nworkers;
static int	relay_pipe[2] = {-1, -1};
static volatile bool threads_stop = false;

#ifdef GS_INJECTION_POINTS
static bool cpu_device = false;	/* the CPU stands in for GPU 0 */
#define INJECTION_HOLD(stage) injection_hold(stage)
#else
#define cpu_device false
#define INJECTION_HOLD(stage) ((void) 0)
#endif

/* ------------------------------------------------------------------------
 * Worker threads: nothing of PostgreSQL below this line until the main
 * thread's part.
 * ------------------------------------------------------------------------ */

static void
relay(RelayKind kind, int worker, int slot, uint64 seq, gs_status status)
{
	RelayMessage m;
	ssize_t		r;

	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.worker = worker;
	m.slot = slot;
	m.seq = seq;
	m.status = status;
	/*
	 * A pipe write of a few bytes is atomic.  The pipe is non-blocking: when
	 * it is full the main thread is busy, so wait a little, but give up once
	 * the server stops (its exit joins this thread and reads no more).
	 */
	for (;;)
	{
		r = write(relay_pipe[1], &m, sizeof(m));
		if (r == sizeof(m) || threads_stop)
			break;
		if (r < 0 && errno != EINTR && errno != EAGAIN)
			break;
		if (r < 0 && errno == EAGAIN)
		{
			struct timespec ts = {0, 20000};

			nanosleep(&ts, NULL);
		}
	}
}

#ifdef GS_INJECTION_POINTS
/*
 * Holds the calling worker while the injection names this stage for this
 * server, until it is cleared or the server stops.  It does not look at the
 * job's cancel flag: the job is as busy as one inside a long copy or sort.
 */
static void
injection_hold(GpusortInjection stage)
{
	GpusortServerShared *srv = gpusort_server;
	struct timespec ts = {0, 1000000};

	if (__atomic_load_n(&srv->inject, __ATOMIC_ACQUIRE) != (uint32) stage ||
		srv->inject_generation != srv->generation)
		return;
	__atomic_add_fetch(&srv->inject_held, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&srv->inject, __ATOMIC_ACQUIRE) == (uint32) stage && !threads_stop)
		nanosleep(&ts, NULL);
	__atomic_sub_fetch(&srv->inject_held, 1, __ATOMIC_ACQ_REL);
}
#endif

typedef struct StreamArg
{
	GpusortJobSlot *slot;
	int			slot_index;
	int			worker;
	uint64		seq;
	uint64		in_chunks;
} StreamArg;

/*
 * Waits until *counter reaches target, polling: the backend on the other
 * side writes a chunk in a millisecond or less, so a short sleep costs less
 * than any wake-up.  False when the job is withdrawn or the server stops.
 */
static bool
wait_counter(StreamArg *a, volatile uint64 *counter, uint64 target)
{
	long		sleep_ns = 1000;

	while (load64(counter) < target)
	{
		struct timespec ts;

		if (__atomic_load_n(&a->slot->cancel, __ATOMIC_ACQUIRE) || threads_stop)
			return false;
		ts.tv_sec = 0;
		ts.tv_nsec = sleep_ns;
		nanosleep(&ts, NULL);
		if (sleep_ns < 20000)
			sleep_ns *= 2;
	}
	return !__atomic_load_n(&a->slot->cancel, __ATOMIC_ACQUIRE);
}

static bool
io_input_ready(void *arg, size_t chunk)
{
	StreamArg  *a = (StreamArg *) arg;

	if (chunk == Min(1, a->in_chunks - 1))
		INJECTION_HOLD(GPUSORT_INJECT_COPY_IN);
	return wait_counter(a, &a->slot->in_ready, chunk + 1);
}

static void
io_input_done(void *arg, size_t chunk)
{
	StreamArg  *a = (StreamArg *) arg;

	store64(&a->slot->in_done, chunk + 1);
	/* the backend waits for a free ring slot only when the input outgrows the ring */
	if (a->in_chunks > GPUSORT_RING_SLOTS)
		relay(RELAY_WAKE, a->worker, a->slot_index, a->seq, GS_OK);
	if (chunk + 1 == a->in_chunks)
		INJECTION_HOLD(GPUSORT_INJECT_RUNNING);
}

static bool
io_output_free(void *arg, size_t chunk)
{
	StreamArg  *a = (StreamArg *) arg;

	if (chunk == 0)
		INJECTION_HOLD(GPUSORT_INJECT_COPY_OUT);
	if (chunk < GPUSORT_RING_SLOTS)
		return !__atomic_load_n(&a->slot->cancel, __ATOMIC_ACQUIRE) && !threads_stop;
	return wait_counter(a, &a->slot->out_done, chunk + 1 - GPUSORT_RING_SLOTS);
}

static void
io_output_ready(void *arg, size_t chunk)
{
	StreamArg  *a = (StreamArg *) arg;

	store64(&a->slot->out_ready, chunk + 1);
	relay(RELAY_WAKE, a->worker, a->slot_index, a->seq, GS_OK);
}

#ifdef GS_INJECTION_POINTS
/*
 * The CPU standing in for a GPU (test builds): gs_worker_sort's stream
 * protocol, with the library's CPU sort in the middle, so that jobs pass
 * through the same stages and callbacks as on a device.
 */
static bool
cpu_stand_in_interrupt(void *arg)
{
	StreamArg  *a = (StreamArg *) arg;

	return threads_stop || __atomic_load_n(&a->slot->cancel, __ATOMIC_ACQUIRE);
}

/* Copies bytes [off, off + len) of the stream that is seg[0] then seg[1]. */
static void
copy_from_segments(char *dst, char *const seg[2], const size_t bytes[2], size_t off, size_t len)
{
	for (int s = 0; s < 2 && len > 0; s++)
	{
		size_t		take;

		if (off >= bytes[s])
		{
			off -= bytes[s];
			continue;
		}
		take = Min(len, bytes[s] - off);
		memcpy(dst, seg[s] + off, take);
		dst += take;
		len -= take;
		off = 0;
	}
}

static gs_status
cpu_stand_in_sort(const gs_stream_job *job, const gs_stream_io *io, gs_run_report *rep, gs_error *err)
{
	size_t		w = gs_type_size(job->type);
	size_t		out_n = job->limit > 0 && job->limit < job->n ? job->limit : job->n;
	size_t		in_bytes = job->n * w;
	size_t		chunks = (in_bytes + io->chunk_bytes - 1) / io->chunk_bytes;
	char	   *seg[2];
	size_t		seg_bytes[2];
	char	   *keys = malloc(in_bytes);
	char	   *scratch = malloc(Max(gs_cpu_topk_scratch_bytes(job->type, job->n, out_n, job->want_perm), 1));
	gs_status	s = GS_OK;

	seg[0] = job->want_keys ? malloc(out_n * w) : NULL;
	seg[1] = job->want_perm ? malloc(out_n * sizeof(uint32)) : NULL;
	seg_bytes[0] = job->want_keys ? out_n * w : 0;
	seg_bytes[1] = job->want_perm ? out_n * sizeof(uint32) : 0;
	rep->device = 0;
	rep->algorithm = GS_ALGO_RADIX;
	if (keys == NULL || scratch == NULL || (job->want_keys && seg[0] == NULL) ||
		(job->want_perm && seg[1] == NULL))
	{
		s = GS_ERR_HOST_MEMORY;
		snprintf(err->message, sizeof(err->message), "out of host memory for the CPU stand-in");
		goto out;
	}

	for (size_t i = 0; i < chunks; i++)
	{
		size_t		off = i * io->chunk_bytes;

		if (!io->input_ready(io->arg, i))
			goto interrupted;
		memcpy(keys + off, io->ring + (i % io->slots) * io->chunk_bytes, Min(io->chunk_bytes, in_bytes - off));
		io->input_done(io->arg, i);
	}

	s = gs_cpu_topk(job->type, keys, job->n, out_n, job->descending, seg[0], (uint32_t *) seg[1],
					scratch, cpu_stand_in_interrupt, io->arg, err);
	if (s == GS_ERR_INTERRUPTED)
		goto interrupted;
	if (s != GS_OK)
		goto out;

	chunks = (seg_bytes[0] + seg_bytes[1] + io->chunk_bytes - 1) / io->chunk_bytes;
	for (size_t i = 0; i < chunks; i++)
	{
		size_t		off = i * io->chunk_bytes;

		if (!io->output_free(io->arg, i))
			goto interrupted;
		copy_from_segments(io->ring + (i % io->slots) * io->chunk_bytes, seg, seg_bytes, off,
						   Min(io->chunk_bytes, seg_bytes[0] + seg_bytes[1] - off));
		io->output_ready(io->arg, i);
	}
	goto out;

interrupted:
	s = GS_ERR_INTERRUPTED;
	snprintf(err->message, sizeof(err->message), "the job was withdrawn");
out:
	err->status = s;
	free(keys);
	free(scratch);
	free(seg[0]);
	free(seg[1]);
	return s;
}
#endif

/* The job a slot describes, as gs_worker_sort takes it (max_device_bytes aside). */
static void
slot_stream_job(const GpusortJobSlot *slot, gs_stream_job *job)
{
	memset(job, 0, sizeof(*job));
	job->type = slot->type;
	job->algorithm = slot->algorithm;
	job->n = slot->n;
	job->limit = slot->limit;
	job->descending = slot->descending;
	job->want_keys = slot->want_keys;
	job->want_perm = slot->want_perm;
}

static gs_status
run_job(Worker *w, int slot_index, uint64 seq)
{
	GpusortJobSlot *slot = &gpusort_server->slots[slot_index];
	gs_stream_job job;
	gs_stream_io io;
	StreamArg	a;
	gs_run_report rep;
	gs_error	err;
	gs_status	status;

	slot_stream_job(slot, &job);
	job.max_device_bytes = slot->reserved_bytes;

	a.slot = slot;
	a.slot_index = slot_index;
	a.worker = w->index;
	a.seq = seq;
	a.in_chunks = gpusort_chunks(slot->n * gs_type_size(slot->type));

	io.ring = gpusort_server->area + slot->region_offset;
	io.chunk_bytes = GPUSORT_CHUNK_BYTES;
	io.slots = GPUSORT_RING_SLOTS;
	io.input_ready = io_input_ready;
	io.input_done = io_input_done;
	io.output_free = io_output_free;
	io.output_ready = io_output_ready;
	io.arg = &a;

	memset(&err, 0, sizeof(err));
	memset(&rep, 0, sizeof(rep));
#ifdef GS_INJECTION_POINTS
	if (cpu_device)
		status = cpu_stand_in_sort(&job, &io, &rep, &err);
	else
#endif
		status = gs_worker_sort(w->gw, &job, &io, &rep, &err);

	slot->status = status;
	memcpy(slot->message, err.message, sizeof(slot->message));
	slot->report = rep;
	__atomic_store_n(&slot->finished, 1, __ATOMIC_RELEASE);
	relay(RELAY_WAKE, w->index, slot_index, seq, GS_OK);
	return status;
}

static void *
worker_main(void *arg)
{
	Worker	   *w = (Worker *) arg;

	/* the polls of wait_counter sleep microseconds, not the default 50 us of slack */
	(void) prctl(PR_SET_TIMERSLACK, 1000UL);

	memset(&w->error, 0, sizeof(w->error));
#ifdef GS_INJECTION_POINTS
	if (cpu_device)
		w->gw = NULL;
	else
#endif
	if (gs_worker_create(w->device, &w->gw, &w->error) != GS_OK)
	{
		__atomic_store_n(&w->started, -1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&w->started, 1, __ATOMIC_RELEASE);

	for (;;)
	{
		int			slot;
		uint64		seq;
		gs_status	status;

		pthread_mutex_lock(&w->mutex);
		while (w->slot < 0 && !w->stop)
			pthread_cond_wait(&w->cond, &w->mutex);
		if (w->stop)
		{
			pthread_mutex_unlock(&w->mutex);
			break;
		}
		slot = w->slot;
		seq = w->seq;
		pthread_mutex_unlock(&w->mutex);

		status = run_job(w, slot, seq);

		pthread_mutex_lock(&w->mutex);
		w->slot = -1;
		pthread_mutex_unlock(&w->mutex);
		relay(RELAY_FINISHED, w->index, slot, seq, status);
	}
	if (w->gw != NULL)
		gs_worker_destroy(w->gw);
	return NULL;
}

/* ------------------------------------------------------------------------
 * The main thread.
 * ------------------------------------------------------------------------ */

/* Answers a job without running it; under the lock. */
static void
reject_job(GpusortJobSlot *slot, gs_status status, const char *fmt,...) pg_attribute_printf(3, 4);

static void
reject_job(GpusortJobSlot *slot, gs_status status, const char *fmt,...)
{
	va_list		ap;

	slot->status = status;
	va_start(ap, fmt);
	vsnprintf(slot->message, sizeof(slot->message), fmt, ap);
	va_end(ap);
	memset(&slot->report, 0, sizeof(slot->report));
	slot->report.device = -1;
	gpusort_server->jobs_rejected++;
	__atomic_store_n(&slot->finished, 1, __ATOMIC_RELEASE);
	if (slot->withdrawn)
		gpusort_server_release_slot(slot);
	else
		SetLatch(slot->latch);
}

/* First fit of count granules in the transfer area, or -1. */
static int
find_region(int count)
{
	GpusortServerShared *srv = gpusort_server;
	int			run = 0;

	for (int g = 0; g < srv->ngranules; g++)
	{
		run = srv->granule_used[g] ? 0 : run + 1;
		if (run == count)
			return g - count + 1;
	}
	return -1;
}

#ifdef GS_INJECTION_POINTS
/* Whether the injection holds every job in the queue. */
static bool
injection_holds_queue(void)
{
	GpusortServerShared *srv = gpusort_server;

	return srv->inject == GPUSORT_INJECT_QUEUED && srv->inject_generation == srv->generation;
}
#endif

/* The elements a job's output holds: the first limit, or all n. */
static Size
slot_out_n(const GpusortJobSlot *slot)
{
	return slot->limit > 0 && slot->limit < slot->n ? slot->limit : slot->n;
}

/*
 * The device memory a job reserves of its device's budget: what the sort,
 * or for a limited job the select, takes on the device.
 */
static Size
job_device_bytes(const GpusortJobSlot *slot)
{
	gs_stream_job job;

#ifdef GS_INJECTION_POINTS
	/*
	 * The CPU stand-in's: the keys and the CPU sort's scratch; for a limited
	 * job the CPU top-k's scratch and the output instead.
	 */
	if (cpu_device)
	{
		Size		w = gs_type_size(slot->type);

		if (slot_out_n(slot) == slot->n)
			return slot->n * w + gs_cpu_scratch_bytes(slot->type, slot->n, slot->want_perm);
		return slot->n * w +
			gs_cpu_topk_scratch_bytes(slot->type, slot->n, slot->limit, slot->want_perm) +
			slot->limit * ((slot->want_keys ? w : 0) + (slot->want_perm ? sizeof(uint32) : 0));
	}
#endif
	slot_stream_job(slot, &job);
	return gs_stream_job_device_bytes(&job);
}

static Worker *
idle_worker(int device)
{
	for (int i = 0; i < nworkers; i++)
		if (workers[i].device == device && !workers[i].busy)
			return &workers[i];
	return NULL;
}

/*
 * Admits queued jobs in submission order while the oldest one finds a
 * worker, device memory and a region; a job that can never fit is answered
 * at once.
 */
static void
admit_jobs(void)
{
	GpusortServerShared *srv = gpusort_server;

	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	for (;;)
	{
		GpusortJobSlot *slot = NULL;
		int			index = -1;
		Size		need,
					stream_bytes,
					region;
		int			best = -1,
					first,
					count;
		bool		fits_somewhere = false;
		Worker	   *w;

		for (int i = 0; i < srv->nslots; i++)
		{
			GpusortJobSlot *s = &srv->slots[i];

			if (s->state == GPUSORT_SLOT_QUEUED && !s->finished &&
				(slot == NULL || s->seq < slot->seq))
			{
				slot = s;
				index = i;
			}
		}
		if (slot == NULL)
			break;
#ifdef GS_INJECTION_POINTS
		if (injection_holds_queue())
			break;
#endif

		if (srv->state == GPUSORT_SERVER_NO_GPU)
		{
			reject_job(slot, GS_ERR_NO_DEVICE, "%s", srv->reason);
			continue;
		}
		if (slot->device_wanted >= srv->ndevices)
		{
			reject_job(slot, GS_ERR_NO_DEVICE, "GPU %d does not exist; the server has %d", slot->device_wanted, srv->ndevices);
			continue;
		}

		need = job_device_bytes(slot);
		if (slot->max_device_bytes != 0 && need > slot->max_device_bytes)
		{
			reject_job(slot, GS_ERR_MEMORY_LIMIT,
					   "the sort needs %.1f MB of device memory, more than the limit of %.1f MB",
					   need / 1048576.0, slot->max_device_bytes / 1048576.0);
			continue;
		}

		for (int d = 0; d < srv->ndevices; d++)
		{
			GpusortDeviceStats *dev = &srv->devices[d];

			if (slot->device_wanted >= 0 && d != slot->device_wanted)
				continue;
			if (need > dev->budget_bytes)
				continue;
			fits_somewhere = true;
			if (dev->reserved_bytes + need > dev->budget_bytes || idle_worker(d) == NULL)
				continue;
			if (best < 0 || dev->reserved_bytes < srv->devices[best].reserved_bytes)
				best = d;
		}
		if (!fits_somewhere)
		{
			reject_job(slot, GS_ERR_MEMORY_LIMIT,
					   "the sort needs %.1f MB of device memory, more than the server's budget (gpusort.server_memory)",
					   need / 1048576.0);
			continue;
		}
		if (best < 0)
			break;				/* the oldest job waits for memory or a worker */

		/* the ring holds the input stream, then the output stream (the first limit) */
		stream_bytes = Max(slot->n * gs_type_size(slot->type),
						   (slot->want_keys ? slot_out_n(slot) * gs_type_size(slot->type) : 0) +
						   (slot->want_perm ? slot_out_n(slot) * sizeof(uint32) : 0));
		region = Min(stream_bytes, GPUSORT_CHUNK_BYTES * GPUSORT_RING_SLOTS);
		count = (int) gpusort_area_granules(region);
		first = find_region(count);
		if (first < 0)
			break;				/* the oldest job waits for room in the transfer area */

		w = idle_worker(best);
		memset(srv->granule_used + first, 1, count);
		slot->region_offset = (Size) first * GPUSORT_AREA_GRANULE;
		slot->region_bytes = (Size) count * GPUSORT_AREA_GRANULE;
		srv->area_used += slot->region_bytes;
		slot->device = best;
		slot->reserved_bytes = need;
		srv->devices[best].reserved_bytes += need;
		slot->worker = w->index;
		slot->generation = srv->generation;
		slot->admitted = GetCurrentTimestamp();
		slot->state = GPUSORT_SLOT_RUNNING;

		w->busy = true;
		pthread_mutex_lock(&w->mutex);
		w->slot = index;
		w->seq = slot->seq;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->mutex);

		SetLatch(slot->latch);
	}
	LWLockRelease(srv->lock);
}

/* Ends the server for a fresh start (server_exit fails the jobs in flight). */
static void
context_broken_error(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYSTEM_ERROR),
			 errmsg("gpusort server: a CUDA error left a GPU context unusable, restarting")));
}

/* Acts on what the worker threads sent. */
static void
drain_relay(void)
{
	GpusortServerShared *srv = gpusort_server;
	RelayMessage m;
	bool		context_broken = false;

	for (;;)
	{
		ssize_t		r = read(relay_pipe[0], &m, sizeof(m));
		GpusortJobSlot *slot;

		if (r != sizeof(m))
			break;
		slot = &srv->slots[m.slot];
		if (m.kind == RELAY_WAKE)
		{
			/* a stale wake (the slot has a new job) only costs the backend a look */
			if (slot->latch != NULL)
				SetLatch(slot->latch);
			continue;
		}

		/* RELAY_FINISHED; the backend may have freed the slot already */
		workers[m.worker].busy = false;
		LWLockAcquire(srv->lock, LW_EXCLUSIVE);
		{
			GpusortDeviceStats *dev = &srv->devices[workers[m.worker].device];

			if (m.status == GS_OK)
				dev->jobs_done++;
			else
				dev->jobs_failed++;
		}
		if (slot->seq == m.seq && slot->state == GPUSORT_SLOT_RUNNING && slot->withdrawn)
			gpusort_server_release_slot(slot);
		LWLockRelease(srv->lock);
		if (gs_device_context_broken())
			context_broken = true;
	}

	if (context_broken)
		context_broken_error();
}

/*
 * Settles the jobs that servers other than generation live admitted, whose
 * processes are gone or going: at exit (live 0: none) after joining the
 * worker threads, and at start (live: the new generation) for any an exit
 * left.  Under the lock.
 *
 * A withdrawn job's slot is freed here, whether or not its worker had
 * finished: the RELAY_FINISHED that would have freed it may sit unread in the
 * pipe.  Every other job keeps its slot and region until its backend has
 * read what is there, and loses its reservation of device memory, which died
 * with the process; one without a result fails, and its backend is woken at
 * once to report it, sort on the CPU or send the job again.
 */
static void
settle_orphaned_jobs(uint64 live)
{
	GpusortServerShared *srv = gpusort_server;

	for (int i = 0; i < srv->nslots; i++)
	{
		GpusortJobSlot *slot = &srv->slots[i];

		if (slot->state != GPUSORT_SLOT_RUNNING || slot->generation == live)
			continue;
		if (slot->withdrawn)
		{
			gpusort_server_release_slot(slot);
			continue;
		}
		gpusort_server_unreserve(slot->device, slot->reserved_bytes);
		slot->reserved_bytes = 0;
		if (!slot->finished)
		{
			slot->status = GS_ERR_CUDA;
			strlcpy(slot->message, "the GPU server stopped while sorting", sizeof(slot->message));
			__atomic_store_n(&slot->finished, 1, __ATOMIC_RELEASE);
			if (slot->device >= 0 && slot->device < GPUSORT_SERVER_MAX_DEVICES)
				srv->devices[slot->device].jobs_failed++;
		}
		SetLatch(slot->latch);
	}
}

/*
 * At exit (SIGTERM, an error, a broken context): the jobs in flight are
 * settled (settle_orphaned_jobs); queued jobs stay for the next server.
 */
static void
server_exit(int code, Datum arg)
{
	GpusortServerShared *srv = gpusort_server;

	/*
	 * The threads stop at their next chunk or after the sort in progress
	 * (a fraction of a second): the process must not exit under them.
	 */
	threads_stop = true;
	for (int i = 0; i < nworkers; i++)
	{
		pthread_mutex_lock(&workers[i].mutex);
		workers[i].stop = true;
		pthread_cond_signal(&workers[i].cond);
		pthread_mutex_unlock(&workers[i].mutex);
	}
	for (int i = 0; i < nworkers; i++)
		if (workers[i].started == 1)
			pthread_join(workers[i].thread, NULL);
	nworkers = 0;

	LWLockReleaseAll();
	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	settle_orphaned_jobs(0);
	srv->state = GPUSORT_SERVER_STARTING;
	srv->server_pid = 0;
	srv->server_latch = NULL;
	LWLockRelease(srv->lock);
}

/* The device-memory budget of device d from gpusort.server_memory. */
static Size
device_budget(const gs_device_props *props)
{
	if (gpusort_server_memory > 0)
		return Min((Size) gpusort_server_memory * 1024 * 1024, props->total_memory);
	return props->total_memory / 10 * 8;
}

/*
 * Finds the GPUs and sets their budgets; returns how many, or -1 with
 * srv->reason set when none can be used.
 */
static int
find_devices(void)
{
	GpusortServerShared *srv = gpusort_server;
	gs_runtime_info info;
	gs_error	err;
	int			ndev;

	gs_runtime_probe(&info);
	srv->runtime = info;
	if (info.status != GS_OK)
	{
		strlcpy(srv->reason, info.reason[0] != '\0' ? info.reason : gs_status_name(info.status),
				sizeof(srv->reason));
		return -1;
	}

	ndev = Min(info.device_count, GPUSORT_SERVER_MAX_DEVICES);
	for (int d = 0; d < ndev; d++)
	{
		GpusortDeviceStats *dev = &srv->devices[d];

		if (gs_device_props_get(d, &dev->props, &err) != GS_OK ||
			gs_device_pool_keep(d, device_budget(&dev->props), &err) != GS_OK)
		{
			snprintf(srv->reason, sizeof(srv->reason), "GPU %d: %s", d, err.message);
			return -1;
		}
		dev->budget_bytes = device_budget(&dev->props);
	}
	return ndev;
}

#ifdef GS_INJECTION_POINTS
/* The CPU as GPU 0 (test builds with gpusort.server_cpu_device); returns 1. */
static int
cpu_stand_in_device(void)
{
	GpusortServerShared *srv = gpusort_server;
	GpusortDeviceStats *dev = &srv->devices[0];

	memset(&dev->props, 0, sizeof(dev->props));
	strlcpy(dev->props.name, "the CPU standing in for a GPU (test build)", sizeof(dev->props.name));
	dev->props.total_memory = dev->props.free_memory = (Size) 4 << 30;
	dev->budget_bytes = device_budget(&dev->props);
	srv->runtime.status = GS_OK;
	srv->runtime.device_count = 1;
	srv->runtime.reason[0] = '\0';
	cpu_device = true;
	return 1;
}
#endif

/* Starts nworkers worker threads, gpusort.server_streams per device. */
static void
start_workers(int ndev)
{
	sigset_t	all,
				old;

	nworkers = ndev * gpusort_server_streams;
	workers = (Worker *) MemoryContextAllocZero(TopMemoryContext, sizeof(Worker) * nworkers);

	/* the threads inherit a mask that keeps PostgreSQL's signals for this thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < nworkers; i++)
	{
		Worker	   *w = &workers[i];

		w->index = i;
		w->device = i / gpusort_server_streams;
		w->slot = -1;
		pthread_mutex_init(&w->mutex, NULL);
		pthread_cond_init(&w->cond, NULL);
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
		{
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("gpusort server: could not start a worker thread")));
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * Finds the GPUs, pins the transfer area, starts the worker threads.
 * Returns false with srv->reason set when no GPU can be used.
 */
static bool
start_devices(void)
{
	GpusortServerShared *srv = gpusort_server;
	gs_error	err;
	int			ndev;

	ndev = find_devices();
#ifdef GS_INJECTION_POINTS
	if (ndev < 0 && gpusort_server_cpu_device)
		ndev = cpu_stand_in_device();
#endif
	if (ndev < 0)
		return false;

	if (!cpu_device && gs_host_pin(srv->area, srv->area_bytes, &err) != GS_OK)
	{
		strlcpy(srv->reason, err.message, sizeof(srv->reason));
		return false;
	}

	if (pipe(relay_pipe) != 0 || fcntl(relay_pipe[0], F_SETFL, O_NONBLOCK) != 0 ||
		fcntl(relay_pipe[1], F_SETFL, O_NONBLOCK) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gpusort server: could not create a pipe: %m")));

	start_workers(ndev);
	for (int i = 0; i < nworkers; i++)
	{
		while (__atomic_load_n(&workers[i].started, __ATOMIC_ACQUIRE) == 0)
			pg_usleep(1000L);
		if (workers[i].started < 0)
		{
			snprintf(srv->reason, sizeof(srv->reason), "GPU %d: %s",
					 workers[i].device, workers[i].error.message);
			return false;
		}
	}
	srv->ndevices = ndev;
	return true;
}

void
gpusort_server_main(Datum main_arg)
{
	GpusortServerShared *srv = gpusort_server;
	bool		ready;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/*
	 * Jobs that a previous server had admitted are lost with its process:
	 * its exit settled them, and this settles any it could not (their
	 * backends fall back or report the error); jobs still queued are served
	 * by this one.
	 */
	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	srv->generation++;
	srv->state = GPUSORT_SERVER_STARTING;
	srv->server_pid = MyProcPid;
	srv->server_latch = MyLatch;
	srv->started = GetCurrentTimestamp();
	settle_orphaned_jobs(srv->generation);
	LWLockRelease(srv->lock);
	on_shmem_exit(server_exit, (Datum) 0);

	ready = start_devices();

	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	srv->state = ready ? GPUSORT_SERVER_READY : GPUSORT_SERVER_NO_GPU;
	LWLockRelease(srv->lock);
	if (ready)
		ereport(LOG,
				(errmsg("gpusort server: sorting on %d GPU%s with %d jobs in flight each, transfer area %d MB",
						srv->ndevices, srv->ndevices == 1 ? "" : "s", gpusort_server_streams,
						gpusort_transfer_area)));
	else
		ereport(LOG,
				(errmsg("gpusort server: no GPU is usable, sorts run on the CPU: %s", srv->reason)));

	for (;;)
	{
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		admit_jobs();
		if (relay_pipe[0] >= 0)
			events |= WL_SOCKET_READABLE;
		(void) WaitLatchOrSocket(MyLatch, events, relay_pipe[0], -1L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			LWLockAcquire(srv->lock, LW_EXCLUSIVE);
			for (int d = 0; d < srv->ndevices; d++)
				srv->devices[d].budget_bytes = device_budget(&srv->devices[d].props);
			LWLockRelease(srv->lock);
		}
		if (relay_pipe[0] >= 0)
			drain_relay();
#ifdef GS_INJECTION_POINTS
		if (srv->inject_exit_error == srv->generation)
			context_broken_error();
#endif
	}
}
