/*
 * server.c: the GPU server, a background worker that admits the jobs of
 * every backend and supervises the GPU process (gpu_process.c), which runs
 * them; server.h describes the shared memory.
 *
 * The server calls no CUDA.  It admits queued jobs in submission order (a
 * job waits while no worker thread of the GPU process, no device memory
 * within the budget or no region of the transfer area is free; later jobs
 * that fit may pass it for GPU_PASS_MS), hands each to
 * a worker thread through the GPU process's command pipe, and sets the
 * latches of the backends the GPU process wants woken.
 *
 * A job busy on its GPU for longer than gpusort.server_job_timeout is
 * cancelled on its own: its worker stops at the next chunk or pass, and the
 * GPU process and the other jobs go on.
 *
 * The fault domain.  The GPU process is the server's child, not the
 * postmaster's: when it dies (a signal, a CUDA error that leaves a context
 * unusable, or the server ending it because a job did not stop within
 * GPU_CANCEL_GRACE_MS of such a cancel), the server reaps it (SIGCHLD, or
 * its message pipe's end), fails the jobs it was running (their backends
 * sort on the CPU under gpusort.device = auto, or report the error), gives
 * back their device memory, and starts another; queued jobs under gpu wait
 * for it, the others go to the CPU.  The sessions of the jobs in flight at a
 * death are paused for a while (blame_jobs_in_flight); a GPU process that
 * keeps dying with no job in flight is started again after a growing pause,
 * during which sorts run on the CPU (or fail under gpu).  PostgreSQL sees
 * none of this.  The server
 * itself is still a PostgreSQL child attached to shared memory, as is every
 * backend; its death restarts the cluster, which is why it does no CUDA and
 * stays small.  However the server ends, its exit ends the GPU process and
 * settles every job it had admitted (settle_orphaned_jobs).
 */
#include "postgres.h"

#include <signal.h>
#include <sys/wait.h>
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
#include "gpu_protocol.h"
#include "server.h"

PGDLLEXPORT void gpusort_server_main(Datum main_arg);

/* A GPU process that dies within this long of being ready counts as failing to start. */
#define GPU_STABLE_MS		1000
/* The pause before the next start after such failures: doubles from the first to the last. */
#define GPU_BACKOFF_FIRST_MS	100
#define GPU_BACKOFF_MAX_MS		30000
/* How often the server looks at the jobs' time on the GPU while the timeout is on. */
#define GPU_WATCH_MS			100
/*
 * The least time between two such looks: each takes the lock and reads every
 * slot, and the loop turns several times for each job (a submission, the GPU
 * process's messages), which at thousands of jobs a second would hold up the
 * backends that submit.
 */
#define GPU_WATCH_MIN_MS		10
/* The longest a GPU process may take to find its GPUs and say so. */
#define GPU_START_TIMEOUT_MS	30000
/* How long a queued job that must wait may be passed by later jobs that fit. */
#define GPU_PASS_MS				1000
/* How long the server waits for a GPU process it sent SIGKILL to end. */
#define GPU_REAP_MS				5000
/* How long a job cancelled for gpusort.server_job_timeout may take to stop. */
#define GPU_CANCEL_GRACE_MS		5000

/* A job the server cancelled for its time on the GPU: which, and when. */
typedef struct TimedOutJob
{
	uint64		seq;
	uint64		at_ns;			/* monotonic_ns() */
} TimedOutJob;

/* The server's view of the GPU process. */
static struct
{
	pid_t		pid;			/* 0: none */
	int			command_fd;
	int			message_fd;
	bool		ready;
	TimestampTz ready_at;
	int			failures;		/* deaths in a row before GPU_STABLE_MS of readiness */
	TimestampTz next_start;		/* after a death: not before */
	char		kill_reason[GS_MESSAGE_LEN];	/* the server ended it: why */
	int			nworkers;
	bool	   *worker_busy;
	bool	   *worker_large;	/* busy with a large job (try_admit) */
	int			large_running[GPUSORT_SERVER_MAX_DEVICES];	/* such workers per device */
	TimedOutJob *cancels;		/* one per slot */
	pid_t		stragglers[8];	/* ended with SIGKILL, not reaped yet */
	struct QueuedJob *queue;	/* admit_jobs' scratch: one per slot */
	uint64		ended;			/* GPU processes of this server that ended */
	int			nstragglers;
	uint64		watched_ns;		/* watch_job_times' last look, monotonic_ns() */
} gpu = {0, -1, -1};

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

/* Monotonic nanoseconds, the clock of GpusortJobSlot.busy_since. */
static uint64
monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
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
	if (gpusort_server->gpu_report.cpu_device)
	{
		Size		w = gs_type_size(slot->type);

		if (slot_out_n(slot) == slot->n)
			return slot->n * w + gs_cpu_scratch_bytes(slot->type, slot->n, slot->want_perm);
		return slot->n * w +
			gs_cpu_topk_scratch_bytes(slot->type, slot->n, slot->limit, slot->want_perm) +
			slot->limit * ((slot->want_keys ? w : 0) + (slot->want_perm ? sizeof(uint32) : 0));
	}
#endif
	gpusort_slot_stream_job(slot, &job);
	return gs_stream_job_device_bytes(&job);
}


/* An idle worker thread of device d, or -1. */
static int
idle_worker(int device)
{
	for (int i = 0; i < gpu.nworkers; i++)
		if (i / gpusort_server_streams == device && !gpu.worker_busy[i])
			return i;
	return -1;
}

/* Whether any worker thread of the GPU process is idle. */
static bool
any_idle_worker(void)
{
	for (int i = 0; i < gpu.nworkers; i++)
		if (!gpu.worker_busy[i])
			return true;
	return false;
}

