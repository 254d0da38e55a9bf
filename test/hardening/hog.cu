/*
 * hog.cu: takes nearly all free memory of a GPU and holds it, so that
 * test/hardening/faults.sh can show gpusort running out of device memory
 * because of another process.
 *
 *   hog [--device N] [--leave MB] [--ready FILE] [--until FILE] [--seconds S]
 *
 * Allocates with cudaMalloc until at most --leave MB (default 16) are free:
 * 256 MB blocks first, then smaller ones down to 1 MB, so fragmentation
 * cannot stop it early.  Then writes "held <MB> free <MB>" to stdout and to
 * --ready FILE (created only once the memory is held), and waits until
 * --until FILE exists, a SIGTERM/SIGINT comes, or --seconds (default 600)
 * pass, whichever is first, so that it never outlives a test by much.
 * Exits 0 after freeing, 1 on a CUDA error, 2 on bad arguments.
 *
 * Built by faults.sh with nvcc where there is one, or prebuilt:
 *   nvcc -O2 -arch=sm_90 -o test/hardening/bin/hog test/hardening/hog.cu
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#define HOG_MAX_BLOCKS	65536
#define MB				((size_t) 1 << 20)

static volatile sig_atomic_t hog_stop = 0;

static void
hog_on_signal(int sig)
{
	(void) sig;
	hog_stop = 1;
}

static int
hog_usage(void)
{
	fprintf(stderr, "usage: hog [--device N] [--leave MB] [--ready FILE] [--until FILE] [--seconds S]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	int			device = 0;
	size_t		leave_mb = 16;
	const char *ready = NULL;
	const char *until = NULL;
	double		seconds = 600;
	static void *blocks[HOG_MAX_BLOCKS];
	int			nblocks = 0;
	size_t		held = 0,
				free_bytes,
				total_bytes,
				block;
	cudaError_t e;
	struct timespec start,
				now;
	int			i;

	for (i = 1; i < argc; i++)
	{
		if (i + 1 >= argc)
			return hog_usage();
		if (strcmp(argv[i], "--device") == 0)
			device = atoi(argv[++i]);
		else if (strcmp(argv[i], "--leave") == 0)
			leave_mb = (size_t) atol(argv[++i]);
		else if (strcmp(argv[i], "--ready") == 0)
			ready = argv[++i];
		else if (strcmp(argv[i], "--until") == 0)
			until = argv[++i];
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = atof(argv[++i]);
		else
			return hog_usage();
	}
	signal(SIGTERM, hog_on_signal);
	signal(SIGINT, hog_on_signal);

	e = cudaSetDevice(device);
	if (e == cudaSuccess)
		e = cudaFree(NULL);		/* make the context: it takes memory too */
	if (e == cudaSuccess)
		e = cudaMemGetInfo(&free_bytes, &total_bytes);
	if (e != cudaSuccess)
	{
		fprintf(stderr, "hog: GPU %d: %s\n", device, cudaGetErrorString(e));
		return 1;
	}

	/* largest blocks first; a refused block means try a smaller one */
	for (block = 256 * MB; block >= MB && nblocks < HOG_MAX_BLOCKS;)
	{
		void	   *p;

		if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess)
			break;
		if (free_bytes <= leave_mb * MB + block)
		{
			if (block == MB)
				break;
			block /= 2;
			continue;
		}
		if (cudaMalloc(&p, block) != cudaSuccess)
		{
			(void) cudaGetLastError();
			if (block == MB)
				break;
			block /= 2;
			continue;
		}
		blocks[nblocks++] = p;
		held += block;
	}
	if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess)
		free_bytes = 0;
	printf("held %zu free %zu total %zu\n", held / MB, free_bytes / MB, total_bytes / MB);
	fflush(stdout);
	if (ready != NULL)
	{
		FILE	   *f = fopen(ready, "w");

		if (f != NULL)
		{
			fprintf(f, "held %zu free %zu total %zu\n", held / MB, free_bytes / MB, total_bytes / MB);
			fclose(f);
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!hog_stop)
	{
		if (until != NULL && access(until, F_OK) == 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 > seconds)
			break;
		usleep(20000);
	}

	for (i = 0; i < nblocks; i++)
		(void) cudaFree(blocks[i]);
	return 0;
}
