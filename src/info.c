/*
 * info.c: gpusort_info(), gpusort_devices(), gpusort_last_run() and
 * gpusort_server(), the functions that say what gpusort found and what it
 * did.
 *
 * gpusort_info and gpusort_devices probe the CUDA driver (once per backend)
 * but create no context; gpusort_last_run reads a per-backend record that
 * every sort fills.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "storage/lwlock.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "gpusort_pg.h"
#include "server.h"

PG_FUNCTION_INFO_V1(gpusort_info);
PG_FUNCTION_INFO_V1(gpusort_devices);
PG_FUNCTION_INFO_V1(gpusort_last_run);
PG_FUNCTION_INFO_V1(gpusort_server_status);
PG_FUNCTION_INFO_V1(gpusort_gpu_process);

/* A CUDA version number (major * 1000 + minor * 10) as text, e.g. "13.0". */
static Datum
version_text(int version)
{
	return CStringGetTextDatum(psprintf("%d.%d", version / 1000, (version % 1000) / 10));
}

/*
 * gpusort_info() -> (built_with_cuda bool, cuda_runtime_version text,
 *   driver_version text, device_count int, gpu_usable bool, reason text)
 */
Datum
gpusort_info(PG_FUNCTION_ARGS)
{
	const gs_runtime_info *info = gpusort_runtime();
	TupleDesc	tupdesc;
	Datum		values[8];
	bool		nulls[8];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	memset(nulls, 0, sizeof(nulls));
	values[0] = BoolGetDatum(info->built_with_cuda);
	if (info->runtime_version > 0)
		values[1] = version_text(info->runtime_version);
	else
		nulls[1] = true;
	if (info->driver_version > 0)
		values[2] = version_text(info->driver_version);
	else
		nulls[2] = true;
	values[3] = Int32GetDatum(info->device_count);
	values[4] = BoolGetDatum(info->status == GS_OK);
	if (info->status != GS_OK)
		values[5] = CStringGetTextDatum(info->reason[0] != '\0' ? info->reason :
										gs_status_name(info->status));
	else
		nulls[5] = true;

	/* since 1.1: the mode and why */
	if (tupdesc->natts >= 8)
	{
		values[6] = CStringGetTextDatum(gpusort_server_mode ? "server" : "backend");
		values[7] = CStringGetTextDatum(gpusort_server_mode ?
										"gpusort is in shared_preload_libraries: one GPU server process sorts for every backend" :
										"gpusort is not in shared_preload_libraries: each backend that sorts on a GPU opens its own CUDA context");
	}

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * gpusort_devices() -> SETOF (id int, name text, compute_capability text,
 *   memory_total_mb bigint, memory_free_mb bigint, multiprocessors int)
 */
Datum
gpusort_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const gs_runtime_info *info = gpusort_runtime();
	int			id;

	InitMaterializedSRF(fcinfo, 0);

	for (id = 0; id < info->device_count; id++)
	{
		gs_device_props props;
		gs_error	err;
		Datum		values[6];
		bool		nulls[6];

		if (gpusort_server_mode)
		{
			/* what the server read when it started: the backend loads no CUDA */
			if (id >= gpusort_server->ndevices)
				break;
			props = gpusort_server->devices[id].props;
		}
		else if (gs_device_props_get(id, &props, &err) != GS_OK)
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not read the properties of GPU %d", id),
					 errdetail("The GPU library reported: %s.", err.message)));

		memset(nulls, 0, sizeof(nulls));
		values[0] = Int32GetDatum(props.id);
		values[1] = CStringGetTextDatum(props.name);
		values[2] = CStringGetTextDatum(psprintf("%d.%d", props.major, props.minor));
		values[3] = Int64GetDatum((int64) (props.total_memory / (1024 * 1024)));
		values[4] = Int64GetDatum((int64) (props.free_memory / (1024 * 1024)));
		values[5] = Int32GetDatum(props.multiprocessors);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * gpusort_last_run() -> SETOF (elements bigint, type text, device text,
 *   algorithm text, copy_in_ms float8, sort_ms float8, copy_out_ms float8,
 *   total_ms float8): one row about this backend's last sort, none before
 *   its first.
 */