/* Hands slot's job to worker w of the GPU process. */
static void
send_run(int w, int slot_index, uint64 seq)
{
	GpusortCommand c;

	memset(&c, 0, sizeof(c));
	c.kind = GPUSORT_CMD_RUN;
	c.worker = w;
	c.slot = slot_index;
	c.seq = seq;
	/*
	 * The pipe holds thousands of commands and the GPU process reads them at
	 * once; a failed write means it died, which its message pipe will say.
	 */
	while (write(gpu.command_fd, &c, sizeof(c)) < 0 && errno == EINTR)
		;
}

/*
 * While the GPU process starts, queued jobs that need not wait for it (all
 * but those of gpusort.device = gpu) are answered at once: their backends
 * sort on the CPU.  Under the lock.
 */
static void
answer_while_starting(void)
{
	GpusortServerShared *srv = gpusort_server;

	for (int i = 0; i < srv->nslots; i++)
	{
		GpusortJobSlot *s = &srv->slots[i];

		if (s->state == GPUSORT_SLOT_QUEUED && !s->finished && !s->waits_for_start)
			reject_job(s, GS_ERR_NO_DEVICE, "the GPU process is starting");
	}
}

/*
 * The sessions whose jobs were in flight when a GPU process died: their jobs
 * are answered at once (the CPU sorts them under auto) until their pause
 * ends, a pause that doubles with each such death from BLAME_FIRST_MS to
 * GPU_BACKOFF_MAX_MS.  A session that is not blamed again for
 * BLAME_FORGET_MS starts over.
 */
#define BLAME_FIRST_MS		1000
#define BLAME_FORGET_MS		300000
#define BLAME_SESSIONS		64

static struct
{
	int			pid;
	int			deaths;
	TimestampTz until;
} blamed[BLAME_SESSIONS];

/* Why blame_session pauses a session. */
typedef enum BlameWhy
{
	BLAME_IN_FLIGHT,			/* a job of it was in flight */
	BLAME_FAULT,				/* its job's worker raised a fatal signal */
	BLAME_BROKE					/* its job was the first to fail with a broken context */
} BlameWhy;

/* Pauses the sessions of backend pid for its next step of the back-off, after a death. */
static void
blame_session(int pid, TimestampTz now, BlameWhy why)
{
	int			b = -1;
	long		ms;

	for (int k = 0; k < BLAME_SESSIONS && b < 0; k++)
		if (blamed[k].pid == pid)
			b = k;
	if (b < 0)
	{
		b = 0;					/* a free entry, or the one whose pause ended first */
		for (int k = 1; k < BLAME_SESSIONS; k++)
			if (blamed[k].until < blamed[b].until)
				b = k;
		blamed[b].pid = pid;
		blamed[b].deaths = 0;
	}
	if (TimestampDifferenceExceeds(blamed[b].until, now, BLAME_FORGET_MS))
		blamed[b].deaths = 0;
	blamed[b].deaths++;
	ms = Min((long) BLAME_FIRST_MS << Min(blamed[b].deaths - 1, 20), GPU_BACKOFF_MAX_MS);
	blamed[b].until = TimestampTzPlusMilliseconds(now, ms);
	if (why == BLAME_FAULT)
		ereport(LOG,
				(errmsg("gpusort server: the GPU process died of a fault in a job of backend %d; its sorts run on the CPU for %ld ms",
						pid, ms)));
	else if (why == BLAME_BROKE)
		ereport(LOG,
				(errmsg("gpusort server: the GPU process died of a CUDA error that broke its context, first seen by a job of backend %d; its sorts run on the CPU for %ld ms",
						pid, ms)));
	else
		ereport(LOG,
				(errmsg("gpusort server: the GPU process died with a job in flight of backend %d; its sorts run on the CPU for %ld ms",
						pid, ms)));
}

/*
 * Blames the backends of the jobs the dying GPU process ran; returns how
 * many jobs.  Where the GPU process named the job whose fault ended it (a
 * fatal signal that its worker raised itself), only that job's session is
 * paused.  Else the session of every job in flight is, as the death cannot
 * be told apart from theirs; where a CUDA error broke the context, the first
 * job to fail with it (finished by then) is blamed too.
 */
static int
blame_jobs_in_flight(void)
{
	GpusortServerShared *srv = gpusort_server;
	TimestampTz now = GetCurrentTimestamp();
	int			jobs = 0;
	int			named = 0;

	if (__atomic_load_n(&srv->crash_generation, __ATOMIC_ACQUIRE) == srv->generation &&
		srv->crash_pid != 0)
	{
		named = srv->crash_pid;
		if (!srv->crash_broken)
		{
			blame_session(named, now, BLAME_FAULT);
			return 1;
		}
		blame_session(named, now, BLAME_BROKE);
		jobs++;
	}
	LWLockAcquire(srv->lock, LW_SHARED);
	for (int i = 0; i < srv->nslots; i++)
	{
		GpusortJobSlot *slot = &srv->slots[i];

		if (slot->state != GPUSORT_SLOT_RUNNING || slot->generation != srv->generation ||
			__atomic_load_n(&slot->finished, __ATOMIC_ACQUIRE) || slot->pid == named)
			continue;
		jobs++;
		blame_session(slot->pid, now, BLAME_IN_FLIGHT);
	}
	LWLockRelease(srv->lock);
	return jobs;
}

/* Milliseconds the session of backend pid is still paused for, or 0. */
static long
blamed_ms(int pid, TimestampTz now)
{
	for (int k = 0; k < BLAME_SESSIONS; k++)
		if (blamed[k].pid == pid && blamed[k].until > now)
			return (long) ((blamed[k].until - now) / 1000);
	return 0;
}

