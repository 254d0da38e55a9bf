/*
 * server.h: the GPU server's shared memory (set up in server_shmem.c), shared
 * by the server process (server.c), the GPU process it supervises
 * (gpu_process.c) and the backends that hand it jobs (server_client.c).
 *
 * With shared_preload_libraries = 'gpusort' one background worker, the GPU
 * server, admits the jobs of every backend, and one process it forks, the GPU
 * process, runs them on the GPUs: it alone calls CUDA.  A backend puts its job
 * in a slot of the main shared memory segment and waits on its latch; the
 * server admits jobs in submission order once a worker thread of the GPU
 * process, device memory within the budget and a region of the transfer area
 * are free, and the data stream through that region, which the GPU process
 * pinned once, in chunks: the backend copies a chunk in while the device
 * copies the last one, and the same on the way out.
 *
 * Who writes what: the slot's job description and state under the lock; the
 * streaming counters with plain atomic stores (the GPU process never takes a
 * PostgreSQL lock or calls PostgreSQL).  The GPU process wakes a backend
 * through the server (a pipe, whose protocol is in gpu_protocol.h), which
 * sets the backend's latch.
 */
#ifndef GPUSORT_SERVER_H
#define GPUSORT_SERVER_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "storage/latch.h"
#include "storage/lwlock.h"

#include "gpusort.h"

#define GPUSORT_SERVER_MAX_DEVICES	16

/* The ring: a job's region of the transfer area holds up to this many chunks. */
#define GPUSORT_CHUNK_BYTES		((Size) 8 << 20)
#define GPUSORT_RING_SLOTS		4

/* The transfer area is handed out in granules of this size. */
#define GPUSORT_AREA_GRANULE	((Size) 64 << 10)

typedef enum GpusortServerState
{
	GPUSORT_SERVER_STARTING = 0,	/* the GPU process starts: jobs wait for it */
	GPUSORT_SERVER_READY,			/* sorting on devices */
	GPUSORT_SERVER_NO_GPU,			/* running, but no GPU is usable: reason says why */
	GPUSORT_SERVER_RESTARTING		/* the GPU process keeps dying: the server waits
									 * (reason says how long), jobs go to the CPU */
} GpusortServerState;

typedef enum GpusortSlotState
{
	GPUSORT_SLOT_FREE = 0,
	GPUSORT_SLOT_QUEUED,		/* waiting for admission */
	GPUSORT_SLOT_RUNNING		/* admitted: region, memory and a worker are its own */
} GpusortSlotState;

#ifdef GS_INJECTION_POINTS
/*
 * Test builds only (make INJECTION_POINTS=1): the stage at which the server
 * holds every job it has until the injection is cleared or the server stops,
 * so that a test can withdraw a job or end the server there.
 */
typedef enum GpusortInjection
{
	GPUSORT_INJECT_NONE = 0,
	GPUSORT_INJECT_QUEUED,		/* nothing is admitted */
	GPUSORT_INJECT_COPY_IN,		/* a worker copying in waits before the second chunk
								 * (the first of a one-chunk input) */
	GPUSORT_INJECT_RUNNING,		/* a worker has the input, before the sort */
	GPUSORT_INJECT_COPY_OUT,	/* a worker has sorted, before the first output chunk */
	GPUSORT_INJECT_HANG,		/* a worker with the input never returns (a kernel that
								 * does not end): the job timeout ends the GPU process */
	GPUSORT_INJECT_SLOW,		/* the next job that has its input is held until it is
								 * cancelled (a long sort that looks at its cancel flag
								 * between passes), then stops; one job only */
	GPUSORT_INJECT_CRASH,		/* the next job of inject_pid that has its input kills
								 * its worker with SIGSEGV (a fault in that job) */
	GPUSORT_INJECT_BREAK		/* the next job of inject_pid that has its input fails
								 * as with a CUDA error that broke the context, and the
								 * GPU process exits as for one */
} GpusortInjection;
#endif

