/*
 * bench_transfer.cu: host <-> device copies and gs_host_sort end to end.
 *
 * 1. Bandwidth of each way to move a pageable array (what PostgreSQL hands
 *    us): one-thread memcpy, pinned, pageable, cudaHostRegister (its own
 *    cost, on touched and on fresh memory, with and without huge pages),
 *    the library's staged copy by chunk size, and its register and pageable
 *    strategies.
 * 2. gs_host_sort of int4 and float8, 10^4 .. 10^8, per transfer strategy:
 *    copy in, sort, copy out, total (the report's figures, median of 11
 *    after 2 warm-ups), into a touched output, a fresh one (as palloc gives
 *    the SQL functions), and in place.
 * 3. The floor for 10^7 int4: two PCIe crossings of 40 MB at the
 *    measured pinned bandwidth plus one host copy of the array.
 *
 * Prints markdown (the GPU's name and the date first).
 *   bench_transfer [--quick]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include <cuda_runtime.h>

#include "gpusort.h"
#include "device_internal.h"
#include "keys.h"
#include "../test/distributions.h"
#include "bench_common.cuh"

#define WARMUP 2
#define REPS 11

#define GS(call) \
	do { \
		gs_error err_; \
		if ((call) != GS_OK) \
		{ \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, err_.message); \
			exit(1); \
		} \
	} while (0)

static bool quick;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double
median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

/* Median wall time of f in ms; f is synchronous. */
template <typename F>
static double
time_ms(F f)
{
	std::vector<double> t;

	for (int i = 0; i < WARMUP; i++)
		f();
	for (int i = 0; i < REPS; i++)
	{
		double		t0 = now_ms();

		f();
		t.push_back(now_ms() - t0);
	}
	return median(t);
}

/* Pageable memory, touched (so page faults stay out of the copies). */
static void *
pageable(size_t bytes)
{
	char	   *p = (char *) malloc(bytes);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memset(p, 0x5A, bytes);
	return p;
}

/*
 * Fresh (never touched) anonymous memory, 2 MiB aligned; huge: advised
 * MADV_HUGEPAGE, so that transparent huge pages back it where the system
 * allows (its setting is printed with the results).
 */
typedef struct fresh_mem
{
	void	   *base;
	size_t		len;
	char	   *p;
} fresh_mem;

static fresh_mem
fresh(size_t bytes, bool huge)
{
	const size_t two_mb = (size_t) 2 << 20;
	fresh_mem	m;

	m.len = bytes + two_mb;
	m.base = mmap(NULL, m.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m.base == MAP_FAILED)
	{
		perror("mmap");
		exit(1);
	}
	m.p = (char *) (((uintptr_t) m.base + two_mb - 1) & ~(uintptr_t) (two_mb - 1));
	if (huge)
		(void) madvise(m.p, bytes, MADV_HUGEPAGE);
	return m;
}

static void
fresh_free(fresh_mem m)
{
	munmap(m.base, m.len);
}

/*
 * Median ms of op(m), each time on a fresh mapping m of bytes (WARMUP calls
 * untimed first); undo(m), untimed, runs before m is unmapped.
 */
template <typename F, typename U>
static double
time_fresh(size_t bytes, bool huge, F op, U undo)
{
	std::vector<double> t;

	for (int i = 0; i < WARMUP + REPS; i++)
	{
		fresh_mem	m = fresh(bytes, huge);
		double		t0 = now_ms();

		op(m);
		if (i >= WARMUP)
			t.push_back(now_ms() - t0);
		undo(m);
		fresh_free(m);
	}
	return median(t);
}

