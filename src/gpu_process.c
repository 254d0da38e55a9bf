/*
 * gpu_process.c: the GPU process, the one process of server mode that calls
 * CUDA.  The GPU server (server.c) forks it and supervises it.
 *
 * It is a child of the server, not of the postmaster, so its death (the OOM
 * killer, a fault in the driver's library, a GPU off the bus, a job killed
 * for running too long) is not a crash of PostgreSQL: the server settles its
 * jobs and starts another.  That is safe only because of what the process
 * does not do.  After the fork it calls nothing of PostgreSQL (the process
 * title aside, set before any thread starts), takes no PostgreSQL lock, and
 * touches nothing of shared memory but gpusort's job slots (the streaming
 * counters with atomics, the result of the job it finishes), the regions of
 * the transfer area its jobs were given, and the report of what it found at
 * start (GpusortGpuReport).  It talks to the server through two pipes:
 * commands in (run this slot's job on that worker), messages out (wake that
 * slot's backend, a worker has finished, the devices are ready).  The
 * server learns of its death by reaping it (and by the message pipe's end);
 * every descriptor it has is close-on-exec, so that a program a library
 * execs keeps none of them open.
 *
 * The worker threads, gpusort.server_streams per GPU, each run one job at a
 * time with kernels/ (gs_worker_sort on a stream of their own).  The main
 * thread reads commands and hands them over.
 */
#include "postgres.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "utils/ps_status.h"

#include "gpu_protocol.h"
#include "server.h"

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
	/*
	 * The backend and generation of the job this thread runs (pid 0: none),
	 * copied from its slot as it takes the job: the slot is freed and may
	 * take another backend's job once this one is finished, before the
	 * thread has seen how its context is.  Written by this thread alone, read
	 * by its fatal_signal.
	 */
	volatile sig_atomic_t job_pid;
	volatile uint64 job_generation;
	volatile int started;		/* 1: ready, -1: failed (error says why) */
	gs_error	error;
} Worker;

static Worker *workers;
static int	nworkers;
static int	message_fd = -1;

#ifdef GS_INJECTION_POINTS
static bool cpu_device = false;	/* the CPU stands in for GPU 0 */
#define INJECTION_HOLD(stage, slot) injection_hold(stage, slot)
#else
#define cpu_device false
#define INJECTION_HOLD(stage, slot) ((void) 0)
#endif

/* Monotonic nanoseconds, the clock of GpusortJobSlot.busy_since. */
static uint64
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Sends a message to the server.  A pipe write of a few bytes is atomic, and
 * the pipe blocks when full (the server is busy; it reads soon).  A failed
 * write means the server is gone, and so is the point of going on.
 */
static void
send_message(GpusortMessageKind kind, int worker, int slot, uint64 seq, gs_status status)
{
	GpusortMessage m;

	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.worker = worker;
	m.slot = slot;
	m.seq = seq;
	m.status = status;
	while (write(message_fd, &m, sizeof(m)) != sizeof(m))
	{
		if (errno != EINTR)
			_exit(GPUSORT_GPU_EXIT_ORPHANED);
	}
}

/*
 * Names backend pid, whose job of GPU process generation ends this process,
 * as the cause (broken: as the first job to fail with a broken context), for
 * the server's back-off (blame_jobs_in_flight); the first name stands.
 * Async-signal-safe: plain stores to shared memory.
 */
static void
name_culprit(int32 pid, uint64 generation, bool broken)
{
	if (pid == 0 ||
		__atomic_load_n(&gpusort_server->crash_generation, __ATOMIC_ACQUIRE) == generation)
		return;
	gpusort_server->crash_pid = pid;
	gpusort_server->crash_broken = broken;
	__atomic_store_n(&gpusort_server->crash_generation, generation, __ATOMIC_RELEASE);
}

/*
 * A fatal signal raised by a worker thread itself (a fault in its code or
 * in a library under it, or abort()): names the job it was running, then
 * dies of the same signal.  One sent by another process (kill -SEGV) names
 * nothing, whichever thread takes it.
 */
static void
fatal_signal(int sig, siginfo_t *info, void *context)
{
	(void) context;
	if (workers != NULL &&
		(info->si_code > 0 || (info->si_code == SI_TKILL && info->si_pid == getpid())))
	{
		pthread_t	self = pthread_self();

		for (int i = 0; i < nworkers; i++)
			if (pthread_equal(workers[i].thread, self))
			{
				name_culprit(workers[i].job_pid, workers[i].job_generation, false);
				break;
			}
	}
	/* SA_RESETHAND: the default action now, which ends the process */
	raise(sig);
}

