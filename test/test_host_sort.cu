/*
 * test_host_sort.cu: gs_host_sort and the runtime of device.cu against the
 * CPU sort, bit for bit: every type, both directions, keys / argsort / both,
 * in place and not, every transfer strategy; the memory limit, interrupts at
 * every poll, injected CUDA faults, the pool's growth on a device with less
 * free memory than its rounding asks for, and that repeated calls hold no
 * more than the retained cap.  TAP; skips everything when there is no CUDA
 * device.  The injected faults and the short device need a build with fault
 * injection (make INJECTION_POINTS=1); elsewhere they are left out with a
 * "# SKIP" comment, counted neither as passed nor as failed.
 *
 *   test_host_sort [--quick]     --quick: small sizes only (for compute-sanitizer)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusort.h"
#include "device_internal.h"
#include "distributions.h"
#include "tap.h"

typedef enum mode
{
	MODE_KEYS,					/* output only */
	MODE_ARGSORT,				/* perm only */
	MODE_BOTH					/* output and perm */
} mode;

static const char *const mode_names[] = {"keys", "argsort", "both"};

static bool quick;

/* Messages in PostgreSQL's style: lower case start, no trailing period. */
static bool
message_ok(const gs_error *err)
{
	size_t		len = strlen(err->message);

	return len > 0 && !(err->message[0] >= 'A' && err->message[0] <= 'Z') &&
		err->message[len - 1] != '.';
}

/* The CPU's answer: sorted keys and the stable permutation. */
static void
cpu_reference(gs_type type, const void *in, size_t n, bool descending, void *keys, uint32_t *perm)
{
	size_t		w = gs_type_size(type);
	void	   *scratch = xmalloc(gs_cpu_scratch_bytes(type, n, true));
	gs_error	err;

	if (gs_cpu_argsort(type, in, n, descending, perm, keys, scratch, NULL, NULL, &err) != GS_OK)
	{
		fprintf(stderr, "gs_cpu_argsort failed: %s\n", err.message);
		exit(2);
	}
	(void) w;
	free(scratch);
}

/*
 * One gs_host_sort of n elements of distribution dist, compared with the CPU
 * sort.  in_place: output is the input array.  Returns whether it passed.
 */
static bool
check_sort(gs_type type, gs_dist dist, size_t n, bool descending, mode m, bool in_place,
		   const char *label)
{
	size_t		w = gs_type_size(type);
	void	   *in = xmalloc(n * w);
	void	   *ref_keys = xmalloc(n * w);
	uint32_t   *ref_perm = (uint32_t *) xmalloc(n * sizeof(uint32_t));
	void	   *out = NULL;
	uint32_t   *perm = NULL;
	gs_host_sort_job job;
	gs_run_report rep;
	gs_error	err;
	gs_status	s;
	bool		ok = true;

	gs_fill(type, dist, in, n, n * 31 + (uint64_t) descending);
	cpu_reference(type, in, n, descending, ref_keys, ref_perm);

	if (m != MODE_ARGSORT)
	{
		if (in_place)
			out = in;
		else
		{
			out = xmalloc(n * w);
			memset(out, 0xA5, n * w);	/* poison */
		}
	}
	if (m != MODE_KEYS)
	{
		perm = (uint32_t *) xmalloc(n * sizeof(uint32_t));
		memset(perm, 0xFF, n * sizeof(uint32_t));
	}

	memset(&job, 0, sizeof(job));
	job.type = type;
	job.algorithm = GS_ALGO_AUTO;
	job.n = n;
	job.descending = descending;
	job.device_id = 0;
	job.input = in;
	job.output = out;
	job.perm = perm;
	memset(&rep, 0, sizeof(rep));
	s = gs_host_sort(&job, &rep, &err);
	if (s != GS_OK)
	{
		tap_note("%s: %s", label, err.message);
		ok = false;
	}
	else
	{
		if (out != NULL && n > 0 && memcmp(out, ref_keys, n * w) != 0)
		{
			size_t		i;

			for (i = 0; i < n && !memcmp((char *) out + i * w, (char *) ref_keys + i * w, w); i++)
				;
			tap_note("%s: keys differ first at %zu", label, i);
			ok = false;
		}
		if (perm != NULL && n > 0 && memcmp(perm, ref_perm, n * sizeof(uint32_t)) != 0)
		{
			size_t		i;

			for (i = 0; i < n && perm[i] == ref_perm[i]; i++)
				;
			tap_note("%s: perm differs first at %zu (%u, expected %u)", label, i, perm[i], ref_perm[i]);
			ok = false;
		}
		if (rep.device != 0 || rep.total_ms < rep.copy_in_ms + rep.sort_ms + rep.copy_out_ms - 1e-6 ||
			rep.copy_in_ms < 0 || rep.sort_ms < 0 || rep.copy_out_ms < 0 ||
			(n > 1 && (rep.device_bytes < n * w || rep.algorithm == GS_ALGO_AUTO)))
		{
			tap_note("%s: report device %d total %.3f in %.3f sort %.3f out %.3f bytes %zu algorithm %s",
					 label, rep.device, rep.total_ms, rep.copy_in_ms, rep.sort_ms, rep.copy_out_ms,
					 rep.device_bytes, gs_algorithm_name(rep.algorithm));
			ok = false;
		}
	}
	if (out != in)
		free(out);
	free(perm);
	free(in);
	free(ref_keys);
	free(ref_perm);
	return ok;
}

