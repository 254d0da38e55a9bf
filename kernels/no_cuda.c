/*
 * no_cuda.c: the GPU half of the API in a build without CUDA (make CUDA=0),
 * in place of device.cu, host_sort.cu and gpu_sort.cu.
 *
 * This is that build's real behaviour, not a placeholder: there is no GPU to
 * use, so the probe says why, every GPU call fails with GS_ERR_NO_CUDA and
 * nothing is ever held.  src/ then sorts on the CPU (gpusort.device = auto)
 * or raises the error (gpu).
 */
#include <string.h>
#include <unistd.h>

#include "gpusort.h"
#include "internal.h"

#define GS_NO_CUDA_REASON "gpusort was built without CUDA"

void
gs_runtime_probe(gs_runtime_info *info)
{
	if (info == NULL)
		return;
	memset(info, 0, sizeof(*info));
	info->built_with_cuda = false;
	info->status = GS_ERR_NO_CUDA;
	strcpy(info->reason, GS_NO_CUDA_REASON);
}

gs_status
gs_device_props_get(int id, gs_device_props *props, gs_error *err)
{
	(void) id;
	(void) props;
	return gs_fail(err, GS_ERR_NO_CUDA, GS_NO_CUDA_REASON);
}

gs_status
gs_device_open(int id, gs_error *err)
{
	(void) id;
	return gs_fail(err, GS_ERR_NO_CUDA, GS_NO_CUDA_REASON);
}

int
gs_device_current(void)
{
	return -1;
}

void
gs_device_release(void)
{
	/* nothing is ever held */
}

size_t
gs_device_bytes_held(void)
{
	return 0;
}

size_t
gs_pinned_bytes_held(void)
{
	return 0;
}

gs_status
gs_gpu_sort(gs_gpu_sort_args *args, gs_error *err)
{
	(void) args;
	return gs_fail(err, GS_ERR_NO_CUDA, GS_NO_CUDA_REASON);
}

gs_status
gs_gpu_topk(gs_gpu_topk_args *args, gs_error *err)
{
	(void) args;
	return gs_fail(err, GS_ERR_NO_CUDA, GS_NO_CUDA_REASON);
}

/*
 * 0: the size of a GPU sort's scratch comes from the GPU sort itself, which
 * this build does not have, and no sort here ever uses device memory, so no
 * max_device_bytes can be exceeded.
 */
size_t
gs_host_sort_device_bytes(gs_type type, gs_algorithm algorithm, size_t n, bool argsort)
{
	(void) type;
	(void) algorithm;
	(void) n;
	(void) argsort;
	return 0;
}

size_t
gs_stream_job_device_bytes(const gs_stream_job *job)
{
	(void) job;
	return 0;
}

gs_status
gs_host_sort(const gs_host_sort_job *job, gs_run_report *report, gs_error *err)
{
	if (report != NULL)
	{
		memset(report, 0, sizeof(*report));
		report->device = -1;
		report->algorithm = job != NULL ? job->algorithm : GS_ALGO_AUTO;
	}
	return gs_fail(err, GS_ERR_NO_CUDA, GS_NO_CUDA_REASON);
}

gs_status
gs_worker_create(int id, gs_worker **worker, gs_error *err)
{
	(void) id;
	*worker = NULL;
	return gs_fail(err, GS_ERR_NO_CUDA, GS_NO_CUDA_REASON);
}

void
gs_worker_destroy(gs_worker *worker)
{
	(void) worker;
}

size_t
gs_worker_device_bytes(const gs_worker *worker)
{
	(void) worker;
	return 0;
}

gs_status
gs_host_pin(void *p, size_t bytes, gs_error *err)
{
	(void) p;
	(void) bytes;
	return gs_fail(err, GS_ERR_NO_CUDA, GS_NO_CUDA_REASON);
}

void
gs_host_unpin(void *p)
{
	(void) p;
}

gs_status
gs_device_pool_keep(int id, size_t keep_bytes, gs_error *err)
{
	(void) id;
	(void) keep_bytes;
	return gs_fail(err, GS_ERR_NO_CUDA, GS_NO_CUDA_REASON);
}

bool
gs_device_context_broken(void)
{
	return false;
}

gs_status
gs_worker_sort(gs_worker *worker, const gs_stream_job *job, const gs_stream_io *io,
			   gs_run_report *report, gs_error *err)
{
	(void) worker;
	(void) job;
	(void) io;
	if (report != NULL)
		memset(report, 0, sizeof(*report));
	return gs_fail(err, GS_ERR_NO_CUDA, GS_NO_CUDA_REASON);
}

#ifdef GS_INJECTION_POINTS
void
gs_inject_hang(void)
{
	for (;;)
		pause();
}
#endif
