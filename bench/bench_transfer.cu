/*
 * bench_transfer.cu: host <-> device copies and gs_host_sort end to end.
 *
 * 1. Bandwidth of each way to move a pageable array (what PostgreSQL hands
 *    us): one-thread memcpy, pinned, pageable, cudaHostRegister (its own
 *    cost and with the copy), the library's staged copy by chunk size, and
 *    its register and pageable strategies.
 * 2. gs_host_sort of int4 and float8, 10^4 .. 10^8, per transfer strategy:
 *    copy in, sort, copy out, total (the report's figures, median of 11
 *    after 2 warm-ups); "cold" rows take a fresh output array each call,
 *    as palloc gives the SQL functions.
 * 3. Issue 5's floor for 10^7 int4: two PCIe crossings of 40 MB at the
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

#define WARMUP 2
#define REPS 11

#define CK(call) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) \
		{ \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
			exit(1); \
		} \
	} while (0)

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

	CK(cudaHostAlloc((void **) &pinned, max, cudaHostAllocDefault));
	memset(pinned, 1, max);
	CK(cudaMalloc(&dev, max));

	printf("## 1. Bandwidth, GB/s (median of %d; pageable buffers pre-faulted)\n\n", REPS);
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
		CK(cudaMemcpyAsync(dev, pinned, s, cudaMemcpyHostToDevice, stream));
		CK(cudaStreamSynchronize(stream));
	});
	row("pinned D2H (cudaMemcpyAsync)", [&](size_t s) {
		CK(cudaMemcpyAsync(pinned, dev, s, cudaMemcpyDeviceToHost, stream));
		CK(cudaStreamSynchronize(stream));
	});
	row("pageable H2D (cudaMemcpy)", [&](size_t s) {
		CK(cudaMemcpyAsync(dev, host, s, cudaMemcpyHostToDevice, stream));
		CK(cudaStreamSynchronize(stream));
	});
	row("pageable D2H (cudaMemcpy)", [&](size_t s) {
		CK(cudaMemcpyAsync(host, dev, s, cudaMemcpyDeviceToHost, stream));
		CK(cudaStreamSynchronize(stream));
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

				CK(cudaHostRegister(host, s, cudaHostRegisterDefault));
				t1 = now_ms();
				CK(cudaHostUnregister(host));
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

				CK(cudaHostRegister(host, s, cudaHostRegisterDefault));
				t1 = now_ms();
				CK(cudaHostUnregister(host));
				if (i >= WARMUP)
					unreg.push_back(now_ms() - t1);
			}
			printf(" %.1f (%.3f ms) |", gbps(s, median(unreg)), median(unreg));
		}
		printf("\n| cudaHostRegister of fresh (untouched) memory; GB/s and ms |");
		for (size_t s : sizes)
		{
			std::vector<double> reg;

			for (int i = 0; i < WARMUP + REPS; i++)
			{
				void	   *m = mmap(NULL, s, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				double		t0 = now_ms();

				CK(cudaHostRegister(m, s, cudaHostRegisterDefault));
				if (i >= WARMUP)
					reg.push_back(now_ms() - t0);
				CK(cudaHostUnregister(m));
				munmap(m, s);
			}
			printf(" %.1f (%.3f ms) |", gbps(s, median(reg)), median(reg));
		}
		printf("\n| memcpy into fresh (untouched) memory |");
		for (size_t s : sizes)
		{
			std::vector<double> t;

			for (int i = 0; i < WARMUP + REPS; i++)
			{
				void	   *m = mmap(NULL, s, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				double		t0 = now_ms();

				memcpy(m, host, s);
				if (i >= WARMUP)
					t.push_back(now_ms() - t0);
				munmap(m, s);
			}
			printf(" %.1f |", gbps(s, median(t)));
		}
		printf("\n");
	}
	row("register + H2D + unregister", [&](size_t s) {
		CK(cudaHostRegister(host, s, cudaHostRegisterDefault));
		CK(cudaMemcpyAsync(dev, host, s, cudaMemcpyHostToDevice, stream));
		CK(cudaStreamSynchronize(stream));
		CK(cudaHostUnregister(host));
	});
	row("register + D2H + unregister", [&](size_t s) {
		CK(cudaHostRegister(host, s, cudaHostRegisterDefault));
		CK(cudaMemcpyAsync(host, dev, s, cudaMemcpyDeviceToHost, stream));
		CK(cudaStreamSynchronize(stream));
		CK(cudaHostUnregister(host));
	});

	/* An alternative not in the library: register 16 MB pieces, each DMA overlapping the next register. */
	row("piecewise register (16 MB) overlapping H2D", [&](size_t s) {
		const size_t piece = (size_t) 16 << 20;

		for (size_t off = 0; off < s; off += piece)
		{
			size_t		len = std::min(piece, s - off);

			CK(cudaHostRegister(host + off, len, cudaHostRegisterDefault));
			CK(cudaMemcpyAsync((char *) dev + off, host + off, len, cudaMemcpyHostToDevice, stream));
		}
		CK(cudaStreamSynchronize(stream));
		for (size_t off = 0; off < s; off += piece)
			CK(cudaHostUnregister(host + off));
	});

	/* The library's strategies (gs_copy_to_device / gs_copy_from_device). */
	{
		static const size_t chunks[] = {(size_t) 1 << 20, (size_t) 2 << 20, (size_t) 4 << 20,
		(size_t) 8 << 20, (size_t) 16 << 20, (size_t) 32 << 20};
		char		name[96];

		for (size_t c : chunks)
		{
			gs_host_sort_set_transfer(GS_TRANSFER_STAGED, c);
			snprintf(name, sizeof(name), "gs staged H2D, 2 x %zu MiB", c >> 20);
			row(name, [&](size_t s) { GS(gs_copy_to_device(dev, host, s, NULL, NULL, &err_)); });
			snprintf(name, sizeof(name), "gs staged D2H, 2 x %zu MiB", c >> 20);
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

	CK(cudaFree(dev));
	CK(cudaFreeHost(pinned));
	free(host);
	free(host2);
	gs_device_release();
}

/* ------------------------------------------------------------------------ */

/* Whether out holds n keys in ascending SPEC order (ordered keys non-decreasing). */
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

/* Median of each figure of the report over REPS calls (after WARMUP). */
static e2e_result
run_host_sort(gs_type type, size_t n, const void *in, void *out, bool cold, bool argsort)
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
		void	   *o = out;

		if (cold)
			o = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(&job, 0, sizeof(job));
		job.type = type;
		job.n = n;
		job.input = in;
		job.output = o;
		job.perm = perm;
		GS(gs_host_sort(&job, &rep, &err_));
		if (i == WARMUP + REPS - 1)
			r.ok = sorted(type, o, n);
		if (cold)
			munmap(o, bytes);
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

static e2e_result int4_1e7_auto_warm,
			int4_1e7_auto_cold;

static void
bench_host_sort(void)
{
	static const gs_type types[] = {GS_INT4, GS_FLOAT8};
	static const gs_transfer transfers[] = {GS_TRANSFER_AUTO, GS_TRANSFER_STAGED, GS_TRANSFER_REGISTER,
	GS_TRANSFER_PAGEABLE};
	size_t		max_n = quick ? 1000000 : 100000000;

	printf("## 2. gs_host_sort end to end, ms (median of %d; uniform keys; output a separate array)\n\n", REPS);
	printf("\"warm\": the same output array every call; \"cold\": a fresh mmap'd one each call (as palloc gives).\n");
	printf("GB/s: array bytes / total.  auto resolves to %s below %zu MiB, %s from there.\n\n",
		   gs_transfer_name(GS_TRANSFER_STAGED), GS_REGISTER_MIN_BYTES >> 20, gs_transfer_name(GS_TRANSFER_REGISTER));
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
				for (int cold = 0; cold < 2; cold++)
				{
					e2e_result r;

					if (cold && !(t == GS_TRANSFER_AUTO && n >= 1000000))
						continue;
					gs_host_sort_set_transfer(t, 0);
					r = run_host_sort(type, n, in, out, cold, false);
					printf("| %s | %zu | %s | %s | %.3f | %.3f | %.3f | %.3f | %.1f | %s |\n",
						   gs_type_name(type), n, gs_transfer_name(t), cold ? "cold" : "warm",
						   r.in, r.sort, r.out, r.total, gbps(n * w, r.total), r.ok ? "sorted" : "WRONG");
					fflush(stdout);
					if (type == GS_INT4 && n == 10000000 && t == GS_TRANSFER_AUTO)
						(cold ? int4_1e7_auto_cold : int4_1e7_auto_warm) = r;
				}
		}
		if (type == GS_INT4 && max_n >= 10000000)
		{
			e2e_result	r;

			gs_host_sort_set_transfer(GS_TRANSFER_AUTO, 0);
			r = run_host_sort(type, 10000000, in, out, false, true);
			printf("| int4 | 10000000 | auto | warm, keys + perm | %.3f | %.3f | %.3f | %.3f | %.1f | %s |\n",
				   r.in, r.sort, r.out, r.total, gbps(10000000 * w, r.total), r.ok ? "sorted" : "WRONG");
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
		printf("gs_host_sort auto, warm output: %.3f ms total (%.2fx the floor; target <= 10 ms)\n\n",
			   int4_1e7_auto_warm.total, int4_1e7_auto_warm.total / floor);
		printf("gs_host_sort auto, cold output: %.3f ms total (%.2fx the floor)\n",
			   int4_1e7_auto_cold.total, int4_1e7_auto_cold.total / floor);
	}
	gs_device_release();
	return 0;
}
