/*
 * test_cpu_gather.c: gs_gather_records against the records it was given.
 * Records of 4 to 600 bytes (lengths of each residue mod 8, a run of equal
 * ones, a few of 64 kB) scattered in a shuffled order, awkward counts
 * (0, 1, 7, around the 65,536 records a thread takes, 10^6), 1, 2, 3, 4 and
 * 64 threads; each copy must equal its record, start at a multiple of 8
 * right after the one before, and the destination's guard stay intact.  A
 * destination one byte too small fails and leaves every pointer at an
 * intact record.  The seed is printed; pass one to repeat a run.
 *
 *   test_cpu_gather            default run
 *   test_cpu_gather --quick    up to 131,073 records (for valgrind)
 *   test_cpu_gather SEED
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpusort.h"
#include "tap.h"

static bool quick;
static uint64_t rng_state;

static uint64_t
rng(void)
{
	/* splitmix64 */
	uint64_t	z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

#define ALIGN8(len) (((size_t) (len) + 7) & ~(size_t) 7)

/* record i's length: mostly short, every residue mod 8, some equal, a few large */
static uint32_t
pick_len(size_t i)
{
	if (i % 10007 == 5)
		return 65536 + (uint32_t) (rng() % 9);
	if (i % 3 == 0)
		return 24;
	return 4 + (uint32_t) (rng() % 597);
}

/* n records in one arena, each its length then bytes from (i, offset); order shuffled */
static void **
make_records(size_t n, char **arena_out, size_t *total)
{
	size_t		bytes = 0;
	uint32_t   *lens = xmalloc(sizeof(uint32_t) * (n ? n : 1));
	void	  **records = xmalloc(sizeof(void *) * (n ? n : 1));
	char	   *arena;
	size_t		at = 0;

	for (size_t i = 0; i < n; i++)
	{
		lens[i] = pick_len(i);
		bytes += ALIGN8(lens[i]);
	}
	arena = xmalloc(bytes);
	for (size_t i = 0; i < n; i++)
	{
		char	   *r = arena + at;

		memcpy(r, &lens[i], sizeof(uint32_t));
		for (uint32_t b = 4; b < lens[i]; b++)
			r[b] = (char) (i * 31 + b);
		records[i] = r;
		at += ALIGN8(lens[i]);
	}
	for (size_t i = n; i > 1; i--)
	{
		size_t		j = rng() % i;
		void	   *t = records[i - 1];

		records[i - 1] = records[j];
		records[j] = t;
	}
	free(lens);
	*arena_out = arena;
	*total = bytes;
	return records;
}

static void
check_gather(size_t n, int threads)
{
	char	   *arena;
	size_t		total;
	void	  **records = make_records(n, &arena, &total);
	void	  **before = xmalloc(sizeof(void *) * (n ? n : 1));
	unsigned char *to = tap_guarded(total);
	size_t		used = 12345;
	size_t		at = 0;
	gs_error	err;
	gs_status	st;
	bool		ok = true;

	memcpy(before, records, sizeof(void *) * n);
	st = gs_gather_records(records, n, to, total, threads, &used, &err);
	for (size_t i = 0; ok && i < n; i++)
	{
		uint32_t	len;

		memcpy(&len, before[i], sizeof(len));
		ok = records[i] == (void *) (to + at) && memcmp(records[i], before[i], len) == 0;
		at += ALIGN8(len);
	}
	tap_check(st == GS_OK && ok && used == total && at == total && tap_guard_intact(to, total),
			  "%zu records, %d threads: copied in order, packed, guard intact", n, threads);
	free(to);
	free(before);
	free(records);
	free(arena);
}

static void
check_too_small(size_t n, int threads)
{
	char	   *arena;
	size_t		total;
	void	  **records = make_records(n, &arena, &total);
	void	  **before = xmalloc(sizeof(void *) * n);
	unsigned char *to = tap_guarded(total);
	gs_error	err;
	gs_status	st;
	bool		ok = true;

	memcpy(before, records, sizeof(void *) * n);
	st = gs_gather_records(records, n, to, total - 1, threads, NULL, &err);
	for (size_t i = 0; ok && i < n; i++)
	{
		uint32_t	len;

		memcpy(&len, before[i], sizeof(len));
		ok = memcmp(records[i], before[i], len) == 0;
	}
	tap_check(st == GS_ERR_INVALID_ARGUMENT && err.status == st && ok &&
			  tap_guard_intact(to, total - 1),
			  "%zu records, %d threads, one byte short: refused (%s), every record intact",
			  n, threads, err.message);
	free(to);
	free(before);
	free(records);
	free(arena);
}

int
main(int argc, char **argv)
{
	size_t		sizes[] = {0, 1, 7, 65535, 65536, 131073, 1000003};
	int			threads[] = {1, 2, 3, 4, 64};
	uint64_t	seed = (uint64_t) time(NULL);
	gs_error	err;
	uint64_t	buf[2];

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else
			seed = strtoull(argv[i], NULL, 10);
	}
	rng_state = seed;
	tap_note("seed %llu", (unsigned long long) seed);

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	{
		if (quick && sizes[s] > 131073)
			continue;
		for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++)
			check_gather(sizes[s], threads[t]);
	}
	check_too_small(7, 1);
	check_too_small(200000, 1);
	check_too_small(200000, 3);

	tap_check(gs_gather_records(NULL, 3, buf, sizeof(buf), 1, NULL, &err) == GS_ERR_INVALID_ARGUMENT,
			  "no records: refused");
	tap_check(gs_gather_records((void **) &argv, 1, (char *) buf + 1, 8, 1, NULL, &err) == GS_ERR_INVALID_ARGUMENT,
			  "a destination not 8-byte aligned: refused");
	return tap_done();
}