static bool
check_case(gs_type type, gs_dist dist, size_t n, bool descending, mode m, bool in_place, const char *extra)
{
	char		label[200];

	snprintf(label, sizeof(label), "%s %s n=%zu %s %s%s%s", gs_type_name(type), gs_dist_names[dist], n,
			 descending ? "desc" : "asc", mode_names[m], in_place ? " in place" : "", extra);
	return tap_check(check_sort(type, dist, n, descending, m, in_place, label), "%s", label);
}

/* ------------------------------------------------------------------------ */

static void
test_probe(void)
{
	gs_runtime_info info;
	gs_device_props p;
	gs_error	err;
	gs_status	s;

	gs_runtime_probe(&info);
	tap_check(info.built_with_cuda && info.status == GS_OK && info.reason[0] == '\0' &&
			  info.runtime_version >= 12000 && info.driver_version >= 12000 && info.device_count >= 1,
			  "probe: runtime %d driver %d devices %d", info.runtime_version, info.driver_version,
			  info.device_count);
	tap_check(gs_device_current() == -1 && gs_device_bytes_held() == 0 && gs_pinned_bytes_held() == 0,
			  "nothing is open or held before the first open");

	/* Before the open: free memory from NVML (or the total); no context needed. */
	s = gs_device_props_get(0, &p, &err);
	tap_check(s == GS_OK && p.id == 0 && p.name[0] != '\0' && p.major >= 3 &&
			  p.total_memory >= ((size_t) 1 << 30) && p.free_memory > 0 &&
			  p.free_memory <= p.total_memory && p.multiprocessors > 0,
			  "props of device 0 before open: %s, %d.%d, %zu MB total, %zu MB free, %d SMs",
			  p.name, p.major, p.minor, p.total_memory >> 20, p.free_memory >> 20, p.multiprocessors);
	tap_check(gs_device_current() == -1, "props_get does not open the device");

	s = gs_device_props_get(info.device_count, &p, &err);
	tap_check(s == GS_ERR_NO_DEVICE && message_ok(&err), "props of a device that does not exist: %s",
			  err.message);
	s = gs_device_open(-1, &err);
	tap_check(s == GS_ERR_NO_DEVICE && message_ok(&err), "open of device -1: %s", err.message);

	s = gs_device_open(0, &err);
	tap_check(s == GS_OK && gs_device_current() == 0, "open device 0");
	s = gs_device_open(0, &err);
	tap_check(s == GS_OK && gs_device_current() == 0, "open device 0 again");

	/* After the open: the process's own view (cudaMemGetInfo). */
	s = gs_device_props_get(0, &p, &err);
	tap_check(s == GS_OK && p.free_memory > 0 && p.free_memory < p.total_memory,
			  "props of the open device: %zu MB free of %zu", p.free_memory >> 20, p.total_memory >> 20);
}

