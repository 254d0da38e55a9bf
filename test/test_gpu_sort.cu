/*
 * test_gpu_sort.cu: gs_gpu_sort against the CPU sort (gs_cpu_sort and
 * gs_cpu_argsort), bit-exactly, on
 * every type, distribution (distributions.h), direction, keys-only and pairs
 * (argsort), and sizes from 0 to the largest arrays.  Outputs and guard zones past the end
 * of every buffer are poisoned before each sort, and so is the scratch.
 *
 *   test_gpu_sort [--algorithm radix|merge|bitonic|quick|auto|all] [--quick] [--large]
 *                 [--type NAME] [--dist NAME]
 *
 * --quick: small sizes only (for compute-sanitizer); --large: adds 10^8 and
 * 2.6e8 int4, 1.3e8 float8 and 3e8 int2 (more than one 2^28-key portion).
 * --type and --dist (comma-separated names) restrict the matrix and the large
 * cases (e.g. for racecheck, which is slow).
 * Without a CUDA device it prints the TAP skip line and exits 0.
 */
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusort.h"
#include "keys.h"
#include "distributions.h"
#include "tap.h"

#define GUARD 256				/* poisoned elements past the end of each buffer */
#define POISON 0xA5

/* ------------------------------------------------------------------------
 * The CPU side: ordered keys, the reference sort, the exact structural check.
 * ------------------------------------------------------------------------ */

static uint64_t
element_bits(gs_type t, const void *a, size_t i)
{
	switch (gs_type_size(t))
	{
		case 2:
			return ((const uint16_t *) a)[i];
		case 4:
			return ((const uint32_t *) a)[i];
		default:
			return ((const uint64_t *) a)[i];
	}
}

/* The ordered key of element i (keys.h): its unsigned order is the sort order. */
static uint64_t
ordered_key(gs_type t, const void *a, size_t i, bool desc)
{
	uint64_t	b = element_bits(t, a, i);
	bool		f = t == GS_FLOAT4 || t == GS_FLOAT8;

	switch (gs_type_size(t))
	{
		case 2:
			return gs_to_key16((uint16_t) b, desc);
		case 4:
			return gs_to_key32((uint32_t) b, f, desc);
		default:
			return gs_to_key64(b, f, desc);
	}
}

/*
 * The reference: the CPU sort (kernels/cpu_sort.c), which orders by the
 * same ordered keys.  Fills perm (gs_cpu_argsort) and sorted (gs_cpu_sort,
 * keys-only, a separate run of the CPU sort); false if either fails.
 */
static bool
reference_sort(gs_type t, const void *in, size_t n, bool desc, uint32_t *perm, void *sorted)
{
	size_t		w = gs_type_size(t);
	std::vector<unsigned char> scratch(gs_cpu_scratch_bytes(t, n, true) + 16);
	gs_error	err;

	if (gs_cpu_argsort(t, in, n, desc, perm, NULL, scratch.data(), NULL, NULL, &err) != GS_OK)
		return false;
	memcpy(sorted, in, n * w);
	scratch.resize(gs_cpu_scratch_bytes(t, n, false) + 16);
	return gs_cpu_sort(t, sorted, n, desc, scratch.data(), NULL, NULL, &err) == GS_OK;
}

static void
gather(gs_type t, const void *in, const uint32_t *perm, size_t n, void *out)
{
	size_t		w = gs_type_size(t);

	for (size_t i = 0; i < n; i++)
		memcpy((char *) out + i * w, (const char *) in + (size_t) perm[i] * w, w);
}

/* Runs f(i) for i in [0, count) on all cores. */
template <typename F>
static void
parallel_for(size_t count, F f)
{
	std::atomic<size_t> next(0);
	unsigned	nthreads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
	std::vector<std::thread> pool;

	for (unsigned t = 0; t < nthreads; t++)
		pool.emplace_back([&]() {
			for (size_t i; (i = next++) < count;)
				f(i);
		});
	for (auto &th : pool)
		th.join();
}

