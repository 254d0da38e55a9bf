/*
 * cpu_gather.c: records scattered in memory copied one after another, in a
 * given order, on several threads.
 *
 * A sort that orders pointers leaves its rows where they were read: reading
 * them in sorted order then costs a cache and TLB miss a row.  One pass that
 * copies them into sorted order pays those misses where they overlap (a few
 * rows ahead, on several threads), and every later reader finds them in
 * order.  A record starts with its length in bytes as a uint32 (PostgreSQL's
 * MinimalTuple t_len does); each copy starts at a multiple of 8.
 *
 * The threads take contiguous ranges of the records.  A first pass sums each
 * range's bytes, which fixes where each range's copies start; a second copies.
 * Both read the records a few ahead of their use.  The threads touch only
 * the records, the pointer array and the destination, and block every
 * signal; the caller's thread does the first range itself, and a thread that
 * cannot be started leaves its range to the caller too.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "gpusort.h"
#include "internal.h"

#define GATHER_AHEAD 16
#define GATHER_MAX_THREADS 64

#define ALIGN8(len) (((size_t) (len) + 7) & ~(size_t) 7)

typedef struct GatherRange
{
	void	  **records;
	size_t		n;
	char	   *to;				/* pass 2: where this range's copies start */
	size_t		bytes;			/* pass 1: their total */
	int			pass;
	pthread_t	thread;
	bool		started;
} GatherRange;

static inline uint32_t
record_len(const void *record)
{
	uint32_t	len;

	memcpy(&len, record, sizeof(len));
	return len;
}

static void
sum_range(GatherRange *r)
{
	size_t		bytes = 0;

	for (size_t i = 0; i < r->n; i++)
	{
		if (i + GATHER_AHEAD < r->n)
			__builtin_prefetch(r->records[i + GATHER_AHEAD]);
		bytes += ALIGN8(record_len(r->records[i]));
	}
	r->bytes = bytes;
}

/* false where the destination's end (NULL: none) came first */
static bool
copy_range(GatherRange *r, const char *end)
{
	char	   *to = r->to;

	for (size_t i = 0; i < r->n; i++)
	{
		void	   *record = r->records[i];
		uint32_t	len;

		if (i + GATHER_AHEAD < r->n)
			__builtin_prefetch(r->records[i + GATHER_AHEAD]);
		len = record_len(record);
		if (end != NULL && (size_t) (end - to) < ALIGN8(len))
		{
			r->bytes = to - r->to;
			return false;
		}
		memcpy(to, record, len);
		r->records[i] = to;
		to += ALIGN8(len);
	}
	r->bytes = to - r->to;
	return true;
}

static void *
range_main(void *arg)
{
	GatherRange *r = arg;

	if (r->pass == 1)
		sum_range(r);
	else
		copy_range(r, NULL);
	return NULL;
}

/* runs one pass over every range: ranges 1.. on threads, range 0 here */
static void
run_pass(GatherRange *ranges, int nranges, int pass)
{
	sigset_t	all,
				old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int t = 1; t < nranges; t++)
	{
		ranges[t].pass = pass;
		ranges[t].started = pthread_create(&ranges[t].thread, NULL, range_main, &ranges[t]) == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	ranges[0].pass = pass;
	range_main(&ranges[0]);
	for (int t = 1; t < nranges; t++)
	{
		if (ranges[t].started)
			pthread_join(ranges[t].thread, NULL);
		else
			range_main(&ranges[t]);
	}
}

gs_status
gs_gather_records(void **records, size_t n, void *to, size_t to_bytes, int threads,
				  size_t *used, gs_error *err)
{
	GatherRange ranges[GATHER_MAX_THREADS];
	int			nranges;
	size_t		at = 0;

	if (used)
		*used = 0;
	if (n == 0)
		return GS_OK;
	if (records == NULL || to == NULL || ((uintptr_t) to & 7) != 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT,
					   "gather: records and an 8-byte aligned destination are required");
	if (threads < 1)
		threads = 1;
	nranges = threads < GATHER_MAX_THREADS ? threads : GATHER_MAX_THREADS;
	if ((size_t) nranges > n / GS_GATHER_RECORDS_PER_THREAD)
		nranges = n / GS_GATHER_RECORDS_PER_THREAD > 0 ? (int) (n / GS_GATHER_RECORDS_PER_THREAD) : 1;

	for (int t = 0; t < nranges; t++)
	{
		size_t		first = n * t / nranges;
		size_t		last = n * (t + 1) / nranges;

		ranges[t].records = records + first;
		ranges[t].n = last - first;
		ranges[t].bytes = 0;
		ranges[t].started = false;
	}

	/* one range: no sums needed first, the copy stops at the destination's end */
	if (nranges == 1)
	{
		ranges[0].to = to;
		if (!copy_range(&ranges[0], (char *) to + to_bytes))
			return gs_fail(err, GS_ERR_INVALID_ARGUMENT,
						   "gather: the records need more than the destination's %zu bytes", to_bytes);
		if (used)
			*used = ranges[0].bytes;
		return GS_OK;
	}

	run_pass(ranges, nranges, 1);
	for (int t = 0; t < nranges; t++)
	{
		ranges[t].to = (char *) to + at;
		at += ranges[t].bytes;
	}
	if (at > to_bytes)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT,
					   "gather: the records need %zu bytes, the destination holds %zu",
					   at, to_bytes);
	run_pass(ranges, nranges, 2);
	if (used)
		*used = at;
	return GS_OK;
}