static void
test_bad_arguments(void)
{
	gs_host_sort_job job;
	gs_run_report rep;
	gs_error	err;
	int32_t		x[4] = {3, 1, 2, 0};
	gs_status	s;

	memset(&job, 0, sizeof(job));
	job.type = GS_INT4;
	job.n = 4;
	job.input = x;
	s = gs_host_sort(&job, &rep, &err);
	tap_check(s == GS_ERR_INVALID_ARGUMENT && message_ok(&err), "neither output nor perm: %s", err.message);

	job.type = GS_NUM_TYPES;
	job.output = x;
	s = gs_host_sort(&job, &rep, &err);
	tap_check(s == GS_ERR_INVALID_ARGUMENT && message_ok(&err), "bad type: %s", err.message);

	job.type = GS_INT4;
	job.n = (size_t) UINT32_MAX + 1;
	job.perm = (uint32_t *) x;	/* never touched: the size is refused first */
	s = gs_host_sort(&job, &rep, &err);
	tap_check(s == GS_ERR_TOO_LARGE && message_ok(&err), "argsort of 2^32 elements: %s", err.message);

	job.n = 4;
	job.perm = NULL;
	job.device_id = 1000;
	s = gs_host_sort(&job, &rep, &err);
	tap_check(s == GS_ERR_NO_DEVICE && rep.device == -1 && message_ok(&err), "device 1000: %s", err.message);

	job.device_id = 0;
	job.algorithm = (gs_algorithm) 99;
	s = gs_host_sort(&job, &rep, &err);
	tap_check(s == GS_ERR_INVALID_ARGUMENT && message_ok(&err), "bad algorithm: %s", err.message);
}

static void
test_correctness(void)
{
	static const gs_type types[] = {GS_INT2, GS_INT4, GS_INT8, GS_FLOAT4, GS_FLOAT8};
	size_t		sizes[] = {0, 1, 2, 1000, ((size_t) 1 << 20) + 1, 10000000};
	int			nsizes = quick ? 4 : 6;
	int			counter = 0;

	for (int si = 0; si < nsizes; si++)
		for (int ti = 0; ti < 5; ti++)
			for (int desc = 0; desc < 2; desc++)
				for (int m = 0; m < 3; m++)
				{
					/* distributions in turn, uniform and special most often */
					gs_dist		d = (gs_dist) (counter % 3 == 0 ? GS_DIST_UNIFORM :
											   counter % 3 == 1 ? GS_DIST_SPECIAL :
											   (counter / 3) % GS_NUM_DISTS);

					counter++;
					check_case(types[ti], d, sizes[si], desc, (mode) m, false, "");
				}

	/* Every distribution, int4 and float8. */
	for (int d = 0; d < GS_NUM_DISTS; d++)
	{
		check_case(GS_INT4, (gs_dist) d, 100003, d & 1, MODE_BOTH, false, "");
		check_case(GS_FLOAT8, (gs_dist) d, 100003, !(d & 1), MODE_BOTH, false, "");
	}

	/* Output in the input array. */
	for (int ti = 0; ti < 5; ti++)
	{
		check_case(types[ti], GS_DIST_UNIFORM, 1000, ti & 1, MODE_KEYS, true, "");
		check_case(types[ti], GS_DIST_SPECIAL, quick ? 5000 : ((size_t) 1 << 20) + 1, !(ti & 1), MODE_BOTH,
				   true, "");
	}
}

