/*
 * server_client.c: the backends' side of the GPU server (server.h): handing
 * a sort to the server and streaming its data through the transfer area,
 * and what a backend learns of the server (whether it can sort on a GPU,
 * what it found at start).  Its shared memory is set up in server_shmem.c;
 * gpusort_server(), which shows the server, is in info.c.
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "gpusort_pg.h"
#include "server.h"

/* ------------------------------------------------------------------------
 * Submitting a sort.
 * ------------------------------------------------------------------------ */

/* What a backend knows of its job while it waits. */
typedef struct ClientJob
{
	GpusortJobSlot *slot;
	uint64		seq;
	bool		active;
} ClientJob;

static ClientJob current_job;

static bool
job_finished(GpusortJobSlot *slot)
{
	return __atomic_load_n(&slot->finished, __ATOMIC_ACQUIRE) != 0;
}

/*
 * Leaves the job: a queued one is removed, a running one is told to stop
 * and freed by the server once its worker lets go, a finished one is freed
 * here.
 */
static void
withdraw_job(void)
{
	GpusortServerShared *srv = gpusort_server;
	GpusortJobSlot *slot = current_job.slot;
	Latch	   *server_latch = NULL;

	if (!current_job.active)
		return;
	current_job.active = false;

	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	if (slot->seq == current_job.seq && slot->state != GPUSORT_SLOT_FREE)
	{
		if (job_finished(slot))
			gpusort_server_release_slot(slot);
		else if (slot->state == GPUSORT_SLOT_QUEUED)
		{
			srv->jobs_withdrawn++;
			gpusort_server_release_slot(slot);
		}
		else
		{
			slot->withdrawn = true;
			__atomic_store_n(&slot->cancel, 1, __ATOMIC_RELEASE);
		}
	}
	server_latch = srv->server_latch;
	LWLockRelease(srv->lock);

	/* freed memory or a free region may let the next job in */
	if (server_latch != NULL)
		SetLatch(server_latch);
}

/* A backend that exits with a job (FATAL, terminate) leaves it behind cleanly. */
static void
client_exit(int code, Datum arg)
{
	if (current_job.active)
	{
		LWLockReleaseAll();
		withdraw_job();
	}
}

/*
 * Waits until ready(slot, arg) holds or the job is finished; true when
 * ready.  Interrupts are processed: a cancel raises its error here, and the
 * caller's PG_CATCH withdraws the job.
 */