/*
 * Exact check of a stable argsort without a reference sort: perm is a
 * permutation, keys[i] is bit for bit in[perm[i]], the ordered keys do not
 * decrease, and equal keys keep input order.  There is one such output.
 */
static bool
check_argsort(gs_type t, const void *in, size_t n, bool desc, const void *keys,
			  const uint32_t *perm, std::string *why)
{
	std::vector<unsigned char> seen(n, 0);
	size_t		w = gs_type_size(t);
	const size_t chunks = 256;
	std::atomic<size_t> first_bad(SIZE_MAX);
	char		buf[160];

	for (size_t i = 0; i < n; i++)
	{
		if (perm[i] >= n || seen[perm[i]])
		{
			snprintf(buf, sizeof(buf), "perm[%zu] = %u is out of range or repeated", i, perm[i]);
			*why = buf;
			return false;
		}
		seen[perm[i]] = 1;
	}
	parallel_for(chunks, [&](size_t c) {
		size_t		lo = n * c / chunks,
					hi = n * (c + 1) / chunks;

		for (size_t i = lo; i < hi; i++)
		{
			bool		ok = memcmp((const char *) keys + i * w, (const char *) in + (size_t) perm[i] * w, w) == 0;

			if (ok && i > 0)
			{
				uint64_t	k0 = ordered_key(t, keys, i - 1, desc),
							k1 = ordered_key(t, keys, i, desc);

				ok = k0 < k1 || (k0 == k1 && perm[i - 1] < perm[i]);
			}
			if (!ok)
			{
				size_t		cur = first_bad.load();

				while (i < cur && !first_bad.compare_exchange_weak(cur, i))
					;
				break;
			}
		}
	});
	if (first_bad.load() != SIZE_MAX)
	{
		snprintf(buf, sizeof(buf), "keys[%zu] is not in[perm[%zu]], or out of order, or unstable",
				 first_bad.load(), first_bad.load());
		*why = buf;
		return false;
	}
	return true;
}

/* Fills n elements on all cores (chunks with their own seeds: same distribution). */
static void
fill_parallel(gs_type t, gs_dist d, void *out, size_t n, uint64_t seed)
{
	const size_t chunks = 256;
	size_t		w = gs_type_size(t);

	parallel_for(chunks, [&](size_t c) {
		size_t		lo = n * c / chunks,
					hi = n * (c + 1) / chunks;

		gs_fill(t, d, (char *) out + lo * w, hi - lo, seed * 1000 + c);
	});
}

/* ------------------------------------------------------------------------
 * The GPU side: buffers with poisoned guard zones, one sort.
 * ------------------------------------------------------------------------ */

typedef struct gpu_buffers
{
	size_t		capacity = 0;	/* elements, not counting the guard */
	void	   *keys[2] = {NULL, NULL};
	uint32_t   *values[2] = {NULL, NULL};
	void	   *temp = NULL;
	size_t		temp_capacity = 0;
	std::vector<uint32_t> iota;	/* 0 .. capacity - 1, the argsort payload */
} gpu_buffers;

static bool
cuda_ok(cudaError_t e, const char *what)
{
	if (e != cudaSuccess)
	{
		tap_note("%s: %s", what, cudaGetErrorString(e));
		return false;
	}
	return true;
}

static bool
buffers_reserve(gpu_buffers *b, size_t n)
{
	if (n <= b->capacity)
		return true;
	for (int i = 0; i < 2; i++)
	{
		cudaFree(b->keys[i]);
		cudaFree(b->values[i]);
		b->keys[i] = NULL;
		b->values[i] = NULL;
	}
	b->capacity = 0;
	for (int i = 0; i < 2; i++)
		if (!cuda_ok(cudaMalloc(&b->keys[i], (n + GUARD) * 8), "cudaMalloc keys") ||
			!cuda_ok(cudaMalloc(&b->values[i], (n + GUARD) * 4), "cudaMalloc values"))
			return false;
	b->iota.resize(n);
	for (size_t i = 0; i < n; i++)
		b->iota[i] = (uint32_t) i;
	b->capacity = n;
	return true;
}