/* Each transfer strategy, with chunks that do not divide the array. */
static void
test_transfers(void)
{
	static const struct
	{
		gs_transfer t;
		size_t		chunk;
	}			cases[] = {
		{GS_TRANSFER_PAGEABLE, 0},
		{GS_TRANSFER_STAGED, 0},
		{GS_TRANSFER_STAGED, 65536},
		{GS_TRANSFER_STAGED, 1000000},
		{GS_TRANSFER_REGISTER, 0},
	};
	size_t		big = quick ? 300001 : 10000000;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		char		extra[64];

		gs_host_sort_set_transfer(cases[c].t, cases[c].chunk);
		snprintf(extra, sizeof(extra), " via %s chunk %zu", gs_transfer_name(cases[c].t),
				 cases[c].chunk ? cases[c].chunk : GS_STAGING_CHUNK_BYTES);
		check_case(GS_INT4, GS_DIST_UNIFORM, 1000, false, MODE_BOTH, false, extra);
		check_case(GS_INT4, GS_DIST_UNIFORM, big, false, MODE_BOTH, false, extra);
		check_case(GS_FLOAT8, GS_DIST_SPECIAL, big, true, MODE_BOTH, true, extra);
		check_case(GS_INT2, GS_DIST_NARROW, big + 1, true, MODE_KEYS, false, extra);
		tap_check(gs_host_sort_last_transfer() == cases[c].t, "the forced strategy ran (%s)",
				  gs_transfer_name(gs_host_sort_last_transfer()));
	}
	gs_host_sort_set_transfer(GS_TRANSFER_AUTO, 0);
}

/* AUTO picks by size and direction as device_internal.h says. */
static void
test_auto_rule(void)
{
	static const size_t sizes[] = {1000, 500000, 5000000};
	static const gs_transfer expect[] = {GS_TRANSFER_STAGED, GS_TRANSFER_PAGEABLE, GS_TRANSFER_REGISTER};

	gs_host_sort_set_transfer(GS_TRANSFER_AUTO, 0);
	for (int i = 0; i < 3; i++)
	{
		bool		ok = check_case(GS_INT4, GS_DIST_UNIFORM, sizes[i], false, MODE_BOTH, false, " via auto");

		tap_check(ok && gs_host_sort_last_transfer() == expect[i], "auto moved %zu bytes in by %s",
				  sizes[i] * 4, gs_transfer_name(gs_host_sort_last_transfer()));
	}
}

/* A small sort that must work (after an error, an interrupt, a release). */
static bool
next_call_works(const char *after)
{
	char		label[128];

	snprintf(label, sizeof(label), "the next call works after %s", after);
	return check_sort(GS_INT4, GS_DIST_UNIFORM, 70001, false, MODE_BOTH, false, label);
}

static void
test_memory_limit(void)
{
	size_t		n = 1000000;
	size_t		need = gs_host_sort_device_bytes(GS_FLOAT8, GS_ALGO_AUTO, n, true);
	double	   *in = (double *) xmalloc(n * sizeof(double));
	double	   *out = (double *) xmalloc(n * sizeof(double));
	uint32_t   *perm = (uint32_t *) xmalloc(n * sizeof(uint32_t));
	gs_host_sort_job job;
	gs_run_report rep;
	gs_error	err;
	gs_status	s;

	tap_check(need >= 2 * n * 8 + 2 * n * 4 && need < 3 * n * 12,
			  "device bytes of 10^6 float8 with argsort: %zu", need);
	tap_check(gs_host_sort_device_bytes(GS_INT4, GS_ALGO_AUTO, 1, false) == 0, "device bytes of one element: 0");

	gs_fill(GS_FLOAT8, GS_DIST_UNIFORM, in, n, 7);
	memset(&job, 0, sizeof(job));
	job.type = GS_FLOAT8;
	job.n = n;
	job.input = in;
	job.output = out;
	job.perm = perm;
	job.max_device_bytes = need - 1;
	gs_device_release();		/* start from an empty pool: the limit must stop the allocation */
	s = gs_host_sort(&job, &rep, &err);
	tap_check(s == GS_ERR_MEMORY_LIMIT && message_ok(&err) && gs_device_bytes_held() == 0,
			  "limit one byte short: %s", err.message);
	tap_check(next_call_works("a memory limit error"), "the next call works after a memory limit error");

	job.max_device_bytes = need;
	gs_device_release();
	s = gs_host_sort(&job, &rep, &err);
	tap_check(s == GS_OK && rep.device_bytes == need && gs_device_bytes_held() <= need,
			  "limit exactly what it needs: pool %zu bytes", gs_device_bytes_held());
	free(in);
	free(out);
	free(perm);
}

