/*
 * gpusort.h: the whole API of the gpusort sorting library (kernels/).
 *
 * Plain C, no PostgreSQL headers: src/ (the extension), test/ and bench/ all
 * link libgpusort.a through this header alone.  Nothing here prints, exits or
 * allocates behind the caller's back on a hot path: errors come back as a
 * gs_status plus a message in a caller-provided gs_error, and scratch memory
 * is asked for first and passed in second (the two-phase style of CUB).
 *
 * Order: every sort orders by an unsigned "ordered key" made from
 * the element's bits by the transforms of keys.h, so CPU and GPU results are
 * bit-identical permutations of the input: signed integers in numeric order;
 * floats -Inf < ... < -0 < +0 < ... < +Inf < NaN (any sign bit); descending
 * is the exact reverse of that order, and ties always keep input order.
 */
#ifndef GPUSORT_H
#define GPUSORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_VERSION "1.1"

/* Element types.  The 16/32/64-bit key paths are shared by width. */
typedef enum gs_type
{
	GS_INT2 = 0,
	GS_INT4,
	GS_INT8,
	GS_FLOAT4,
	GS_FLOAT8,
	GS_NUM_TYPES
} gs_type;

/* Sorting algorithms.  GS_ALGO_AUTO lets the library choose by size/type. */
typedef enum gs_algorithm
{
	GS_ALGO_AUTO = 0,
	GS_ALGO_RADIX,
	GS_ALGO_MERGE,
	GS_ALGO_BITONIC,
	GS_ALGO_QUICK,
	GS_NUM_ALGORITHMS
} gs_algorithm;

typedef enum gs_status
{
	GS_OK = 0,
	GS_ERR_INVALID_ARGUMENT,	/* bad type, NULL pointer, too small scratch */
	GS_ERR_TOO_LARGE,			/* n over what the call supports (2^32-1 for argsort) */
	GS_ERR_HOST_MEMORY,			/* pinned host memory could not be allocated */
	GS_ERR_DEVICE_MEMORY,		/* device memory could not be allocated */
	GS_ERR_MEMORY_LIMIT,		/* the sort needs more than max_device_bytes */
	GS_ERR_NO_CUDA,				/* the library was built without CUDA */
	GS_ERR_NO_DRIVER,			/* no usable NVIDIA driver */
	GS_ERR_NO_DEVICE,			/* driver present, no (such) device */
	GS_ERR_CUDA,				/* any other CUDA error; the message names it */
	GS_ERR_INTERRUPTED,			/* the interrupt callback asked to stop */
	GS_ERR_GPU_LOST,			/* the process (or GPU) running the job is gone */
	GS_ERR_TIMED_OUT,			/* the job ran past its caller's time limit and was stopped */
	GS_NUM_STATUSES
} gs_status;

#define GS_MESSAGE_LEN 256

/* Filled on failure: the status again and a lower-case message without a trailing period. */
typedef struct gs_error
{
	gs_status	status;
	char		message[GS_MESSAGE_LEN];
} gs_error;

/*
 * Interrupt callback, polled between long steps (CPU passes, GPU chunks and
 * passes).  Return true to stop: the call then releases what it took, leaves
 * the output undefined and returns GS_ERR_INTERRUPTED.  It must not longjmp.
 */
typedef bool (*gs_interrupt_fn) (void *arg);

/* Names and sizes. */
size_t		gs_type_size(gs_type type);			/* 2, 4 or 8; 0 for a bad type */
const char *gs_type_name(gs_type type);			/* "int2" ... "float8" */
const char *gs_algorithm_name(gs_algorithm a);	/* "auto", "radix", "merge", "bitonic", "quick" */
const char *gs_status_name(gs_status s);		/* "ok", "invalid argument", ... */

/* ------------------------------------------------------------------------
 * CPU sort (kernels/cpu_sort.c): LSD radix sort on the ordered keys, 11-bit
 * digits while the data fit in cache (up to 4 MiB), 8-bit digits above, passes
 * skipped when their digit is the same for every key.  Stable,
 * O(n) extra memory, bit-exact.  Always available.
 * ------------------------------------------------------------------------ */