/* A queued job as admit_jobs orders them: by submission. */
typedef struct QueuedJob
{
	uint64		seq;
	int			index;
} QueuedJob;

/*
 * The queue as a binary min-heap on seq: sift_queued moves queue[at] down
 * to its place among the first n.  admit_jobs takes the oldest jobs one at
 * a time and usually admits one or two a turn, so a heap (built in O(n),
 * each job taken in O(log n)) keeps each turn close to one pass over the
 * slots, where sorting the whole queue took O(n log n) under the lock that
 * every backend submits under.
 */
static void
sift_queued(QueuedJob *queue, int n, int at)
{
	QueuedJob	job = queue[at];

	for (;;)
	{
		int			child = 2 * at + 1;

		if (child >= n)
			break;
		if (child + 1 < n && queue[child + 1].seq < queue[child].seq)
			child++;
		if (queue[child].seq >= job.seq)
			break;
		queue[at] = queue[child];
		at = child;
	}
	queue[at] = job;
}

/* Whether any session's sorts are paused after a death (blamed_ms > 0 for some). */
static bool
any_blamed(TimestampTz now)
{
	for (int k = 0; k < BLAME_SESSIONS; k++)
		if (blamed[k].until > now)
			return true;
	return false;
}

/* The bytes of slot's larger stream through the transfer area: its input, or its output. */
static Size
job_stream_bytes(const GpusortJobSlot *slot)
{
	return Max(slot->n * gs_type_size(slot->type),
			   (slot->want_keys ? slot_out_n(slot) * gs_type_size(slot->type) : 0) +
			   (slot->want_perm ? slot_out_n(slot) * sizeof(uint32) : 0));
}

/*
 * Whether device d may take another large job.  With two workers or more a
 * device keeps one for the jobs that are not large: at most all but one of
 * its workers run large jobs, so that a small sort does not wait for a large
 * one to end for want of a worker.  (It still may for want of memory or
 * transfer area, behind a job that has waited GPU_PASS_MS: admit_jobs.)
 */
static bool
large_job_room(int d)
{
	return gpusort_server_streams < 2 || gpu.large_running[d] < gpusort_server_streams - 1;
}

/*
 * Admits a queued job if a worker, device memory and a region are free for
 * it; answers at once one that can never fit.  Returns whether it is done
 * with (admitted or answered): false while it waits.  *for_large is set when
 * it waits only because every device that could take it runs as many large
 * jobs as it may (large_job_room): a job that is not large would not be held
 * up by it.  Under the lock.
 */
static bool
try_admit(int index, bool *for_large)
{
	GpusortServerShared *srv = gpusort_server;
	GpusortJobSlot *slot = &srv->slots[index];
	Size		need,
				region;
	int			best = -1,
				first,
				count,
				w;
	bool		fits_somewhere = false;

	/*
	 * The ring holds the input stream, then the output stream.  A job is large
	 * when either streams through the ring more than once (over 32 MB): it
	 * holds its worker for as long as its backend takes to pass the data,
	 * hundreds of milliseconds.
	 */
	Size		stream_bytes = job_stream_bytes(slot);
	bool		large = stream_bytes > GPUSORT_CHUNK_BYTES * GPUSORT_RING_SLOTS;
	bool		lane_full = false,	/* a device that could take it runs all the large jobs it may */
				other_wait = false; /* one waits for memory or a worker instead */

	*for_large = false;
	if (slot->device_wanted >= srv->ndevices)
	{
		reject_job(slot, GS_ERR_NO_DEVICE, "GPU %d does not exist; the server has %d", slot->device_wanted, srv->ndevices);
		return true;
	}

	need = job_device_bytes(slot);
	if (slot->max_device_bytes != 0 && need > slot->max_device_bytes)
	{
		reject_job(slot, GS_ERR_MEMORY_LIMIT,
				   "the sort needs %.1f MB of device memory, more than the limit of %.1f MB",
				   need / 1048576.0, slot->max_device_bytes / 1048576.0);
		return true;
	}

	for (int d = 0; d < srv->ndevices; d++)
	{
		GpusortDeviceStats *dev = &srv->devices[d];

		if (slot->device_wanted >= 0 && d != slot->device_wanted)
			continue;
		if (need > dev->budget_bytes)
			continue;
		fits_somewhere = true;
		/*
		 * The large jobs' share first: while it is full the device cannot take
		 * this job whatever memory and workers it has free, and once one of
		 * its large jobs ends it may.
		 */
		if (large && !large_job_room(d))
		{
			lane_full = true;
			continue;
		}
		if (dev->reserved_bytes + need > dev->budget_bytes || idle_worker(d) < 0)
		{
			other_wait = true;
			continue;
		}
		if (best < 0 || dev->reserved_bytes < srv->devices[best].reserved_bytes)
			best = d;
	}
	if (!fits_somewhere)
	{
		reject_job(slot, GS_ERR_MEMORY_LIMIT,
				   "the sort needs %.1f MB of device memory, more than the server's budget (gpusort.server_memory)",
				   need / 1048576.0);
		return true;
	}
	if (best < 0)
	{
		/* it waits for memory, a worker or its turn among large jobs */
		*for_large = lane_full && !other_wait;
		return false;
	}

	/* a region of the ring's size at most: a large job's streams take turns in it */
	region = Min(stream_bytes, GPUSORT_CHUNK_BYTES * GPUSORT_RING_SLOTS);
	count = (int) gpusort_area_granules(region);
	first = find_region(count);
	if (first < 0)
		return false;			/* it waits for room in the transfer area */

	w = idle_worker(best);
	memset(srv->granule_used + first, 1, count);
	slot->region_offset = (Size) first * GPUSORT_AREA_GRANULE;
	slot->region_bytes = (Size) count * GPUSORT_AREA_GRANULE;
	srv->area_used += slot->region_bytes;
	slot->device = best;
	slot->reserved_bytes = need;
	srv->devices[best].reserved_bytes += need;
	slot->worker = w;
	slot->generation = srv->generation;
	slot->admitted = GetCurrentTimestamp();
	/* the GPU process owes the job from now: one that never starts it times out */
	store64(&slot->busy_since, monotonic_ns());
	slot->state = GPUSORT_SLOT_RUNNING;

	gpu.worker_busy[w] = true;
	gpu.worker_large[w] = large;
	if (large)
		gpu.large_running[best]++;
	send_run(w, index, slot->seq);
	SetLatch(slot->latch);
	return true;
}

