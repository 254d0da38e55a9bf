/*
 * server.h: the GPU server's shared memory (set up in server_shmem.c), shared
 * by the server process (server.c) and the backends that hand it jobs
 * (server_client.c).
 *
 * With shared_preload_libraries = 'gpusort' one background worker owns the
 * CUDA contexts, one per GPU, and sorts for every backend.  A backend puts
 * its job in a slot of the main shared memory segment and waits on its
 * latch; the server admits jobs in submission order once a worker thread,
 * device memory within the budget and a region of the transfer area are
 * free, and the data stream through that region, which the server pinned
 * once, in chunks: the backend copies a chunk in while the device copies the
 * last one, and the same on the way out.
 *
 * Who writes what: the slot's job description and state under the lock; the
 * streaming counters with plain atomic stores (the worker threads never take
 * a PostgreSQL lock or call PostgreSQL).  A worker thread wakes a backend
 * through the server's main thread (a pipe), which sets the backend's latch.
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
	GPUSORT_SERVER_STARTING = 0,	/* not yet probed (or restarting) */
	GPUSORT_SERVER_READY,			/* sorting on devices */
	GPUSORT_SERVER_NO_GPU			/* running, but no GPU is usable: reason says why */
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
	GPUSORT_INJECT_COPY_OUT		/* a worker has sorted, before the first output chunk */
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
	volatile uint32 cancel;		/* backend: stop as soon as possible */
	volatile uint32 finished;	/* server: the result below is final */

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

typedef struct GpusortServerShared
{
	LWLock	   *lock;
	GpusortServerState state;
	uint64		generation;		/* bumped by each start of the server */
	int			server_pid;
	Latch	   *server_latch;
	TimestampTz started;
	gs_runtime_info runtime;	/* what the server found */
	char		reason[GS_MESSAGE_LEN]; /* why no GPU is usable (GPUSORT_SERVER_NO_GPU) */
	int			ndevices;
	GpusortDeviceStats devices[GPUSORT_SERVER_MAX_DEVICES];

	uint64		next_seq;
	uint64		jobs_submitted;
	uint64		jobs_rejected;	/* answered without running: over the budget, no GPU */
	Size		area_bytes;
	Size		area_used;
	char	   *area;			/* the transfer area (same address in every process) */
	int			ngranules;
	uint8	   *granule_used;	/* one byte per granule */
#ifdef GS_INJECTION_POINTS
	volatile uint32 inject;		/* a GpusortInjection, for the server of ... */
	uint64		inject_generation;	/* ... this generation */
	volatile uint32 inject_held;	/* jobs held there now */
	uint64		inject_exit_error;	/* the generation that is to fail as for a broken context */
#endif
	int			nslots;
	GpusortJobSlot slots[FLEXIBLE_ARRAY_MEMBER];
} GpusortServerShared;

/* Settings of server mode (settings.c defines them). */
extern int	gpusort_server_memory;	/* MB per GPU, 0: 80% of its memory */
extern int	gpusort_transfer_area;	/* MB */
extern int	gpusort_server_streams; /* jobs in flight per GPU */

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

/*
 * server_client.c: waits (30 s at most) while the server starts, so that
 * what a backend reports does not depend on how soon after the start it asked.
 */
extern void gpusort_server_wait_started(void);

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