#ifdef GS_INJECTION_POINTS
/*
 * Holds the calling worker while the injection names this stage for this
 * process, until it is cleared.  It does not look at the job's cancel flag:
 * the job is as busy as one inside a long copy or sort.  At 'hang' the
 * worker never comes back, as in a kernel that never returns: on a GPU it
 * runs one (gs_inject_hang), on the CPU stand-in it spins.  At 'slow' the
 * first worker to get there takes the injection (it is cleared) and waits
 * for its job's cancel flag, as a long sort that looks at it between passes;
 * at 'slow-self' only a job of the backend that set it does.  At 'crash-self'
 * the next job of the backend that set it kills its worker with SIGSEGV, as
 * a fault in that job would; at 'break-self' it fails, and the process
 * exits, as after a CUDA error of that job that broke the context.
 */
static void
injection_hold(GpusortInjection stage, GpusortJobSlot *slot)
{
	GpusortServerShared *srv = gpusort_server;
	struct timespec ts = {0, 1000000};
	uint32		now = __atomic_load_n(&srv->inject, __ATOMIC_ACQUIRE);

	if (srv->inject_generation != srv->generation)
		return;
	if (now == GPUSORT_INJECT_SLOW && stage == GPUSORT_INJECT_RUNNING)
	{
		int32		pid = __atomic_load_n(&srv->inject_pid, __ATOMIC_ACQUIRE);

		if (pid != 0 && slot->pid != pid)
			return;
		if (!__atomic_compare_exchange_n(&srv->inject, &now, GPUSORT_INJECT_NONE, false,
										 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;
		__atomic_add_fetch(&srv->inject_held, 1, __ATOMIC_ACQ_REL);
		while (!__atomic_load_n(&slot->cancel, __ATOMIC_ACQUIRE))
			nanosleep(&ts, NULL);
		__atomic_sub_fetch(&srv->inject_held, 1, __ATOMIC_ACQ_REL);
		return;
	}
	if (now == GPUSORT_INJECT_CRASH && stage == GPUSORT_INJECT_RUNNING)
	{
		int32		pid = __atomic_load_n(&srv->inject_pid, __ATOMIC_ACQUIRE);

		if (slot->pid != pid ||
			!__atomic_compare_exchange_n(&srv->inject, &now, GPUSORT_INJECT_NONE, false,
										 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;
		raise(SIGSEGV);			/* to this thread, as a fault in the job */
	}
	if (now == GPUSORT_INJECT_BREAK && stage == GPUSORT_INJECT_RUNNING)
	{
		static const char broke[] = "a CUDA error (injected) left the context unusable";
		int32		pid = __atomic_load_n(&srv->inject_pid, __ATOMIC_ACQUIRE);

		if (slot->pid != pid ||
			!__atomic_compare_exchange_n(&srv->inject, &now, GPUSORT_INJECT_NONE, false,
										 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;
		/* as worker_main after a job whose CUDA error broke the context */
		slot->status = GS_ERR_CUDA;
		memcpy(slot->message, broke, Min(sizeof(broke), sizeof(slot->message)));
		__atomic_store_n(&slot->finished, 1, __ATOMIC_RELEASE);
		send_message(GPUSORT_MSG_WAKE, -1, (int) (slot - srv->slots), slot->seq, GS_OK);
		name_culprit(slot->pid, slot->generation, true);
		_exit(GPUSORT_GPU_EXIT_BROKEN);
	}
	if (now == GPUSORT_INJECT_HANG && stage == GPUSORT_INJECT_RUNNING)
	{
		__atomic_add_fetch(&srv->inject_held, 1, __ATOMIC_ACQ_REL);
		if (!cpu_device)
			gs_inject_hang();
		for (;;)
			;
	}
	if (now != (uint32) stage)
		return;
	__atomic_add_fetch(&srv->inject_held, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&srv->inject, __ATOMIC_ACQUIRE) == (uint32) stage)
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
 * than any wake-up.  False when the job is withdrawn.  While it waits for its
 * backend the job is not busy on the GPU, so the server's job timeout does
 * not count this time.
 */
static bool
wait_counter(StreamArg *a, volatile uint64 *counter, uint64 target)
{
	long		sleep_ns = 1000;

	if (load64(counter) >= target)
		return !__atomic_load_n(&a->slot->cancel, __ATOMIC_ACQUIRE);
	store64(&a->slot->busy_since, 0);
	while (load64(counter) < target)
	{
		struct timespec ts;

		if (__atomic_load_n(&a->slot->cancel, __ATOMIC_ACQUIRE))
			break;
		ts.tv_sec = 0;
		ts.tv_nsec = sleep_ns;
		nanosleep(&ts, NULL);
		if (sleep_ns < 20000)
			sleep_ns *= 2;
	}
	store64(&a->slot->busy_since, now_ns());
	return !__atomic_load_n(&a->slot->cancel, __ATOMIC_ACQUIRE);
}

static bool
io_input_ready(void *arg, size_t chunk)
{
	StreamArg  *a = (StreamArg *) arg;

	if (chunk == Min(1, a->in_chunks - 1))
		INJECTION_HOLD(GPUSORT_INJECT_COPY_IN, a->slot);
	return wait_counter(a, &a->slot->in_ready, chunk + 1);
}

static void
io_input_done(void *arg, size_t chunk)
{
	StreamArg  *a = (StreamArg *) arg;

	store64(&a->slot->in_done, chunk + 1);
	/* the backend waits for a free ring slot only when the input outgrows the ring */
	if (a->in_chunks > GPUSORT_RING_SLOTS)
		send_message(GPUSORT_MSG_WAKE, a->worker, a->slot_index, a->seq, GS_OK);
	if (chunk + 1 == a->in_chunks)
		INJECTION_HOLD(GPUSORT_INJECT_RUNNING, a->slot);
}

static bool
io_output_free(void *arg, size_t chunk)
{
	StreamArg  *a = (StreamArg *) arg;

	if (chunk == 0)
		INJECTION_HOLD(GPUSORT_INJECT_COPY_OUT, a->slot);
	if (chunk < GPUSORT_RING_SLOTS)
		return !__atomic_load_n(&a->slot->cancel, __ATOMIC_ACQUIRE);
	return wait_counter(a, &a->slot->out_done, chunk + 1 - GPUSORT_RING_SLOTS);
}

static void
io_output_ready(void *arg, size_t chunk)
{
	StreamArg  *a = (StreamArg *) arg;

	store64(&a->slot->out_ready, chunk + 1);
	send_message(GPUSORT_MSG_WAKE, a->worker, a->slot_index, a->seq, GS_OK);
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

	return __atomic_load_n(&a->slot->cancel, __ATOMIC_ACQUIRE);
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

	gpusort_slot_stream_job(slot, &job);
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
	store64(&slot->busy_since, now_ns());
#ifdef GS_INJECTION_POINTS
	if (cpu_device)
		status = cpu_stand_in_sort(&job, &io, &rep, &err);
	else
#endif
		status = gs_worker_sort(w->gw, &job, &io, &rep, &err);
	store64(&slot->busy_since, 0);

	/* a job the server cancelled for its time on the GPU: the server wrote the message */
	if (status == GS_ERR_INTERRUPTED && __atomic_load_n(&slot->timed_out, __ATOMIC_ACQUIRE))
		status = GS_ERR_TIMED_OUT;
	else
		memcpy(slot->message, err.message, sizeof(slot->message));
	slot->status = status;
	slot->report = rep;
	__atomic_store_n(&slot->finished, 1, __ATOMIC_RELEASE);
	send_message(GPUSORT_MSG_WAKE, w->index, slot_index, seq, GS_OK);
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
		int32		job_pid;
		uint64		job_generation;
		gs_status	status;

		pthread_mutex_lock(&w->mutex);
		while (w->slot < 0)
			pthread_cond_wait(&w->cond, &w->mutex);
		slot = w->slot;
		seq = w->seq;
		pthread_mutex_unlock(&w->mutex);

		/* the slot is this job's until run_job marks it finished */
		w->job_generation = gpusort_server->slots[slot].generation;
		w->job_pid = gpusort_server->slots[slot].pid;
		job_pid = w->job_pid;
		job_generation = w->job_generation;
		status = run_job(w, slot, seq);
		w->job_pid = 0;

		pthread_mutex_lock(&w->mutex);
		w->slot = -1;
		pthread_mutex_unlock(&w->mutex);
		send_message(GPUSORT_MSG_FINISHED, w->index, slot, seq, status);

		/*
		 * A context a CUDA error left unusable: the server starts a fresh
		 * process.  The first worker to see it with its job failed names that
		 * job, as broken: every job in flight fails with the same sticky
		 * error, and the one whose kernel broke the context may not be the
		 * first to see it, so the server blames that job and every job in
		 * flight (this one had finished, and would have gone unblamed).
		 */
		if (status != GS_OK && !cpu_device && gs_device_context_broken())
		{
			name_culprit(job_pid, job_generation, true);
			_exit(GPUSORT_GPU_EXIT_BROKEN);
		}
	}
	return NULL;
}

/*
 * Finds the GPUs and keeps their memory pools; returns how many, or -1 with
 * report->reason set when none can be used.
 */
static int
find_devices(GpusortGpuReport *report)
{
	gs_error	err;
	int			ndev;

	gs_runtime_probe(&report->runtime);
	if (report->runtime.status != GS_OK)
	{
		strlcpy(report->reason, report->runtime.reason[0] != '\0' ? report->runtime.reason :
				gs_status_name(report->runtime.status), sizeof(report->reason));
		return -1;
	}

	ndev = Min(report->runtime.device_count, GPUSORT_SERVER_MAX_DEVICES);
	for (int d = 0; d < ndev; d++)
	{
		if (gs_device_props_get(d, &report->props[d], &err) != GS_OK ||
			gs_device_pool_keep(d, gpusort_device_budget(&report->props[d]), &err) != GS_OK)
		{
			snprintf(report->reason, sizeof(report->reason), "GPU %d: %s", d, err.message);
			return -1;
		}
	}
	return ndev;
}

#ifdef GS_INJECTION_POINTS
/* The CPU as GPU 0 (test builds with gpusort.server_cpu_device); returns 1. */
static int
cpu_stand_in_device(GpusortGpuReport *report)
{
	memset(&report->props[0], 0, sizeof(report->props[0]));
	strlcpy(report->props[0].name, "the CPU standing in for a GPU (test build)", sizeof(report->props[0].name));
	report->props[0].total_memory = report->props[0].free_memory = (Size) 4 << 30;
	report->runtime.status = GS_OK;
	report->runtime.device_count = 1;
	report->runtime.reason[0] = '\0';
	report->reason[0] = '\0';
	report->cpu_device = cpu_device = true;
	return 1;
}
#endif

/* Starts gpusort.server_streams worker threads per device; false with report->reason set if one fails. */
static bool
start_workers(int ndev, GpusortGpuReport *report)
{
	nworkers = ndev * gpusort_server_streams;
	workers = (Worker *) calloc(nworkers, sizeof(Worker));
	if (workers == NULL)
	{
		strlcpy(report->reason, "out of memory for the worker threads", sizeof(report->reason));
		return false;
	}
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
			strlcpy(report->reason, "could not start a worker thread", sizeof(report->reason));
			return false;
		}
	}
	for (int i = 0; i < nworkers; i++)
	{
		struct timespec ts = {0, 1000000};

		while (__atomic_load_n(&workers[i].started, __ATOMIC_ACQUIRE) == 0)
			nanosleep(&ts, NULL);
		if (workers[i].started < 0)
		{
			snprintf(report->reason, sizeof(report->reason), "GPU %d: %s",
					 workers[i].device, workers[i].error.message);
			return false;
		}
	}
	return true;
}

/* Finds the GPUs, pins the transfer area, starts the worker threads; the report says how it went. */
static bool
start_devices(GpusortGpuReport *report)
{
	GpusortServerShared *srv = gpusort_server;
	gs_error	err;
	int			ndev;

	memset(report, 0, sizeof(*report));
	ndev = find_devices(report);
#ifdef GS_INJECTION_POINTS
	if (ndev < 0 && gpusort_server_cpu_device)
		ndev = cpu_stand_in_device(report);
#endif
	if (ndev < 0)
		return false;
	report->ndevices = ndev;

	if (!cpu_device && gs_host_pin(srv->area, srv->area_bytes, &err) != GS_OK)
	{
		strlcpy(report->reason, err.message, sizeof(report->reason));
		return false;
	}
	return start_workers(ndev, report);
}

/*
 * Marks every descriptor the process inherited from the server (the
 * postmaster's sockets and pipes, the server's latch) close-on-exec, so that
 * no program a library execs holds them; its own pipes are so already.
 */
static void
close_on_exec_all(void)
{
	DIR		   *dir = opendir("/proc/self/fd");
	struct dirent *de;

	if (dir == NULL)
		return;
	while ((de = readdir(dir)) != NULL)
	{
		int			fd = atoi(de->d_name);
		int			flags;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd <= 2 || fd == dirfd(dir))
			continue;
		flags = fcntl(fd, F_GETFD);
		if (flags >= 0 && !(flags & FD_CLOEXEC))
			(void) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
	}
	closedir(dir);
}

/*
 * The process's own set-up after the fork: every signal handler of
 * PostgreSQL's gives way to the default (SIGTERM and the like end it, as
 * SIGKILL does; SIGFPE, which a backend turns into an ERROR, kills it rather
 * than running PostgreSQL's error handling with the server's PGPROC), and it
 * dies with the server, so that it never outlives the one that settles its
 * jobs.
 */
static void
detach_from_server(pid_t server_pid)
{
	sigset_t	none;
	struct sigaction fatal;
	const int	fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

	/* SIGKILL, SIGSTOP and the C library's own signals refuse; that is fine */
	for (int sig = 1; sig < NSIG; sig++)
		(void) signal(sig, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);	/* a write to a gone server fails instead */
	memset(&fatal, 0, sizeof(fatal));
	fatal.sa_sigaction = fatal_signal;
	fatal.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
	sigemptyset(&fatal.sa_mask);
	for (int i = 0; i < lengthof(fatal_signals); i++)
		(void) sigaction(fatal_signals[i], &fatal, NULL);

	/*
	 * A process group of its own: PostgreSQL signals a backend's whole group
	 * (pg_cancel_backend and pg_terminate_backend of the server, the
	 * postmaster's SIGINT and SIGQUIT), and such a signal is not for it.
	 * The server ends it when the server itself ends.
	 */
	(void) setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != server_pid)
		_exit(GPUSORT_GPU_EXIT_ORPHANED);
	init_ps_display("gpusort GPU process");
	close_on_exec_all();
}

/*
 * exit() called in the GPU process (by a library): the server's atexit
 * handler, registered before the fork, would run PostgreSQL's exit callbacks
 * here, on the server's PGPROC, latch and shared memory.  Registered after
 * the fork, this one runs first and ends the process at once.
 */
static void
exit_without_postgres(void)
{
	_exit(GPUSORT_GPU_EXIT_EXIT);
}

static void
gpu_process_main(pid_t server_pid, int command_fd)
{
	GpusortGpuReport *report = &gpusort_server->gpu_report;
	GpusortCommand c;

	if (atexit(exit_without_postgres) != 0)
		_exit(GPUSORT_GPU_EXIT_EXIT);
	detach_from_server(server_pid);
#ifdef GS_INJECTION_POINTS
	/* a start that hangs (in the driver, say): only the server's bound ends it */
	if (__atomic_exchange_n(&gpusort_server->inject_start_hang, 0, __ATOMIC_ACQ_REL))
		for (;;)
			pause();
#endif
	if (!start_devices(report))
	{
		send_message(GPUSORT_MSG_NO_GPU, -1, -1, 0, GS_ERR_NO_DEVICE);
		_exit(0);
	}
	send_message(GPUSORT_MSG_READY, -1, -1, 0, GS_OK);

	for (;;)
	{
		ssize_t		r = read(command_fd, &c, sizeof(c));
		Worker	   *w;

		if (r < 0 && errno == EINTR)
			continue;
		if (r != sizeof(c))
			_exit(0);			/* the server closed the pipe: it is stopping */
		if (c.kind == GPUSORT_CMD_EXIT_BROKEN)
			_exit(GPUSORT_GPU_EXIT_BROKEN);
		if (c.worker < 0 || c.worker >= nworkers)
			continue;
		w = &workers[c.worker];
		pthread_mutex_lock(&w->mutex);
		w->slot = c.slot;
		w->seq = c.seq;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->mutex);
	}
}