/*
 * Admits queued jobs in submission order.  A job that must wait (for memory,
 * a worker or room in the transfer area) may be passed by later jobs that
 * fit, until it has waited GPU_PASS_MS: from then on nothing passes it, so
 * that a large job gets its turn however many small ones come.  A large job
 * that waits because every device that could take it runs all the large
 * jobs it may (large_job_room) is passed however long it has waited, whether
 * or not memory is free for it there: it gets its turn when one of those
 * ends, and the worker kept back is one it could not take.
 * A job that can never fit is answered at once.
 */
static void
admit_jobs(void)
{
	GpusortServerShared *srv = gpusort_server;
	QueuedJob  *queue = gpu.queue;
	int			nqueued = 0;
	bool		for_large;
	TimestampTz now = GetCurrentTimestamp();

	/*
	 * With the GPU process ready and every worker busy, no job can be
	 * admitted, and none is to be answered unless a session is paused: the
	 * loop turns for each submission, and under hundreds of clients reading
	 * and ordering the queue each time would hold the lock the backends
	 * submit under.  The state and the workers are the server's own.
	 */
	if (srv->state == GPUSORT_SERVER_READY && !any_idle_worker() && !any_blamed(now))
		return;

	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	for (int i = 0; i < srv->nslots; i++)
		if (srv->slots[i].state == GPUSORT_SLOT_QUEUED && !srv->slots[i].finished)
		{
			queue[nqueued].seq = srv->slots[i].seq;
			queue[nqueued].index = i;
			nqueued++;
		}
	for (int at = nqueued / 2 - 1; at >= 0; at--)
		sift_queued(queue, nqueued, at);

	/* the oldest job first: the heap's top, taken off */
	while (nqueued > 0)
	{
		int			index = queue[0].index;
		GpusortJobSlot *slot = &srv->slots[index];

		queue[0] = queue[--nqueued];
		sift_queued(queue, nqueued, 0);

#ifdef GS_INJECTION_POINTS
		if (injection_holds_queue())
			break;
#endif
		if (slot->state != GPUSORT_SLOT_QUEUED || slot->finished)
			continue;
		if (blamed_ms(slot->pid, now) > 0)
		{
			reject_job(slot, GS_ERR_NO_DEVICE,
					   "a GPU process died while it ran a job of this session, whose sorts run on the CPU for %ld ms more",
					   blamed_ms(slot->pid, now));
			continue;
		}
		if (srv->state == GPUSORT_SERVER_NO_GPU || srv->state == GPUSORT_SERVER_RESTARTING)
		{
			reject_job(slot, GS_ERR_NO_DEVICE, "%s", srv->reason);
			continue;
		}
		if (srv->state != GPUSORT_SERVER_READY)
		{
			answer_while_starting();
			break;				/* the GPU process starts: jobs under gpu wait */
		}
		if (!any_idle_worker())
			break;				/* nothing can be admitted until a worker is free */
		if (try_admit(index, &for_large))
			continue;
		if (for_large)
			continue;			/* it waits for a large job to end, which no small one delays */
		if (TimestampDifferenceExceeds(slot->submitted, now, GPU_PASS_MS))
			break;				/* it has been passed long enough: the rest wait for it */
	}
	LWLockRelease(srv->lock);
}

/*
 * Settles the jobs that GPU processes other than generation live were given,
 * whose processes are gone: when one dies (live: the next generation) and at
 * the server's exit (live 0: none).  Under the lock.
 *
 * A withdrawn job's slot is freed here, whether or not its worker had
 * finished: the FINISHED that would have freed it may never have been sent.
 * Every other job keeps its slot and region until its backend has read what
 * is there, and loses its reservation of device memory, which died with the
 * process; one without a result fails with why, and its backend is woken at
 * once to sort on the CPU or report it.
 */
static void
settle_orphaned_jobs(uint64 live, const char *why)
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
			slot->status = GS_ERR_GPU_LOST;
			strlcpy(slot->message, why, sizeof(slot->message));
			__atomic_store_n(&slot->finished, 1, __ATOMIC_RELEASE);
			if (slot->device >= 0 && slot->device < GPUSORT_SERVER_MAX_DEVICES)
				srv->devices[slot->device].jobs_failed++;
		}
		SetLatch(slot->latch);
	}
}

/* The device-memory budgets, from gpusort.server_memory; under the lock. */
static void
set_budgets(void)
{
	GpusortServerShared *srv = gpusort_server;

	for (int d = 0; d < srv->ndevices; d++)
		srv->devices[d].budget_bytes = gpusort_device_budget(&srv->devices[d].props);
}

/* What pg_stat_activity shows of the server: its GPU process and how it is. */
static void
report_activity(const char *what)
{
	GpusortServerShared *srv = gpusort_server;
	char		text[GS_MESSAGE_LEN + 128];

	snprintf(text, sizeof(text), "GPU process %d: %s; %llu restarts", (int) gpu.pid, what,
			 (unsigned long long) srv->gpu_restarts);
	/* idle, not active: monitoring that cancels long "active" queries leaves it alone */
	pgstat_report_activity(STATE_IDLE, text);
}

