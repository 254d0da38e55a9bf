/*
 * gpusort.c: the one decision every SQL function and the sort node share,
 * where a sort runs (the GPU, the GPU server or the CPU), with the fallbacks
 * and the cleanup that go with it.  The module's entry point is module.c,
 * its settings are in settings.c.
 *
 * The CUDA runtime is touched only on the first sort that may use the GPU (or
 * by gpusort_info/gpusort_devices), never in _PG_init: a context costs about
 * 350 ms and hundreds of MB of device memory, and the postmaster must never
 * hold one.  Device and pinned host memory the library keeps between sorts is
 * given back when a (sub)transaction aborts and when the backend exits.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#else
#include "storage/backendid.h"
#endif
#include "utils/builtins.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#include "gpusort_pg.h"
#include "server.h"

/* PostgreSQL 17 numbers backends from 0 as ProcNumbers instead of BackendIds */
#if PG_VERSION_NUM >= 170000
#define GPUSORT_MY_BACKEND			MyProcNumber
#define GPUSORT_LEADER_BACKEND		ParallelLeaderProcNumber
#else
#define GPUSORT_MY_BACKEND			MyBackendId
#define GPUSORT_LEADER_BACKEND		ParallelLeaderBackendId
#endif

GpusortLastRun gpusort_last;

static gs_runtime_info runtime_info;
static bool runtime_probed = false;
static bool cleanup_registered = false;

bool
gpusort_sorts_type(Oid elemtype, gs_type *type)
{
	switch (elemtype)
	{
		case INT2OID:
			*type = GS_INT2;
			return true;
		case INT4OID:
			*type = GS_INT4;
			return true;
		case INT8OID:
			*type = GS_INT8;
			return true;
		case FLOAT4OID:
			*type = GS_FLOAT4;
			return true;
		case FLOAT8OID:
			*type = GS_FLOAT8;
			return true;

			/*
			 * date is an int32 of days, timestamp and timestamptz an int64 of
			 * microseconds; their infinities are the integer extremes, so
			 * integer order is their order.
			 */
		case DATEOID:
			*type = GS_INT4;
			return true;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			*type = GS_INT8;
			return true;
		default:
			return false;
	}
}

gs_type
gpusort_type_from_oid(Oid elemtype)
{
	gs_type		type;

	if (!gpusort_sorts_type(elemtype, &type))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("gpusort cannot sort elements of type %s", format_type_be(elemtype)),
				 errhint("gpusort sorts smallint, integer, bigint, real, double precision, date, timestamp and timestamptz.")));
	return type;
}

const gs_runtime_info *
gpusort_runtime(void)
{
	if (gpusort_server_mode)
		return gpusort_server_runtime();
	if (!runtime_probed)
	{
		gs_runtime_probe(&runtime_info);
		runtime_probed = true;
	}
	return &runtime_info;
}

/* Gives back what the library holds on the device when a (sub)transaction aborts. */
static void
gpusort_resource_release(ResourceReleasePhase phase, bool isCommit,
						 bool isTopLevel, void *arg)
{
	if (phase == RESOURCE_RELEASE_AFTER_LOCKS && !isCommit)
		gs_device_release();
}

static void
gpusort_proc_exit(int code, Datum arg)
{
	gs_device_release();
}

/*
 * Polled by the library between passes and chunks; must not longjmp, so it
 * only asks.  It stops a sort for the interrupts that end in an ERROR or
 * FATAL (a cancel, statement_timeout, a terminate), not for the benign ones
 * (a barrier, a memory-context dump request), which the next
 * CHECK_FOR_INTERRUPTS after the sort handles without a restart.
 */
bool
gpusort_interrupt_pending(void *arg)
{
	return (QueryCancelPending || ProcDiePending) && INTERRUPTS_CAN_BE_PROCESSED();
}