typedef struct poll_state
{
	int			polls;
	int			stop_at;
} poll_state;

static bool
stop_after(void *arg)
{
	poll_state *p = (poll_state *) arg;

	return ++p->polls >= p->stop_at;
}

/*
 * Stops at the first, second, ... poll until a sort completes: every point
 * where the call polls (each chunk in and out, around the sort) is tried.
 */
static void
test_interrupts(gs_transfer t, size_t chunk, gs_type type, size_t n)
{
	size_t		w = gs_type_size(type);
	void	   *in = xmalloc(n * w);
	void	   *out = xmalloc(n * w);
	uint32_t   *perm = (uint32_t *) xmalloc(n * sizeof(uint32_t));
	gs_host_sort_job job;
	gs_run_report rep;
	gs_error	err;
	int			k,
				interrupted = 0;
	bool		clean = true,
				works = true;
	gs_status	s = GS_ERR_INTERRUPTED;

	gs_host_sort_set_transfer(t, chunk);
	gs_fill(type, GS_DIST_UNIFORM, in, n, 11);
	memset(&job, 0, sizeof(job));
	job.type = type;
	job.n = n;
	job.input = in;
	job.output = out;
	job.perm = perm;
	job.interrupt = stop_after;
	for (k = 1; k < 500 && s == GS_ERR_INTERRUPTED; k++)
	{
		poll_state	ps = {0, k};

		job.interrupt_arg = &ps;
		s = gs_host_sort(&job, &rep, &err);
		if (s == GS_ERR_INTERRUPTED)
		{
			interrupted++;
			if (!message_ok(&err) || ps.polls != k)
				clean = false;
			gs_device_release();
			if (gs_device_bytes_held() != 0 || gs_pinned_bytes_held() != 0)
				clean = false;
			if (k % 4 == 1 && !next_call_works("an interrupt"))
				works = false;
		}
	}
	tap_check(s == GS_OK && interrupted >= 3 && clean && works,
			  "%s chunk %zu, %zu %s: interrupted at each of %d polls, then released to 0 bytes, next calls work",
			  gs_transfer_name(t), chunk, n, gs_type_name(type), interrupted);
	gs_host_sort_set_transfer(GS_TRANSFER_AUTO, 0);
	free(in);
	free(out);
	free(perm);
}

/*
 * The pool grows to twice its size (up to the retained cap) when a sort
 * needs more than it holds.  On a device where that is not free but the
 * sort's own need is (gs_fault_set_device_memory plays such a device), the
 * pool is allocated at the need and the sort runs; with less than the need
 * free it fails cleanly and the next call works.
 */
static void
test_pool_growth(void)
{
	const size_t granule = GS_POOL_GRANULE;
	size_t		n_small = 1000000,
				n_large = 1500000;
	size_t		small_pool = (gs_host_sort_device_bytes(GS_INT4, GS_ALGO_AUTO, n_small, false) + granule - 1) /
		granule * granule;
	size_t		need = gs_host_sort_device_bytes(GS_INT4, GS_ALGO_AUTO, n_large, false);
	size_t		need_pool = (need + granule - 1) / granule * granule;
	bool		ok;

	gs_fault_set_device_memory(0);
	gs_device_release();
	ok = check_sort(GS_INT4, GS_DIST_UNIFORM, n_small, false, MODE_KEYS, false, "pool growth: first sort");
	tap_check(ok && gs_device_bytes_held() == small_pool, "pool growth: %zu int4 keys leave a pool of %zu MB",
			  n_small, gs_device_bytes_held() >> 20);
	if (!(need_pool > small_pool && need_pool < 2 * small_pool))
	{
		tap_check(false, "pool growth: sizes chosen wrong (pool %zu, need %zu)", small_pool, need_pool);
		return;
	}

	/* twice the pool is not free, the need is */
	gs_fault_set_device_memory(need_pool);
	ok = check_sort(GS_INT4, GS_DIST_UNIFORM, n_large, false, MODE_KEYS, false, "pool growth: short device");
	tap_check(ok && gs_device_bytes_held() == need_pool,
			  "pool growth: with %zu MB free (twice the pool is %zu MB) %zu int4 keys sort in a pool of %zu MB",
			  need_pool >> 20, (2 * small_pool) >> 20, n_large, gs_device_bytes_held() >> 20);

	/* not even the need is free: a clean failure, then the next call works */
	{
		int32_t    *in = (int32_t *) xmalloc(n_large * 4 * 2);
		gs_host_sort_job job;
		gs_run_report rep;
		gs_error	err;
		gs_status	s;

		gs_device_release();
		gs_fault_set_device_memory(need_pool - granule);
		gs_fill(GS_INT4, GS_DIST_UNIFORM, in, n_large, 11);
		memset(&job, 0, sizeof(job));
		job.type = GS_INT4;
		job.n = n_large;
		job.input = in;
		job.output = in + n_large;
		s = gs_host_sort(&job, &rep, &err);
		gs_fault_set_device_memory(0);
		tap_check(s == GS_ERR_DEVICE_MEMORY && message_ok(&err) && gs_device_bytes_held() == 0 &&
				  !gs_device_context_broken(),
				  "pool growth: with less free than the need, out of device memory: %s", err.message);
		tap_check(next_call_works("out of device memory"), "pool growth: the next call works");
		free(in);
	}
	gs_device_release();
}

