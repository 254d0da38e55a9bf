/*
 * test_worker.cu: the workers of worker.cu (what the GPU server's threads
 * run) against the CPU sort, bit for bit: every type, both directions, keys
 * and argsort, sizes around the chunk and ring boundaries (input and output
 * streams of one chunk, several, and more than the ring holds), several
 * threads each with its own worker at once, jobs that want only the first
 * part of the order (a limit), a job withdrawn mid-stream, and the device
 * memory given back after each job.  The ring is plain memory
 * pinned with gs_host_pin; the callbacks play the backend's part.  TAP; skips
 * everything when there is no CUDA device.
 *
 *   test_worker [--quick]     --quick: small sizes only (for compute-sanitizer)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusort.h"
#include "distributions.h"
#include "tap.h"

#define THREADS		4

static bool quick;

/* The caller's side of one job: input and output arrays, and where the stream stands. */
typedef struct side
{
	const char *input;
	size_t		in_bytes;
	char	   *output;
	size_t		out_bytes;
	char	   *ring;
	size_t		chunk;
	int			slots;
	size_t		in_written;		/* chunks */
	size_t		out_read;
	size_t		withdraw_at;	/* input chunk at which to withdraw, or SIZE_MAX */
	bool		order_ok;		/* the callbacks came in the documented order */
} side;

static bool
cb_input_ready(void *arg, size_t i)
{
	side	   *s = (side *) arg;
	size_t		off = i * s->chunk;
	size_t		len = s->in_bytes - off < s->chunk ? s->in_bytes - off : s->chunk;

	if (i == s->withdraw_at)
		return false;
	if (i != s->in_written)
		s->order_ok = false;
	memcpy(s->ring + (i % s->slots) * s->chunk, s->input + off, len);
	s->in_written = i + 1;
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
	side	   *s = (side *) arg;

	/* the slot of chunk i was last used by chunk i - slots, which must have been read */
	if (i >= (size_t) s->slots && s->out_read < i + 1 - s->slots)
		s->order_ok = false;
	return true;
}

static void
cb_output_ready(void *arg, size_t i)
{
	side	   *s = (side *) arg;
	size_t		off = i * s->chunk;
	size_t		len = s->out_bytes - off < s->chunk ? s->out_bytes - off : s->chunk;

	if (i != s->out_read)
		s->order_ok = false;
	memcpy(s->output + off, s->ring + (i % s->slots) * s->chunk, len);
	s->out_read = i + 1;
}

typedef struct thread_case
{
	int			device;
	int			index;
	int			failures;
	int			checks;
	char		first_failure[512];
} thread_case;

static void
note_failure(thread_case *tc, const char *fmt, ...)
{
	va_list		ap;

	tc->failures++;
	if (tc->first_failure[0] == '\0')
	{
		va_start(ap, fmt);
		vsnprintf(tc->first_failure, sizeof(tc->first_failure), fmt, ap);
		va_end(ap);
	}
}