/*
 * Forks the GPU process.  Returns its pid, with the server's ends of the
 * pipes in *command_fd (write) and *message_fd_out (read, non-blocking), or
 * -1 with errno set.  Called by the server's only thread.
 */
pid_t
gpusort_gpu_process_start(int *command_fd, int *message_fd_out)
{
	int			cmd[2],
				msg[2];
	pid_t		server_pid = getpid();
	pid_t		pid;

	/*
	 * Close-on-exec: a helper that CUDA or NVML starts with fork and exec
	 * must not hold the message pipe's write end, which would keep the pipe
	 * open after the GPU process died.
	 */
	if (pipe2(cmd, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(msg, O_CLOEXEC) != 0)
	{
		close(cmd[0]);
		close(cmd[1]);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0)
	{
		close(cmd[1]);
		close(msg[0]);
		message_fd = msg[1];
		gpu_process_main(server_pid, cmd[0]);
	}
	close(cmd[0]);
	close(msg[1]);
	if (pid < 0 || fcntl(msg[0], F_SETFL, O_NONBLOCK) != 0)
	{
		int			save = errno;

		close(cmd[1]);
		close(msg[0]);
		if (pid > 0)
		{
			kill(pid, SIGKILL);
			(void) waitpid(pid, NULL, 0);
		}
		errno = save;
		return -1;
	}
	*command_fd = cmd[1];
	*message_fd_out = msg[0];
	return pid;
}