/* The GPU process says its devices are ready, or that there are none. */
static void
gpu_process_started(bool ready)
{
	GpusortServerShared *srv = gpusort_server;
	GpusortGpuReport *report = &srv->gpu_report;

	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	srv->runtime = report->runtime;
	if (ready)
	{
		srv->ndevices = report->ndevices;
		for (int d = 0; d < report->ndevices; d++)
		{
			srv->devices[d].props = report->props[d];
			srv->devices[d].workers = gpusort_server_streams;
		}
		set_budgets();
		srv->state = GPUSORT_SERVER_READY;
		srv->reason[0] = '\0';
	}
	else
	{
		srv->ndevices = 0;
		srv->state = GPUSORT_SERVER_NO_GPU;
		strlcpy(srv->reason, report->reason, sizeof(srv->reason));
	}
	LWLockRelease(srv->lock);

	gpu.ready = ready;
	gpu.ready_at = GetCurrentTimestamp();
	if (ready)
	{
		char		what[64];

		gpu.nworkers = report->ndevices * gpusort_server_streams;
		gpu.worker_busy = (bool *) MemoryContextAllocZero(TopMemoryContext, sizeof(bool) * gpu.nworkers);
		gpu.worker_large = (bool *) MemoryContextAllocZero(TopMemoryContext, sizeof(bool) * gpu.nworkers);
		snprintf(what, sizeof(what), "sorting on %d GPU%s", srv->ndevices, srv->ndevices == 1 ? "" : "s");
		report_activity(what);
		ereport(LOG,
				(errmsg("gpusort server: sorting on %d GPU%s with %d jobs in flight each, transfer area %d MB, GPU process %d",
						srv->ndevices, srv->ndevices == 1 ? "" : "s", gpusort_server_streams,
						gpusort_transfer_area, (int) gpu.pid)));
	}
	else
	{
		report_activity("no GPU is usable");
		ereport(LOG,
				(errmsg("gpusort server: no GPU is usable, sorts run on the CPU: %s", srv->reason)));
	}
}

/*
 * Starts a GPU process.  A fork or pipe that fails (no memory, the process
 * limit) ends the server with the error; the postmaster starts it again a
 * second later, and queued jobs wait for it.
 */
static void
start_gpu_process(void)
{
	GpusortServerShared *srv = gpusort_server;
	pid_t		pid;

	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	srv->generation++;
	srv->state = GPUSORT_SERVER_STARTING;
#ifdef GS_INJECTION_POINTS
	/* the jobs a dead process held are not held by the new one */
	__atomic_store_n(&srv->inject_held, 0, __ATOMIC_RELEASE);
#endif
	LWLockRelease(srv->lock);

	gpu.ready = false;
	gpu.kill_reason[0] = '\0';
	pid = gpusort_gpu_process_start(&gpu.command_fd, &gpu.message_fd);
	if (pid < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("gpusort server: could not start the GPU process: %m")));
	gpu.pid = pid;

	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	srv->gpu_pid = (int) pid;
	srv->gpu_started = GetCurrentTimestamp();
	LWLockRelease(srv->lock);
	report_activity("starting");
}

