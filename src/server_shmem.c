/*
 * server_shmem.c: the GPU server's shared memory (server.h), which the
 * server (server.c) and the backends (server_client.c) both work on: its
 * size, its request and set-up at postmaster start, the registration of the
 * server's background worker, and the bookkeeping of a job slot that either
 * side may free.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "gpusort_pg.h"
#include "server.h"

bool		gpusort_server_mode = false;
GpusortServerShared *gpusort_server = NULL;

#ifdef GS_INJECTION_POINTS
bool		gpusort_server_cpu_device = false;
#endif

static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif

Size
gpusort_area_granules(Size bytes)
{
	return (bytes + GPUSORT_AREA_GRANULE - 1) / GPUSORT_AREA_GRANULE;
}

static Size
area_bytes(void)
{
	return (Size) gpusort_transfer_area * 1024 * 1024;
}

static Size
server_shmem_size(void)
{
	Size		size = offsetof(GpusortServerShared, slots);
	Size		granules = gpusort_area_granules(area_bytes());

	size = add_size(size, mul_size(MaxBackends, sizeof(GpusortJobSlot)));
	size = add_size(size, granules);
	/* the area itself, page aligned */
	size = add_size(size, add_size(area_bytes(), 4096));
	return size;
}

static void
server_shmem_request(void)
{
#if PG_VERSION_NUM >= 150000
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
#endif
	RequestAddinShmemSpace(server_shmem_size());
	RequestNamedLWLockTranche("gpusort", 1);
}

static void
server_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	gpusort_server = ShmemInitStruct("gpusort server", server_shmem_size(), &found);
	if (!found)
	{
		GpusortServerShared *srv = gpusort_server;
		Size		head = offsetof(GpusortServerShared, slots) +
			(Size) MaxBackends * sizeof(GpusortJobSlot);
		char	   *p;

		memset(srv, 0, head);
		srv->lock = &(GetNamedLWLockTranche("gpusort"))->lock;
		srv->state = GPUSORT_SERVER_STARTING;
		srv->nslots = MaxBackends;
		srv->area_bytes = area_bytes();
		srv->ngranules = (int) gpusort_area_granules(srv->area_bytes);
		srv->granule_used = (uint8 *) srv + head;
		memset(srv->granule_used, 0, srv->ngranules);
		p = (char *) srv->granule_used + srv->ngranules;
		srv->area = (char *) TYPEALIGN(4096, p);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* From _PG_init in the postmaster, when gpusort is in shared_preload_libraries. */
void
gpusort_server_register(void)
{
	BackgroundWorker worker;

	gpusort_server_mode = true;

#ifdef GS_INJECTION_POINTS
	DefineCustomBoolVariable("gpusort.server_cpu_device",
							 "Makes the GPU server sort on the CPU in its worker threads when no GPU is usable.",
							 "Only in test builds (make INJECTION_POINTS=1): jobs then pass through the "
							 "server's stages on a machine without a GPU.",
							 &gpusort_server_cpu_device,
							 false,
							 PGC_POSTMASTER, GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
#endif

#if PG_VERSION_NUM >= 150000
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = server_shmem_request;
#else
	server_shmem_request();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = server_shmem_startup;

	memset(&worker, 0, sizeof(worker));
	/* a "connection" to no database: a row in pg_stat_activity, as the launchers have */
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "gpusort");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "gpusort_server_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "gpusort GPU server");
	snprintf(worker.bgw_type, BGW_MAXLEN, "gpusort GPU server");
	RegisterBackgroundWorker(&worker);
}

/*
 * Gives back bytes of a device's budget; under the lock.  Never below zero:
 * a wrapped counter would keep every job out for good.
 */
void
gpusort_server_unreserve(int device, Size bytes)
{
	GpusortServerShared *srv = gpusort_server;

	if (device >= 0 && device < GPUSORT_SERVER_MAX_DEVICES)
		srv->devices[device].reserved_bytes -= Min(bytes, srv->devices[device].reserved_bytes);
}

/* Releases what a slot holds and frees it; under the lock. */
void
gpusort_server_release_slot(GpusortJobSlot *slot)
{
	GpusortServerShared *srv = gpusort_server;

	if (slot->region_bytes > 0)
	{
		int			first = (int) (slot->region_offset / GPUSORT_AREA_GRANULE);
		int			count = (int) gpusort_area_granules(slot->region_bytes);

		memset(srv->granule_used + first, 0, count);
		srv->area_used -= Min(slot->region_bytes, srv->area_used);
	}
	gpusort_server_unreserve(slot->device, slot->reserved_bytes);
	slot->region_bytes = 0;
	slot->reserved_bytes = 0;
	slot->state = GPUSORT_SLOT_FREE;
	slot->withdrawn = false;
}