Datum
gpusort_last_run(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const GpusortLastRun *last = &gpusort_last;
	Datum		values[10];
	bool		nulls[10];

	InitMaterializedSRF(fcinfo, 0);
	if (!last->valid)
		return (Datum) 0;

	memset(nulls, 0, sizeof(nulls));
	values[0] = Int64GetDatum(last->elements);
	values[1] = CStringGetTextDatum(gs_type_name(last->type));
	values[2] = CStringGetTextDatum(last->device >= 0 ? psprintf("gpu:%d", last->device) : "cpu");
	values[3] = CStringGetTextDatum(gs_algorithm_name(last->algorithm));
	values[4] = Float8GetDatum(last->copy_in_ms);
	values[5] = Float8GetDatum(last->sort_ms);
	values[6] = Float8GetDatum(last->copy_out_ms);
	values[7] = Float8GetDatum(last->total_ms);
	values[8] = Float8GetDatum(last->queue_ms);	/* since 1.1 */
	values[9] = Float8GetDatum(last->device_mb);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

/* ------------------------------------------------------------------------
 * gpusort_server(): one row per GPU of the server.
 * ------------------------------------------------------------------------ */

static const char *
server_state_name(GpusortServerState state)
{
	switch (state)
	{
		case GPUSORT_SERVER_STARTING:
			return "starting";
		case GPUSORT_SERVER_READY:
			return "ready";
		case GPUSORT_SERVER_NO_GPU:
			return "no gpu";
		case GPUSORT_SERVER_RESTARTING:
			return "restarting";
	}
	return "unknown";
}

Datum
gpusort_server_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpusortServerShared *srv = gpusort_server;
	GpusortServerShared copy;
	GpusortDeviceStats devices[GPUSORT_SERVER_MAX_DEVICES];
	int			running[GPUSORT_SERVER_MAX_DEVICES];
	int			queued = 0;

	InitMaterializedSRF(fcinfo, 0);
	if (!gpusort_server_mode || srv == NULL)
		return (Datum) 0;

	LWLockAcquire(srv->lock, LW_SHARED);
	memcpy(&copy, srv, offsetof(GpusortServerShared, slots));
	memcpy(devices, srv->devices, sizeof(devices));
	memset(running, 0, sizeof(running));
	/* the slots in use: admitted jobs hold theirs until their backend has the result */
	for (int i = 0; i < srv->nslots; i++)
	{
		GpusortJobSlot *slot = &srv->slots[i];

		if (slot->state == GPUSORT_SLOT_QUEUED)
			queued++;
		else if (slot->state == GPUSORT_SLOT_RUNNING &&
				 slot->device >= 0 && slot->device < GPUSORT_SERVER_MAX_DEVICES)
			running[slot->device]++;
	}
	LWLockRelease(srv->lock);

	for (int d = 0; d < Max(copy.ndevices, 1); d++)
	{
		Datum		values[14];
		bool		nulls[14];
		GpusortDeviceStats *dev = &devices[d];
		bool		has_device = d < copy.ndevices;

		memset(nulls, 0, sizeof(nulls));
		values[0] = CStringGetTextDatum(server_state_name(copy.state));
		values[1] = Int32GetDatum(copy.server_pid);
		if (has_device)
		{
			values[2] = Int32GetDatum(d);
			values[3] = CStringGetTextDatum(dev->props.name);
			values[4] = Int32GetDatum(dev->workers > 0 ? dev->workers : gpusort_server_streams);
			values[5] = Int32GetDatum(running[d]);
			values[7] = Int64GetDatum((int64) dev->jobs_done);
			values[8] = Int64GetDatum((int64) dev->jobs_failed);
			values[9] = Float8GetDatum(dev->reserved_bytes / 1048576.0);
			values[10] = Float8GetDatum(dev->budget_bytes / 1048576.0);
		}
		else
		{
			for (int c = 2; c <= 10; c++)
				nulls[c] = true;
		}
		values[6] = Int32GetDatum(queued);
		nulls[6] = false;
		values[11] = Float8GetDatum(copy.area_bytes / 1048576.0);
		values[12] = Float8GetDatum(copy.area_used / 1048576.0);
		if (copy.state == GPUSORT_SERVER_NO_GPU || copy.state == GPUSORT_SERVER_RESTARTING)
			values[13] = CStringGetTextDatum(copy.reason);
		else
			nulls[13] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * gpusort_gpu_process(): the GPU server and the GPU process it supervises, one
 * row (none without shared_preload_libraries = 'gpusort').
 */
Datum
gpusort_gpu_process(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpusortServerShared *srv = gpusort_server;
	Datum		values[10];
	bool		nulls[10];

	InitMaterializedSRF(fcinfo, 0);
	if (!gpusort_server_mode || srv == NULL)
		return (Datum) 0;

	memset(nulls, 0, sizeof(nulls));
	LWLockAcquire(srv->lock, LW_SHARED);
	values[0] = CStringGetTextDatum(server_state_name(srv->state));
	values[1] = Int32GetDatum(srv->server_pid);
	nulls[1] = srv->server_pid == 0;
	values[2] = Int32GetDatum(srv->gpu_pid);
	nulls[2] = srv->gpu_pid == 0;
	values[3] = TimestampTzGetDatum(srv->gpu_started);
	nulls[3] = srv->gpu_pid == 0;
	values[4] = Int64GetDatum((int64) srv->gpu_restarts);
	values[5] = CStringGetTextDatum(srv->gpu_last_exit);
	nulls[5] = srv->gpu_last_exit[0] == '\0';
	values[6] = TimestampTzGetDatum(srv->gpu_last_exit_at);
	nulls[6] = srv->gpu_last_exit[0] == '\0';
	values[7] = CStringGetTextDatum(srv->reason);
	nulls[7] = !(srv->state == GPUSORT_SERVER_NO_GPU || srv->state == GPUSORT_SERVER_RESTARTING);
	values[8] = Int64GetDatum((int64) srv->jobs_timed_out);
	values[9] = Int64GetDatum((int64) srv->jobs_withdrawn);
	LWLockRelease(srv->lock);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
