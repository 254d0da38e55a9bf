/*
 * device.cu: the GPU runtime of kernels/: probing the driver and devices,
 * the per-process context, stream and events, the device memory pool and
 * the pinned staging buffers that gs_host_sort (host_sort.cu) moves arrays
 * through.
 *
 * One PostgreSQL backend is one process with one thread, so the state of
 * gs_device_open and gs_host_sort (the stream, events, pool and staging
 * buffers) is file-static and belongs to one thread.  The CUDA context is
 * made on the first gs_device_open and kept for the life of the process (it
 * costs about 350 ms and some hundreds of MB of device memory);
 * gs_device_release frees everything else.  What the GPU server's threads
 * reach as well (the probe, NVML, the broken-context mark, the fault
 * injection, the radix readbacks) is once-only, atomic or under a mutex.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include <cuda_runtime.h>

#include "gpusort.h"
#include "internal.h"
#include "device_internal.h"

/* The result of the first gs_runtime_probe (pthread_once). */
static pthread_once_t gs_probe_once = PTHREAD_ONCE_INIT;
static gs_runtime_info gs_probe_info;

/* The opened device, or -1; its context stays once made. */
static int	gs_current = -1;

/*
 * Stream and events of the opened device (gs_ready: they exist): two
 * without timing for the staging pipeline, two with timing around the sort.
 */
static bool gs_ready;
static cudaStream_t gs_stream;
static cudaEvent_t gs_events[4];

/*
 * Set when an error left the context unusable (a sticky error): every later
 * CUDA call of this process would fail the same way, so gs_device_open
 * refuses at once with the error that did it.  Any thread may set it (the
 * first one's reason stays) and read it.
 */
static std::atomic<bool> gs_context_broken(false);
static pthread_mutex_t gs_broken_lock = PTHREAD_MUTEX_INITIALIZER;
static char gs_broken_reason[96];

/* The device memory pool: one allocation, reused across calls. */
static void *gs_pool;
static size_t gs_pool_bytes;

/* The pinned staging buffers, gs_stage_bytes each. */
static void *gs_stage[2];
static size_t gs_stage_bytes;

#ifdef GS_INJECTION_POINTS
/* Calls left before GPUSORT_FAULT_INJECT fires; 0: off. */
static std::atomic<long> gs_fault_countdown(0);
static pthread_mutex_t gs_fault_lock = PTHREAD_MUTEX_INITIALIZER;
static char gs_fault_value[32];	/* the value of GPUSORT_FAULT_INJECT armed last */
/* gs_fault_set_device_memory's limit; 0: off */
static std::atomic<size_t> gs_fault_device_memory(0);
#endif

/* The radix readbacks: the idle ones, and how many exist. */
static pthread_mutex_t gs_readback_lock = PTHREAD_MUTEX_INITIALIZER;
static gs_readback *gs_readback_idle;
static std::atomic<size_t> gs_readback_count(0);

/* Appends printf-style text to err's message (truncating at the buffer's end). */
static void
gs_append(gs_error *err, const char *fmt,...)
{
	va_list		ap;
	size_t		used;

	if (err == NULL)
		return;
	used = strlen(err->message);
	if (used + 1 >= sizeof(err->message))
		return;
	va_start(ap, fmt);
	vsnprintf(err->message + used, sizeof(err->message) - used, fmt, ap);
	va_end(ap);
}

/* "13.0" from 13000. */
static void
gs_version_text(int version, char *buf, size_t len)
{
	snprintf(buf, len, "%d.%d", version / 1000, (version % 1000) / 10);
}

/* ------------------------------------------------------------------------
 * Probing: driver and device count, no context.
 * ------------------------------------------------------------------------ */

/*
 * The probe itself, once per process.  Signals are blocked over the calls
 * that initialise the driver: threads inherit the mask of the thread that
 * starts them, so the backend's cancel and terminate signals are never
 * delivered to one of CUDA's threads.
 */
