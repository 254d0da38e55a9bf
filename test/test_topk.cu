/*
 * test_topk.cu: the GPU top-k against the CPU one (gs_cpu_topk, which
 * test_cpu_topk checks against the full stable sort), bit for bit, keys and
 * positions: gs_gpu_topk on device buffers, gs_host_sort with a limit and
 * gs_worker_sort with a limit (the GPU server's path, through a small ring
 * of pinned chunks), every type and distribution of distributions.h, both directions, sizes
 * around the compaction's tiles and k from 1 to n - 1.  Timings of the
 * selection against the full GPU sort at 10^7 are printed as notes.  TAP;
 * skips everything when there is no CUDA device.
 *
 *   test_topk [--quick]     --quick: small sizes only (for compute-sanitizer)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpusort.h"
#include "distributions.h"
#include "tap.h"

static bool quick;

/* A worker and its ring for the server's path (gs_worker_sort with a limit). */
#define RING_CHUNK		((size_t) 16 << 10)
#define RING_SLOTS		3
static gs_worker *worker;
static char *ring;

#define CK(call) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) \
		{ \
			fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(2); \
		} \
	} while (0)

/* The CPU's answer: k keys and positions. */
static void
cpu_topk(gs_type type, const void *input, size_t n, size_t k, bool desc, void *keys, uint32_t *perm)
{
	void	   *scratch = xmalloc(gs_cpu_topk_scratch_bytes(type, n, k, true));
	gs_error	err;

	if (gs_cpu_topk(type, input, n, k, desc, keys, perm, scratch, NULL, NULL, &err) != GS_OK)
	{
		fprintf(stderr, "cpu top-k failed: %s\n", err.message);
		exit(2);
	}
	free(scratch);
}