static double
elapsed_ms(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

static void
record_run(const GpusortJob *job, int device, gs_algorithm algorithm,
		   double copy_in_ms, double sort_ms, double copy_out_ms, double total_ms)
{
	gpusort_last.valid = true;
	gpusort_last.elements = (int64) job->n;
	gpusort_last.type = job->type;
	gpusort_last.device = device;
	gpusort_last.algorithm = algorithm;
	gpusort_last.copy_in_ms = copy_in_ms;
	gpusort_last.sort_ms = sort_ms;
	gpusort_last.copy_out_ms = copy_out_ms;
	gpusort_last.total_ms = total_ms;
	gpusort_last.queue_ms = 0;
	gpusort_last.device_mb = 0;
}

/*
 * Puts the elements to sort into dest (a sort, not an argsort) for try
 * number attempt (0 first).
 */
static void
fill_dest(const GpusortJob *job, int attempt)
{
	if (job->dest_filled && attempt == 0)
		return;
	if (job->source != NULL)
		gpusort_copy_large(job->dest, job->source, job->n * gs_type_size(job->type));
	else
		job->fill(job->dest, job->fill_arg);
}

/*
 * A GPU failure under gpusort.device = gpu: an ERROR whose SQLSTATE and
 * message say what failed, the library's message (naming the CUDA error) as
 * the detail.
 */
static void
gpu_error(gs_status status, const char *message)
{
	switch (status)
	{
		case GS_ERR_NO_CUDA:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gpusort was built without CUDA"),
					 errdetail("The GPU library reported: %s.", message),
					 errhint("Set gpusort.device to \"auto\" or \"cpu\" to sort on the CPU.")));
			break;
		case GS_ERR_NO_DRIVER:
		case GS_ERR_NO_DEVICE:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("no GPU is usable"),
					 errdetail("The GPU library reported: %s.", message),
					 errhint("Set gpusort.device to \"auto\" or \"cpu\" to sort on the CPU.")));
			break;
		case GS_ERR_MEMORY_LIMIT:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("the sort needs more GPU memory than gpusort.max_device_memory allows"),
					 errdetail("The GPU library reported: %s.", message),
					 errhint("Raise gpusort.max_device_memory, or set gpusort.device to \"auto\" to sort such arrays on the CPU.")));
			break;
		case GS_ERR_DEVICE_MEMORY:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of GPU memory"),
					 errdetail("The GPU library reported: %s.", message),
					 errhint("Set gpusort.device to \"auto\" or \"cpu\" to sort on the CPU.")));
			break;
		case GS_ERR_HOST_MEMORY:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of pinned host memory for the GPU sort"),
					 errdetail("The GPU library reported: %s.", message),
					 errhint("Set gpusort.device to \"auto\" or \"cpu\" to sort on the CPU.")));
			break;
		case GS_ERR_GPU_LOST:
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("the GPU process ended while sorting"),
					 errdetail("The GPU server reported: %s.", message),
					 errhint("The GPU server starts the GPU process again: the statement can be retried.  Set gpusort.device to \"auto\" to sort on the CPU when the GPU fails.")));
			break;
		case GS_ERR_TIMED_OUT:
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("the GPU sort ran longer than gpusort.server_job_timeout allows"),
					 errdetail("The GPU server reported: %s.", message),
					 errhint("Raise gpusort.server_job_timeout, or set gpusort.device to \"auto\" to sort such arrays on the CPU.")));
			break;
		case GS_ERR_CUDA:
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("the GPU sort failed"),
					 errdetail("The GPU library reported: %s.", message),
					 errhint("Set gpusort.device to \"auto\" or \"cpu\" to sort on the CPU.")));
			break;
		default:
			/* invalid arguments and the like: a bug, not a condition */
			elog(ERROR, "gpusort: the GPU sort failed with status %d: %s", (int) status, message);
			break;
	}
	pg_unreachable();
}

/*
 * A GPU sort that failed: under gpusort.device = gpu the error, under auto
 * the CPU sorts instead (the caller), which gives the same result.  Running
 * out of (or over the limit of) device memory, or a GPU the server does not
 * have, is expected and quiet; anything else is worth a warning, since the
 * GPU should have worked.
 */
static void
gpu_fallback(gs_status status, const char *message)
{
	if (gpusort_device == GPUSORT_DEVICE_GPU)
		gpu_error(status, message);
	if (status == GS_ERR_MEMORY_LIMIT || status == GS_ERR_DEVICE_MEMORY ||
		status == GS_ERR_HOST_MEMORY || status == GS_ERR_NO_DEVICE)
		ereport(DEBUG1,
				(errmsg_internal("gpusort: sorting on the CPU: %s", message)));
	else
		ereport(WARNING,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("GPU sort failed, sorting on the CPU instead"),
				 status == GS_ERR_GPU_LOST || status == GS_ERR_TIMED_OUT ?
				 errdetail("The GPU server reported: %s.", message) :
				 errdetail("The GPU library reported: %s.", message),
				 errhint("Set gpusort.device to \"cpu\" to stop trying the GPU.")));
}

/*
 * The GPU to use for a sort of n elements, or -1 for the CPU.  Under auto
 * everything that keeps the GPU from starting sends the sort to the CPU; under
 * gpu it is an error.
 */
