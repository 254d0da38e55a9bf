/*
 * test_shared_context.cu: many threads sharing one CUDA context, as the GPU
 * server's workers do, each with its own worker (worker.cu), sorting small
 * arrays with every algorithm and every type at once, each result compared
 * bit for bit with the CPU sort.  The kernels' per-context settings (the
 * dynamic shared memory limits, set on a kernel's first launches, which
 * differ with the array's size for the single-block bitonic sort) and the
 * library's per-process caches are what it exercises:
 *
 *  1. first launches at once: in fresh processes (this program started
 *     again with --first-launches), all threads make their device buffers,
 *     wait at a barrier and then each calls gs_gpu_sort on an array of a
 *     different size with the bitonic sort, once for each type and for keys
 *     and argsort; then, on their workers, every size up to the single
 *     block's largest, spread over the threads.  A thread that lowers
 *     a kernel's limit below another's launch fails that launch, and a limit
 *     recorded above the one set fails later launches as well.
 *  2. every size from 2 to --max-size (default 4096; an array of one element
 *     never reaches the GPU) with every algorithm (auto, radix, merge,
 *     bitonic, quick) and every type, keys and argsort, ascending and
 *     descending in turn, the jobs dealt out over the threads so that at any
 *     moment they sort different sizes with the same kernels.
 *
 * TAP; skips everything (counting nothing) when there is no CUDA device.
 *
 *   test_shared_context [--quick] [--threads N] [--max-size N] [--sizes A,B,...]
 *                       [--processes P] [--repeat R]
 *
 * --quick: 4 threads, a few sizes, no fresh processes (for compute-sanitizer's
 * racecheck and memcheck, which slow every launch down); --sizes: these sizes
 * instead of 2..max-size; --processes: fresh processes for part 1 (default 8;
 * 0: none); --repeat: part 2 this many times (default 1).
 */
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "gpusort.h"
#include "distributions.h"
#include "tap.h"

extern char **environ;

#define MAX_THREADS		64
#define MAX_SIZES		8192
#define RING_CHUNK		((size_t) 64 * 1024)
#define RING_SLOTS		4

/* The single-block bitonic sort's largest array (AUTO sends it up to 1024 keys). */
#define FIRST_LAUNCH_MAX	2048

static const gs_algorithm algorithms[] = {GS_ALGO_AUTO, GS_ALGO_RADIX, GS_ALGO_MERGE, GS_ALGO_BITONIC,
	GS_ALGO_QUICK};
#define NUM_ALGORITHMS ((int) (sizeof(algorithms) / sizeof(algorithms[0])))

static int	nthreads = 16;
static size_t sizes[MAX_SIZES];
static int	nsizes;
static int	repeat = 1;
static pthread_barrier_t barrier;

/* What one thread did: its worker, ring and buffers, and its failures. */
typedef struct thread_state
{
	int			index;
	gs_worker  *worker;
	char	   *ring;
	char	   *input;
	char	   *ref_keys;
	uint32_t   *ref_perm;
	char	   *output;
	void	   *scratch;
	long		jobs;
	long		failures;
	char		first_failure[400];
} thread_state;

/* The caller's side of one job's stream (one chunk each way at these sizes, but any number works). */
typedef struct job_side
{
	const char *input;
	size_t		in_bytes;
	char	   *output;
	size_t		out_bytes;
	char	   *ring;
} job_side;

static bool
cb_input_ready(void *arg, size_t i)
{
	job_side   *s = (job_side *) arg;
	size_t		off = i * RING_CHUNK;
	size_t		len = s->in_bytes - off < RING_CHUNK ? s->in_bytes - off : RING_CHUNK;

	memcpy(s->ring + (i % RING_SLOTS) * RING_CHUNK, s->input + off, len);
	return true;
}

static void
cb_input_done(void *arg, size_t i)
{
	(void) arg;
	(void) i;
}

static bool
cb_output_free(void *arg, size_t i)
{
	(void) arg;
	(void) i;
	return true;
}

static void
cb_output_ready(void *arg, size_t i)
{
	job_side   *s = (job_side *) arg;
	size_t		off = i * RING_CHUNK;
	size_t		len = s->out_bytes - off < RING_CHUNK ? s->out_bytes - off : RING_CHUNK;

	memcpy(s->output + off, s->ring + (i % RING_SLOTS) * RING_CHUNK, len);
}