/* Bytes of scratch that gs_cpu_sort (argsort=false) or gs_cpu_argsort (true) need for n keys. */
size_t		gs_cpu_scratch_bytes(gs_type type, size_t n, bool argsort);

/*
 * Sorts n keys of the given type in place.  scratch: at least
 * gs_cpu_scratch_bytes(type, n, false) bytes, any alignment up to 16 is fine
 * (the function aligns inside).  interrupt may be NULL.
 */
gs_status	gs_cpu_sort(gs_type type, void *keys, size_t n, bool descending,
						void *scratch, gs_interrupt_fn interrupt, void *interrupt_arg,
						gs_error *err);

/*
 * Stable argsort: perm[i] = 0-based position in keys of the i-th element in
 * order.  keys is not modified.  If sorted_keys is not NULL it receives the
 * keys in order (it may not alias keys).  n must be < 2^32.
 */
gs_status	gs_cpu_argsort(gs_type type, const void *keys, size_t n, bool descending,
						   uint32_t *perm, void *sorted_keys,
						   void *scratch, gs_interrupt_fn interrupt, void *interrupt_arg,
						   gs_error *err);

/* ------------------------------------------------------------------------
 * CPU gather (kernels/cpu_gather.c): records scattered in memory copied one
 * after another in a given order, on several threads.
 * ------------------------------------------------------------------------ */

/*
 * Copies the n records that records[] point to into to, one after another in
 * records' order, each at a multiple of 8 bytes from to (which must be
 * 8-byte aligned), and points records[i] at its copy.  A record begins with
 * its length in bytes, a uint32 that counts itself (PostgreSQL's
 * MinimalTuple).  Up to threads threads (the caller's among them, each with
 * GS_GATHER_RECORDS_PER_THREAD records or more, every signal blocked) share
 * the work.  *used (may
 * be NULL) receives the bytes written.  Where to_bytes is too small the call
 * returns GS_ERR_INVALID_ARGUMENT, and every records[i] still points at its
 * record, copied or not.
 */
/* fewer records a thread cost more to hand out than they save */
#define GS_GATHER_RECORDS_PER_THREAD 65536

gs_status	gs_gather_records(void **records, size_t n, void *to, size_t to_bytes, int threads,
							  size_t *used, gs_error *err);

/* ------------------------------------------------------------------------
 * CPU top-k (kernels/cpu_topk.c): the first k elements of the stable sort
 * (gs_cpu_argsort's order) without sorting the rest: a radix select on the
 * ordered keys finds the k-th key's range in one or a few reads, one more
 * gathers the elements up to it, and only those are sorted.  Small n, or k
 * above n / 8, sort everything instead.
 * ------------------------------------------------------------------------ */

/* Bytes of scratch gs_cpu_topk needs (0 when k or n is 0); positions: out_perm wanted. */
size_t		gs_cpu_topk_scratch_bytes(gs_type type, size_t n, size_t k, bool positions);

/*
 * The first min(k, n) elements of the stable sort of keys (not modified):
 * out_keys receives them in order and out_perm their 0-based positions in
 * keys (ties in input order); either may be NULL, not both.  n < 2^32.
 * scratch: gs_cpu_topk_scratch_bytes(type, n, k, out_perm != NULL) bytes,
 * any alignment.
 */
gs_status	gs_cpu_topk(gs_type type, const void *keys, size_t n, size_t k, bool descending,
						void *out_keys, uint32_t *out_perm,
						void *scratch, gs_interrupt_fn interrupt, void *interrupt_arg,
						gs_error *err);

/*
 * Moves the elements of keys[0..n) that come strictly before *bound in the
 * sort order (ascending, or descending) to the front of keys, in input
 * order, and returns how many there are (n for a bad type).  With *bound the
 * k-th of a top-k already held, these are the only elements that can still
 * enter it: a bounded accumulator drops the others and selects again
 * (gs_cpu_topk) only when enough remain.
 */
size_t		gs_cpu_topk_keep_before(gs_type type, void *keys, size_t n, const void *bound,
									bool descending);