static int
choose_device(size_t n)
{
	const gs_runtime_info *info;
	gs_error	err;
	int			id;

	if (gpusort_device == GPUSORT_DEVICE_CPU)
		return -1;
	if (gpusort_device == GPUSORT_DEVICE_AUTO && n < (size_t) gpusort_gpu_min_elements)
		return -1;

	info = gpusort_runtime();
	if (info->status != GS_OK)
	{
		if (gpusort_device == GPUSORT_DEVICE_GPU)
			gpu_error(info->status, info->reason);
		return -1;
	}

	if (gpusort_device_id >= 0)
	{
		id = gpusort_device_id;
		if (id >= info->device_count)
		{
			if (gpusort_device == GPUSORT_DEVICE_GPU)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("gpusort.device_id %d does not exist", id),
						 errdetail("There are %d GPUs, numbered from 0.", info->device_count),
						 errhint("Set gpusort.device_id to -1 to use any GPU.")));
			return -1;
		}
	}
	else
	{
		/*
		 * Spread over the devices by backend id, which is small and dense; a
		 * parallel worker counts from its leader's, so the workers of one
		 * query land on different devices from each other and their leader.
		 */
		int			base = IsParallelWorker() ?
			GPUSORT_LEADER_BACKEND + ParallelWorkerNumber + 1 : GPUSORT_MY_BACKEND;

		id = (base < 0 ? -base : base) % info->device_count;
	}

	if (gs_device_open(id, &err) != GS_OK)
	{
		if (gpusort_device == GPUSORT_DEVICE_GPU)
			gpu_error(err.status, err.message);
		ereport(DEBUG1,
				(errmsg_internal("gpusort: sorting on the CPU, GPU %d could not be opened: %s",
								 id, err.message)));
		return -1;
	}

	if (!cleanup_registered)
	{
		RegisterResourceReleaseCallback(gpusort_resource_release, NULL);
		on_proc_exit(gpusort_proc_exit, (Datum) 0);
		cleanup_registered = true;
	}
	return id;
}

/*
 * Sorts on GPU device; returns false when the sort must run on the CPU
 * instead (only under auto).  The input is intact after any failure: the
 * source is never written, and a filled dest is filled again.
 */
static bool
run_gpu(const GpusortJob *job, int device)
{
	gs_host_sort_job hjob;
	gs_run_report report;
	gs_error	err;
	gs_status	status;
	bool		argsort = (job->perm != NULL);

	memset(&hjob, 0, sizeof(hjob));
	hjob.type = job->type;
	hjob.algorithm = (gs_algorithm) gpusort_algorithm;
	hjob.n = job->n;
	hjob.descending = job->descending;
	hjob.device_id = device;
	hjob.max_device_bytes = (size_t) gpusort_max_device_memory * 1024 * 1024;
	hjob.output = argsort ? NULL : job->dest;
	hjob.perm = job->perm;
	hjob.limit = job->limit;
	hjob.interrupt = gpusort_interrupt_pending;
	hjob.interrupt_arg = NULL;

	for (int attempt = 0;; attempt++)
	{
		instr_time	start;
		double		fill_ms = 0;

		INSTR_TIME_SET_CURRENT(start);
		if (argsort || job->source != NULL)
			hjob.input = job->source;
		else
		{
			fill_dest(job, attempt);
			hjob.input = job->dest;
			fill_ms = elapsed_ms(start);
		}

		memset(&report, 0, sizeof(report));
		status = gs_host_sort(&hjob, &report, &err);
		if (status == GS_OK)
		{
			record_run(job, device, report.algorithm,
					   fill_ms + report.copy_in_ms, report.sort_ms,
					   report.copy_out_ms, elapsed_ms(start));
			gpusort_last.device_mb = report.device_bytes / 1048576.0;
			return true;
		}

		/* whatever failed, hold no device or pinned memory past this point */
		gs_device_release();

		if (status == GS_ERR_INTERRUPTED)
		{
			/* raises the cancel; if the interrupt was a benign one, sort again */
			CHECK_FOR_INTERRUPTS();
			continue;
		}

		gpu_fallback(status, err.message);
		return false;
	}
}

/*
 * A sort of this backend's that the GPU server cancelled for running longer
 * than gpusort.server_job_timeout: under auto, the backend's sorts of at
 * least that many elements run on the CPU for TIMED_OUT_CPU_MS, so that a
 * session whose sorts keep timing out pays for them itself, on its own CPU,
 * instead of holding a worker of the GPU process for the timeout each time.
 */
#define TIMED_OUT_CPU_MS	60000