typedef struct GpusortJobSlot
{
	/* under the lock */
	GpusortSlotState state;
	uint64		seq;			/* submission order; identifies the job */
	uint64		generation;		/* the server generation that admitted it */
	Latch	   *latch;			/* the backend's */
	int			pid;
	bool		withdrawn;		/* the backend left: the server frees the slot */

	/* the job, written by the backend before it is queued */
	gs_type		type;
	gs_algorithm algorithm;
	uint64		n;
	uint64		limit;			/* 0: all n in the output, else the first limit */
	bool		descending;
	bool		want_keys;
	bool		want_perm;
	int			device_wanted;	/* -1: any */
	bool		waits_for_start;	/* gpusort.device = gpu: queued while the GPU process
									 * starts; else answered at once (the CPU sorts) */
	uint64		max_device_bytes;	/* the session's limit, 0: none */
	TimestampTz submitted;

	/* written by the server at admission */
	int			device;
	Size		region_offset;	/* in the transfer area */
	Size		region_bytes;
	Size		reserved_bytes; /* of the device's budget */
	int			worker;			/* index of the worker thread */
	TimestampTz admitted;

	/* the stream, counted in chunks; atomics (see the file header) */
	volatile uint64 in_ready;	/* backend: chunks written */
	volatile uint64 in_done;	/* server: chunks on the device (their slots free) */
	volatile uint64 out_ready;	/* server: output chunks written */
	volatile uint64 out_done;	/* backend: output chunks read (their slots free) */
	volatile uint32 cancel;		/* backend or server: stop as soon as possible */
	volatile uint32 timed_out;	/* server: the cancel is for gpusort.server_job_timeout,
								 * and message says so */
	volatile uint32 finished;	/* server: the result below is final */
	volatile uint64 busy_since; /* CLOCK_MONOTONIC ns since the job has been busy on
								 * its device (the server sets it at admission, the
								 * GPU process as it starts the job), 0 while it
								 * waits for its backend (gpusort.server_job_timeout) */

	/* the result */
	gs_status	status;
	char		message[GS_MESSAGE_LEN];
	gs_run_report report;
} GpusortJobSlot;

typedef struct GpusortDeviceStats
{
	gs_device_props props;
	Size		budget_bytes;
	Size		reserved_bytes; /* the sum of its slots' reserved_bytes */
	int			workers;
	uint64		jobs_done;
	uint64		jobs_failed;
	uint64		bytes_sorted;
} GpusortDeviceStats;

/* What the GPU process found at its start: written by it before it says ready (or no GPU). */
typedef struct GpusortGpuReport
{
	gs_runtime_info runtime;
	int			ndevices;
	bool		cpu_device;		/* test builds: the CPU stands in for GPU 0 */
	gs_device_props props[GPUSORT_SERVER_MAX_DEVICES];
	char		reason[GS_MESSAGE_LEN]; /* why no GPU is usable */
} GpusortGpuReport;

