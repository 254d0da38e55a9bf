/*
 * bench_cpu_sort.c: the CPU sort of kernels/ (gs_cpu_sort, gs_cpu_argsort)
 * against the C library's qsort, for 10^4, 10^6 and 10^7 int4 and float8
 * uniform and int4 narrow ([0, 10^6)), median of 5 runs each, single thread.
 * Writes a markdown table naming the CPU (from /proc/cpuinfo) to
 * bench/results/cpu-sort-<cpu model slug>.md, or to -o PATH.
 *
 *   bench_cpu_sort [-o PATH] [--label TEXT] [--runs N] [--no-qsort] [--sweep]
 *
 * --sweep instead times gs_cpu_sort and gs_cpu_argsort of int4 and float8
 * uniform from 10^3 to 10^7 in steps of about 3x (CPU time, fastest of the
 * runs), to place the switch between digit sizes (GS_CPU_WIDE_MAX_BYTES).
 *
 * --label names a variant build in the title (bench/NOTES-cpu.md links this
 * with kernels/cpu_sort.c built with -DGS_CPU_DIGIT_BITS=11 to compare digit
 * sizes).  Times are wall clock; the load average before and after goes into
 * the file, because a busy machine shows in them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpusort.h"
#include "../test/distributions.h"

typedef struct bench_case
{
	gs_type		type;
	gs_dist		dist;
	size_t		n;
} bench_case;

static const bench_case cases[] = {
	{GS_INT4, GS_DIST_UNIFORM, 10000},
	{GS_INT4, GS_DIST_UNIFORM, 1000000},
	{GS_INT4, GS_DIST_UNIFORM, 10000000},
	{GS_FLOAT8, GS_DIST_UNIFORM, 10000},
	{GS_FLOAT8, GS_DIST_UNIFORM, 1000000},
	{GS_FLOAT8, GS_DIST_UNIFORM, 10000000},
	{GS_INT4, GS_DIST_NARROW, 10000},
	{GS_INT4, GS_DIST_NARROW, 1000000},
	{GS_INT4, GS_DIST_NARROW, 10000000},
};

static double
clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);	/* the inputs are finite: no NaN or zero sign rules needed */
}

static int
cmp_int32(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a,
				y = *(const int32_t *) b;

	return (x > y) - (x < y);
}