static void
gs_probe_run(void)
{
	gs_runtime_info *p = &gs_probe_info;
	cudaError_t e;
	int			count = 0;
	char		drv[16],
				rt[16];

	memset(p, 0, sizeof(*p));
	p->built_with_cuda = true;

	/*
	 * cudaGetDeviceCount initialises the driver (cuInit) but creates no
	 * context; the version queries need neither.
	 */
	{
		gs_signals_blocked blocked;

		if (cudaRuntimeGetVersion(&p->runtime_version) != cudaSuccess)
			p->runtime_version = 0;
		if (cudaDriverGetVersion(&p->driver_version) != cudaSuccess)
			p->driver_version = 0;
		e = cudaGetDeviceCount(&count);
	}
	(void) cudaGetLastError();

	p->device_count = (e == cudaSuccess) ? count : 0;
	gs_version_text(p->driver_version, drv, sizeof(drv));
	gs_version_text(p->runtime_version, rt, sizeof(rt));
	if (p->driver_version == 0)
	{
		p->status = GS_ERR_NO_DRIVER;
		snprintf(p->reason, sizeof(p->reason), "no NVIDIA driver is loaded (libcuda could not be found)");
	}
	else if (e == cudaErrorInsufficientDriver)
	{
		p->status = GS_ERR_NO_DRIVER;
		snprintf(p->reason, sizeof(p->reason),
				 "the NVIDIA driver supports CUDA %s, older than the CUDA runtime %s that gpusort was built with",
				 drv, rt);
	}
	else if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0))
	{
		const char *visible = getenv("CUDA_VISIBLE_DEVICES");

		p->status = GS_ERR_NO_DEVICE;
		if (visible != NULL)
			snprintf(p->reason, sizeof(p->reason),
					 "no CUDA device is visible (CUDA_VISIBLE_DEVICES is \"%.64s\")", visible);
		else
			snprintf(p->reason, sizeof(p->reason), "no CUDA device is present");
	}
	else if (e != cudaSuccess)
	{
		gs_error	err;

		p->status = gs_cuda_fail(&err, e, "the CUDA driver could not be initialised");
		memcpy(p->reason, err.message, sizeof(p->reason));
	}
	else
		p->status = GS_OK;
}

void
gs_runtime_probe(gs_runtime_info *info)
{
	pthread_once(&gs_probe_once, gs_probe_run);
	if (info != NULL)
		*info = gs_probe_info;
}

/* Checks that the probe found a usable GPU and that id names a device. */
static gs_status
gs_check_device_id(int id, gs_error *err)
{
	gs_runtime_info info;

	gs_runtime_probe(&info);
	if (info.status != GS_OK)
		return gs_fail(err, info.status, "%s", info.reason);
	if (id < 0 || id >= info.device_count)
		return gs_fail(err, GS_ERR_NO_DEVICE, "there is no CUDA device %d (device count %d)",
					   id, info.device_count);
	return GS_OK;
}

/*
 * Free memory of a device without a context: cudaMemGetInfo needs one on
 * that device, and making one only to read a number would cost ~350 ms and
 * hundreds of MB for the rest of the process.  NVML (part of the driver)
 * answers without one; it is found with dlopen so that gpusort needs no
 * NVML at build time, and matched to the CUDA device by PCI bus id (the two
 * number devices differently).  Never shut down: it stays for the process.
 */
typedef struct gs_nvml_memory
{
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} gs_nvml_memory;

typedef int (*gs_nvml_init_fn) (void);
typedef int (*gs_nvml_by_bus_fn) (const char *bus_id, void **device);
typedef int (*gs_nvml_memory_fn) (void *device, gs_nvml_memory *memory);

static pthread_once_t gs_nvml_once = PTHREAD_ONCE_INIT;
static gs_nvml_by_bus_fn gs_nvml_by_bus;
static gs_nvml_memory_fn gs_nvml_memory_info;

/* Loads NVML, once per process (signals blocked: it may start threads). */
static void
gs_nvml_load(void)
{
	gs_signals_blocked blocked;
	void	   *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

	if (lib != NULL)
	{
		gs_nvml_init_fn init = (gs_nvml_init_fn) dlsym(lib, "nvmlInit_v2");

		gs_nvml_by_bus = (gs_nvml_by_bus_fn) dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
		gs_nvml_memory_info = (gs_nvml_memory_fn) dlsym(lib, "nvmlDeviceGetMemoryInfo");
		if (init == NULL || gs_nvml_by_bus == NULL || gs_nvml_memory_info == NULL || init() != 0)
		{
			gs_nvml_by_bus = NULL;
			dlclose(lib);
		}
	}
}