/* ------------------------------------------------------------------------
 * Sorted runs on the CPU (kernels/cpu_merge.c), ascending in the order above.
 * ------------------------------------------------------------------------ */

/*
 * Merges the ascending runs a[0..na) and b[0..nb) into out (na + nb
 * elements, overlapping neither run); stable: of equal keys, a's come first.
 */
gs_status	gs_cpu_merge(gs_type type, const void *a, size_t na, const void *b, size_t nb,
						 void *out, gs_error *err);

/* Whether keys[0..n) are in ascending order (false for a bad type). */
bool		gs_cpu_is_sorted(gs_type type, const void *keys, size_t n);

/*
 * The position in values of an element of rank `rank` (0-based) in the
 * ascending order of nruns ascending runs, run r being values[starts[r] ..
 * starts[r + 1]), without merging them; SIZE_MAX when rank is not below
 * starts[nruns] - starts[0] or the type is bad.  Equal keys are one value,
 * so any of them answers.
 */
size_t		gs_cpu_runs_select(gs_type type, const void *values, const size_t *starts,
							   size_t nruns, size_t rank);

/* ------------------------------------------------------------------------
 * Runtime and devices (kernels/device.cu; kernels/no_cuda.c in a CPU-only
 * build, where every call reports GS_ERR_NO_CUDA).
 * ------------------------------------------------------------------------ */

typedef struct gs_runtime_info
{
	bool		built_with_cuda;
	int			runtime_version;	/* e.g. 13000; 0 when unknown */
	int			driver_version;		/* 0 when no driver */
	int			device_count;
	gs_status	status;				/* GS_OK when at least one device is usable */
	char		reason[GS_MESSAGE_LEN]; /* why no GPU is usable; "" when one is */
} gs_runtime_info;

typedef struct gs_device_props
{
	int			id;
	char		name[256];
	int			major;			/* compute capability */
	int			minor;
	size_t		total_memory;	/* bytes */
	size_t		free_memory;	/* bytes */
	int			multiprocessors;
} gs_device_props;

/*
 * Probes the driver and the devices without creating a context.  Safe to call
 * many times; the first call initialises the driver (with all signals blocked
 * so that threads the CUDA runtime starts never receive the caller's signals).
 */
void		gs_runtime_probe(gs_runtime_info *info);

/* Properties of device id (0 <= id < device_count). */
gs_status	gs_device_props_get(int id, gs_device_props *props, gs_error *err);

/*
 * Makes device id current for this process, creating its context on first use
 * (signals blocked meanwhile).  Later calls with the same id are cheap.
 */
gs_status	gs_device_open(int id, gs_error *err);

/* The device opened by gs_device_open, or -1. */
int			gs_device_current(void);

/*
 * Frees everything the library holds on the device and in pinned host memory
 * (the memory pool, staging buffers, streams, events), after waiting for work
 * in flight.  The context stays.  Safe to call at any time, also after an
 * error or an interrupt, and when nothing is held.
 */
void		gs_device_release(void);

/* Bytes of device memory / pinned host memory the library holds now. */
size_t		gs_device_bytes_held(void);
size_t		gs_pinned_bytes_held(void);

/* ------------------------------------------------------------------------
 * GPU sort on device buffers (test/, bench/, and the host path below).
 * Two-phase: call with temp == NULL to learn temp_bytes, then again to sort.
 * ------------------------------------------------------------------------ */

typedef struct gs_gpu_sort_args
{
	gs_type		type;
	gs_algorithm algorithm;		/* GS_ALGO_AUTO picks by size and type */
	size_t		n;
	bool		descending;

	/*
	 * Double buffers, as in CUB: keys[0] holds the input; keys[1] is an
	 * alternate buffer of n keys the sort may overwrite.  On return
	 * result_selector says which of the two holds the sorted keys.  values
	 * (NULL for a keys-only sort) likewise hold n uint32 each, permuted
	 * with the keys (pass 0..n-1 in values[0] for an argsort); the sorted
	 * values are in values[result_selector].
	 */
	void	   *keys[2];
	uint32_t   *values[2];
	int			result_selector;	/* out */

	void	   *temp;			/* device scratch, or NULL to ask for temp_bytes */
	size_t		temp_bytes;		/* in: size of temp; out (when temp == NULL): bytes needed */
	void	   *stream;			/* cudaStream_t, or NULL for the default stream */

	gs_algorithm algorithm_used; /* out: what actually ran */
} gs_gpu_sort_args;