/* How a GPU process ended, from its wait status. */
static void
describe_exit(int wstatus, char *buf, size_t len)
{
	/* the server's kill, if that is what ended it (it may have died of something else first) */
	if (gpu.kill_reason[0] != '\0' && WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
		strlcpy(buf, gpu.kill_reason, len);
	else if (wstatus != -1 && WIFSIGNALED(wstatus))
		snprintf(buf, len, "ended on signal %d: %s", WTERMSIG(wstatus), pg_strsignal(WTERMSIG(wstatus)));
	else if (wstatus != -1 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == GPUSORT_GPU_EXIT_BROKEN)
		snprintf(buf, len, "exited after a CUDA error left a GPU context unusable");
	else if (wstatus != -1 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == GPUSORT_GPU_EXIT_EXIT)
		snprintf(buf, len, "exited: a library it uses called exit()");
	else if (wstatus != -1 && WIFEXITED(wstatus))
		snprintf(buf, len, "exited with exit code %d", WEXITSTATUS(wstatus));
	else if (wstatus == -1)
		snprintf(buf, len, "was not reaped within %d ms of SIGKILL", GPU_REAP_MS);
	else
		snprintf(buf, len, "ended with wait status %d", wstatus);
}

/*
 * Waits for child pid to end, ms at most, polling; true with its wait
 * status once it has (-1 if something else reaped it).
 */
static bool
reap_within(pid_t pid, int *wstatus, int ms)
{
	for (int waited = 0;; waited += 10)
	{
		pid_t		r = waitpid(pid, wstatus, WNOHANG);

		if (r == pid)
			return true;
		if (r < 0 && errno == ECHILD)
		{
			*wstatus = -1;
			return true;
		}
		if (waited >= ms)
			return false;
		pg_usleep(10000L);
	}
}

/*
 * Ends child pid with SIGKILL and reaps it, GPU_REAP_MS at most; one that
 * has not ended by then (stuck in the driver as it exits) is left for
 * reap_stragglers, and *wstatus is -1.
 */
static void
kill_and_reap(pid_t pid, int *wstatus)
{
	kill(pid, SIGKILL);
	if (reap_within(pid, wstatus, GPU_REAP_MS))
		return;
	*wstatus = -1;
	gpu.stragglers[gpu.nstragglers++ % lengthof(gpu.stragglers)] = pid;
	ereport(LOG,
			(errmsg("gpusort server: the GPU process (PID %d) has not ended %d ms after SIGKILL; it is reaped when it does",
					(int) pid, GPU_REAP_MS)));
}

/* Reaps GPU processes that ended after the server gave up waiting for them. */
static void
reap_stragglers(void)
{
	for (int i = 0; i < lengthof(gpu.stragglers); i++)
		if (gpu.stragglers[i] > 0 && waitpid(gpu.stragglers[i], NULL, WNOHANG) != 0)
			gpu.stragglers[i] = 0;
}

/*
 * The GPU process is gone: the server reaped it (wstatus), or its message
 * pipe closed (reaped: false), when it is reaped within 200 ms or else
 * ended with SIGKILL and reaped within GPU_REAP_MS.  Fails its jobs, gives back their memory and plans
 * the next start, at once or after a pause if it keeps dying.
 */
static void
gpu_process_ended(bool reaped, int wstatus)
{
	GpusortServerShared *srv = gpusort_server;
	char		how[GS_MESSAGE_LEN];
	char		why[GS_MESSAGE_LEN];
	char		what[GS_MESSAGE_LEN + 16];
	bool		was_ready = gpu.ready;
	long		pause_ms = 0;
	pid_t		pid = gpu.pid;

	/* it closed its pipe, so it is ending: give it a moment, then make sure */
	if (!reaped && !reap_within(pid, &wstatus, 200))
		kill_and_reap(pid, &wstatus);
	close(gpu.command_fd);
	close(gpu.message_fd);
	gpu.command_fd = gpu.message_fd = -1;
	gpu.pid = 0;
	if (gpu.worker_busy != NULL)
		pfree(gpu.worker_busy);
	if (gpu.worker_large != NULL)
		pfree(gpu.worker_large);
	gpu.worker_busy = gpu.worker_large = NULL;
	memset(gpu.large_running, 0, sizeof(gpu.large_running));
	gpu.nworkers = 0;

	describe_exit(wstatus, how, sizeof(how));
	snprintf(why, sizeof(why), "the GPU process (PID %d) %s", (int) pid, how);

	/* no GPU at the server's start: it said so and ended; nothing to restart */
	if (!was_ready && srv->state == GPUSORT_SERVER_NO_GPU && gpu.ended == 0)
	{
		LWLockAcquire(srv->lock, LW_EXCLUSIVE);
		srv->gpu_pid = 0;
		LWLockRelease(srv->lock);
		return;
	}

	/*
	 * A death with jobs in flight is counted against their sessions (their
	 * next sorts run on the CPU for a while), not against every session: the
	 * process was ready and ran jobs.  One with none counts toward the
	 * back-off unless the process had been ready for GPU_STABLE_MS.
	 */
	if (was_ready && blame_jobs_in_flight() > 0)
		gpu.failures = 0;
	else if (was_ready && TimestampDifferenceExceeds(gpu.ready_at, GetCurrentTimestamp(), GPU_STABLE_MS))
		gpu.failures = 0;
	else
		gpu.failures++;
	if (gpu.failures > 0)
		pause_ms = Min((long) GPU_BACKOFF_FIRST_MS << Min(gpu.failures - 1, 20), GPU_BACKOFF_MAX_MS);
	gpu.next_start = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), pause_ms);

	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	settle_orphaned_jobs(srv->generation + 1, why);
	srv->gpu_pid = 0;
	srv->gpu_restarts++;
	gpu.ended++;
	strlcpy(srv->gpu_last_exit, why, sizeof(srv->gpu_last_exit));
	srv->gpu_last_exit_at = GetCurrentTimestamp();
	if (pause_ms > 0)
	{
		srv->state = GPUSORT_SERVER_RESTARTING;
		snprintf(srv->reason, sizeof(srv->reason),
				 "%s; it failed %d time%s in a row and starts again in %ld ms",
				 why, gpu.failures, gpu.failures == 1 ? "" : "s", pause_ms);
	}
	else
		srv->state = GPUSORT_SERVER_STARTING;
	LWLockRelease(srv->lock);

	snprintf(what, sizeof(what), "ended (%s)", how);
	report_activity(what);
	if (pause_ms > 0)
		ereport(LOG,
				(errmsg("gpusort server: %s; starting another in %ld ms", why, pause_ms)));
	else
		ereport(LOG,
				(errmsg("gpusort server: %s; starting another now", why)));
}

/* Acts on what the GPU process sent; false once it is gone. */
static bool
read_messages(void)
{
	GpusortServerShared *srv = gpusort_server;
	GpusortMessage m;

	for (;;)
	{
		ssize_t		r = read(gpu.message_fd, &m, sizeof(m));
		GpusortJobSlot *slot;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return true;
		if (r != sizeof(m))
			return false;		/* the end of the pipe: the process is gone */

		if (m.kind == GPUSORT_MSG_READY || m.kind == GPUSORT_MSG_NO_GPU)
		{
			gpu_process_started(m.kind == GPUSORT_MSG_READY);
			continue;
		}
		if (m.slot < 0 || m.slot >= srv->nslots)
			continue;
		slot = &srv->slots[m.slot];
		if (m.kind == GPUSORT_MSG_WAKE)
		{
			/* a stale wake (the slot has a new job) only costs the backend a look */
			if (slot->latch != NULL)
				SetLatch(slot->latch);
			continue;
		}

		/* GPUSORT_MSG_FINISHED; the backend may have freed the slot already */
		if (m.worker < 0 || m.worker >= gpu.nworkers)
			continue;
		gpu.worker_busy[m.worker] = false;
		if (gpu.worker_large[m.worker])
			gpu.large_running[m.worker / gpusort_server_streams]--;
		gpu.worker_large[m.worker] = false;
		LWLockAcquire(srv->lock, LW_EXCLUSIVE);
		{
			GpusortDeviceStats *dev = &srv->devices[m.worker / gpusort_server_streams];

			if (m.status == GS_OK)
				dev->jobs_done++;
			else if (m.status == GS_ERR_TIMED_OUT)
				srv->jobs_timed_out++;
			else if (m.status == GS_ERR_INTERRUPTED)
				srv->jobs_withdrawn++;
			else
				dev->jobs_failed++;
		}
		if (slot->seq == m.seq && slot->state == GPUSORT_SLOT_RUNNING && slot->withdrawn)
			gpusort_server_release_slot(slot);
		LWLockRelease(srv->lock);
	}
}