static void
print_file(const char *label, const char *path)
{
	char		line[256] = "";
	FILE	   *f = fopen(path, "r");

	if (f != NULL)
	{
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = '\0';
		fclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	printf("%s: %s\n\n", label, f != NULL ? line : "(unreadable)");
}

static double
gbps(size_t bytes, double ms)
{
	return bytes / ms / 1e6;
}

/* ------------------------------------------------------------------------ */

static double pinned_h2d_40mb,
			pinned_d2h_40mb,
			memcpy_40mb;

static void
bench_bandwidth(void)
{
	std::vector<size_t> sizes = {(size_t) 64 << 10, (size_t) 1 << 20, (size_t) 4 << 20, 40000000,
	(size_t) 400000000};
	size_t		max = sizes.back();
	char	   *host = (char *) pageable(max);
	char	   *host2 = (char *) pageable(max);
	char	   *pinned;
	void	   *dev;
	cudaStream_t stream = gs_device_stream();

	CHECK(cudaHostAlloc((void **) &pinned, max, cudaHostAllocDefault));
	memset(pinned, 1, max);
	CHECK(cudaMalloc(&dev, max));

	printf("## 1. Bandwidth, GB/s (median of %d; pageable buffers pre-faulted unless \"fresh\")\n\n", REPS);
	print_file("transparent huge pages", "/sys/kernel/mm/transparent_hugepage/enabled");
	print_file("transparent huge pages, defrag", "/sys/kernel/mm/transparent_hugepage/defrag");
	printf("| method |");
	for (size_t s : sizes)
	{
		if (s % 1000000 == 0)
			printf(" %zu MB |", s / 1000000);
		else if (s >= ((size_t) 1 << 20))
			printf(" %zu MiB |", s >> 20);
		else
			printf(" %zu KiB |", s >> 10);
	}
	printf("\n|---|");
	for (size_t i = 0; i < sizes.size(); i++)
		printf("---|");
	printf("\n");

	auto row = [&](const char *name, auto op) {
		printf("| %s |", name);
		for (size_t s : sizes)
		{
			double		ms = time_ms([&] { op(s); });

			printf(" %.1f |", gbps(s, ms));
			if (s == 40000000)
			{
				if (strcmp(name, "pinned H2D (cudaMemcpyAsync)") == 0)
					pinned_h2d_40mb = ms;
				else if (strcmp(name, "pinned D2H (cudaMemcpyAsync)") == 0)
					pinned_d2h_40mb = ms;
				else if (strcmp(name, "memcpy, one thread") == 0)
					memcpy_40mb = ms;
			}
		}
		printf("\n");
		fflush(stdout);
	};

	row("memcpy, one thread", [&](size_t s) { memcpy(host2, host, s); });
	row("pinned H2D (cudaMemcpyAsync)", [&](size_t s) {
		CHECK(cudaMemcpyAsync(dev, pinned, s, cudaMemcpyHostToDevice, stream));
		CHECK(cudaStreamSynchronize(stream));
	});
	row("pinned D2H (cudaMemcpyAsync)", [&](size_t s) {
		CHECK(cudaMemcpyAsync(pinned, dev, s, cudaMemcpyDeviceToHost, stream));
		CHECK(cudaStreamSynchronize(stream));
	});
	row("pageable H2D (cudaMemcpy)", [&](size_t s) {
		CHECK(cudaMemcpyAsync(dev, host, s, cudaMemcpyHostToDevice, stream));
		CHECK(cudaStreamSynchronize(stream));
	});
	row("pageable D2H (cudaMemcpy)", [&](size_t s) {
		CHECK(cudaMemcpyAsync(host, dev, s, cudaMemcpyDeviceToHost, stream));
		CHECK(cudaStreamSynchronize(stream));
	});
	/* register and unregister apart: time each around the other */
	{
		printf("| cudaHostRegister alone (touched memory; GB/s and ms) |");
		for (size_t s : sizes)
		{
			std::vector<double> reg;

			for (int i = 0; i < WARMUP + REPS; i++)
			{
				double		t0 = now_ms(),
							t1;

				CHECK(cudaHostRegister(host, s, cudaHostRegisterDefault));
				t1 = now_ms();
				CHECK(cudaHostUnregister(host));
				if (i >= WARMUP)
					reg.push_back(t1 - t0);
			}
			printf(" %.1f (%.3f ms) |", gbps(s, median(reg)), median(reg));
		}
		printf("\n| cudaHostUnregister alone |");
		for (size_t s : sizes)
		{
			std::vector<double> unreg;

			for (int i = 0; i < WARMUP + REPS; i++)
			{
				double		t1;

				CHECK(cudaHostRegister(host, s, cudaHostRegisterDefault));
				t1 = now_ms();
				CHECK(cudaHostUnregister(host));
				if (i >= WARMUP)
					unreg.push_back(now_ms() - t1);
			}
			printf(" %.1f (%.3f ms) |", gbps(s, median(unreg)), median(unreg));
		}
		/* Fresh memory, as a new palloc of an array gets: every page faults on first touch. */
		for (int huge = 0; huge < 2; huge++)
		{
			printf("\n| cudaHostRegister of fresh memory%s; GB/s and ms |", huge ? ", MADV_HUGEPAGE" : "");
			for (size_t s : sizes)
			{
				double		ms = time_fresh(s, huge,
											[&](fresh_mem m) { CHECK(cudaHostRegister(m.p, s, cudaHostRegisterDefault)); },
											[&](fresh_mem m) { CHECK(cudaHostUnregister(m.p)); });

				printf(" %.1f (%.3f ms) |", gbps(s, ms), ms);
			}
			printf("\n| memcpy into fresh memory%s |", huge ? ", MADV_HUGEPAGE" : "");
			for (size_t s : sizes)
				printf(" %.1f |", gbps(s, time_fresh(s, huge, [&](fresh_mem m) { memcpy(m.p, host, s); },
													 [](fresh_mem) {})));
		}
		printf("\n| madvise(MADV_POPULATE_WRITE) of fresh memory |");
		for (size_t s : sizes)
		{
			bool		failed = false;
			double		ms = time_fresh(s, false, [&](fresh_mem m) {
				if (madvise(m.p, s, 23 /* MADV_POPULATE_WRITE, Linux 5.14 */ ) != 0)
					failed = true;
			}, [](fresh_mem) {});

			if (failed)
				printf(" failed |");
			else
				printf(" %.1f |", gbps(s, ms));
		}
		printf("\n");
	}
	row("register + H2D + unregister", [&](size_t s) {
		CHECK(cudaHostRegister(host, s, cudaHostRegisterDefault));
		CHECK(cudaMemcpyAsync(dev, host, s, cudaMemcpyHostToDevice, stream));
		CHECK(cudaStreamSynchronize(stream));
		CHECK(cudaHostUnregister(host));
	});
	row("register + D2H + unregister", [&](size_t s) {
		CHECK(cudaHostRegister(host, s, cudaHostRegisterDefault));
		CHECK(cudaMemcpyAsync(host, dev, s, cudaMemcpyDeviceToHost, stream));
		CHECK(cudaStreamSynchronize(stream));
		CHECK(cudaHostUnregister(host));
	});

	/* An alternative not in the library: register 16 MB pieces, each DMA overlapping the next register. */
	row("piecewise register (16 MB) overlapping H2D", [&](size_t s) {
		const size_t piece = (size_t) 16 << 20;

		for (size_t off = 0; off < s; off += piece)
		{
			size_t		len = std::min(piece, s - off);

			CHECK(cudaHostRegister(host + off, len, cudaHostRegisterDefault));
			CHECK(cudaMemcpyAsync((char *) dev + off, host + off, len, cudaMemcpyHostToDevice, stream));
		}
		CHECK(cudaStreamSynchronize(stream));
		for (size_t off = 0; off < s; off += piece)
			CHECK(cudaHostUnregister(host + off));
	});

	/* The library's strategies (gs_copy_to_device / gs_copy_from_device). */
	{
		static const size_t chunks[] = {(size_t) 256 << 10, (size_t) 1 << 20, (size_t) 4 << 20,
		(size_t) 16 << 20};
		char		name[96];

		for (size_t c : chunks)
		{
			gs_host_sort_set_transfer(GS_TRANSFER_STAGED, c);
			snprintf(name, sizeof(name), "gs staged H2D, 2 x %zu KiB", c >> 10);
			row(name, [&](size_t s) { GS(gs_copy_to_device(dev, host, s, NULL, NULL, &err_)); });
			snprintf(name, sizeof(name), "gs staged D2H, 2 x %zu KiB", c >> 10);
			row(name, [&](size_t s) { GS(gs_copy_from_device(host, dev, s, NULL, NULL, &err_)); });
		}
		gs_host_sort_set_transfer(GS_TRANSFER_REGISTER, 0);
		row("gs register H2D", [&](size_t s) { GS(gs_copy_to_device(dev, host, s, NULL, NULL, &err_)); });
		row("gs register D2H", [&](size_t s) { GS(gs_copy_from_device(host, dev, s, NULL, NULL, &err_)); });
		gs_host_sort_set_transfer(GS_TRANSFER_PAGEABLE, 0);
		row("gs pageable H2D", [&](size_t s) { GS(gs_copy_to_device(dev, host, s, NULL, NULL, &err_)); });
		row("gs pageable D2H", [&](size_t s) { GS(gs_copy_from_device(host, dev, s, NULL, NULL, &err_)); });
		gs_host_sort_set_transfer(GS_TRANSFER_AUTO, 0);
	}
	printf("\n");

	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(pinned));
	free(host);
	free(host2);
	gs_device_release();
}