/*
 * Sorts on the current device.  Asynchronous on the stream except where an
 * algorithm must read a small result back to plan its next step (the radix
 * sort reads its digit histograms to skip constant digits): then it
 * synchronises the stream.  Keys/values of n elements; n < 2^32 with values.
 */
gs_status	gs_gpu_sort(gs_gpu_sort_args *args, gs_error *err);

/*
 * GPU top-k on device buffers (kernels/topk.cu): the first min(k, n) elements
 * of the stable sort of keys_in, by radix select (one histogram pass over the
 * keys per 8-bit digit, the k-th key's digits kept on the device, then one
 * compaction of the k in input order) and gs_gpu_sort of those k.  Two-phase
 * like gs_gpu_sort; asynchronous on the stream except where gs_gpu_sort of the
 * k synchronises.  Only device buffers and the given stream are touched, so
 * any thread that has made the device current may call it.
 */
typedef struct gs_gpu_topk_args
{
	gs_type		type;
	size_t		n;				/* < 2^32 */
	size_t		k;				/* clamped to n */
	bool		descending;
	const void *keys_in;		/* n keys, not modified */
	void	   *keys_out;		/* k keys in order, or NULL */
	uint32_t   *positions_out;	/* their k 0-based positions in keys_in (ties in input order), or NULL */
	void	   *temp;			/* device scratch, or NULL to ask for temp_bytes */
	size_t		temp_bytes;
	void	   *stream;			/* cudaStream_t, or NULL for the default stream */
	gs_algorithm algorithm_used; /* out: the sort that ordered the k */
} gs_gpu_topk_args;

gs_status	gs_gpu_topk(gs_gpu_topk_args *args, gs_error *err);

/* ------------------------------------------------------------------------
 * GPU sort of host arrays (src/ uses this): copies in through pinned staging
 * buffers in chunks, sorts, copies out, with timings.  Device memory comes
 * from a per-process pool reused across calls.
 * ------------------------------------------------------------------------ */

typedef struct gs_host_sort_job
{
	gs_type		type;
	gs_algorithm algorithm;
	size_t		n;
	bool		descending;
	int			device_id;		/* the device to use (already chosen by the caller) */
	size_t		max_device_bytes; /* 0: no limit; more needed -> GS_ERR_MEMORY_LIMIT */

	const void *input;			/* n keys, host memory (any, pageable is fine) */
	void	   *output;			/* n keys, host; may equal input; NULL: keys not wanted */
	uint32_t   *perm;			/* n 0-based positions (stable argsort), or NULL */
	size_t		limit;			/* 0 < limit < n: output and perm receive the first limit
								 * entries only, selected by gs_gpu_topk (output may not
								 * equal input); 0: the whole order */

	gs_interrupt_fn interrupt;	/* may be NULL */
	void	   *interrupt_arg;
} gs_host_sort_job;

typedef struct gs_run_report
{
	int			device;			/* device id, or -1 for the CPU */
	gs_algorithm algorithm;		/* what ran */
	double		copy_in_ms;
	double		sort_ms;
	double		copy_out_ms;
	double		total_ms;
	size_t		device_bytes;	/* device memory this sort used */
} gs_run_report;

/* Bytes of device memory a host sort of this shape needs (for max_device_bytes). */
size_t		gs_host_sort_device_bytes(gs_type type, gs_algorithm algorithm, size_t n, bool argsort);

gs_status	gs_host_sort(const gs_host_sort_job *job, gs_run_report *report, gs_error *err);

/* ------------------------------------------------------------------------
 * Workers (kernels/worker.cu): sorts whose data stream in and out in chunks
 * through a ring of pinned host buffers that the caller owns, each worker
 * with a stream and device memory of its own, so that several threads sort
 * at once on one device (the GPU server's threads: they call these and
 * nothing else).  Everything here is safe to call from several threads,
 * each on its own worker.
 * ------------------------------------------------------------------------ */