typedef struct sort_result
{
	bool		ok;
	std::string why;
	std::vector<unsigned char> keys;
	std::vector<uint32_t> values;
} sort_result;

/* Sorts n elements of in on the GPU; the outputs come back in r. */
static void
gpu_sort_case(gpu_buffers *b, gs_algorithm algo, gs_type t, const void *in, size_t n,
			  bool desc, bool with_values, sort_result *r, size_t key_offset = 0)
{
	size_t		w = gs_type_size(t);
	gs_gpu_sort_args a;
	gs_error	err;
	gs_status	s;
	std::vector<unsigned char> guard(GUARD * 8);
	char		buf[GS_MESSAGE_LEN + 64];

	r->ok = false;
	if (!buffers_reserve(b, n + key_offset))
	{
		r->why = "no device memory for the test buffers";
		return;
	}
	for (int i = 0; i < 2; i++)
	{
		cudaMemset(b->keys[i], POISON, (b->capacity + GUARD) * 8);
		cudaMemset(b->values[i], POISON, (b->capacity + GUARD) * 4);
	}
	char	   *k0 = (char *) b->keys[0] + key_offset * w;
	char	   *k1 = (char *) b->keys[1] + key_offset * w;

	if (n > 0)
		cudaMemcpy(k0, in, n * w, cudaMemcpyHostToDevice);
	if (with_values && n > 0)
		cudaMemcpy(b->values[0], b->iota.data(), n * 4, cudaMemcpyHostToDevice);

	memset(&a, 0, sizeof(a));
	a.type = t;
	a.algorithm = algo;
	a.n = n;
	a.descending = desc;
	a.keys[0] = k0;
	a.keys[1] = k1;
	if (with_values)
	{
		a.values[0] = b->values[0];
		a.values[1] = b->values[1];
	}
	a.result_selector = -1;
	s = gs_gpu_sort(&a, &err);
	if (s != GS_OK)
	{
		snprintf(buf, sizeof(buf), "size query: %s: %s", gs_status_name(s), err.message);
		r->why = buf;
		return;
	}
	if (n >= 2 && a.temp_bytes == 0)
	{
		r->why = "size query answered 0 bytes";
		return;
	}
	if (a.temp_bytes > b->temp_capacity)
	{
		cudaFree(b->temp);
		b->temp = NULL;
		b->temp_capacity = 0;
		if (!cuda_ok(cudaMalloc(&b->temp, a.temp_bytes), "cudaMalloc temp"))
		{
			r->why = "no device memory for temp";
			return;
		}
		b->temp_capacity = a.temp_bytes;
	}
	if (b->temp_capacity > 0)
		cudaMemset(b->temp, POISON, b->temp_capacity);
	a.temp = n >= 2 ? b->temp : NULL;
	a.result_selector = -1;
	s = gs_gpu_sort(&a, &err);
	if (s != GS_OK)
	{
		snprintf(buf, sizeof(buf), "sort: %s: %s", gs_status_name(s), err.message);
		r->why = buf;
		return;
	}
	if (!cuda_ok(cudaDeviceSynchronize(), "after the sort"))
	{
		r->why = "a CUDA error after the sort";
		return;
	}
	if (a.result_selector != 0 && a.result_selector != 1)
	{
		r->why = "result_selector is neither 0 nor 1";
		return;
	}
	if (algo != GS_ALGO_AUTO && a.algorithm_used != algo)
	{
		r->why = "algorithm_used is not the algorithm asked for";
		return;
	}

	r->keys.resize(n * w);
	if (n > 0)
		cudaMemcpy(r->keys.data(), a.result_selector ? k1 : k0, n * w, cudaMemcpyDeviceToHost);
	if (with_values)
	{
		r->values.resize(n);
		if (n > 0)
			cudaMemcpy(r->values.data(), b->values[a.result_selector], n * 4, cudaMemcpyDeviceToHost);
	}

	/* nothing may be written past the n elements of any buffer */
	for (int i = 0; i < 2; i++)
	{
		const char *kb = i ? k1 : k0;

		cudaMemcpy(guard.data(), kb + n * w, GUARD * w, cudaMemcpyDeviceToHost);
		for (size_t j = 0; j < GUARD * w; j++)
			if (guard[j] != POISON)
			{
				snprintf(buf, sizeof(buf), "keys[%d] written past its end", i);
				r->why = buf;
				return;
			}
		if (with_values)
		{
			cudaMemcpy(guard.data(), b->values[i] + n, GUARD * 4, cudaMemcpyDeviceToHost);
			for (size_t j = 0; j < GUARD * 4; j++)
				if (guard[j] != POISON)
				{
					snprintf(buf, sizeof(buf), "values[%d] written past its end", i);
					r->why = buf;
					return;
				}
		}
	}
	if (!cuda_ok(cudaGetLastError(), "copies back"))
	{
		r->why = "a CUDA error in the copies";
		return;
	}
	r->ok = true;
}