/* gs_gpu_topk on device buffers; false with why on a difference or error. */
static bool
check_device(gs_type type, const void *input, size_t n, size_t k, bool desc,
			 const void *want_keys, const uint32_t *want_perm, char *why, size_t whylen)
{
	size_t		w = gs_type_size(type);
	gs_gpu_topk_args a;
	gs_error	err;
	void	   *d_in,
			   *d_keys,
			   *d_temp;
	uint32_t   *d_perm;
	void	   *got_keys = xmalloc(k * w);
	uint32_t   *got_perm = (uint32_t *) xmalloc(k * sizeof(uint32_t));
	bool		ok = true;

	CK(cudaMalloc(&d_in, n * w));
	CK(cudaMalloc(&d_keys, k * w));
	CK(cudaMalloc((void **) &d_perm, k * sizeof(uint32_t)));
	CK(cudaMemcpy(d_in, input, n * w, cudaMemcpyHostToDevice));
	/* poisoned, so that an output left unwritten cannot pass for the answer */
	CK(cudaMemset(d_keys, 0xA5, k * w));
	CK(cudaMemset(d_perm, 0xA5, k * sizeof(uint32_t)));
	memset(&a, 0, sizeof(a));
	a.type = type;
	a.n = n;
	a.k = k;
	a.descending = desc;
	a.keys_in = d_in;
	a.keys_out = d_keys;
	a.positions_out = d_perm;
	d_temp = NULL;
	if (gs_gpu_topk(&a, &err) != GS_OK)
	{
		snprintf(why, whylen, "size query: %.120s", err.message);
		ok = false;
	}
	else
	{
		CK(cudaMalloc(&d_temp, a.temp_bytes ? a.temp_bytes : 1));
		a.temp = d_temp;
	}
	if (ok && gs_gpu_topk(&a, &err) != GS_OK)
	{
		snprintf(why, whylen, "top-k: %.120s", err.message);
		ok = false;
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(got_keys, d_keys, k * w, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(got_perm, d_perm, k * sizeof(uint32_t), cudaMemcpyDeviceToHost));
	if (ok && memcmp(got_keys, want_keys, k * w) != 0)
	{
		snprintf(why, whylen, "keys differ (k=%zu)", k);
		ok = false;
	}
	if (ok && memcmp(got_perm, want_perm, k * sizeof(uint32_t)) != 0)
	{
		size_t		i = 0;

		while (got_perm[i] == want_perm[i])
			i++;
		snprintf(why, whylen, "positions differ (k=%zu) at %zu: %u vs %u", k, i, got_perm[i], want_perm[i]);
		ok = false;
	}
	CK(cudaFree(d_in));
	CK(cudaFree(d_keys));
	CK(cudaFree(d_perm));
	CK(cudaFree(d_temp));		/* NULL after a failed size query: a no-op */
	free(got_keys);
	free(got_perm);
	return ok;
}

/* gs_host_sort with a limit: keys only, positions only, both. */
static bool
check_host(gs_type type, const void *input, size_t n, size_t k, bool desc,
		   const void *want_keys, const uint32_t *want_perm, char *why, size_t whylen)
{
	size_t		w = gs_type_size(type);

	for (int mode = 0; mode < 3; mode++)
	{
		gs_host_sort_job job;
		gs_run_report rep;
		gs_error	err;
		unsigned char *keys = (unsigned char *) xmalloc(k * w + 8);
		uint32_t   *perm = (uint32_t *) xmalloc((k + 2) * sizeof(uint32_t));
		bool		ok = true;

		memset(keys, 0xA5, k * w + 8);
		memset(perm, 0xA5, (k + 2) * sizeof(uint32_t));
		memset(&job, 0, sizeof(job));
		job.type = type;
		job.n = n;
		job.descending = desc;
		job.device_id = 0;
		job.input = input;
		job.output = mode != 1 ? keys : NULL;
		job.perm = mode != 0 ? perm : NULL;
		job.limit = k;
		if (gs_host_sort(&job, &rep, &err) != GS_OK)
		{
			snprintf(why, whylen, "host mode %d: %.120s", mode, err.message);
			ok = false;
		}
		else if (mode != 1 && (memcmp(keys, want_keys, k * w) != 0 || keys[k * w] != 0xA5))
		{
			snprintf(why, whylen, "host mode %d: keys differ or written past k", mode);
			ok = false;
		}
		else if (mode != 0 && (memcmp(perm, want_perm, k * sizeof(uint32_t)) != 0 || perm[k] != 0xA5A5A5A5u))
		{
			snprintf(why, whylen, "host mode %d: positions differ or written past k", mode);
			ok = false;
		}
		free(keys);
		free(perm);
		if (!ok)
			return false;
	}
	return true;
}

/* The caller's side of a worker's stream: one input array, one output array. */
typedef struct stream_side
{
	const char *in;
	size_t		in_bytes;
	char	   *out;
	size_t		out_bytes;
	bool		too_much;		/* an output chunk past out_bytes came */
} stream_side;

static bool
side_input_ready(void *arg, size_t i)
{
	stream_side *s = (stream_side *) arg;
	size_t		off = i * RING_CHUNK;

	memcpy(ring + (i % RING_SLOTS) * RING_CHUNK, s->in + off,
		   s->in_bytes - off < RING_CHUNK ? s->in_bytes - off : RING_CHUNK);
	return true;
}

static void
side_input_done(void *arg, size_t i)
{
	(void) arg;
	(void) i;
}

static bool
side_output_free(void *arg, size_t i)
{
	(void) arg;
	(void) i;
	return true;				/* side_output_ready drains each chunk at once */
}

static void
side_output_ready(void *arg, size_t i)
{
	stream_side *s = (stream_side *) arg;
	size_t		off = i * RING_CHUNK;

	if (off >= s->out_bytes)
	{
		s->too_much = true;
		return;
	}
	memcpy(s->out + off, ring + (i % RING_SLOTS) * RING_CHUNK,
		   s->out_bytes - off < RING_CHUNK ? s->out_bytes - off : RING_CHUNK);
}

/*
 * gs_worker_sort with a limit, as the GPU server runs it: keys only,
 * positions only, and both (one stream: the k keys, then the k positions),
 * into poisoned outputs with a guard.
 */
static bool
check_worker(gs_type type, const void *input, size_t n, size_t k, bool desc,
			 const void *want_keys, const uint32_t *want_perm, char *why, size_t whylen)
{
	size_t		w = gs_type_size(type);

	for (int mode = 0; mode < 3; mode++)
	{
		bool		keys = mode != 1,
					perm = mode != 0;
		size_t		key_bytes = keys ? k * w : 0;
		size_t		out_bytes = key_bytes + (perm ? k * sizeof(uint32_t) : 0);
		unsigned char *out = (unsigned char *) xmalloc(out_bytes + 8);
		gs_stream_job job;
		gs_stream_io io;
		stream_side side;
		gs_run_report rep;
		gs_error	err;
		bool		ok = true;

		memset(out, 0xA5, out_bytes + 8);
		memset(&side, 0, sizeof(side));
		side.in = (const char *) input;
		side.in_bytes = n * w;
		side.out = (char *) out;
		side.out_bytes = out_bytes;
		memset(&io, 0, sizeof(io));
		io.ring = ring;
		io.chunk_bytes = RING_CHUNK;
		io.slots = RING_SLOTS;
		io.input_ready = side_input_ready;
		io.input_done = side_input_done;
		io.output_free = side_output_free;
		io.output_ready = side_output_ready;
		io.arg = &side;
		memset(&job, 0, sizeof(job));
		job.type = type;
		job.n = n;
		job.limit = k;
		job.descending = desc;
		job.want_keys = keys;
		job.want_perm = perm;
		job.max_device_bytes = gs_stream_job_device_bytes(&job);
		if (gs_worker_sort(worker, &job, &io, &rep, &err) != GS_OK)
		{
			snprintf(why, whylen, "worker mode %d: %.120s", mode, err.message);
			ok = false;
		}
		else if (side.too_much)
		{
			snprintf(why, whylen, "worker mode %d: more output than k", mode);
			ok = false;
		}
		else if ((keys && memcmp(out, want_keys, key_bytes) != 0) ||
				 (perm && memcmp(out + key_bytes, want_perm, k * sizeof(uint32_t)) != 0))
		{
			snprintf(why, whylen, "worker mode %d: keys or positions differ (k=%zu)", mode, k);
			ok = false;
		}
		else if (out[out_bytes] != 0xA5)
		{
			snprintf(why, whylen, "worker mode %d: written past k", mode);
			ok = false;
		}
		free(out);
		if (!ok)
			return false;
	}
	return true;
}

static void
check_case(gs_type type, gs_dist dist, size_t n, bool host)
{
	size_t		w = gs_type_size(type);
	void	   *input = xmalloc(n * w);
	size_t		ks[] = {1, 2, 7, 100, 1000, n / 2, n - 1};

	gs_fill(type, dist, input, n, 9000 + n);
	for (int d = 0; d < 2; d++)
	{
		char		why[256] = "";
		bool		ok = true;

		for (size_t i = 0; ok && i < sizeof(ks) / sizeof(ks[0]); i++)
		{
			size_t		k = ks[i];
			void	   *want_keys;
			uint32_t   *want_perm;

			if (k == 0 || k >= n || (i > 0 && k == ks[i - 1]))
				continue;
			want_keys = xmalloc(k * w);
			want_perm = (uint32_t *) xmalloc(k * sizeof(uint32_t));
			cpu_topk(type, input, n, k, d == 1, want_keys, want_perm);
			ok = check_device(type, input, n, k, d == 1, want_keys, want_perm, why, sizeof(why));
			if (ok && host)
				ok = check_host(type, input, n, k, d == 1, want_keys, want_perm, why, sizeof(why));
			if (ok && host)
				ok = check_worker(type, input, n, k, d == 1, want_keys, want_perm, why, sizeof(why));
			free(want_keys);
			free(want_perm);
		}
		tap_check(ok, "gpu topk %s %s %s n=%zu%s%s%s", gs_type_name(type), gs_dist_names[dist],
				  d ? "desc" : "asc", n, host ? " (and host, worker)" : "", ok ? "" : ": ", why);
	}
	free(input);
}

static void
test_sizes_distributions(void)
{
	/* around one compaction tile (4096) and many; 2^16 + 1 past the CPU's full-sort switch */
	static const size_t sizes[] = {2, 3, 100, 4095, 4096, 4097, 65537, 1000003};

	for (int t = 0; t < GS_NUM_TYPES; t++)
		for (int d = 0; d < GS_NUM_DISTS; d++)
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			{
				/* --quick (for compute-sanitizer): three sizes, a third of the distributions */
				if (quick && (sizes[s] > 4097 || sizes[s] == 3 || sizes[s] == 4095 || sizes[s] == 4096 || d % 3 != 0))
					continue;
				check_case((gs_type) t, (gs_dist) d, sizes[s], s % 3 == 0 || sizes[s] == 65537);
			}
}

/* 10^7 keys, k = 100: the select against the full sort, device time (notes). */
static void
test_timing(void)
{
	static const gs_type types[] = {GS_INT4, GS_FLOAT8};
	size_t		n = 10000000,
				k = 100;

	for (size_t t = 0; t < 2; t++)
	{
		gs_type		type = types[t];
		size_t		w = gs_type_size(type);
		void	   *input = xmalloc(n * w);
		void	   *d_in,
				   *d_alt,
				   *d_out,
				   *d_temp,
				   *d_sort_temp;
		gs_gpu_topk_args a;
		gs_gpu_sort_args s;
		gs_error	err;
		cudaEvent_t e0,
					e1,
					e2;
		float		topk_ms = 0,
					sort_ms = 0;

		gs_fill(type, GS_DIST_UNIFORM, input, n, 31);
		CK(cudaMalloc(&d_in, n * w));
		CK(cudaMalloc(&d_alt, n * w));
		CK(cudaMalloc(&d_out, k * w));
		CK(cudaMemcpy(d_in, input, n * w, cudaMemcpyHostToDevice));
		memset(&a, 0, sizeof(a));
		a.type = type;
		a.n = n;
		a.k = k;
		a.descending = true;
		a.keys_in = d_in;
		a.keys_out = d_out;
		gs_gpu_topk(&a, &err);
		CK(cudaMalloc(&d_temp, a.temp_bytes));
		a.temp = d_temp;
		memset(&s, 0, sizeof(s));
		s.type = type;
		s.n = n;
		s.descending = true;
		s.keys[0] = d_in;
		s.keys[1] = d_alt;
		gs_gpu_sort(&s, &err);
		CK(cudaMalloc(&d_sort_temp, s.temp_bytes));
		s.temp = d_sort_temp;
		CK(cudaEventCreate(&e0));
		CK(cudaEventCreate(&e1));
		CK(cudaEventCreate(&e2));
		for (int rep = 0; rep < 3; rep++)
		{
			bool		ok;

			CK(cudaMemcpy(d_in, input, n * w, cudaMemcpyHostToDevice));
			CK(cudaEventRecord(e0, 0));
			ok = gs_gpu_topk(&a, &err) == GS_OK;
			CK(cudaEventRecord(e1, 0));
			ok = ok && gs_gpu_sort(&s, &err) == GS_OK;
			CK(cudaEventRecord(e2, 0));
			CK(cudaEventSynchronize(e2));
			CK(cudaEventElapsedTime(&topk_ms, e0, e1));
			CK(cudaEventElapsedTime(&sort_ms, e1, e2));
			if (rep == 2)
			{
				void	   *got = xmalloc(k * w);
				void	   *sorted = xmalloc(k * w);

				CK(cudaMemcpy(got, d_out, k * w, cudaMemcpyDeviceToHost));
				CK(cudaMemcpy(sorted, s.result_selector ? d_alt : d_in, k * w, cudaMemcpyDeviceToHost));
				tap_check(ok && memcmp(got, sorted, k * w) == 0,
						  "gpu topk %s n=%zu k=%zu equals the full sort's first k", gs_type_name(type), n, k);
				tap_note("%s n=%zu desc: top-%zu %.3f ms, full sort %.3f ms (device time)",
						 gs_type_name(type), n, k, topk_ms, sort_ms);
				free(got);
				free(sorted);
			}
		}
		CK(cudaFree(d_in));
		CK(cudaFree(d_alt));
		CK(cudaFree(d_out));
		CK(cudaFree(d_temp));
		CK(cudaFree(d_sort_temp));
		free(input);
	}
}

int
main(int argc, char **argv)
{
	gs_runtime_info info;
	gs_error	err;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
	gs_runtime_probe(&info);
	if (info.status != GS_OK)
	{
		tap_note("no GPU: %s (%s)", info.reason, gs_status_name(info.status));
		return tap_skip_all("no CUDA device");
	}
	if (gs_device_open(0, &err) != GS_OK)
	{
		tap_note("device 0: %s", err.message);
		return tap_skip_all("device 0 cannot be opened");
	}
	if (gs_worker_create(0, &worker, &err) != GS_OK)
	{
		tap_note("worker on device 0: %s", err.message);
		return tap_skip_all("no worker on device 0");
	}
	ring = (char *) xmalloc(RING_CHUNK * RING_SLOTS);
	if (gs_host_pin(ring, RING_CHUNK * RING_SLOTS, &err) != GS_OK)
	{
		tap_note("ring: %s", err.message);
		return tap_skip_all("the ring cannot be pinned");
	}
	test_sizes_distributions();
	if (!quick)
		test_timing();
	gs_host_unpin(ring);
	free(ring);
	gs_worker_destroy(worker);
	return tap_done();
}