/*
 * Cancels the job of slot index, busy on its GPU past
 * gpusort.server_job_timeout: its worker stops at its next chunk or pass
 * and answers GS_ERR_TIMED_OUT with the message written here; the GPU
 * process and its other jobs go on.  Under the lock.
 */
static void
cancel_timed_out_job(int index, uint64 now, uint64 since)
{
	GpusortJobSlot *slot = &gpusort_server->slots[index];

	snprintf(slot->message, sizeof(slot->message),
			 "the job was busy on GPU %d for more than gpusort.server_job_timeout (%d ms) and was cancelled",
			 slot->device, gpusort_server_job_timeout);
	__atomic_store_n(&slot->timed_out, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&slot->cancel, 1, __ATOMIC_RELEASE);
	gpu.cancels[index].seq = slot->seq;
	gpu.cancels[index].at_ns = now;
	ereport(LOG,
			(errmsg("gpusort server: cancelling a job of backend %d: busy on GPU %d for %.0f ms, more than gpusort.server_job_timeout",
					slot->pid, slot->device, (now - since) / 1e6)));
}

/*
 * The jobs' time on their GPUs.  A job busy for longer than
 * gpusort.server_job_timeout is cancelled on its own.  Only a job that does
 * not stop within GPU_CANCEL_GRACE_MS of its cancel (a hung GPU or driver,
 * a process that no longer runs) ends the GPU process, since only that
 * frees it; its death is then handled as any other.
 */
static void
watch_job_times(void)
{
	GpusortServerShared *srv = gpusort_server;
	uint64		now;
	uint64		limit = (uint64) gpusort_server_job_timeout * 1000000;
	uint64		grace = (uint64) GPU_CANCEL_GRACE_MS * 1000000;

	if (gpu.pid == 0 || gpu.kill_reason[0] != '\0')
		return;
	if (!gpu.ready)
	{
		/* a start that hangs (in the driver, say) is ended whatever the job timeout */
		if (srv->state == GPUSORT_SERVER_STARTING &&
			TimestampDifferenceExceeds(srv->gpu_started, GetCurrentTimestamp(), GPU_START_TIMEOUT_MS))
		{
			snprintf(gpu.kill_reason, sizeof(gpu.kill_reason),
					 "was ended by the server: it had not found its GPUs after %d ms", GPU_START_TIMEOUT_MS);
			ereport(LOG,
					(errmsg("gpusort server: ending the GPU process (PID %d): it has not found its GPUs after %d ms",
							(int) gpu.pid, GPU_START_TIMEOUT_MS)));
			kill(gpu.pid, SIGKILL);
		}
		return;
	}
	now = monotonic_ns();
	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	for (int i = 0; i < srv->nslots; i++)
	{
		GpusortJobSlot *slot = &srv->slots[i];
		uint64		since = load64(&slot->busy_since);

		if (slot->state != GPUSORT_SLOT_RUNNING || slot->generation != srv->generation ||
			__atomic_load_n(&slot->finished, __ATOMIC_ACQUIRE))
			continue;
		if (gpu.cancels[i].seq == slot->seq)
		{
			if (now - gpu.cancels[i].at_ns <= grace)
				continue;
			snprintf(gpu.kill_reason, sizeof(gpu.kill_reason),
					 "was ended by the server: a job of backend %d, busy on GPU %d for more than gpusort.server_job_timeout, did not stop within %d ms of its cancel",
					 slot->pid, slot->device, GPU_CANCEL_GRACE_MS);
			ereport(LOG,
					(errmsg("gpusort server: ending the GPU process (PID %d): a job of backend %d cancelled %d ms ago has not stopped",
							(int) gpu.pid, slot->pid, GPU_CANCEL_GRACE_MS)));
			kill(gpu.pid, SIGKILL);
			break;
		}
		if (limit == 0 || since == 0 || now < since || now - since <= limit)
			continue;
		cancel_timed_out_job(i, now, since);
	}
	LWLockRelease(srv->lock);
}

/* Set by SIGCHLD: a child of the server ended, and waitpid is worth a call. */
static volatile sig_atomic_t child_ended = false;

/*
 * Whether the GPU process has ended: its exit, seen directly (SIGCHLD sets
 * the latch and child_ended, and the next look reaps; every
 * GPU_WATCH_MIN_MS the server looks anyway), or the end of its message pipe.
 * The pipe alone is not enough: a process that inherited its write end
 * despite close-on-exec, or one stuck in the driver as it exits, keeps the
 * pipe open after the GPU process is gone.  The loop turns several times for
 * each job, so waitpid is called only when there is reason to.
 */
static void
watch_gpu_process(bool periodic)
{
	int			wstatus;
	bool		open = read_messages();
	pid_t		r = 0;

	if (child_ended || periodic || !open)
	{
		child_ended = false;
		r = waitpid(gpu.pid, &wstatus, WNOHANG);
	}
	if (r == gpu.pid)
	{
		(void) read_messages();	/* what it sent before it died */
		gpu_process_ended(true, wstatus);
	}
	else if (!open)
		gpu_process_ended(false, 0);
}