/* ------------------------------------------------------------------------
 * The test matrix.
 * ------------------------------------------------------------------------ */

static std::vector<size_t>
test_sizes(bool quick)
{
	std::vector<size_t> s = {0, 1, 2};

	if (quick)
	{
		/* one tile, a partial tile, several tiles (look-back), for the sanitizers */
		for (size_t x : {3, 31, 32, 33, 255, 257, 1000, 4099, 8833, 20011})
			s.push_back(x);
		return s;
	}
	for (int k = 2; k <= 20; k++)
		for (long d = -1; d <= 1; d++)
			s.push_back((size_t) ((1L << k) + d));
	for (size_t p : {7, 31, 127, 7919, 8191, 104729, 131071, 524287, 1299709})
		s.push_back(p);
	s.push_back(1000007);
	std::sort(s.begin(), s.end());
	s.erase(std::unique(s.begin(), s.end()), s.end());
	return s;
}

/* Every size of one (type, distribution) for one algorithm: four checks. */
static void
test_matrix_cell(gpu_buffers *b, gs_algorithm algo, gs_type t, gs_dist d, const std::vector<size_t> &sizes,
				 const std::vector<std::vector<unsigned char> > &inputs,
				 const std::vector<std::vector<uint32_t> > perms[2],
				 const std::vector<std::vector<unsigned char> > sorted[2])
{
	size_t		w = gs_type_size(t);

	for (int desc = 0; desc < 2; desc++)
		for (int with_values = 0; with_values < 2; with_values++)
		{
			std::string why;
			size_t		bad_n = 0;
			sort_result r;
			std::vector<unsigned char> argsorted;

			for (size_t si = 0; si < sizes.size() && why.empty(); si++)
			{
				size_t		n = sizes[si];

				gpu_sort_case(b, algo, t, inputs[si].data(), n, desc, with_values, &r);
				bad_n = n;
				if (!r.ok)
				{
					why = r.why;
					break;
				}
				/* keys-only against gs_cpu_sort, argsort keys against the CPU perm's gather */
				const unsigned char *expect = sorted[desc][si].data();

				if (with_values)
				{
					argsorted.resize(n * w);
					gather(t, inputs[si].data(), perms[desc][si].data(), n, argsorted.data());
					expect = argsorted.data();
				}
				if (n > 0 && memcmp(expect, r.keys.data(), n * w) != 0)
				{
					size_t		i = 0;

					while (memcmp(expect + i * w, &r.keys[i * w], w) == 0)
						i++;
					why = "keys differ from the CPU sort at " + std::to_string(i);
				}
				else if (with_values && n > 0 &&
						 memcmp(perms[desc][si].data(), r.values.data(), n * 4) != 0)
					why = "the argsort differs from gs_cpu_argsort (stable)";
			}
			if (!tap_check(why.empty(), "%s %s %s %s %s, %zu sizes", gs_algorithm_name(algo),
						   gs_type_name(t), gs_dist_names[d], desc ? "desc" : "asc",
						   with_values ? "argsort" : "keys", sizes.size()))
				tap_note("n = %zu: %s", bad_n, why.c_str());
		}
}