/* ------------------------------------------------------------------------ */

/* Whether out holds n keys in ascending order (ordered keys non-decreasing). */
static bool
sorted(gs_type type, const void *out, size_t n)
{
	for (size_t i = 1; i < n; i++)
	{
		if (type == GS_INT4)
		{
			const uint32_t *k = (const uint32_t *) out;

			if (gs_int4_to_key(k[i - 1]) > gs_int4_to_key(k[i]))
				return false;
		}
		else
		{
			const uint64_t *k = (const uint64_t *) out;

			if (gs_float8_to_key(k[i - 1]) > gs_float8_to_key(k[i]))
				return false;
		}
	}
	return true;
}

typedef struct e2e_result
{
	double		in,
				sort,
				out,
				total;
	bool		ok;
} e2e_result;

/* Where the sorted keys go. */
typedef enum out_kind
{
	OUT_WARM,					/* the same touched array every call */
	OUT_COLD,					/* a fresh mmap'd array every call, as palloc gives */
	OUT_COLD_HUGE,				/* the same, advised MADV_HUGEPAGE */
	OUT_IN_PLACE				/* output = input (refilled before each call, untimed) */
} out_kind;

static const char *const out_names[] = {"warm", "cold", "cold, huge pages", "in place"};

/* Median of each figure of the report over REPS calls (after WARMUP). */
static e2e_result
run_host_sort(gs_type type, size_t n, const void *in, void *out, out_kind kind, bool argsort)
{
	std::vector<double> ci, so, co, to;
	size_t		bytes = n * gs_type_size(type);
	uint32_t   *perm = argsort ? (uint32_t *) pageable(n * 4) : NULL;
	e2e_result	r;

	r.ok = true;
	for (int i = 0; i < WARMUP + REPS; i++)
	{
		gs_host_sort_job job;
		gs_run_report rep;
		fresh_mem	m = {NULL, 0, NULL};
		void	   *o = out;

		if (kind == OUT_COLD || kind == OUT_COLD_HUGE)
		{
			m = fresh(bytes, kind == OUT_COLD_HUGE);
			o = m.p;
		}
		else if (kind == OUT_IN_PLACE)
			memcpy(out, in, bytes);
		memset(&job, 0, sizeof(job));
		job.type = type;
		job.n = n;
		job.input = kind == OUT_IN_PLACE ? out : in;
		job.output = o;
		job.perm = perm;
		GS(gs_host_sort(&job, &rep, &err_));
		if (i == WARMUP + REPS - 1)
			r.ok = sorted(type, o, n);
		if (m.base != NULL)
			fresh_free(m);
		if (i >= WARMUP)
		{
			ci.push_back(rep.copy_in_ms);
			so.push_back(rep.sort_ms);
			co.push_back(rep.copy_out_ms);
			to.push_back(rep.total_ms);
		}
	}
	free(perm);
	r.in = median(ci);
	r.sort = median(so);
	r.out = median(co);
	r.total = median(to);
	return r;
}