static struct
{
	size_t		n;				/* 0: none */
	TimestampTz until;
} timed_out;

/* Whether a sort of n elements is to run on the CPU after a timed-out one. */
static bool
timed_out_recently(size_t n)
{
	if (timed_out.n == 0 || n < timed_out.n)
		return false;
	if (GetCurrentTimestamp() >= timed_out.until)
	{
		timed_out.n = 0;
		return false;
	}
	return true;
}

/*
 * What a CPU sort takes per element in this backend, learned from its CPU
 * sorts of at least CPU_RATE_MIN_N elements (a moving average), for how long
 * a sort under auto may wait in the GPU server's queue: no longer than it
 * would take on the CPU.  Before the first such sort, CPU_RATE_DEFAULT_NS.
 */
#define CPU_RATE_MIN_N		10000
#define CPU_RATE_DEFAULT_NS	30.0

static double cpu_ns_per_element = CPU_RATE_DEFAULT_NS;

static void
learn_cpu_rate(size_t n, double sort_ms)
{
	if (n >= CPU_RATE_MIN_N && sort_ms > 0)
		cpu_ns_per_element = 0.75 * cpu_ns_per_element + 0.25 * (sort_ms * 1e6 / n);
}

static double
cpu_sort_estimate_ms(size_t n)
{
	return Max(n * cpu_ns_per_element / 1e6, 1.0);
}

/*
 * Sorts through the GPU server; returns false when the sort must run on the
 * CPU instead (only under auto).  Under auto a job still queued after its
 * CPU sort's estimated time leaves the queue and sorts on the CPU.  *touched says whether dest may have been
 * written, so that the CPU sort must refill it.
 */
static bool
run_server(const GpusortJob *job, bool *touched)
{
	const char *reason;
	bool		argsort = (job->perm != NULL);

	*touched = false;
	if (gpusort_device == GPUSORT_DEVICE_CPU)
		return false;
	if (gpusort_device == GPUSORT_DEVICE_AUTO && job->n < (size_t) gpusort_gpu_min_elements)
		return false;
	if (gpusort_device == GPUSORT_DEVICE_AUTO && timed_out_recently(job->n))
	{
		ereport(DEBUG1,
				(errmsg_internal("gpusort: sorting %zu elements on the CPU: a sort of %zu timed out on the GPU server",
								 job->n, timed_out.n)));
		return false;
	}
	if (!gpusort_server_usable(&reason))
	{
		if (gpusort_device == GPUSORT_DEVICE_GPU)
			gpu_error(GS_ERR_NO_DEVICE, reason);
		return false;
	}

	for (int attempt = 0;; attempt++)
	{
		instr_time	start;
		double		fill_ms = 0;
		double		queue_ms = 0;
		const void *input;
		gs_run_report report;
		gs_error	err;
		gs_status	status;

		INSTR_TIME_SET_CURRENT(start);
		if (argsort || job->source != NULL)
			input = job->source;	/* always so for a limited job */
		else
		{
			fill_dest(job, attempt);
			input = job->dest;
			fill_ms = elapsed_ms(start);
		}
		if (!argsort)
			*touched = true;

		memset(&report, 0, sizeof(report));
		memset(&err, 0, sizeof(err));
		status = gpusort_server_sort(job, input, gpusort_device_id,
									 (size_t) gpusort_max_device_memory * 1024 * 1024,
									 gpusort_device == GPUSORT_DEVICE_AUTO ? cpu_sort_estimate_ms(job->n) : 0,
									 &report, &queue_ms, &err);
		if (status == GS_OK)
		{
			record_run(job, report.device, report.algorithm,
					   fill_ms + report.copy_in_ms, report.sort_ms,
					   report.copy_out_ms, elapsed_ms(start));
			gpusort_last.queue_ms = queue_ms;
			gpusort_last.device_mb = report.device_bytes / 1048576.0;
			return true;
		}
		if (status == GS_ERR_INTERRUPTED)
		{
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		if (status == GS_ERR_NO_DEVICE && gpusort_device_id >= 0)
		{
			if (gpusort_device == GPUSORT_DEVICE_GPU)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("gpusort.device_id %d does not exist", gpusort_device_id),
						 errdetail("The GPU server reported: %s.", err.message),
						 errhint("Set gpusort.device_id to -1 to use any GPU.")));
			return false;
		}
		if (status == GS_ERR_TIMED_OUT)
		{
			timed_out.n = timed_out.n == 0 ? job->n : Min(timed_out.n, job->n);
			timed_out.until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), TIMED_OUT_CPU_MS);
		}
		gpu_fallback(status, err.message);
		return false;
	}
}