static const char *only_type = NULL;	/* --type, a comma-separated list */
static const char *only_dist = NULL;	/* --dist, likewise */

/* Whether name is in the comma-separated list (a NULL list takes all). */
static bool
selected(const char *list, const char *name)
{
	size_t		len = strlen(name);

	if (list == NULL)
		return true;
	for (const char *p = list; p != NULL; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

static void
test_matrix(gpu_buffers *b, const std::vector<gs_algorithm> &algos, bool quick)
{
	std::vector<size_t> sizes = test_sizes(quick);

	/* once, at the largest size: reallocating per size would dominate */
	buffers_reserve(b, sizes.back() + 1);

	for (int ti = 0; ti < GS_NUM_TYPES; ti++)
	{
		gs_type		t = (gs_type) ti;
		size_t		w = gs_type_size(t);

		if (!selected(only_type, gs_type_name(t)))
			continue;
		for (int di = 0; di < GS_NUM_DISTS; di++)
		{
			gs_dist		d = (gs_dist) di;

			if (!selected(only_dist, gs_dist_names[d]))
				continue;
			std::vector<std::vector<unsigned char> > inputs(sizes.size());
			std::vector<std::vector<uint32_t> > perms[2];
			std::vector<std::vector<unsigned char> > sorted[2];
			std::atomic<bool> ref_ok(true);

			for (int desc = 0; desc < 2; desc++)
			{
				perms[desc].resize(sizes.size());
				sorted[desc].resize(sizes.size());
			}
			for (size_t si = 0; si < sizes.size(); si++)
			{
				inputs[si].resize(sizes[si] * w);
				gs_fill(t, d, inputs[si].data(), sizes[si], 1000 + si);
			}
			/* the CPU references for all sizes, largest first to balance the cores */
			parallel_for(sizes.size() * 2, [&](size_t job) {
				size_t		si = sizes.size() - 1 - job / 2;
				int			desc = job % 2;
				size_t		n = sizes[si];

				perms[desc][si].resize(n);
				sorted[desc][si].resize(n * w);
				if (!reference_sort(t, inputs[si].data(), n, desc, perms[desc][si].data(), sorted[desc][si].data()))
					ref_ok = false;
			});
			if (!tap_check(ref_ok, "CPU reference for %s %s", gs_type_name(t), gs_dist_names[d]))
				continue;
			for (gs_algorithm algo : algos)
				test_matrix_cell(b, algo, t, d, sizes, inputs, perms, sorted);
		}
	}
}

/*
 * The large sizes (up to the 1 GB bound).  A CPU sort of each would hold the GPU host
 * for minutes, so they are checked exactly without one: check_argsort
 * admits only the stable sort, and keys-only must equal its keys.
 */
static void
test_large(gpu_buffers *b, const std::vector<gs_algorithm> &algos)
{
	struct
	{
		gs_type		t;
		gs_dist		d;
		size_t		n;
	}			cases[] = {
		{GS_INT4, GS_DIST_UNIFORM, 100000000},
		{GS_INT4, GS_DIST_NARROW, 100000000},
		{GS_INT4, GS_DIST_UNIFORM, 260000000},
		{GS_FLOAT8, GS_DIST_SPECIAL, 130000000},
		{GS_INT2, GS_DIST_UNIFORM, 300000000},
	};

	for (auto &c : cases)
		for (gs_algorithm algo : algos)
		{
			if (!selected(only_type, gs_type_name(c.t)) || !selected(only_dist, gs_dist_names[c.d]))
				continue;
			std::vector<unsigned char> in(c.n * gs_type_size(c.t));
			sort_result pairs, keys;
			std::string why;

			fill_parallel(c.t, c.d, in.data(), c.n, 7);
			for (int desc = 0; desc < 2 && why.empty(); desc++)
			{
				gpu_sort_case(b, algo, c.t, in.data(), c.n, desc, true, &pairs);
				if (!pairs.ok)
					why = pairs.why;
				else if (!check_argsort(c.t, in.data(), c.n, desc, pairs.keys.data(), pairs.values.data(), &why))
					;
				else
				{
					gpu_sort_case(b, algo, c.t, in.data(), c.n, desc, false, &keys);
					if (!keys.ok)
						why = keys.why;
					else if (keys.keys != pairs.keys)
						why = "keys-only output differs from the argsort's keys";
				}
				if (!why.empty())
					why = std::string(desc ? "desc: " : "asc: ") + why;
			}
			if (!tap_check(why.empty(), "%s %s %s n = %zu, asc and desc, keys and argsort",
						   gs_algorithm_name(algo), gs_type_name(c.t), gs_dist_names[c.d], c.n))
				tap_note("%s", why.c_str());
		}
}

/* The contract of gs_gpu_sort itself: sizes, bad arguments, small n. */
static void
test_api(gpu_buffers *b, gs_algorithm algo)
{
	gs_gpu_sort_args a;
	gs_error	err;
	gs_status	s;
	const char *name = gs_algorithm_name(algo);

	buffers_reserve(b, 1000);
	memset(&a, 0, sizeof(a));
	a.type = GS_INT4;
	a.algorithm = algo;
	a.n = 1000;
	a.keys[0] = b->keys[0];
	a.keys[1] = b->keys[1];
	s = gs_gpu_sort(&a, &err);
	tap_check(s == GS_OK && a.temp_bytes > 0, "%s: size query for 1000 keys answers a size", name);

	a.temp = b->temp ? b->temp : b->keys[0];
	a.temp_bytes = 1;
	s = gs_gpu_sort(&a, &err);
	tap_check(s == GS_ERR_INVALID_ARGUMENT, "%s: too small a temp is refused (%s)", name,
			  s ? err.message : "accepted");

	memset(&a, 0, sizeof(a));
	a.type = (gs_type) 99;
	a.algorithm = algo;
	a.n = 10;
	a.keys[0] = b->keys[0];
	a.keys[1] = b->keys[1];
	tap_check(gs_gpu_sort(&a, &err) == GS_ERR_INVALID_ARGUMENT, "%s: unknown type refused", name);
	a.type = GS_INT8;
	a.values[0] = b->values[0];
	tap_check(gs_gpu_sort(&a, &err) == GS_ERR_INVALID_ARGUMENT, "%s: one values buffer refused", name);
	a.values[0] = NULL;
	a.keys[1] = NULL;
	tap_check(gs_gpu_sort(&a, &err) == GS_ERR_INVALID_ARGUMENT, "%s: NULL keys[1] refused", name);
	a.keys[1] = a.keys[0];
	tap_check(gs_gpu_sort(&a, &err) == GS_ERR_INVALID_ARGUMENT, "%s: keys[1] == keys[0] refused", name);
	a.keys[1] = b->keys[1];
	a.values[0] = b->values[0];
	a.values[1] = b->values[1];
	a.n = (size_t) UINT32_MAX + 1;
	tap_check(gs_gpu_sort(&a, &err) == GS_ERR_TOO_LARGE, "%s: 2^32 elements with values refused", name);

	for (size_t n = 0; n <= 1; n++)
	{
		memset(&a, 0, sizeof(a));
		a.type = GS_FLOAT8;
		a.algorithm = algo;
		a.n = n;
		a.keys[0] = n ? b->keys[0] : NULL;
		a.result_selector = 7;
		a.temp_bytes = 99;
		s = gs_gpu_sort(&a, &err);
		tap_check(s == GS_OK && a.temp_bytes == 0 && a.result_selector == 0,
				  "%s: n = %zu needs no scratch, result_selector 0", name, n);
	}
}

/* Keys that are not 16-byte aligned take the histogram's scalar path. */
static void
test_unaligned(gpu_buffers *b, gs_algorithm algo)
{
	size_t		n = 100003;
	std::vector<unsigned char> in(n * 4);
	std::vector<uint32_t> perm(n);
	std::vector<unsigned char> expect(n * 4);
	sort_result r;

	gs_fill(GS_FLOAT4, GS_DIST_SPECIAL, in.data(), n, 3);
	reference_sort(GS_FLOAT4, in.data(), n, false, perm.data(), expect.data());
	gpu_sort_case(b, algo, GS_FLOAT4, in.data(), n, false, true, &r, 1);
	if (!tap_check(r.ok && r.keys == expect && r.values == perm, "%s: float4 keys at an odd address",
				   gs_algorithm_name(algo)))
		tap_note("%s", r.ok ? "wrong result" : r.why.c_str());
}

int
main(int argc, char **argv)
{
	const char *algo_name = "radix";
	bool		quick = false,
				large = false;
	int			count = 0;
	std::vector<gs_algorithm> algos;
	gpu_buffers b;
	cudaDeviceProp prop;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--algorithm") == 0 && i + 1 < argc)
			algo_name = argv[++i];
		else if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--large") == 0)
			large = true;
		else if (strcmp(argv[i], "--type") == 0 && i + 1 < argc)
			only_type = argv[++i];
		else if (strcmp(argv[i], "--dist") == 0 && i + 1 < argc)
			only_dist = argv[++i];
		else
		{
			fprintf(stderr, "usage: %s [--algorithm radix|merge|bitonic|quick|auto|all] [--quick] [--large]"
					" [--type NAME] [--dist NAME]\n", argv[0]);
			return 2;
		}
	}
	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
		return tap_skip_all("no CUDA device");
	cudaGetDeviceProperties(&prop, 0);
	tap_note("device 0: %s, %d SMs", prop.name, prop.multiProcessorCount);

	for (int a = GS_ALGO_AUTO; a < GS_NUM_ALGORITHMS; a++)
		if (strcmp(algo_name, gs_algorithm_name((gs_algorithm) a)) == 0 ||
			(strcmp(algo_name, "all") == 0 && a != GS_ALGO_AUTO))
			algos.push_back((gs_algorithm) a);
	if (algos.empty())
	{
		fprintf(stderr, "unknown algorithm \"%s\"\n", algo_name);
		return 2;
	}

	/* with "all", algorithms not built into this library are skipped */
	if (strcmp(algo_name, "all") == 0)
	{
		std::vector<gs_algorithm> built;

		for (gs_algorithm a : algos)
		{
			gs_gpu_sort_args q;
			gs_error	err;

			buffers_reserve(&b, 16);
			memset(&q, 0, sizeof(q));
			q.type = GS_INT4;
			q.algorithm = a;
			q.n = 16;
			q.keys[0] = b.keys[0];
			q.keys[1] = b.keys[1];
			if (gs_gpu_sort(&q, &err) != GS_OK && strstr(err.message, "not built") != NULL)
				tap_note("skipping %s: %s", gs_algorithm_name(a), err.message);
			else
				built.push_back(a);
		}
		algos = built;
	}

	for (gs_algorithm a : algos)
	{
		test_api(&b, a);
		test_unaligned(&b, a);
	}
	test_matrix(&b, algos, quick);
	if (large && !quick)
		test_large(&b, algos);
	return tap_done();
}