/* One thread: its own worker and ring, many jobs. */
static void *
run_thread(void *arg)
{
	thread_case *tc = (thread_case *) arg;
	const size_t chunk = 64 * 1024;
	const int	slots = 4;
	const size_t sizes_full[] = {2, 3, 1000, 16383, 16384, 16385, 65536, 65537, 300000, 1 << 20};
	const size_t sizes_quick[] = {2, 3, 1000, 16385, 65537};
	const size_t *sizes = quick ? sizes_quick : sizes_full;
	size_t		nsizes = quick ? 5 : 10;
	gs_worker  *w;
	gs_error	err;
	char	   *ring;

	if (gs_worker_create(tc->device, &w, &err) != GS_OK)
	{
		note_failure(tc, "gs_worker_create: %s", err.message);
		return NULL;
	}
	ring = (char *) malloc(chunk * slots);
	if (ring == NULL || gs_host_pin(ring, chunk * slots, &err) != GS_OK)
	{
		note_failure(tc, "could not pin the ring");
		gs_worker_destroy(w);
		return NULL;
	}

	for (int t = 0; t < GS_NUM_TYPES; t++)
		for (size_t si = 0; si < nsizes; si++)
			for (int mode = 0; mode < 2; mode++)
			{
				gs_type		type = (gs_type) t;
				size_t		n = sizes[si];
				size_t		wb = gs_type_size(type);
				bool		desc = ((si + t + tc->index) % 2) == 1;
				bool		argsort = mode == 1;
				gs_dist		dist = (gs_dist) ((si + tc->index) % GS_NUM_DISTS);
				char	   *in = (char *) malloc(n * wb);
				char	   *ref_keys = (char *) malloc(n * wb);
				uint32_t   *ref_perm = (uint32_t *) malloc(n * 4);
				char	   *out = (char *) malloc(argsort ? n * 4 : n * wb);
				void	   *scratch = malloc(gs_cpu_scratch_bytes(type, n, true));
				gs_stream_job job;
				gs_stream_io io;
				side		s;
				gs_run_report rep;
				size_t		limit;

				gs_fill(type, dist, in, n, 1000 + tc->index * 97 + si);
				if (gs_cpu_argsort(type, in, n, desc, ref_perm, ref_keys, scratch, NULL, NULL, &err) != GS_OK)
					note_failure(tc, "cpu reference: %s", err.message);

				memset(&s, 0, sizeof(s));
				s.input = in;
				s.in_bytes = n * wb;
				s.output = out;
				limit = (si % 3 == 2) ? n / 3 + 1 : 0;
				s.out_bytes = (limit ? limit : n) * (argsort ? 4 : wb);
				memset(out, 0xA5, s.out_bytes);		/* poison */
				s.ring = ring;
				s.chunk = chunk;
				s.slots = slots;
				s.withdraw_at = (size_t) -1;
				s.order_ok = true;

				memset(&job, 0, sizeof(job));
				job.type = type;
				job.algorithm = GS_ALGO_AUTO;
				job.n = n;
				job.limit = limit;
				job.descending = desc;
				job.want_keys = !argsort;
				job.want_perm = argsort;

				io.ring = ring;
				io.chunk_bytes = chunk;
				io.slots = slots;
				io.input_ready = cb_input_ready;
				io.input_done = cb_input_done;
				io.output_free = cb_output_free;
				io.output_ready = cb_output_ready;
				io.arg = &s;

				tc->checks++;
				if (n < 2)
					;
				else if (gs_worker_sort(w, &job, &io, &rep, &err) != GS_OK)
					note_failure(tc, "%s n=%zu %s: %s", gs_type_name(type), n, argsort ? "argsort" : "keys", err.message);
				else if (!s.order_ok)
					note_failure(tc, "%s n=%zu: callbacks out of order", gs_type_name(type), n);
				else if (memcmp(out, argsort ? (char *) ref_perm : ref_keys, s.out_bytes) != 0)
					note_failure(tc, "%s n=%zu limit=%zu %s %s: differs from the CPU sort",
								 gs_type_name(type), n, limit, desc ? "desc" : "asc", argsort ? "argsort" : "keys");
				else if (gs_worker_device_bytes(w) != 0)
					note_failure(tc, "device memory held after the job");

				/* withdrawn in the middle of the input: an interrupted job, then a good one */
				if (n > 3 * (chunk / wb) && !argsort)
				{
					s.in_written = 0;
					s.out_read = 0;
					s.withdraw_at = 2;
					tc->checks++;
					if (gs_worker_sort(w, &job, &io, &rep, &err) != GS_ERR_INTERRUPTED)
						note_failure(tc, "withdrawn job did not stop as interrupted");
					else if (gs_worker_device_bytes(w) != 0)
						note_failure(tc, "device memory held after a withdrawn job");
				}
				free(in);
				free(ref_keys);
				free(ref_perm);
				free(out);
				free(scratch);
			}

	gs_host_unpin(ring);
	free(ring);
	gs_worker_destroy(w);
	return NULL;
}

int
main(int argc, char **argv)
{
	gs_runtime_info info;
	pthread_t	threads[THREADS];
	thread_case cases[THREADS];

	quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	gs_runtime_probe(&info);
	if (info.status != GS_OK)
		return tap_skip_all(info.reason);

	for (int i = 0; i < THREADS; i++)
	{
		memset(&cases[i], 0, sizeof(cases[i]));
		cases[i].device = i % info.device_count;
		cases[i].index = i;
		pthread_create(&threads[i], NULL, run_thread, &cases[i]);
	}
	for (int i = 0; i < THREADS; i++)
	{
		pthread_join(threads[i], NULL);
		tap_check(cases[i].failures == 0, "thread %d on GPU %d: %d jobs, %d failures%s%s", i,
				  cases[i].device, cases[i].checks, cases[i].failures,
				  cases[i].failures ? ": " : "", cases[i].first_failure);
	}
	return tap_done();
}