/* SIGCHLD: a GPU process ended; the loop reaps it. */
static void
handle_sigchld(SIGNAL_ARGS)
{
	int			save_errno = errno;

	child_ended = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/* Whether a job of the running GPU process is admitted; under no lock (a hint). */
static bool
jobs_running(void)
{
	for (int i = 0; i < gpu.nworkers; i++)
		if (gpu.worker_busy[i])
			return true;
	return false;
}

/*
 * The wait of the main loop: until the next start, or the next look at the
 * jobs' times; -1: until the latch is set (no GPU, and none to start).
 */
static long
wait_timeout_ms(void)
{
	if (gpu.pid == 0 && gpusort_server->state == GPUSORT_SERVER_NO_GPU)
		return -1;
	if (gpu.pid == 0)
	{
		long		secs;
		int			usecs;

		TimestampDifference(GetCurrentTimestamp(), gpu.next_start, &secs, &usecs);
		return secs * 1000 + usecs / 1000;
	}
	if (!gpu.ready)
		return GPU_WATCH_MS;	/* the start's bound */
	/* jobs on the GPU: their times, and the stop of any the timeout cancelled */
	if (gpu.ready && jobs_running())
		return gpusort_server_job_timeout > 0 ? Min(GPU_WATCH_MS, gpusort_server_job_timeout) : GPU_WATCH_MS;
	return -1;
}

/*
 * At exit (SIGTERM, an error): the GPU process is ended and the jobs it ran
 * settled; queued jobs stay for the next server.
 */
static void
server_exit(int code, Datum arg)
{
	GpusortServerShared *srv = gpusort_server;

	if (gpu.pid > 0)
	{
		int			wstatus;

		kill_and_reap(gpu.pid, &wstatus);
		gpu.pid = 0;
	}

	LWLockReleaseAll();
	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	settle_orphaned_jobs(0, "the GPU server stopped while sorting");
	srv->state = GPUSORT_SERVER_STARTING;
	srv->server_pid = 0;
	srv->gpu_pid = 0;
	srv->server_latch = NULL;
	LWLockRelease(srv->lock);
}

void
gpusort_server_main(Datum main_arg)
{
	GpusortServerShared *srv = gpusort_server;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	/*
	 * SIGTERM (the postmaster's shutdown, or pg_terminate_backend) asks the
	 * main loop to stop: a clean stop logs at LOG, where die() would end the
	 * server with a FATAL "terminating background worker" on every shutdown.
	 */
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGPIPE, SIG_IGN);
	pqsignal(SIGCHLD, handle_sigchld);
	/*
	 * pg_stat_activity shows the server as active: a cancel, such as a
	 * script that cancels long-running queries sends, would be an ERROR
	 * that ends it and every job in flight.  It has no query to cancel.
	 */
	pqsignal(SIGINT, SIG_IGN);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	/*
	 * Jobs that a previous server had admitted are lost with its GPU
	 * process: its exit settled them, and this settles any it could not
	 * (their backends fall back or report the error); jobs still queued are
	 * served by this one.
	 */
	LWLockAcquire(srv->lock, LW_EXCLUSIVE);
	srv->state = GPUSORT_SERVER_STARTING;
	srv->server_pid = MyProcPid;
	srv->server_latch = MyLatch;
	srv->started = GetCurrentTimestamp();
	/* gpu_restarts and gpu_last_exit carry on: shared memory outlives a server */
	settle_orphaned_jobs(srv->generation + 1, "the GPU server stopped while sorting");
	LWLockRelease(srv->lock);
	on_shmem_exit(server_exit, (Datum) 0);
	gpu.cancels = (TimedOutJob *) MemoryContextAllocZero(TopMemoryContext, sizeof(TimedOutJob) * srv->nslots);
	gpu.queue = (QueuedJob *) MemoryContextAllocZero(TopMemoryContext, sizeof(QueuedJob) * srv->nslots);

	gpu.next_start = GetCurrentTimestamp();
	for (;;)
	{
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;
		long		timeout;

		if (gpu.pid == 0 && srv->state != GPUSORT_SERVER_NO_GPU &&
			!TimestampDifferenceExceeds(GetCurrentTimestamp(), gpu.next_start, 0))
			start_gpu_process();
		admit_jobs();

		timeout = wait_timeout_ms();
		if (timeout >= 0)
			events |= WL_TIMEOUT;
		if (gpu.pid > 0)
			events |= WL_SOCKET_READABLE;
		(void) WaitLatchOrSocket(MyLatch, events, gpu.message_fd, timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (ShutdownRequestPending)
		{
			/*
			 * Exit status 1, as die() gave: the postmaster starts the server
			 * again unless it is shutting down (0 would unregister it).
			 * server_exit() ends the GPU process.
			 */
			ereport(LOG,
					(errmsg("gpusort GPU server shutting down")));
			proc_exit(1);
		}

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			LWLockAcquire(srv->lock, LW_EXCLUSIVE);
			set_budgets();
			LWLockRelease(srv->lock);
		}
		{
			uint64		since = monotonic_ns() - gpu.watched_ns;

			if (gpu.pid > 0)
				watch_gpu_process(since >= (uint64) GPU_WATCH_MIN_MS * 1000000);
			if (since >= (uint64) GPU_WATCH_MIN_MS * 1000000)
			{
				reap_stragglers();
				watch_job_times();
				gpu.watched_ns = monotonic_ns();
			}
		}
#ifdef GS_INJECTION_POINTS
		if (gpu.pid > 0 && srv->inject_exit_error == srv->generation)
		{
			GpusortCommand c;

			memset(&c, 0, sizeof(c));
			c.kind = GPUSORT_CMD_EXIT_BROKEN;
			srv->inject_exit_error = 0;
			if (write(gpu.command_fd, &c, sizeof(c)) != sizeof(c))
				elog(LOG, "gpusort server: could not write to the GPU process: %m");
		}
#endif
	}
}