/*
 * Sorts on the CPU.  first_attempt is 0, or 1 after a GPU try that may have
 * left an in-place dest undefined.
 */
static void
run_cpu(const GpusortJob *job, int first_attempt)
{
	size_t		scratch_bytes;
	void	   *scratch;
	bool		argsort = (job->perm != NULL);
	instr_time	total_start;
	double		copy_ms;
	double		sort_ms;
	gs_status	status;
	gs_error	err;

	INSTR_TIME_SET_CURRENT(total_start);
	scratch_bytes = job->limit > 0 ?
		gs_cpu_topk_scratch_bytes(job->type, job->n, job->limit, argsort) :
		gs_cpu_scratch_bytes(job->type, job->n, argsort);
	scratch = gpusort_alloc_large(Max(scratch_bytes, 1));

	for (int attempt = first_attempt;; attempt++)
	{
		instr_time	start;
		instr_time	sort_start;

		INSTR_TIME_SET_CURRENT(start);
		if (!argsort && job->limit == 0)
			fill_dest(job, attempt);
		copy_ms = elapsed_ms(start);

		INSTR_TIME_SET_CURRENT(sort_start);
		if (job->limit > 0)
			status = gs_cpu_topk(job->type, job->source, job->n, job->limit, job->descending,
								 argsort ? NULL : job->dest, job->perm, scratch,
								 gpusort_interrupt_pending, NULL, &err);
		else if (argsort)
			status = gs_cpu_argsort(job->type, job->source, job->n, job->descending,
									job->perm, NULL, scratch,
									gpusort_interrupt_pending, NULL, &err);
		else
			status = gs_cpu_sort(job->type, job->dest, job->n, job->descending,
								 scratch, gpusort_interrupt_pending, NULL, &err);
		sort_ms = elapsed_ms(sort_start);

		if (status == GS_OK)
			break;
		if (status == GS_ERR_INTERRUPTED)
		{
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		/* the CPU sort fails only for invalid arguments: a bug */
		elog(ERROR, "gpusort: the CPU sort failed: %s", err.message);
	}

	pfree(scratch);
	learn_cpu_rate(job->n, sort_ms);
	record_run(job, -1, GS_ALGO_RADIX, copy_ms, sort_ms, 0, elapsed_ms(total_start));
}

bool
gpusort_gpu_likely(size_t n)
{
	const char *reason;

	if (gpusort_device == GPUSORT_DEVICE_CPU ||
		(gpusort_device == GPUSORT_DEVICE_AUTO && n < (size_t) gpusort_gpu_min_elements))
		return false;
	if (gpusort_server_mode)
		return gpusort_server_usable(&reason);
	return gpusort_runtime()->status == GS_OK && gpusort_runtime()->device_count > 0;
}

void
gpusort_run(const GpusortJob *job_in)
{
	GpusortJob	limited;
	const GpusortJob *job = job_in;
	int			device;

	/* no elements (or only NULLs): no sort, no device, nothing to record */
	if (job->n == 0)
		return;

	if (job->limit >= job->n && job->limit > 0)
	{
		/* every element is wanted: a full sort */
		limited = *job_in;
		limited.limit = 0;
		job = &limited;
	}
	if (job->limit > 0 && job->source == NULL)
		elog(ERROR, "a sort of the first %zu elements needs its source", job->limit);

	if (gpusort_server_mode)
	{
		bool		touched;

		if (job->n == 1)
		{
			const char *reason;

			if (gpusort_device == GPUSORT_DEVICE_GPU && !gpusort_server_usable(&reason))
				gpu_error(GS_ERR_NO_DEVICE, reason);
			if (job->perm != NULL)
				job->perm[0] = 0;
			else
				fill_dest(job, 0);
			record_run(job, -1, GS_ALGO_RADIX, 0, 0, 0, 0);
			return;
		}
		if (!run_server(job, &touched))
			run_cpu(job, touched ? 1 : 0);
		return;
	}

	device = choose_device(job->n);
	if (job->n == 1)
	{
		/* sorted already, wherever it would have run */
		if (job->perm != NULL)
			job->perm[0] = 0;
		else
			fill_dest(job, 0);
		record_run(job, device, device >= 0 ? (gs_algorithm) gpusort_algorithm : GS_ALGO_RADIX,
				   0, 0, 0, 0);
		return;
	}

	if (device < 0)
		run_cpu(job, 0);
	else if (!run_gpu(job, device))
		run_cpu(job, 1);
}