static void
note_failure(thread_state *t, const char *fmt,...)
{
	va_list		ap;

	t->failures++;
	if (t->first_failure[0] == '\0')
	{
		va_start(ap, fmt);
		vsnprintf(t->first_failure, sizeof(t->first_failure), fmt, ap);
		va_end(ap);
	}
}

/*
 * One job on the thread's worker: n elements of type, keys or argsort, seed
 * picking the data, checked against the CPU sort.
 */
static void
run_job(thread_state *t, gs_type type, gs_algorithm algo, size_t n, bool argsort, bool desc, uint64_t seed)
{
	size_t		w = gs_type_size(type);
	gs_dist		dist = (gs_dist) (seed % GS_NUM_DISTS);
	gs_stream_job job;
	gs_stream_io io;
	job_side	side;
	gs_run_report rep;
	gs_error	err;
	gs_status	s;

	gs_fill(type, dist, t->input, n, seed);
	if (gs_cpu_argsort(type, t->input, n, desc, t->ref_perm, t->ref_keys, t->scratch, NULL, NULL, &err) != GS_OK)
	{
		note_failure(t, "the CPU sort failed: %s", err.message);
		return;
	}

	side.input = t->input;
	side.in_bytes = n * w;
	side.output = t->output;
	side.out_bytes = n * (argsort ? sizeof(uint32_t) : w);
	side.ring = t->ring;
	memset(t->output, 0xA5, side.out_bytes);	/* poison */

	memset(&job, 0, sizeof(job));
	job.type = type;
	job.algorithm = algo;
	job.n = n;
	job.descending = desc;
	job.want_keys = !argsort;
	job.want_perm = argsort;

	io.ring = t->ring;
	io.chunk_bytes = RING_CHUNK;
	io.slots = RING_SLOTS;
	io.input_ready = cb_input_ready;
	io.input_done = cb_input_done;
	io.output_free = cb_output_free;
	io.output_ready = cb_output_ready;
	io.arg = &side;

	t->jobs++;
	s = gs_worker_sort(t->worker, &job, &io, &rep, &err);
	if (s != GS_OK)
		note_failure(t, "%s %s n=%zu %s %s: %s: %s", gs_algorithm_name(algo), gs_type_name(type), n,
					 argsort ? "argsort" : "keys", desc ? "desc" : "asc", gs_status_name(s), err.message);
	else if (memcmp(t->output, argsort ? (const char *) t->ref_perm : t->ref_keys, side.out_bytes) != 0)
		note_failure(t, "%s %s n=%zu %s %s (%s): differs from the CPU sort", gs_algorithm_name(algo),
					 gs_type_name(type), n, argsort ? "argsort" : "keys", desc ? "desc" : "asc",
					 gs_dist_names[dist]);
}

/* Worker, pinned ring and buffers for arrays of up to max_n elements. */
static bool
thread_setup(thread_state *t, size_t max_n)
{
	gs_error	err;

	if (gs_worker_create(0, &t->worker, &err) != GS_OK)
	{
		note_failure(t, "gs_worker_create: %s", err.message);
		return false;
	}
	t->ring = (char *) xmalloc(RING_CHUNK * RING_SLOTS);
	if (gs_host_pin(t->ring, RING_CHUNK * RING_SLOTS, &err) != GS_OK)
	{
		note_failure(t, "gs_host_pin: %s", err.message);
		free(t->ring);
		t->ring = NULL;
		gs_worker_destroy(t->worker);
		t->worker = NULL;
		return false;
	}
	t->input = (char *) xmalloc(max_n * 8);
	t->ref_keys = (char *) xmalloc(max_n * 8);
	t->ref_perm = (uint32_t *) xmalloc(max_n * sizeof(uint32_t));
	t->output = (char *) xmalloc(max_n * 8);
	t->scratch = xmalloc(gs_cpu_scratch_bytes(GS_INT8, max_n, true));
	return true;
}

static void
thread_teardown(thread_state *t)
{
	if (t->ring != NULL)
	{
		gs_host_unpin(t->ring);
		free(t->ring);
	}
	gs_worker_destroy(t->worker);
	free(t->input);
	free(t->ref_keys);
	free(t->ref_perm);
	free(t->output);
	free(t->scratch);
}

/* A size of its own for thread i, a different power of two where there are enough. */
static size_t
first_launch_size(int i, int round)
{
	size_t		p = (size_t) 2 << ((i + round) % 10);	/* 2 .. 1024 */

	return p + (size_t) (i / 10) % (p / 2 + 1);
}