typedef struct gs_worker gs_worker;

/*
 * Creates a worker on device id: makes id the calling thread's device
 * (creating the process's context for it on first use, signals blocked) and
 * gives the worker a stream and events.  The thread that uses a worker must
 * have made its device current (gs_worker_create does it for its caller).
 */
gs_status	gs_worker_create(int id, gs_worker **worker, gs_error *err);

/* Waits for the worker's work, frees its device memory and stream. */
void		gs_worker_destroy(gs_worker *worker);

/* Bytes of device memory the worker holds now (between jobs: none). */
size_t		gs_worker_device_bytes(const gs_worker *worker);

/*
 * Pins host memory [p, p + bytes) for DMA from every device (e.g. a shared
 * memory area), and unpins it.
 */
gs_status	gs_host_pin(void *p, size_t bytes, gs_error *err);
void		gs_host_unpin(void *p);

/*
 * Lets the device keep up to keep_bytes of freed device memory for reuse
 * (the stream-ordered allocator's pool of device id) instead of returning it
 * at each synchronisation.
 */
gs_status	gs_device_pool_keep(int id, size_t keep_bytes, gs_error *err);

/* True once a sticky CUDA error has made this process's context unusable. */
bool		gs_device_context_broken(void);

/*
 * The ring between a producer/consumer (the caller's side) and a worker.
 * The input is a stream of bytes cut into chunks of chunk_bytes; chunk i
 * lies in slot i % slots of ring.  The output is another such stream, in
 * the same ring once the input is on the device.  The callbacks block until
 * their condition holds and return false when the job is to stop (its
 * caller withdrew it); they are called on the worker's thread.
 */
typedef struct gs_stream_io
{
	char	   *ring;			/* slots * chunk_bytes of pinned memory */
	size_t		chunk_bytes;
	int			slots;
	bool		(*input_ready) (void *arg, size_t chunk);	/* chunk is in its slot */
	void		(*input_done) (void *arg, size_t chunk);	/* its slot may be reused */
	bool		(*output_free) (void *arg, size_t chunk);	/* its slot may be written */
	void		(*output_ready) (void *arg, size_t chunk);	/* chunk is in its slot */
	void	   *arg;
} gs_stream_io;

typedef struct gs_stream_job
{
	gs_type		type;
	gs_algorithm algorithm;
	size_t		n;				/* keys in the input stream, > 1 */
	size_t		limit;			/* 0 (or >= n): the output holds all n; else only the first limit */
	bool		descending;
	bool		want_keys;		/* the output stream holds the sorted keys */
	bool		want_perm;		/* ... then their uint32 0-based positions (stable) */
	size_t		max_device_bytes;	/* 0: no limit */
} gs_stream_job;

/*
 * Bytes of device memory gs_worker_sort takes for job: a sort's, or for
 * 0 < limit < n the select's (the input, the limit keys and positions out,
 * gs_gpu_topk's scratch).  0 for n <= 1.
 */
size_t		gs_stream_job_device_bytes(const gs_stream_job *job);

/*
 * Sorts one job on the worker's device: copies the input chunks to the
 * device as they come, sorts (or, for 0 < limit < n, selects the first
 * limit with gs_gpu_topk), copies the output out chunk by chunk.  The
 * report's copy_in_ms counts from the call until the last input chunk is on
 * the device (waiting for the producer included).  Device memory comes from
 * the device's stream-ordered pool and is given back before returning.
 */
gs_status	gs_worker_sort(gs_worker *worker, const gs_stream_job *job, const gs_stream_io *io,
						   gs_run_report *report, gs_error *err);

#ifdef GS_INJECTION_POINTS
/*
 * Test builds only: runs a kernel that never ends on the calling thread's
 * device and waits for it, as a hung GPU would.  It does not return; only
 * the end of the process ends it.
 */
void		gs_inject_hang(void);
#endif

#ifdef __cplusplus
}
#endif

#endif							/* GPUSORT_H */