/* The first three fields of /proc/loadavg, or "?" */
static void
load_average(char *buf, size_t len)
{
	FILE	   *f = fopen("/proc/loadavg", "r");
	double		a = 0,
				b = 0,
				c = 0;

	if (f != NULL && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
		snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
	else
		snprintf(buf, len, "?");
	if (f != NULL)
		fclose(f);
}

static int
cmp_ms(const void *a, const void *b)
{
	return cmp_double(a, b);
}

static void *
xmalloc(size_t bytes)
{
	void	   *p = malloc(bytes ? bytes : 1);

	if (p == NULL)
	{
		fprintf(stderr, "bench_cpu_sort: out of memory for %zu bytes\n", bytes);
		exit(2);
	}
	return p;
}

/* The CPU's model name, and a file-name slug of it ("AMD EPYC" -> "amd-epyc"). */
static void
cpu_model(char *name, size_t len, char *slug, size_t slug_len)
{
	FILE	   *f = fopen("/proc/cpuinfo", "r");
	char		line[512];
	size_t		i,
				j = 0;

	snprintf(name, len, "unknown cpu");
	if (f != NULL)
	{
		while (fgets(line, sizeof(line), f) != NULL)
		{
			char	   *colon = strchr(line, ':');

			if (strncmp(line, "model name", 10) == 0 && colon != NULL)
			{
				colon++;
				while (*colon == ' ' || *colon == '\t')
					colon++;
				colon[strcspn(colon, "\n")] = '\0';
				snprintf(name, len, "%s", colon);
				break;
			}
		}
		fclose(f);
	}
	for (i = 0; name[i] != '\0' && j + 1 < slug_len; i++)
	{
		if (isalnum((unsigned char) name[i]))
			slug[j++] = (char) tolower((unsigned char) name[i]);
		else if (j > 0 && slug[j - 1] != '-')
			slug[j++] = '-';
	}
	while (j > 0 && slug[j - 1] == '-')
		j--;
	slug[j] = '\0';
}

/* Repeats of one timed call per sample so that small n is not all clock noise. */
static int
repeats_for(size_t n)
{
	return n >= 1000000 ? 1 : (int) (1000000 / n);
}

typedef enum
{
	RUN_SORT,
	RUN_ARGSORT,
	RUN_QSORT
} run_kind;

/* What time_ms measures: wall-clock median and fastest, and the median of this thread's CPU time. */
typedef struct timing
{
	double		median;
	double		fastest;
	double		cpu_median;
	double		cpu_fastest;
} timing;

/*
 * Times runs of one kind, each the mean of repeats_for(n) calls, the input
 * restored (untimed) before each call.  CPU time leaves out what other
 * processes took from this one on a shared machine; wall time is the figure.
 */
static timing
time_ms(run_kind kind, const bench_case *c, const void *input, void *work, uint32_t *perm,
		void *sorted, void *scratch, int runs)
{
	size_t		w = gs_type_size(c->type);
	int			reps = repeats_for(c->n);
	double	   *wall = xmalloc(sizeof(double) * runs);
	double	   *cpu = xmalloc(sizeof(double) * runs);
	timing		t;
	gs_error	err;
	int			r,
				k;

	for (r = -1; r < runs; r++)	/* run -1 warms caches and faults in the pages */
	{
		double		wall_total = 0,
					cpu_total = 0;

		for (k = 0; k < reps; k++)
		{
			gs_status	st = GS_OK;
			double		w0,
						c0;

			memcpy(work, input, c->n * w);
			w0 = clock_ms(CLOCK_MONOTONIC);
			c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
			if (kind == RUN_SORT)
				st = gs_cpu_sort(c->type, work, c->n, false, scratch, NULL, NULL, &err);
			else if (kind == RUN_ARGSORT)
				st = gs_cpu_argsort(c->type, work, c->n, false, perm, sorted, scratch, NULL, NULL, &err);
			else
				qsort(work, c->n, w, c->type == GS_FLOAT8 ? cmp_double : cmp_int32);
			cpu_total += clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
			wall_total += clock_ms(CLOCK_MONOTONIC) - w0;
			if (st != GS_OK)
			{
				fprintf(stderr, "bench_cpu_sort: %s\n", err.message);
				exit(1);
			}
		}
		if (r >= 0)
		{
			wall[r] = wall_total / reps;
			cpu[r] = cpu_total / reps;
		}
	}
	qsort(wall, runs, sizeof(double), cmp_ms);
	qsort(cpu, runs, sizeof(double), cmp_ms);
	t.median = wall[runs / 2];
	t.fastest = wall[0];
	t.cpu_median = cpu[runs / 2];
	t.cpu_fastest = cpu[0];
	free(wall);
	free(cpu);
	return t;
}

/* The --sweep table. */
static void
sweep(FILE *out, int runs)
{
	static const gs_type types[] = {GS_INT4, GS_FLOAT8};
	size_t		t;

	fprintf(out, "| type | n | MiB | gs_cpu_sort ms | ns/element | gs_cpu_argsort ms | ns/element |\n");
	fprintf(out, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++)
	{
		size_t		n;

		for (n = 1000; n <= 10000000; n = (n % 3 == 0) ? n / 3 * 10 : n * 3)
		{
			bench_case	c = {types[t], GS_DIST_UNIFORM, n};
			size_t		w = gs_type_size(c.type);
			void	   *input = xmalloc(n * w);
			void	   *work = xmalloc(n * w);
			void	   *sorted = xmalloc(n * w);
			uint32_t   *perm = xmalloc(n * sizeof(uint32_t));
			void	   *scratch = xmalloc(gs_cpu_scratch_bytes(c.type, n, true));
			timing		st,
						at;

			gs_fill(c.type, c.dist, input, n, 42);
			st = time_ms(RUN_SORT, &c, input, work, perm, sorted, scratch, runs);
			at = time_ms(RUN_ARGSORT, &c, input, work, perm, sorted, scratch, runs);
			fprintf(out, "| %s | %zu | %.2f | %.4f | %.2f | %.4f | %.2f |\n", gs_type_name(c.type), n,
					n * w / 1048576.0, st.cpu_fastest, st.cpu_fastest * 1e6 / n,
					at.cpu_fastest, at.cpu_fastest * 1e6 / n);
			fflush(out);
			free(input);
			free(work);
			free(sorted);
			free(perm);
			free(scratch);
		}
	}
}

int
main(int argc, char **argv)
{
	const char *out_path = NULL;
	const char *label = NULL;
	int			runs = 5;
	int			with_qsort = 1;
	int			do_sweep = 0;
	char		model[256],
				slug[128],
				default_path[256],
				date[32],
				load_before[64],
				load_after[64];
	time_t		t = time(NULL);
	FILE	   *out;
	size_t		i;

	for (i = 1; i < (size_t) argc; i++)
	{
		if (strcmp(argv[i], "-o") == 0 && i + 1 < (size_t) argc)
			out_path = argv[++i];
		else if (strcmp(argv[i], "--label") == 0 && i + 1 < (size_t) argc)
			label = argv[++i];
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < (size_t) argc)
			runs = atoi(argv[++i]);
		else if (strcmp(argv[i], "--no-qsort") == 0)
			with_qsort = 0;
		else if (strcmp(argv[i], "--sweep") == 0)
			do_sweep = 1;
		else
		{
			fprintf(stderr, "usage: %s [-o PATH] [--label TEXT] [--runs N] [--no-qsort] [--sweep]\n", argv[0]);
			return 2;
		}
	}
	if (runs < 1)
		runs = 1;
	cpu_model(model, sizeof(model), slug, sizeof(slug));
	snprintf(default_path, sizeof(default_path), "bench/results/cpu-sort-%s%s.md", slug,
			 do_sweep ? "-sweep" : "");
	if (out_path == NULL)
		out_path = default_path;
	strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&t));

	load_average(load_before, sizeof(load_before));
	out = fopen(out_path, "w");
	if (out == NULL)
	{
		fprintf(stderr, "bench_cpu_sort: cannot write %s\n", out_path);
		return 1;
	}
	fprintf(out, "# CPU sort of kernels/%s%s%s\n\n", do_sweep ? ", sizes swept" : " vs qsort",
			label ? ": " : "", label ? label : "");
	fprintf(out, "CPU: %s, %ld online cores (every figure is one thread). Date: %s. Compiler: gcc %s.\n",
			model, sysconf(_SC_NPROCESSORS_ONLN), date, __VERSION__);
	if (do_sweep)
	{
		fprintf(out, "int4 and float8 uniform. Milliseconds of this thread's CPU time, fastest of %d runs; "
				"below 10^6 elements each run is the mean of 10^6/n calls. MiB: the keys alone. "
				"gs_cpu_argsort writes perm and sorted_keys. Written by bench/bench_cpu_sort.c --sweep.\n\n",
				runs);
		sweep(out, runs);
		load_average(load_after, sizeof(load_after));
		fprintf(out, "\nLoad average (1, 5, 15 min) before: %s; after: %s.\n", load_before, load_after);
		fclose(out);
		fprintf(stderr, "wrote %s\n", out_path);
		return 0;
	}
	fprintf(out, "Milliseconds, wall clock, median of %d runs; for gs_cpu_sort also the fastest run and the "
			"median CPU time of the thread (what other processes took does not count there). Below 10^6 "
			"elements each run is the mean of 10^6/n calls. Input restored before each call, not timed. "
			"gs_cpu_argsort writes perm and sorted_keys. Written by bench/bench_cpu_sort.c.\n\n", runs);
	fprintf(out, "| type | distribution | n | gs_cpu_sort | fastest | CPU | Melem/s | gs_cpu_argsort | qsort | sort vs qsort |\n");
	fprintf(out, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		const bench_case *c = &cases[i];
		size_t		w = gs_type_size(c->type);
		void	   *input = xmalloc(c->n * w);
		void	   *work = xmalloc(c->n * w);
		void	   *sorted = xmalloc(c->n * w);
		uint32_t   *perm = xmalloc(c->n * sizeof(uint32_t));
		size_t		bytes = gs_cpu_scratch_bytes(c->type, c->n, true);
		void	   *scratch = xmalloc(bytes);
		timing		sort_t,
					arg_t,
					q_t;
		char		qcol[32] = "-",
					ratio[32] = "-";

		gs_fill(c->type, c->dist, input, c->n, 42);
		sort_t = time_ms(RUN_SORT, c, input, work, perm, sorted, scratch, runs);
		arg_t = time_ms(RUN_ARGSORT, c, input, work, perm, sorted, scratch, runs);
		if (with_qsort)
		{
			q_t = time_ms(RUN_QSORT, c, input, work, perm, sorted, scratch, runs);
			snprintf(qcol, sizeof(qcol), "%.3f", q_t.median);
			snprintf(ratio, sizeof(ratio), "%.1fx", q_t.median / sort_t.median);
		}
		fprintf(out, "| %s | %s | %zu | %.3f | %.3f | %.3f | %.0f | %.3f | %s | %s |\n",
				gs_type_name(c->type), gs_dist_names[c->dist], c->n, sort_t.median, sort_t.fastest,
				sort_t.cpu_median, c->n / sort_t.median / 1e3, arg_t.median, qcol, ratio);
		fflush(out);
		fprintf(stderr, "%s %s n=%zu: sort %.3f ms (cpu %.3f), argsort %.3f ms, qsort %s ms\n",
				gs_type_name(c->type), gs_dist_names[c->dist], c->n, sort_t.median, sort_t.cpu_median,
				arg_t.median, qcol);
		free(input);
		free(work);
		free(sorted);
		free(perm);
		free(scratch);
	}
	load_average(load_after, sizeof(load_after));
	fprintf(out, "\nLoad average (1, 5, 15 min) before: %s; after: %s.\n", load_before, load_after);
	fclose(out);
	fprintf(stderr, "wrote %s\n", out_path);
	return 0;
}