/* Device buffers of one gs_gpu_sort, and the call's arguments. */
typedef struct direct_sort
{
	gs_gpu_sort_args a;
	cudaStream_t stream;
	uint32_t   *iota;
} direct_sort;

/* Everything of a gs_gpu_sort of the thread's input but the call itself; false on a failure (noted). */
static bool
direct_prepare(thread_state *t, direct_sort *d, gs_type type, size_t n, bool argsort)
{
	size_t		w = gs_type_size(type);
	gs_error	err;
	bool		ok;

	memset(d, 0, sizeof(*d));
	d->a.type = type;
	d->a.algorithm = GS_ALGO_BITONIC;
	d->a.n = n;
	ok = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking) == cudaSuccess &&
		cudaMalloc(&d->a.keys[0], n * w) == cudaSuccess && cudaMalloc(&d->a.keys[1], n * w) == cudaSuccess &&
		cudaMemcpy(d->a.keys[0], t->input, n * w, cudaMemcpyHostToDevice) == cudaSuccess;
	if (ok && argsort)
	{
		d->iota = (uint32_t *) xmalloc(n * sizeof(uint32_t));
		for (size_t i = 0; i < n; i++)
			d->iota[i] = (uint32_t) i;
		ok = cudaMalloc((void **) &d->a.values[0], n * 4) == cudaSuccess &&
			cudaMalloc((void **) &d->a.values[1], n * 4) == cudaSuccess &&
			cudaMemcpy(d->a.values[0], d->iota, n * 4, cudaMemcpyHostToDevice) == cudaSuccess;
	}
	d->a.stream = d->stream;
	if (ok && gs_gpu_sort(&d->a, &err) != GS_OK)
	{
		note_failure(t, "gs_gpu_sort size query: %s", err.message);
		return false;
	}
	ok = ok && cudaMalloc(&d->a.temp, d->a.temp_bytes ? d->a.temp_bytes : 1) == cudaSuccess &&
		cudaDeviceSynchronize() == cudaSuccess;
	if (!ok)
		note_failure(t, "could not set up a gs_gpu_sort: %s", cudaGetErrorName(cudaGetLastError()));
	return ok;
}

static void
direct_free(direct_sort *d)
{
	(void) cudaStreamSynchronize(d->stream);
	cudaFree(d->a.keys[0]);
	cudaFree(d->a.keys[1]);
	cudaFree(d->a.values[0]);
	cudaFree(d->a.values[1]);
	cudaFree(d->a.temp);
	cudaStreamDestroy(d->stream);
	free(d->iota);
}

/*
 * One round of part 1: every thread has its buffers ready, waits at the
 * barrier, and calls gs_gpu_sort (the bitonic sort of its own size) at once
 * with the others, so that their first settings of the kernel's limit meet.
 */