/*
 * GPUSORT_FAULT_INJECT=N makes the N-th checked CUDA call of the runtime
 * fail: try N = 1, 2, ... until a sort makes fewer calls than N.  limit: 0
 * for a whole sort, else the select of the first limit.
 */
static void
test_faults(gs_transfer t, size_t chunk, size_t n, size_t limit)
{
	int			failed = 0,
				k;
	bool		clean = true,
				works = true;
	gs_status	s = GS_ERR_CUDA;

	for (k = 1; k < 300 && s != GS_OK; k++)
	{
		char		value[16];
		char		label[64];
		int32_t    *in = (int32_t *) xmalloc(n * 4);
		int32_t    *out = (int32_t *) xmalloc(n * 4);
		uint32_t   *perm = (uint32_t *) xmalloc(n * 4);
		gs_host_sort_job job;
		gs_run_report rep;
		gs_error	err;

		snprintf(value, sizeof(value), "%d", k);
		setenv("GPUSORT_FAULT_INJECT", value, 1);
		gs_host_sort_set_transfer(t, chunk);
		gs_device_release();	/* the next open reads the variable */
		gs_fill(GS_INT4, GS_DIST_UNIFORM, in, n, 3);
		memset(&job, 0, sizeof(job));
		job.type = GS_INT4;
		job.n = n;
		job.input = in;
		job.output = out;
		job.perm = perm;
		job.limit = limit;
		s = gs_host_sort(&job, &rep, &err);
		unsetenv("GPUSORT_FAULT_INJECT");
		if (s != GS_OK)
		{
			failed++;
			if ((s != GS_ERR_CUDA && s != GS_ERR_DEVICE_MEMORY && s != GS_ERR_HOST_MEMORY) ||
				strstr(err.message, "cudaErrorUnknown") == NULL || !message_ok(&err))
			{
				tap_note("fault %d: status %s, %s", k, gs_status_name(s), err.message);
				clean = false;
			}
			if (k <= 2)
				tap_note("fault %d: %s", k, err.message);
			gs_device_release();
			if (gs_device_bytes_held() != 0 || gs_pinned_bytes_held() != 0)
				clean = false;
			snprintf(label, sizeof(label), "a fault at call %d", k);
			if (!next_call_works(label))
				works = false;
		}
		free(in);
		free(out);
		free(perm);
	}
	tap_check(s == GS_OK && failed >= 5 && clean && works,
			  "%s%s: a fault at each of %d CUDA calls fails cleanly, the next call works",
			  gs_transfer_name(t), limit ? " (a select)" : "", failed);
	gs_host_sort_set_transfer(GS_TRANSFER_AUTO, 0);
	gs_device_release();
}