static bool
gs_nvml_free_memory(int id, size_t *free_bytes)
{
	char		bus[32];
	void	   *device;
	gs_nvml_memory memory;

	pthread_once(&gs_nvml_once, gs_nvml_load);
	if (gs_nvml_by_bus == NULL)
		return false;
	if (cudaDeviceGetPCIBusId(bus, sizeof(bus), id) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return false;
	}
	if (gs_nvml_by_bus(bus, &device) != 0 || gs_nvml_memory_info(device, &memory) != 0)
		return false;
	*free_bytes = (size_t) memory.free;
	return true;
}

/*
 * Device properties.  Free memory: cudaMemGetInfo for the opened device (the
 * figure that matters to this process), NVML for the others; where NVML is
 * missing, the total (an upper bound: it cannot be known without a context).
 */
gs_status
gs_device_props_get(int id, gs_device_props *props, gs_error *err)
{
	struct cudaDeviceProp p;
	cudaError_t e;
	gs_status	s;
	size_t		free_bytes,
				total_bytes;

	if (props == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "props must not be null");
	s = gs_check_device_id(id, err);
	if (s != GS_OK)
		return s;
	gs_signals_blocked blocked;	/* in case a call below initialises anything */

	e = cudaGetDeviceProperties(&p, id);
	if (e != cudaSuccess)
	{
		(void) cudaGetLastError();
		return gs_cuda_fail(err, e, "could not read the device properties");
	}
	memset(props, 0, sizeof(*props));
	props->id = id;
	snprintf(props->name, sizeof(props->name), "%s", p.name);
	props->major = p.major;
	props->minor = p.minor;
	props->total_memory = p.totalGlobalMem;
	props->multiprocessors = p.multiProcessorCount;
	props->free_memory = props->total_memory;
	if (id == gs_current && gs_ready && !gs_device_context_broken() &&
		cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
		props->free_memory = free_bytes;
	else if (gs_nvml_free_memory(id, &free_bytes))
		props->free_memory = free_bytes;
	(void) cudaGetLastError();
	return GS_OK;
}

/* ------------------------------------------------------------------------
 * Opening and releasing.
 * ------------------------------------------------------------------------ */

/* Destroys the stream and events (after the stream's work is done). */
static void
gs_destroy_stream(void)
{
	int			i;

	if (gs_stream != NULL)
		(void) cudaStreamSynchronize(gs_stream);
	for (i = 0; i < 4; i++)
	{
		if (gs_events[i] != NULL)
			(void) cudaEventDestroy(gs_events[i]);
		gs_events[i] = NULL;
	}
	if (gs_stream != NULL)
		(void) cudaStreamDestroy(gs_stream);
	gs_stream = NULL;
	gs_ready = false;
	(void) cudaGetLastError();
}

/*
 * cudaSetDevice makes the primary context (CUDA 12 and later), which starts
 * the runtime's threads: signals stay blocked over it.  cudaFree(0) is the
 * classic way to be sure the context exists.
 */
cudaError_t
gs_context_create(int id)
{
	gs_signals_blocked blocked;
	cudaError_t e = cudaSetDevice(id);

	if (e == cudaSuccess)
		e = cudaFree(NULL);
	return e;
}

/* The refusal of a context marked broken. */
static gs_status
gs_broken_fail(gs_error *err)
{
	char		reason[sizeof(gs_broken_reason)];

	pthread_mutex_lock(&gs_broken_lock);
	memcpy(reason, gs_broken_reason, sizeof(reason));
	pthread_mutex_unlock(&gs_broken_lock);
	return gs_fail(err, GS_ERR_CUDA,
				   "the CUDA context is unusable after an earlier error (%s): restart the process to use the GPU again",
				   reason);
}

gs_status
gs_device_open(int id, gs_error *err)
{
	cudaError_t e;
	gs_status	s;
	int			i;

	if (gs_device_context_broken())
		return gs_broken_fail(err);
	if (id == gs_current && gs_ready)
		return GS_OK;
	s = gs_check_device_id(id, err);
	if (s != GS_OK)
		return s;
	if (gs_current >= 0 && id != gs_current)
		gs_device_release();	/* the pool and buffers belong to the old device */

	e = gs_context_create(id);
	if (e != cudaSuccess)
	{
		(void) cudaGetLastError();
		gs_current = -1;
		return gs_cuda_fail(err, e, "could not create a CUDA context");
	}
	gs_current = id;

	/*
	 * A non-blocking stream: PostgreSQL's process has nothing else on the
	 * legacy default stream, but a stream of our own keeps the library
	 * correct when linked into a program that has.
	 */
	{
		gs_signals_blocked blocked;

		e = gs_stream_make(&gs_stream);
		for (i = 0; i < 4 && e == cudaSuccess; i++)
			e = gs_event_make(&gs_events[i], i < 2 ? cudaEventDisableTiming : cudaEventDefault);
	}
	if (e != cudaSuccess)
	{
		s = gs_runtime_fail(err, e, false, "could not create a CUDA stream", gs_stream);
		gs_destroy_stream();
		return s;
	}
	gs_ready = true;

	gs_fault_arm();
	return GS_OK;
}

int
gs_device_current(void)
{
	return gs_current;
}

void
gs_device_release(void)
{
	int			i;

	if (gs_current < 0)
		return;
	if (gs_ready)
		(void) cudaStreamSynchronize(gs_stream);
	if (gs_pool != NULL)
		(void) cudaFree(gs_pool);
	gs_pool = NULL;
	gs_pool_bytes = 0;
	for (i = 0; i < 2; i++)
	{
		if (gs_stage[i] != NULL)
			(void) cudaFreeHost(gs_stage[i]);
		gs_stage[i] = NULL;
	}
	gs_stage_bytes = 0;
	gs_readback_free_idle();
	gs_destroy_stream();
#ifdef GS_INJECTION_POINTS
	gs_fault_countdown.store(0);
#endif
}

size_t
gs_device_bytes_held(void)
{
	return gs_pool_bytes;
}

size_t
gs_pinned_bytes_held(void)
{
	return (gs_stage[0] != NULL ? gs_stage_bytes : 0) + (gs_stage[1] != NULL ? gs_stage_bytes : 0) +
		gs_readback_count.load() * sizeof(uint32_t);
}

/* ------------------------------------------------------------------------
 * For host_sort.cu: stream, events, pool, staging, errors.
 * ------------------------------------------------------------------------ */

cudaStream_t
gs_device_stream(void)
{
	return gs_stream;
}

cudaEvent_t
gs_device_event(int i)
{
	return gs_events[i & 1];
}

cudaEvent_t
gs_device_timing_event(int i)
{
	return gs_events[2 + (i & 1)];
}

/* ------------------------------------------------------------------------
 * Fault injection (test builds only: device_internal.h).
 * ------------------------------------------------------------------------ */

#ifdef GS_INJECTION_POINTS
bool
gs_fault_built(void)
{
	return true;
}

void
gs_fault_set_device_memory(size_t bytes)
{
	gs_fault_device_memory.store(bytes);
}

/*
 * Arms the fault injection from GPUSORT_FAULT_INJECT.  A value arms the
 * fault once: a process that keeps the variable (a server started with it)
 * fails one call, not the same call of every sort after each release, so its
 * next sort shows recovery.  A new value (a test's next N) arms again.
 */
void
gs_fault_arm(void)
{
	const char *inject = getenv("GPUSORT_FAULT_INJECT");

	pthread_mutex_lock(&gs_fault_lock);
	if (inject == NULL)
	{
		gs_fault_value[0] = '\0';
		gs_fault_countdown.store(0);
	}
	else if (strncmp(inject, gs_fault_value, sizeof(gs_fault_value) - 1) != 0)
	{
		long		n = atol(inject);

		snprintf(gs_fault_value, sizeof(gs_fault_value), "%s", inject);
		gs_fault_countdown.store(n > 0 ? n : 0);
	}
	pthread_mutex_unlock(&gs_fault_lock);
}

/* True for exactly one call: the one that takes the countdown from 1 to 0. */
bool
gs_fault_fire(void)
{
	long		left = gs_fault_countdown.load(std::memory_order_relaxed);

	while (left > 0)
	{
		if (gs_fault_countdown.compare_exchange_weak(left, left - 1))
			return left == 1;
	}
	return false;
}

/* cudaMalloc, or the failure of a device with gs_fault_device_memory bytes free. */
static cudaError_t
gs_pool_malloc(void **p, size_t bytes)
{
	size_t		cap = gs_fault_device_memory.load();

	if (cap != 0 && bytes > cap)
		return cudaErrorMemoryAllocation;
	return cudaMalloc(p, bytes);
}
#else
bool
gs_fault_built(void)
{
	return false;
}

void
gs_fault_set_device_memory(size_t bytes)
{
	(void) bytes;
}

#define gs_pool_malloc(p, bytes) cudaMalloc((p), (bytes))
#endif

/* ------------------------------------------------------------------------
 * Errors and the broken context.
 * ------------------------------------------------------------------------ */

bool
gs_device_context_broken(void)
{
	return gs_context_broken.load(std::memory_order_acquire);
}

/* Marks the context unusable; the first reason stays. */
static void
gs_mark_broken(cudaError_t e)
{
	pthread_mutex_lock(&gs_broken_lock);
	if (!gs_context_broken.load(std::memory_order_relaxed))
	{
		snprintf(gs_broken_reason, sizeof(gs_broken_reason), "%s", cudaGetErrorName(e));
		gs_context_broken.store(true, std::memory_order_release);
	}
	pthread_mutex_unlock(&gs_broken_lock);
}

gs_status
gs_runtime_fail(gs_error *err, cudaError_t e, bool injected, const char *what, cudaStream_t stream)
{
	gs_status	s = gs_cuda_fail(err, e, what);

#ifdef GS_INJECTION_POINTS
	if (injected)
	{
		gs_append(err, " [injected by GPUSORT_FAULT_INJECT]");
		return s;
	}
#else
	(void) injected;
#endif
	return gs_context_check(s, err, stream);
}

gs_status
gs_context_check(gs_status s, gs_error *err, cudaStream_t stream)
{
	cudaError_t after;

	/*
	 * Non-sticky errors (a failed allocation, a bad argument) are cleared by
	 * cudaGetLastError (this thread's) and the context goes on.  A sticky
	 * one (a kernel fault) makes every later call fail, this stream's
	 * synchronisation included; the other threads' streams are not waited
	 * for.
	 */
	(void) cudaGetLastError();
	after = cudaStreamSynchronize(stream);
	if (after != cudaSuccess)
	{
		gs_mark_broken(after);
		gs_append(err, "; the CUDA context is unusable now: restart the process to use the GPU again");
		return GS_ERR_CUDA;
	}
	return s;
}

/* ------------------------------------------------------------------------
 * The radix readbacks (device_internal.h).
 * ------------------------------------------------------------------------ */

/* Makes a readback on the current device; nothing is left behind on failure. */
static cudaError_t
gs_readback_make(int device, gs_readback **rb)
{
	gs_readback *r = (gs_readback *) calloc(1, sizeof(gs_readback));
	cudaError_t e;

	if (r == NULL)
		return cudaErrorMemoryAllocation;
	e = gs_event_make(&r->event, cudaEventDisableTiming);
	if (e != cudaSuccess)
	{
		free(r);
		return e;
	}
	e = cudaMallocHost((void **) &r->word, sizeof(uint32_t));
	if (e != cudaSuccess)
	{
		(void) cudaEventDestroy(r->event);
		free(r);
		return e;
	}
	r->device = device;
	gs_readback_count.fetch_add(1);
	*rb = r;
	return cudaSuccess;
}

cudaError_t
gs_readback_acquire(int device, gs_readback **rb)
{
	gs_readback **link;
	gs_readback *r = NULL;

	pthread_mutex_lock(&gs_readback_lock);
	for (link = &gs_readback_idle; *link != NULL; link = &(*link)->next)
	{
		if ((*link)->device == device)
		{
			r = *link;
			*link = r->next;
			break;
		}
	}
	pthread_mutex_unlock(&gs_readback_lock);
	if (r != NULL)
	{
		r->next = NULL;
		*rb = r;
		return cudaSuccess;
	}
	return gs_readback_make(device, rb);
}

void
gs_readback_release(gs_readback *rb)
{
	pthread_mutex_lock(&gs_readback_lock);
	rb->next = gs_readback_idle;
	gs_readback_idle = rb;
	pthread_mutex_unlock(&gs_readback_lock);
}

void
gs_readback_free_idle(void)
{
	gs_readback *r;

	pthread_mutex_lock(&gs_readback_lock);
	r = gs_readback_idle;
	gs_readback_idle = NULL;
	pthread_mutex_unlock(&gs_readback_lock);
	while (r != NULL)
	{
		gs_readback *next = r->next;

		(void) cudaEventDestroy(r->event);
		(void) cudaFreeHost(r->word);
		free(r);
		gs_readback_count.fetch_sub(1);
		r = next;
	}
	(void) cudaGetLastError();
}

/* ------------------------------------------------------------------------
 * The memory pool and the staging buffers (gs_host_sort's thread).
 * ------------------------------------------------------------------------ */

gs_status
gs_pool_acquire(size_t bytes, size_t limit, void **ptr, gs_error *err)
{
	size_t		need,
				want;
	void	   *p = NULL;
	cudaError_t e;
	bool		injected;
	char		what[96];

	if (bytes <= gs_pool_bytes && gs_pool != NULL)
	{
		*ptr = gs_pool;
		return GS_OK;
	}

	/*
	 * Under the retained cap, grow geometrically so that a backend sorting
	 * slowly growing arrays does not reallocate each time; never past the
	 * caller's limit.
	 */
	need = (bytes + GS_POOL_GRANULE - 1) / GS_POOL_GRANULE * GS_POOL_GRANULE;
	if (limit != 0 && need > limit)
		need = bytes;
	want = need;
	if (want <= GS_POOL_RETAINED_BYTES)
	{
		size_t		grown = gs_pool_bytes * 2;

		if (grown > GS_POOL_RETAINED_BYTES)
			grown = GS_POOL_RETAINED_BYTES;
		if (grown > want)
			want = grown;
	}
	if (limit != 0 && want > limit)
		want = (limit > bytes) ? limit : bytes;

	/* Free first, so that the peak is the new size and not both. */
	if (gs_pool != NULL)
		(void) cudaFree(gs_pool);
	gs_pool = NULL;
	gs_pool_bytes = 0;

	e = GS_RT_CALL(gs_pool_malloc(&p, want), injected);
	if (e == cudaErrorMemoryAllocation && !injected && want > need)
	{
		/* the rounding did not fit: the real need may */
		(void) cudaGetLastError();
		want = need;
		e = GS_RT_CALL(gs_pool_malloc(&p, want), injected);
	}
	if (e != cudaSuccess)
	{
		snprintf(what, sizeof(what), "could not allocate %zu MB of device memory", (want + (1 << 20) - 1) >> 20);
		return gs_runtime_fail(err, e, injected, what, gs_stream);
	}
	gs_pool = p;
	gs_pool_bytes = want;
	*ptr = p;
	return GS_OK;
}

void
gs_pool_end_call(void)
{
	if (gs_pool != NULL && gs_pool_bytes > GS_POOL_RETAINED_BYTES)
	{
		(void) cudaFree(gs_pool);
		(void) cudaGetLastError();
		gs_pool = NULL;
		gs_pool_bytes = 0;
	}
}

gs_status
gs_staging_acquire(size_t chunk_bytes, void *bufs[2], gs_error *err)
{
	int			i;

	if (gs_stage_bytes != chunk_bytes || gs_stage[0] == NULL || gs_stage[1] == NULL)
	{
		(void) cudaStreamSynchronize(gs_stream);
		for (i = 0; i < 2; i++)
		{
			if (gs_stage[i] != NULL)
				(void) cudaFreeHost(gs_stage[i]);
			gs_stage[i] = NULL;
		}
		gs_stage_bytes = chunk_bytes;
		for (i = 0; i < 2; i++)
		{
			bool		injected;
			cudaError_t e = GS_RT_CALL(cudaHostAlloc(&gs_stage[i], chunk_bytes, cudaHostAllocDefault),
										injected);

			if (e != cudaSuccess)
			{
				char		what[96];

				gs_stage[i] = NULL;
				snprintf(what, sizeof(what), "could not allocate %zu MB of pinned host memory",
						 (chunk_bytes + (1 << 20) - 1) >> 20);
				if (e == cudaErrorMemoryAllocation && !injected)
				{
					(void) cudaGetLastError();
					return gs_fail(err, GS_ERR_HOST_MEMORY, "%s: %s (%s)", what,
								   cudaGetErrorName(e), cudaGetErrorString(e));
				}
				return gs_runtime_fail(err, e, injected, what, gs_stream);
			}
		}
	}
	bufs[0] = gs_stage[0];
	bufs[1] = gs_stage[1];
	return GS_OK;
}