static e2e_result int4_1e7[4];

static void
bench_host_sort(void)
{
	static const gs_type types[] = {GS_INT4, GS_FLOAT8};
	static const gs_transfer transfers[] = {GS_TRANSFER_AUTO, GS_TRANSFER_STAGED, GS_TRANSFER_PAGEABLE,
	GS_TRANSFER_REGISTER};
	size_t		max_n = quick ? 1000000 : 100000000;

	printf("## 2. gs_host_sort end to end, ms (median of %d; uniform keys)\n\n", REPS);
	printf("output \"warm\": the same output array every call; \"cold\": a fresh mmap'd one each call (as palloc gives "
		   "the SQL functions); \"in place\": output = input.  copy in: until the input is on the device; sort: "
		   "device time (CUDA events); copy out: the rest (pinning the output overlaps the sort).  GB/s: array "
		   "bytes / total.  auto: input staged < %zu KiB <= pageable < %zu MiB <= register; output staged < %zu KiB <= "
		   "register.\n\n",
		   GS_PAGEABLE_MIN_BYTES >> 10, GS_REGISTER_IN_MIN_BYTES >> 20, GS_REGISTER_OUT_MIN_BYTES >> 10);
	printf("| type | n | transfer | output | copy in | sort | copy out | total | GB/s | check |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (gs_type type : types)
	{
		size_t		w = gs_type_size(type);
		char	   *in = (char *) malloc(max_n * w);
		char	   *out = (char *) pageable(max_n * w);

		gs_fill(type, GS_DIST_UNIFORM, in, max_n, 1);
		for (size_t n = 10000; n <= max_n; n *= 10)
		{
			for (gs_transfer t : transfers)
				for (int k = OUT_WARM; k <= OUT_IN_PLACE; k++)
				{
					bool		want;
					e2e_result	r;

					switch (k)
					{
						case OUT_WARM:
							want = true;
							break;
						case OUT_COLD:
							want = (n >= 1000000 && n <= 10000000) || (n > 10000000 && t == GS_TRANSFER_AUTO);
							break;
						default:
							want = n >= 1000000 && t == GS_TRANSFER_AUTO;
							break;
					}
					if (!want)
						continue;
					gs_host_sort_set_transfer(t, 0);
					r = run_host_sort(type, n, in, out, (out_kind) k, false);
					printf("| %s | %zu | %s | %s | %.3f | %.3f | %.3f | %.3f | %.1f | %s |\n",
						   gs_type_name(type), n, gs_transfer_name(t), out_names[k],
						   r.in, r.sort, r.out, r.total, gbps(n * w, r.total), r.ok ? "sorted" : "WRONG");
					fflush(stdout);
					if (type == GS_INT4 && n == 10000000 && t == GS_TRANSFER_AUTO)
						int4_1e7[k] = r;
				}
		}
		if (type == GS_INT4 && max_n >= 10000000)
		{
			gs_host_sort_set_transfer(GS_TRANSFER_AUTO, 0);
			for (int k = OUT_WARM; k <= OUT_COLD; k++)
			{
				e2e_result	r = run_host_sort(type, 10000000, in, out, (out_kind) k, true);

				printf("| int4 | 10000000 | auto | %s, keys + perm (perm warm) | %.3f | %.3f | %.3f | %.3f | %.1f | %s |\n",
					   out_names[k], r.in, r.sort, r.out, r.total, gbps(10000000 * w, r.total),
					   r.ok ? "sorted" : "WRONG");
			}
		}
		free(in);
		free(out);
	}
	gs_host_sort_set_transfer(GS_TRANSFER_AUTO, 0);
	printf("\n");
}

int
main(int argc, char **argv)
{
	gs_runtime_info info;
	gs_device_props props;
	char		date[32];
	time_t		t = time(NULL);

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
	gs_runtime_probe(&info);
	if (info.status != GS_OK)
	{
		printf("no GPU: %s\n", info.reason);
		return 0;
	}
	GS(gs_device_open(0, &err_));
	GS(gs_device_props_get(0, &props, &err_));
	strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&t));
	printf("# bench_transfer: %s (sm_%d%d, %d SMs, %zu MiB), CUDA runtime %d, driver %d, %s\n\n",
		   props.name, props.major, props.minor, props.multiprocessors, props.total_memory >> 20,
		   info.runtime_version, info.driver_version, date);

	bench_bandwidth();
	bench_host_sort();

	if (!quick)
	{
		double		floor = pinned_h2d_40mb + pinned_d2h_40mb + memcpy_40mb;

		printf("## 3. 10^7 int4 against the floor\n\n");
		printf("floor = H2D of 40 MB pinned (%.3f ms) + D2H of 40 MB pinned (%.3f ms) + one memcpy of 40 MB (%.3f ms) = %.3f ms\n\n",
			   pinned_h2d_40mb, pinned_d2h_40mb, memcpy_40mb, floor);
		for (int k = OUT_WARM; k <= OUT_IN_PLACE; k++)
			printf("gs_host_sort auto, %s output: %.3f ms total (%.2fx the floor; target <= 10 ms)\n\n",
				   out_names[k], int4_1e7[k].total, int4_1e7[k].total / floor);
	}
	gs_device_release();
	return 0;
}
