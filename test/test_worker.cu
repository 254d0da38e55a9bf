/*
 * test_worker.cu: the workers of worker.cu (what the GPU server's threads
 * run) against the CPU sort, bit for bit: every type, both directions, keys
 * and argsort, sizes around the chunk and ring boundaries (input and output
 * streams of one chunk, several, and more than the ring holds) and the
 * select's tile, several threads each with its own worker at once, jobs that
 * want only the first limit of the order (the GPU select: limit 1, n - 1,
 * n / 3 + 1; limit n and n + 7 are full sorts) into poisoned outputs that
 * must not be written past the limit, each job's device memory limited to
 * what gs_stream_job_device_bytes says (the select's below the sort's, and
 * refused one byte under it), a job withdrawn mid-stream, and the device
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

	if (i != s->out_read || off >= s->out_bytes)
	{
		s->order_ok = false;	/* out of order, or more output than the job's */
		return;
	}
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

/* The arrays of one (type, size, direction): the input and the CPU's stable order of it. */
typedef struct data_case
{
	gs_type		type;
	size_t		n;
	bool		desc;
	char	   *in;
	char	   *ref_keys;
	uint32_t   *ref_perm;
} data_case;

/* The job's ring and callbacks around side s. */
static void
make_io(gs_stream_io *io, side *s)
{
	io->ring = s->ring;
	io->chunk_bytes = s->chunk;
	io->slots = s->slots;
	io->input_ready = cb_input_ready;
	io->input_done = cb_input_done;
	io->output_free = cb_output_free;
	io->output_ready = cb_output_ready;
	io->arg = s;
}

/*
 * One job of data case dc on worker w: keys or positions, the first limit
 * (0 or >= n: all), with max_device_bytes what gs_stream_job_device_bytes
 * says (as the server reserves it).  The output array is poisoned, with a
 * guard after the out_n entries that must stay poisoned; it must equal the
 * CPU's first out_n entries.
 */
static void
run_job_case(thread_case *tc, gs_worker *w, char *ring, size_t chunk, int slots,
			 const data_case *dc, bool argsort, size_t limit)
{
	const size_t guard = 64;
	size_t		wb = gs_type_size(dc->type);
	size_t		out_n = (limit > 0 && limit < dc->n) ? limit : dc->n;
	size_t		out_bytes = out_n * (argsort ? 4 : wb);
	unsigned char *out = (unsigned char *) malloc(out_bytes + guard);
	gs_stream_job job;
	gs_stream_io io;
	side		s;
	gs_run_report rep;
	gs_error	err;
	gs_status	st;

	memset(out, 0xA5, out_bytes + guard);		/* poison */
	memset(&s, 0, sizeof(s));
	s.input = dc->in;
	s.in_bytes = dc->n * wb;
	s.output = (char *) out;
	s.out_bytes = out_bytes;
	s.ring = ring;
	s.chunk = chunk;
	s.slots = slots;
	s.withdraw_at = (size_t) -1;
	s.order_ok = true;
	make_io(&io, &s);

	memset(&job, 0, sizeof(job));
	job.type = dc->type;
	job.algorithm = GS_ALGO_AUTO;
	job.n = dc->n;
	job.limit = limit;
	job.descending = dc->desc;
	job.want_keys = !argsort;
	job.want_perm = argsort;
	job.max_device_bytes = gs_stream_job_device_bytes(&job);

	tc->checks++;
	st = gs_worker_sort(w, &job, &io, &rep, &err);
	if (st != GS_OK)
		note_failure(tc, "%s n=%zu limit=%zu %s: %s", gs_type_name(dc->type), dc->n, limit,
					 argsort ? "argsort" : "keys", err.message);
	else if (!s.order_ok)
		note_failure(tc, "%s n=%zu limit=%zu: callbacks out of order or too much output",
					 gs_type_name(dc->type), dc->n, limit);
	else if (memcmp(out, argsort ? (char *) dc->ref_perm : dc->ref_keys, out_bytes) != 0)
		note_failure(tc, "%s n=%zu limit=%zu %s %s: differs from the CPU sort",
					 gs_type_name(dc->type), dc->n, limit, dc->desc ? "desc" : "asc",
					 argsort ? "argsort" : "keys");
	else if (out[out_bytes] != 0xA5 || memcmp(out + out_bytes, out + out_bytes + 1, guard - 1) != 0)
		note_failure(tc, "%s n=%zu limit=%zu: written past the first %zu", gs_type_name(dc->type),
					 dc->n, limit, out_n);
	else if (s.out_read != (out_bytes + chunk - 1) / chunk)
		note_failure(tc, "%s n=%zu limit=%zu: %zu output chunks, not %zu", gs_type_name(dc->type),
					 dc->n, limit, s.out_read, (out_bytes + chunk - 1) / chunk);
	else if (gs_worker_device_bytes(w) != 0)
		note_failure(tc, "device memory held after the job");

	/* withdrawn in the middle of the input: an interrupted job, then the next one is good */
	if (dc->n > 3 * (chunk / wb) && !argsort && (limit == 0 || limit == 1))
	{
		s.in_written = 0;
		s.out_read = 0;
		s.withdraw_at = 2;
		tc->checks++;
		if (gs_worker_sort(w, &job, &io, &rep, &err) != GS_ERR_INTERRUPTED)
			note_failure(tc, "withdrawn job (limit %zu) did not stop as interrupted", limit);
		else if (gs_worker_device_bytes(w) != 0)
			note_failure(tc, "device memory held after a withdrawn job");
	}
	free(out);
}