static void
first_launch_round(thread_state *t, bool ok, gs_type type, size_t n, bool argsort, uint64_t seed)
{
	size_t		w = gs_type_size(type);
	direct_sort d;
	gs_error	err;
	gs_status	s = GS_OK;
	bool		prepared = false;

	if (ok)
	{
		gs_fill(type, (gs_dist) (seed % GS_NUM_DISTS), t->input, n, seed);
		if (gs_cpu_argsort(type, t->input, n, false, t->ref_perm, t->ref_keys, t->scratch, NULL, NULL, &err) != GS_OK)
		{
			note_failure(t, "first launch: the CPU sort failed: %s", err.message);
			ok = false;
		}
	}
	if (ok)
	{
		prepared = true;
		ok = direct_prepare(t, &d, type, n, argsort);
	}
	pthread_barrier_wait(&barrier);
	if (!ok)
	{
		if (prepared)
			direct_free(&d);
		return;
	}
	t->jobs++;
	s = gs_gpu_sort(&d.a, &err);
	if (s == GS_OK && cudaStreamSynchronize(d.stream) != cudaSuccess)
		note_failure(t, "first launch: bitonic %s n=%zu: %s", gs_type_name(type), n,
					 cudaGetErrorName(cudaGetLastError()));
	else if (s != GS_OK)
		note_failure(t, "first launch: bitonic %s n=%zu %s: %s", gs_type_name(type), n,
					 argsort ? "argsort" : "keys", err.message);
	else
	{
		const void *src = argsort ? (const void *) d.a.values[d.a.result_selector] : d.a.keys[d.a.result_selector];
		size_t		bytes = n * (argsort ? 4 : w);

		if (cudaMemcpy(t->output, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess ||
			memcmp(t->output, argsort ? (const char *) t->ref_perm : t->ref_keys, bytes) != 0)
			note_failure(t, "first launch: bitonic %s n=%zu %s: differs from the CPU sort", gs_type_name(type), n,
						 argsort ? "argsort" : "keys");
	}
	direct_free(&d);
}

/* Part 1 in this process: the first launches at once, then every single-block size. */
static void *
first_launches_thread(void *arg)
{
	thread_state *t = (thread_state *) arg;
	bool		ok = thread_setup(t, FIRST_LAUNCH_MAX);
	int			round = 0;

	pthread_barrier_wait(&barrier);
	for (int type = 0; type < GS_NUM_TYPES; type++)
		for (int argsort = 0; argsort < 2; argsort++, round++)
			first_launch_round(t, ok, (gs_type) type, first_launch_size(t->index, round), argsort,
							   (uint64_t) round * 1000 + t->index);
	for (size_t n = 2 + t->index; ok && n <= FIRST_LAUNCH_MAX; n += nthreads)
		for (int type = 0; type < GS_NUM_TYPES; type++)
			run_job(t, (gs_type) type, GS_ALGO_BITONIC, n, n % 2 == 1, n % 4 >= 2, n * 7 + type);
	if (ok)
		thread_teardown(t);
	return NULL;
}

/* Part 2: job i of the whole walk (size fastest, then type, then algorithm). */
static void *
every_size_thread(void *arg)
{
	thread_state *t = (thread_state *) arg;
	size_t		max_n = 2;
	long		per_pass = (long) nsizes * GS_NUM_TYPES * NUM_ALGORITHMS;
	long		stride = nsizes % 1597 == 0 ? 1 : 1597;	/* prime: a permutation of the sizes */

	for (int i = 0; i < nsizes; i++)
		if (sizes[i] > max_n)
			max_n = sizes[i];
	if (!thread_setup(t, max_n))
	{
		pthread_barrier_wait(&barrier);
		return NULL;
	}
	pthread_barrier_wait(&barrier);
	for (int r = 0; r < repeat; r++)
		for (long i = t->index; i < per_pass; i += nthreads)
		{
			/* the sizes are taken in a scattered order, so neighbouring jobs differ in size */
			size_t		n = sizes[(i * stride) % nsizes];
			gs_type		type = (gs_type) ((i / nsizes) % GS_NUM_TYPES);
			gs_algorithm algo = algorithms[i / nsizes / GS_NUM_TYPES];
			uint64_t	seed = (uint64_t) i * 131 + r;

			run_job(t, type, algo, n, (i + r) % 2 == 1, (i / 2 + r) % 2 == 1, seed);
		}
	thread_teardown(t);
	return NULL;
}

/* Runs nthreads threads of fn; returns the failures, and the first one in first. */
static long
run_threads(void *(*fn) (void *), long *jobs, char *first, size_t first_len)
{
	pthread_t	threads[MAX_THREADS];
	thread_state *states = (thread_state *) calloc(nthreads, sizeof(thread_state));
	long		failures = 0;

	*jobs = 0;
	first[0] = '\0';
	pthread_barrier_init(&barrier, NULL, nthreads);
	for (int i = 0; i < nthreads; i++)
	{
		states[i].index = i;
		if (pthread_create(&threads[i], NULL, fn, &states[i]) != 0)
		{
			fprintf(stderr, "could not start a thread\n");
			exit(2);
		}
	}
	for (int i = 0; i < nthreads; i++)
	{
		pthread_join(threads[i], NULL);
		*jobs += states[i].jobs;
		failures += states[i].failures;
		if (first[0] == '\0' && states[i].first_failure[0] != '\0')
			snprintf(first, first_len, "thread %d: %s", i, states[i].first_failure);
	}
	pthread_barrier_destroy(&barrier);
	free(states);
	return failures;
}

/* --first-launches: part 1 in this (fresh) process; one line, exit status 1 on a failure. */
static int
first_launches_main(void)
{
	char		first[512];
	long		jobs;
	long		failures = run_threads(first_launches_thread, &jobs, first, sizeof(first));

	printf("# process %d: %ld jobs, %ld failures%s%s\n", (int) getpid(), jobs, failures,
		   failures ? "; first: " : "", first);
	return failures ? 1 : 0;
}

/* Part 1: this program again with --first-launches, processes times. */
static void
test_first_launches(const char *self, int processes)
{
	char		threads_arg[16];
	int			failed = 0,
				crashed = 0;

	snprintf(threads_arg, sizeof(threads_arg), "%d", nthreads);
	fflush(stdout);
	for (int p = 0; p < processes; p++)
	{
		char	   *args[] = {(char *) self, (char *) "--first-launches", (char *) "--threads", threads_arg, NULL};
		pid_t		pid;
		int			status;

		if (posix_spawn(&pid, self, NULL, NULL, args, environ) != 0 || waitpid(pid, &status, 0) != pid)
		{
			crashed++;
			continue;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
			crashed++;
		else if (WEXITSTATUS(status) == 1)
			failed++;
	}
	tap_check(failed == 0 && crashed == 0,
			  "first launches at once: %d fresh processes of %d threads, each thread a bitonic sort of its own "
			  "size per type and mode at a barrier, then every size to %d: %d with failures, %d that did not finish",
			  processes, nthreads, FIRST_LAUNCH_MAX, failed, crashed);
}

/* Part 2 in this process. */
static void
test_every_size(void)
{
	char		first[512];
	long		jobs;
	double		t0,
				t1;
	struct timespec ts;
	long		failures;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	failures = run_threads(every_size_thread, &jobs, first, sizeof(first));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t1 = ts.tv_sec + ts.tv_nsec / 1e9;
	tap_note("%ld jobs in %.1f s (%.0f jobs/s over %d threads)", jobs, t1 - t0, jobs / (t1 - t0), nthreads);
	tap_check(failures == 0 && jobs == (long) repeat * nsizes * GS_NUM_TYPES * NUM_ALGORITHMS,
			  "%d threads on one context: %d sizes (%zu..%zu) x %d types x %d algorithms x %d: %ld jobs, %ld "
			  "differ from the CPU sort or fail%s%s",
			  nthreads, nsizes, sizes[0], sizes[nsizes - 1], GS_NUM_TYPES, NUM_ALGORITHMS, repeat, jobs,
			  failures, failures ? "; first: " : "", first);
}

/* "a,b,c" into sizes; false on a bad list. */
static bool
parse_sizes(const char *list)
{
	const char *p = list;

	nsizes = 0;
	while (*p != '\0' && nsizes < MAX_SIZES)
	{
		char	   *end;
		long		v = strtol(p, &end, 10);

		if (end == p || v < 2 || v > 1 << 20)
			return false;
		sizes[nsizes++] = (size_t) v;
		p = *end == ',' ? end + 1 : end;
	}
	return nsizes > 0;
}

int
main(int argc, char **argv)
{
	gs_runtime_info info;
	bool		quick = false,
				first_launches = false;
	int			processes = 8;
	long		max_n = 4096;
	const char *size_list = NULL;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--first-launches") == 0)
			first_launches = true;
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc)
			max_n = atol(argv[++i]);
		else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
			size_list = argv[++i];
		else if (strcmp(argv[i], "--processes") == 0 && i + 1 < argc)
			processes = atoi(argv[++i]);
		else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else
		{
			fprintf(stderr, "usage: %s [--quick] [--threads N] [--max-size N] [--sizes A,B,...] [--processes P] "
					"[--repeat R]\n", argv[0]);
			return 2;
		}
	}
	if (quick)
	{
		nthreads = 4;
		processes = 0;
		if (size_list == NULL)
			size_list = "2,3,33,255,257,512,513,1025,4096";
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || max_n < 2 || max_n > MAX_SIZES || repeat < 1 ||
		(size_list != NULL && !parse_sizes(size_list)))
	{
		fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
	if (size_list == NULL)
		for (nsizes = 0; nsizes < max_n - 1; nsizes++)
			sizes[nsizes] = (size_t) nsizes + 2;

	gs_runtime_probe(&info);
	if (info.status != GS_OK)
	{
		if (first_launches)
			return 2;
		tap_note("no GPU: %s (%s)", info.reason, gs_status_name(info.status));
		return tap_skip_all("no CUDA device");
	}
	if (first_launches)
		return first_launches_main();

	tap_note("%d threads, one context (GPU 0); %d fresh processes for the first launches", nthreads, processes);
	if (processes > 0)
		test_first_launches("/proc/self/exe", processes);
	test_every_size();
	return tap_done();
}