typedef struct GpusortServerShared
{
	LWLock	   *lock;
	GpusortServerState state;
	uint64		generation;		/* bumped by each start of a GPU process */
	int			server_pid;
	Latch	   *server_latch;
	TimestampTz started;
	int			gpu_pid;		/* the GPU process, 0: none */
	TimestampTz gpu_started;
	uint64		gpu_restarts;	/* GPU processes started after one died (since the
								 * postmaster's start: servers come and go) */
	char		gpu_last_exit[GS_MESSAGE_LEN];	/* how the last one ended, "" if none did */
	TimestampTz gpu_last_exit_at;
	GpusortGpuReport gpu_report;	/* the GPU process's, read by the server */
	gs_runtime_info runtime;	/* what the GPU process found */
	char		reason[GS_MESSAGE_LEN]; /* why no GPU is usable (NO_GPU, RESTARTING) */
	int			ndevices;
	GpusortDeviceStats devices[GPUSORT_SERVER_MAX_DEVICES];

	uint64		next_seq;
	uint64		jobs_submitted;
	uint64		jobs_rejected;	/* answered without running: over the budget, no GPU */
	uint64		jobs_timed_out; /* cancelled for gpusort.server_job_timeout */
	uint64		jobs_withdrawn; /* left by their backends (a cancel, an error, or a
								 * wait longer than the CPU sort under auto) */
	Size		area_bytes;
	/*
	 * The GPU process: the backend whose job ended it, where one can be named
	 * (a fatal signal in that job's worker thread, or a CUDA error of that job
	 * that left its context unusable), and of which GPU process (generation).
	 */
	volatile int32 crash_pid;
	volatile uint32 crash_broken;	/* by a CUDA error that broke the context: the first
									 * job to fail with it, not surely the one whose
									 * kernel broke it */
	volatile uint64 crash_generation;

	Size		area_used;
	char	   *area;			/* the transfer area (same address in every process) */
	int			ngranules;
	uint8	   *granule_used;	/* one byte per granule */
#ifdef GS_INJECTION_POINTS
	volatile uint32 inject;		/* a GpusortInjection, for the server of ... */
	uint64		inject_generation;	/* ... this generation */
	volatile uint32 inject_held;	/* jobs held there now */
	uint64		inject_exit_error;	/* the generation that is to fail as for a broken context */
	volatile uint32 inject_start_hang;	/* the next GPU process never finds its GPUs */
	volatile int32 inject_pid;	/* GPUSORT_INJECT_SLOW holds a job of this backend
								 * only; 0: of any */
#endif
	int			nslots;
	GpusortJobSlot slots[FLEXIBLE_ARRAY_MEMBER];
} GpusortServerShared;

/* Settings of server mode (settings.c defines them). */
extern int	gpusort_server_memory;	/* MB per GPU, 0: 80% of its memory */
extern int	gpusort_transfer_area;	/* MB */
extern int	gpusort_server_streams; /* jobs in flight per GPU */
extern int	gpusort_server_job_timeout; /* ms a job may be busy on its GPU, 0: no limit */

#ifdef GS_INJECTION_POINTS
/* Test builds: the server sorts on the CPU in its worker threads when no GPU is usable. */
extern bool gpusort_server_cpu_device;
#endif

/* Set in the postmaster when gpusort was preloaded (inherited by its children). */
extern bool gpusort_server_mode;
extern GpusortServerShared *gpusort_server;

/*
 * server_shmem.c: the shared memory and the server's background worker,
 * registered from _PG_init in the postmaster when gpusort is preloaded; and
 * what the server and the backends both do to a slot.
 */
extern void gpusort_server_register(void);
extern Size gpusort_area_granules(Size bytes);

/* Gives back bytes of a device's budget; under the lock. */
extern void gpusort_server_unreserve(int device, Size bytes);

/* Releases what a slot holds and frees it; under the lock. */
extern void gpusort_server_release_slot(GpusortJobSlot *slot);

/* The job a slot describes, as gs_worker_sort takes it (max_device_bytes aside). */
static inline void
gpusort_slot_stream_job(const GpusortJobSlot *slot, gs_stream_job *job)
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

/* A device's share of the server's memory: gpusort.server_memory, or 80% of it. */
static inline Size
gpusort_device_budget(const gs_device_props *props)
{
	if (gpusort_server_memory > 0)
		return Min((Size) gpusort_server_memory * 1024 * 1024, props->total_memory);
	return props->total_memory / 10 * 8;
}

/* The streaming counters, read and written across processes and threads. */
static inline uint64
load64(volatile uint64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void
store64(volatile uint64 *p, uint64 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* The number of chunks a stream of bytes takes. */
static inline uint64
gpusort_chunks(Size bytes)
{
	return (bytes + GPUSORT_CHUNK_BYTES - 1) / GPUSORT_CHUNK_BYTES;
}

#endif							/* GPUSORT_SERVER_H */