static bool
wait_for(bool (*ready) (GpusortJobSlot *slot, uint64 arg), uint64 arg)
{
	GpusortJobSlot *slot = current_job.slot;

	for (;;)
	{
		if (ready(slot, arg))
			return true;
		if (job_finished(slot))
			return ready(slot, arg);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Takes the job out of the queue if it is still there; false if the server
 * admitted or answered it meanwhile.
 */
static bool
leave_queue(void)
{
	GpusortServerShared *srv = gpusort_server;
	GpusortJobSlot *slot = current_job.slot;
	bool		left = false;

	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	if (slot->seq == current_job.seq && slot->state == GPUSORT_SLOT_QUEUED && !job_finished(slot))
	{
		srv->jobs_withdrawn++;
		gpusort_server_release_slot(slot);
		current_job.active = false;
		left = true;
	}
	LWLockRelease(srv->lock);
	return left;
}

/*
 * Waits while the job is queued, until deadline (0: as long as it takes);
 * false when the deadline came first and the job left the queue.
 */
static bool
wait_admitted(TimestampTz deadline)
{
	GpusortJobSlot *slot = current_job.slot;

	for (;;)
	{
		long		timeout = 1000;

		if (slot->state != GPUSORT_SLOT_QUEUED || job_finished(slot))
			return true;
		if (deadline != 0)
		{
			TimestampTz now = GetCurrentTimestamp();
			long		secs;
			int			usecs;

			if (now >= deadline)
			{
				if (leave_queue())
					return false;
				deadline = 0;	/* admitted meanwhile: it runs */
				continue;
			}
			TimestampDifference(now, deadline, &secs, &usecs);
			timeout = Min(timeout, secs * 1000 + usecs / 1000 + 1);
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

static bool
ring_slot_free(GpusortJobSlot *slot, uint64 chunk)
{
	return slot->state == GPUSORT_SLOT_RUNNING &&
		(chunk < GPUSORT_RING_SLOTS || load64(&slot->in_done) >= chunk + 1 - GPUSORT_RING_SLOTS);
}

static bool
output_chunk_ready(GpusortJobSlot *slot, uint64 chunk)
{
	return load64(&slot->out_ready) > chunk;
}

static bool
never(GpusortJobSlot *slot, uint64 arg)
{
	return false;
}

/* ------------------------------------------------------------------------
 * Copies between the backend's memory and the transfer area.  One core
 * copies about a seventh of what the DMA moves (docs/performance.md,
 * "Large single sorts lose little"), so chunks of large sorts are copied by
 * COPY_THREADS threads: the backend and helpers it starts on its first
 * large sort.  The helpers run memcpy and nothing else (no PostgreSQL,
 * every signal blocked), and the backend waits for them within the chunk,
 * well under a millisecond.
 * ------------------------------------------------------------------------ */

#define COPY_THREADS		4
#define COPY_PARALLEL_MIN	((Size) 2 << 20)

typedef struct CopyPart
{
	char	   *dst;
	const char *src;
	Size		len;
} CopyPart;

static struct
{
	bool		started;
	bool		failed;			/* could not start the helpers: copy alone */
	pthread_mutex_t mutex;
	pthread_cond_t work;
	pthread_cond_t done;
	uint64		round;			/* bumped for each parallel copy */
	int			pending;		/* parts not yet copied in this round */
	CopyPart	parts[COPY_THREADS - 1];
	pthread_t	threads[COPY_THREADS - 1];
} copier;

static void *
copy_helper(void *arg)
{
	int			me = (int) (intptr_t) arg;
	uint64		seen = 0;

	pthread_mutex_lock(&copier.mutex);
	for (;;)
	{
		CopyPart	part;

		while (copier.round == seen)
			pthread_cond_wait(&copier.work, &copier.mutex);
		seen = copier.round;
		part = copier.parts[me];
		pthread_mutex_unlock(&copier.mutex);

		memcpy(part.dst, part.src, part.len);

		pthread_mutex_lock(&copier.mutex);
		if (--copier.pending == 0)
			pthread_cond_signal(&copier.done);
	}
	return NULL;
}

static void
start_copier(void)
{
	sigset_t	all,
				old;

	copier.started = true;
	pthread_mutex_init(&copier.mutex, NULL);
	pthread_cond_init(&copier.work, NULL);
	pthread_cond_init(&copier.done, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < COPY_THREADS - 1; i++)
		if (pthread_create(&copier.threads[i], NULL, copy_helper, (void *) (intptr_t) i) != 0)
		{
			/* those started wait forever for a round that never comes: harmless */
			copier.failed = true;
			break;
		}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* memcpy, split over the helper threads when it is large */
static void
copy_chunk(char *dst, const char *src, Size len)
{
	Size		part;

	if (len < COPY_PARALLEL_MIN)
	{
		memcpy(dst, src, len);
		return;
	}
	if (!copier.started)
		start_copier();
	if (copier.failed)
	{
		memcpy(dst, src, len);
		return;
	}

	/* cut at 4 kB boundaries: the parts never share a page */
	part = TYPEALIGN(4096, len / COPY_THREADS);
	pthread_mutex_lock(&copier.mutex);
	for (int i = 0; i < COPY_THREADS - 1; i++)
	{
		Size		off = (Size) (i + 1) * part;

		copier.parts[i].dst = dst + Min(off, len);
		copier.parts[i].src = src + Min(off, len);
		copier.parts[i].len = off >= len ? 0 : Min(part, len - off);
	}
	copier.pending = COPY_THREADS - 1;
	copier.round++;
	pthread_cond_broadcast(&copier.work);
	pthread_mutex_unlock(&copier.mutex);

	memcpy(dst, src, Min(part, len));

	pthread_mutex_lock(&copier.mutex);
	while (copier.pending > 0)
		pthread_cond_wait(&copier.done, &copier.mutex);
	pthread_mutex_unlock(&copier.mutex);
}

/*
 * The server's state as a backend sees it; false when it cannot sort on a
 * GPU now.  It never waits: while the GPU process starts, a sort under
 * gpusort.device = gpu queues (the server bounds the start), and any other
 * runs on the CPU at once.
 */
bool
gpusort_server_usable(const char **reason)
{
	GpusortServerState state = gpusort_server->state;

	if (state == GPUSORT_SERVER_NO_GPU || state == GPUSORT_SERVER_RESTARTING)
	{
		*reason = gpusort_server->reason;
		return false;
	}
	if (state == GPUSORT_SERVER_STARTING && gpusort_device != GPUSORT_DEVICE_GPU)
	{
		*reason = "the GPU process is starting";
		return false;
	}
	*reason = NULL;
	return true;
}

/*
 * Sorts job on the server's GPUs; returns the library's status (GS_OK or
 * why not) with err and report filled.  The input is never modified before
 * the output is complete, so a failure leaves it intact.  A job still queued
 * after max_queue_ms (0: no limit) leaves the queue and returns
 * GS_ERR_NO_DEVICE, for the CPU to sort it.
 */
gs_status
gpusort_server_sort(const GpusortJob *job, const void *input, int device_wanted,
					size_t max_device_bytes, double max_queue_ms, gs_run_report *report,
					double *queue_ms, gs_error *err)
{
	GpusortServerShared *srv = gpusort_server;
	GpusortJobSlot *slot = NULL;
	static bool exit_registered = false;
	bool		argsort = (job->perm != NULL);
	Size		w = gs_type_size(job->type);
	Size		in_bytes = job->n * w;
	size_t		out_n = job->limit > 0 && job->limit < job->n ? job->limit : job->n;
	Size		out_bytes = out_n * (argsort ? sizeof(uint32) : w);
	char	   *out = argsort ? (char *) job->perm : (char *) job->dest;
	uint64		in_chunks = gpusort_chunks(in_bytes);
	uint64		out_chunks = gpusort_chunks(out_bytes);
	Latch	   *server_latch;
	gs_status	status;
	bool		queued_too_long = false;

	if (!exit_registered)
	{
		before_shmem_exit(client_exit, (Datum) 0);
		exit_registered = true;
	}

	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	for (int i = 0; i < srv->nslots; i++)
	{
		if (srv->slots[i].state == GPUSORT_SLOT_FREE)
		{
			slot = &srv->slots[i];
			break;
		}
	}
	if (slot == NULL)
	{
		LWLockRelease(srv->lock);
		snprintf(err->message, sizeof(err->message), "all %d job slots of the GPU server are taken", srv->nslots);
		err->status = GS_ERR_HOST_MEMORY;
		return GS_ERR_HOST_MEMORY;
	}
	slot->state = GPUSORT_SLOT_QUEUED;
	slot->seq = ++srv->next_seq;
	slot->latch = MyLatch;
	slot->pid = MyProcPid;
	slot->withdrawn = false;
	slot->type = job->type;
	slot->algorithm = (gs_algorithm) gpusort_algorithm;
	slot->n = job->n;
	slot->limit = out_n < job->n ? out_n : 0;
	slot->descending = job->descending;
	slot->want_keys = !argsort;
	slot->want_perm = argsort;
	slot->device_wanted = device_wanted;
	slot->waits_for_start = (gpusort_device == GPUSORT_DEVICE_GPU);
	slot->max_device_bytes = max_device_bytes;
	slot->submitted = GetCurrentTimestamp();
	slot->device = -1;
	slot->region_bytes = 0;
	slot->reserved_bytes = 0;
	slot->in_ready = slot->in_done = slot->out_ready = slot->out_done = 0;
	slot->cancel = 0;
	slot->timed_out = 0;
	slot->finished = 0;
	slot->status = GS_OK;
	slot->message[0] = '\0';
	srv->jobs_submitted++;
	server_latch = srv->server_latch;
	current_job.slot = slot;
	current_job.seq = slot->seq;
	current_job.active = true;
	LWLockRelease(srv->lock);
	if (server_latch != NULL)
		SetLatch(server_latch);

	PG_TRY();
	{
		char	   *ring = NULL;
		bool		ok = true;

		if (max_queue_ms > 0 &&
			!wait_admitted(TimestampTzPlusMilliseconds(slot->submitted, (int64) Max(max_queue_ms, 1))))
		{
			queued_too_long = true;
			ok = false;
		}

		/* in: each chunk into its ring slot once the device has copied the one before it there */
		for (uint64 i = 0; i < in_chunks && ok; i++)
		{
			Size		off = i * GPUSORT_CHUNK_BYTES;
			Size		len = Min(GPUSORT_CHUNK_BYTES, in_bytes - off);

			ok = wait_for(ring_slot_free, i);
			if (!ok)
				break;
			if (ring == NULL)
				ring = srv->area + slot->region_offset;
			copy_chunk(ring + (i % GPUSORT_RING_SLOTS) * GPUSORT_CHUNK_BYTES, (const char *) input + off, len);
			store64(&slot->in_ready, i + 1);
		}

		/* out: each chunk as it lands, handing its ring slot back */
		for (uint64 i = 0; i < out_chunks && ok; i++)
		{
			Size		off = i * GPUSORT_CHUNK_BYTES;
			Size		len = Min(GPUSORT_CHUNK_BYTES, out_bytes - off);

			ok = wait_for(output_chunk_ready, i);
			if (!ok)
				break;
			copy_chunk(out + off, ring + (i % GPUSORT_RING_SLOTS) * GPUSORT_CHUNK_BYTES, len);
			store64(&slot->out_done, i + 1);
		}

		if (!queued_too_long)
			(void) wait_for(never, 0);	/* until the server has the result in the slot */
	}
	PG_CATCH();
	{
		withdraw_job();
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (queued_too_long)
	{
		snprintf(err->message, sizeof(err->message),
				 "queued for longer than the sort would take on the CPU (%.1f ms)", max_queue_ms);
		err->status = GS_ERR_NO_DEVICE;
		*queue_ms = max_queue_ms;
		return GS_ERR_NO_DEVICE;
	}
	status = slot->status;
	err->status = status;
	memcpy(err->message, slot->message, sizeof(err->message));
	*report = slot->report;
	*queue_ms = slot->state == GPUSORT_SLOT_RUNNING ?
		(double) (slot->admitted - slot->submitted) / 1000.0 : 0;
	withdraw_job();
	return status;
}

#ifdef GS_INJECTION_POINTS
/* ------------------------------------------------------------------------
 * Test builds only (make INJECTION_POINTS=1): the server's injection points
 * from SQL.  No install script declares these functions; a test creates
 * them, superuser only (the functions refuse others, and the grants say so):
 *   CREATE FUNCTION gpusort_server_inject(text) RETURNS void
 *     AS '$libdir/gpusort' LANGUAGE C STRICT;
 *   CREATE FUNCTION gpusort_server_held() RETURNS int
 *     AS '$libdir/gpusort' LANGUAGE C;
 *   REVOKE EXECUTE ON FUNCTION gpusort_server_inject(text), gpusort_server_held()
 *     FROM PUBLIC;
 * gpusort_server_inject('queued' | 'copy-in' | 'running' | 'copy-out')
 * holds the running GPU process's jobs at that stage, 'none' lets them go on,
 * 'hang' makes the next job that has its input never return (as a hung GPU),
 * 'slow' holds the next job that has its input until it is cancelled (as a
 * long sort that stops at its next pass when cancelled; one job only),
 * 'slow-self' the same for the next job of the calling backend alone,
 * 'crash-self' makes the next job of the calling backend kill its worker
 * thread with SIGSEGV once it has its input (a fault in that job),
 * 'break-self' makes it fail and the GPU process exit as after a CUDA error
 * of that job that broke the context,
 * 'error-exit' makes the GPU process fail as for a broken GPU context,
 * 'start-hang' makes the next GPU process to start never find its GPUs;
 * gpusort_server_held() counts the jobs held now.
 * ------------------------------------------------------------------------ */

PG_FUNCTION_INFO_V1(gpusort_server_inject);
PG_FUNCTION_INFO_V1(gpusort_server_held);

static const char *const injection_names[] = {"none", "queued", "copy-in", "running", "copy-out", "hang", "slow"};

static void
check_injection_allowed(void)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only a superuser may set the GPU server's injection points")));
	if (!gpusort_server_mode || gpusort_server == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the GPU server is not running"),
				 errhint("Add gpusort to shared_preload_libraries.")));
}

Datum
gpusort_server_inject(PG_FUNCTION_ARGS)
{
	GpusortServerShared *srv = gpusort_server;
	char	   *what = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int			stage = -1;
	int32		pid = 0;
	Latch	   *server_latch;

	check_injection_allowed();
	for (int i = 0; i < lengthof(injection_names); i++)
		if (strcmp(what, injection_names[i]) == 0)
			stage = i;
	if (strcmp(what, "slow-self") == 0)
	{
		stage = GPUSORT_INJECT_SLOW;
		pid = MyProcPid;
	}
	if (strcmp(what, "crash-self") == 0)
	{
		stage = GPUSORT_INJECT_CRASH;
		pid = MyProcPid;
	}
	if (strcmp(what, "break-self") == 0)
	{
		stage = GPUSORT_INJECT_BREAK;
		pid = MyProcPid;
	}
	if (stage < 0 && strcmp(what, "error-exit") != 0 && strcmp(what, "start-hang") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown injection point \"%s\"", what),
				 errhint("Use none, queued, copy-in, running, copy-out, hang, slow, slow-self, crash-self, break-self, error-exit or start-hang.")));

	if (strcmp(what, "start-hang") == 0)
	{
		__atomic_store_n(&srv->inject_start_hang, 1, __ATOMIC_RELEASE);
		PG_RETURN_VOID();
	}
	for (int i = 0; i < 3000 && srv->state == GPUSORT_SERVER_STARTING; i++)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);		/* the injection is for the process that is starting */
	}
	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	if (stage < 0)
		srv->inject_exit_error = srv->generation;
	else
	{
		srv->inject_generation = srv->generation;
		__atomic_store_n(&srv->inject_pid, pid, __ATOMIC_RELEASE);
		__atomic_store_n(&srv->inject, (uint32) stage, __ATOMIC_RELEASE);
	}
	server_latch = srv->server_latch;
	LWLockRelease(srv->lock);
	if (server_latch != NULL)
		SetLatch(server_latch);
	PG_RETURN_VOID();
}

Datum
gpusort_server_held(PG_FUNCTION_ARGS)
{
	GpusortServerShared *srv = gpusort_server;
	int			held = 0;

	check_injection_allowed();
	LWLockAcquire(srv->lock, LW_SHARED);
	if (srv->inject == GPUSORT_INJECT_QUEUED && srv->inject_generation == srv->generation)
	{
		for (int i = 0; i < srv->nslots; i++)
			if (srv->slots[i].state == GPUSORT_SLOT_QUEUED)
				held++;
	}
	else
		held = (int) __atomic_load_n(&srv->inject_held, __ATOMIC_ACQUIRE);
	LWLockRelease(srv->lock);
	PG_RETURN_INT32(held);
}
#endif

/*
 * What the server found, for gpusort_info() and the device choice; while it
 * starts, no GPU is usable yet and the reason says so.
 */
const gs_runtime_info *
gpusort_server_runtime(void)
{
	static gs_runtime_info info;
	GpusortServerShared *srv = gpusort_server;

	LWLockAcquire(srv->lock, LW_SHARED);
	info = srv->runtime;
	if (srv->state == GPUSORT_SERVER_STARTING)
	{
		info.status = GS_ERR_NO_DEVICE;
		strlcpy(info.reason, "the GPU server is starting", sizeof(info.reason));
	}
	else if (srv->state == GPUSORT_SERVER_NO_GPU || srv->state == GPUSORT_SERVER_RESTARTING)
	{
		if (info.status == GS_OK)
			info.status = GS_ERR_NO_DEVICE;
		strlcpy(info.reason, srv->reason, sizeof(info.reason));
	}
	LWLockRelease(srv->lock);
	return &info;
}