/* 1000 calls of mixed shapes: held memory stays within the caps. */
static void
test_repeated_calls(void)
{
	size_t		max_n = quick ? 200000 : 3000000;
	int32_t    *in = (int32_t *) xmalloc(max_n * 8);
	int32_t    *out = (int32_t *) xmalloc(max_n * 8);
	uint32_t   *perm = (uint32_t *) xmalloc(max_n * 4);
	size_t		max_device = 0,
				max_pinned = 0;
	int			errors = 0;
	uint64_t	st = 99;

	gs_fill(GS_INT8, GS_DIST_UNIFORM, in, max_n, 5);
	for (int i = 0; i < 1000; i++)
	{
		gs_host_sort_job job;
		gs_run_report rep;
		gs_error	err;

		memset(&job, 0, sizeof(job));
		job.type = (gs_type) (i % GS_NUM_TYPES);
		job.n = 1 + gs_rand_below(&st, max_n);
		job.descending = i & 1;
		job.input = in;
		job.output = (i % 3 != 1) ? out : NULL;
		job.perm = (i % 3 != 0) ? perm : NULL;
		if (gs_host_sort(&job, &rep, &err) != GS_OK)
		{
			if (errors++ < 3)
				tap_note("call %d: %s", i, err.message);
		}
		if (gs_device_bytes_held() > max_device)
			max_device = gs_device_bytes_held();
		if (gs_pinned_bytes_held() > max_pinned)
			max_pinned = gs_pinned_bytes_held();
	}
	/* the pinned memory: the staging buffers and the radix sort's readback word */
	tap_check(errors == 0 && max_device <= GS_POOL_RETAINED_BYTES &&
			  max_pinned <= 2 * GS_STAGING_CHUNK_BYTES + sizeof(uint32_t),
			  "1000 calls: no errors, at most %zu MB of device and %zu MB of pinned memory held",
			  max_device >> 20, max_pinned >> 20);
	free(in);
	free(out);
	free(perm);

	if (!quick)
	{
		/* One sort over the cap: its memory goes back at the end of the call. */
		bool		ok = check_sort(GS_FLOAT8, GS_DIST_UNIFORM, 20000000, false, MODE_BOTH, false,
									"2*10^7 float8 argsort");

		tap_check(ok && gs_device_bytes_held() <= GS_POOL_RETAINED_BYTES,
				  "a sort needing %zu MB leaves %zu MB held",
				  gs_host_sort_device_bytes(GS_FLOAT8, GS_ALGO_AUTO, 20000000, true) >> 20,
				  gs_device_bytes_held() >> 20);
	}
	gs_device_release();
	tap_check(gs_device_bytes_held() == 0 && gs_pinned_bytes_held() == 0 && gs_device_current() == 0,
			  "release frees the pool, staging buffers and readbacks and keeps the context");
}

int
main(int argc, char **argv)
{
	gs_runtime_info info;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;

	gs_runtime_probe(&info);
	if (info.status != GS_OK)
	{
		tap_note("no GPU: %s (%s)", info.reason, gs_status_name(info.status));
		return tap_skip_all("no CUDA device");
	}

	test_probe();
	test_bad_arguments();
	test_correctness();
	test_transfers();
	if (!quick)
		test_auto_rule();
	test_memory_limit();
	test_interrupts(GS_TRANSFER_STAGED, 1 << 20, GS_INT4, ((size_t) 1 << 20) + 1);
	test_interrupts(GS_TRANSFER_REGISTER, 0, GS_FLOAT8, quick ? 100000 : 10000000);
	test_interrupts(GS_TRANSFER_PAGEABLE, 0, GS_INT8, 300000);
	if (gs_fault_built())
	{
		test_pool_growth();
		test_faults(GS_TRANSFER_STAGED, 1 << 18, 300000, 0);
		test_faults(GS_TRANSFER_REGISTER, 0, 300000, 0);
		test_faults(GS_TRANSFER_STAGED, 1 << 18, 300000, 1000);
	}
	else
		tap_note("SKIP pool growth on a short device and injected faults: "
				 "this build has no fault injection (make INJECTION_POINTS=1)");
	test_repeated_calls();
	return tap_done();
}