/*
 * A limited job's device memory is the select's: less than the full sort's
 * for a small limit of many keys, enough at exactly that size (run_job_case)
 * and refused one byte below it.
 */
static void
check_select_memory(thread_case *tc, gs_worker *w, char *ring, size_t chunk, int slots,
					const data_case *dc, bool argsort)
{
	gs_stream_job job;
	gs_stream_io io;
	side		s;
	gs_run_report rep;
	gs_error	err;
	size_t		select_bytes,
				sort_bytes;
	char		out[64];

	memset(&job, 0, sizeof(job));
	job.type = dc->type;
	job.n = dc->n;
	job.descending = dc->desc;
	job.want_keys = !argsort;
	job.want_perm = argsort;
	sort_bytes = gs_stream_job_device_bytes(&job);
	job.limit = 1;
	select_bytes = gs_stream_job_device_bytes(&job);
	tc->checks++;
	if (select_bytes == 0 || select_bytes >= sort_bytes)
	{
		note_failure(tc, "%s n=%zu: the select's device memory %zu is not below the sort's %zu",
					 gs_type_name(dc->type), dc->n, select_bytes, sort_bytes);
		return;
	}
	memset(&s, 0, sizeof(s));
	s.input = dc->in;
	s.in_bytes = dc->n * gs_type_size(dc->type);
	s.output = out;
	s.out_bytes = argsort ? 4 : gs_type_size(dc->type);
	s.ring = ring;
	s.chunk = chunk;
	s.slots = slots;
	s.withdraw_at = (size_t) -1;
	s.order_ok = true;
	make_io(&io, &s);
	job.max_device_bytes = select_bytes - 1;
	tc->checks++;
	if (gs_worker_sort(w, &job, &io, &rep, &err) != GS_ERR_MEMORY_LIMIT)
		note_failure(tc, "%s n=%zu: a select one byte over its limit was not refused",
					 gs_type_name(dc->type), dc->n);
}

/* One thread: its own worker and ring, many jobs. */
static void *
run_thread(void *arg)
{
	thread_case *tc = (thread_case *) arg;
	const size_t chunk = 64 * 1024;
	const int	slots = 4;
	/* around one chunk of int4 (16384) and the ring, the select's tile (4096), odd sizes */
	const size_t sizes_full[] = {2, 3, 1000, 4095, 4097, 16383, 16384, 16385, 65536, 65537, 300007, (1 << 20) + 3};
	const size_t sizes_quick[] = {2, 3, 1000, 4097, 16385, 65537};
	const size_t *sizes = quick ? sizes_quick : sizes_full;
	size_t		nsizes = quick ? 6 : 12;
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
			for (int d = 0; d < 2; d++)
			{
				data_case	dc;
				size_t		n = sizes[si];
				size_t		wb = gs_type_size((gs_type) t);
				gs_dist		dist = (gs_dist) ((si + tc->index + d) % GS_NUM_DISTS);
				void	   *scratch = malloc(gs_cpu_scratch_bytes((gs_type) t, n, true) + 1);
				/* 0 and >= n: the whole order; else the select */
				const size_t limits[] = {0, 1, n - 1, n / 3 + 1, n, n + 7};
				size_t		nlimits = quick ? 5 : 6;

				dc.type = (gs_type) t;
				dc.n = n;
				dc.desc = d == 1;
				dc.in = (char *) malloc(n * wb);
				dc.ref_keys = (char *) malloc(n * wb);
				dc.ref_perm = (uint32_t *) malloc(n * 4);
				gs_fill(dc.type, dist, dc.in, n, 1000 + tc->index * 97 + si * 2 + d);
				if (gs_cpu_argsort(dc.type, dc.in, n, dc.desc, dc.ref_perm, dc.ref_keys, scratch,
								   NULL, NULL, &err) != GS_OK)
					note_failure(tc, "cpu reference: %s", err.message);

				for (int mode = 0; mode < 2; mode++)
				{
					for (size_t li = 0; li < nlimits; li++)
						run_job_case(tc, w, ring, chunk, slots, &dc, mode == 1, limits[li]);
					if (n >= 65536)
						check_select_memory(tc, w, ring, chunk, slots, &dc, mode == 1);
				}
				free(dc.in);
				free(dc.ref_keys);
				free(dc.ref_perm);
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
