/*
 * merge_bank_model.c: a model of the shared-memory bank conflicts of the
 * merge sort's passes (kernels/merge_sort.cu, shape 4: block sort tiles of
 * 1024 x 15 keys, pass tiles of 256 x 15), on the CPU.  For every pass of a
 * sort of n keys it stages each pass tile as the kernel does, replays each
 * warp's serial merge step by step, and counts the wavefronts of the shared
 * loads a step issues (per bank, the distinct words the active lanes ask
 * for; the most of any bank).  Prints the mean per warp and step.
 *
 *   merge_bank_model [--worst] [--order fixed|single|dir|rand] [--n N]
 *
 * --worst: the input of bench/worst_case.h built for the shape (Berney and
 * Sitchinava); otherwise a random permutation of 0..n-1.  Orders:
 *   fixed   the fixed order: forwards, the right run right after the left
 *           one, two predicated loads a step (those of lanes taking from
 *           the left run, then those taking from the right), each counted;
 *   single  the same with one load a step for all lanes;
 *   dir     one load a step, each lane forwards or backwards at random;
 *   rand    that, and the right run staged 0..31 elements after the left
 *           one (per tile): the randomized order (GS_MERGE_ORDER_RANDOM).
 * Deterministic (a fixed seed for the input and the draws).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worst_case.h"

#define E 15
#define SORT_B 1024
#define PASS_B 256
#define W 32

enum order
{
	FIXED, SINGLE, DIR, RAND
};

static uint64_t rng = 88172645463325252ull;

static uint32_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t) rng;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a,
				y = *(const uint32_t *) b;

	return x < y ? -1 : x > y;
}

/* How many of the first diag outputs of merge(A, B) come from A (A first on ties). */
static int
merge_path(const uint32_t *a, int la, const uint32_t *b, int lb, int diag)
{
	int			lo = diag > lb ? diag - lb : 0,
				hi = diag < la ? diag : la;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (a[mid] <= b[diag - 1 - mid])
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Wavefronts of one load instruction: per bank the distinct words asked for, the most of any bank. */
static int
wavefronts(const int *addr, const int *active)
{
	int			most = 0;

	for (int bank = 0; bank < W; bank++)
	{
		int			seen[W],
					n = 0;

		for (int l = 0; l < W; l++)
		{
			int			dup = 0;

			if (!active[l] || (addr[l] & (W - 1)) != bank)
				continue;
			for (int s = 0; s < n; s++)
				dup |= seen[s] == addr[l];
			if (!dup)
				seen[n++] = addr[l];
		}
		if (n > most)
			most = n;
	}
	return most;
}

/* One warp of a pass tile: A = a[0, na), B = b[0, nb) staged at 0 and na + gap. Returns its wavefronts. */
static long
warp_steps(const uint32_t *a, int na, const uint32_t *b, int nb, int warp, int gap, enum order o)
{
	int			ha[W],
				hb[W],
				back[W];
	long		waves = 0;

	for (int l = 0; l < W; l++)
	{
		int			d = (warp * W + l) * E;

		back[l] = o >= DIR && d + E <= na + nb ? (int) (next_rand() & 1) : 0;
		if (back[l])
			d += E;
		ha[l] = merge_path(a, na, b, nb, d);
		hb[l] = d - ha[l];
	}
	for (int step = 0; step < E; step++)
	{
		int			addr_a[W],
					addr_b[W],
					addr[W],
					from_a[W],
					from_b[W],
					all[W];

		for (int l = 0; l < W; l++)
		{
			int			take_b;

			if (back[l])
			{
				/* take the larger of A[ha - 1], B[hb - 1], B on ties; load the key before the new head */
				take_b = hb[l] > 0 && (ha[l] == 0 || b[hb[l] - 1] >= a[ha[l] - 1]);
				if (take_b)
					hb[l]--;
				else
					ha[l]--;
				addr_a[l] = ha[l] - 1;
				addr_b[l] = na + gap + hb[l] - 1;
			}
			else
			{
				take_b = hb[l] < nb && (ha[l] >= na || b[hb[l]] < a[ha[l]]);
				if (take_b)
					hb[l]++;
				else
					ha[l]++;
				addr_a[l] = ha[l];
				addr_b[l] = na + gap + hb[l];
			}
			from_a[l] = !take_b;
			from_b[l] = take_b;
			all[l] = 1;
			addr[l] = take_b ? addr_b[l] : addr_a[l];
		}
		if (o == FIXED)
			waves += wavefronts(addr_a, from_a) + wavefronts(addr_b, from_b);
		else
			waves += wavefronts(addr, all);
	}
	return waves;
}

int
main(int argc, char **argv)
{
	size_t		n = (size_t) SORT_B * E * 16;
	int			worst = 0;
	enum order	o = FIXED;
	const char *names[] = {"fixed", "single", "dir", "rand"};
	const int	tile = PASS_B * E;
	uint32_t   *in;
	long		waves = 0,
				steps = 0;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--worst") == 0)
			worst = 1;
		else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--order") == 0 && i + 1 < argc)
		{
			const char *name = argv[++i];

			for (int k = 0; k < 4; k++)
				if (strcmp(name, names[k]) == 0)
					o = (enum order) k;
		}
		else
		{
			fprintf(stderr, "usage: %s [--worst] [--order fixed|single|dir|rand] [--n N]\n", argv[0]);
			return 2;
		}
	}
	if (n < (size_t) 2 * SORT_B * E || n % ((size_t) SORT_B * E) != 0)
	{
		fprintf(stderr, "n must be a multiple of %d, at least two of them\n", SORT_B * E);
		return 2;
	}
	in = malloc(n * sizeof(uint32_t));
	if (in == NULL)
		return 1;
	if (worst)
	{
		if (gs_worst_case_fill_shape(in, n, E, SORT_B, E, PASS_B, W, 1) != 0)
		{
			fprintf(stderr, "the generator refused n = %zu\n", n);
			return 1;
		}
	}
	else
	{
		for (size_t i = 0; i < n; i++)
			in[i] = (uint32_t) i;
		for (size_t i = n - 1; i > 0; i--)
		{
			size_t		j = (((size_t) next_rand() << 32) | next_rand()) % (i + 1);
			uint32_t	t = in[i];

			in[i] = in[j];
			in[j] = t;
		}
	}

	/* every pass: runs of `run` keys (the sorted pieces of the input) merged in pairs, tile by tile */
	for (size_t run = (size_t) SORT_B * E; run < n; run *= 2)
	{
		uint32_t   *a = malloc(run * sizeof(uint32_t));
		uint32_t   *b = malloc(run * sizeof(uint32_t));

		if (a == NULL || b == NULL)
			return 1;
		for (size_t pair = 0; pair + run < n; pair += 2 * run)
		{
			size_t		lb = pair + 2 * run <= n ? run : n - pair - run;

			memcpy(a, in + pair, run * sizeof(uint32_t));
			memcpy(b, in + pair + run, lb * sizeof(uint32_t));
			qsort(a, run, sizeof(uint32_t), cmp_u32);
			qsort(b, lb, sizeof(uint32_t), cmp_u32);
			for (size_t out = 0; out < run + lb; out += tile)
			{
				int			total = (int) (run + lb - out < (size_t) tile ? run + lb - out : (size_t) tile);
				int			s0 = merge_path(a, (int) run, b, (int) lb, (int) out);
				int			s1 = merge_path(a, (int) run, b, (int) lb, (int) out + total);
				int			gap = o == RAND ? (int) (next_rand() & (W - 1)) : 0;

				for (int warp = 0; warp * W * E < total; warp++)
				{
					waves += warp_steps(a + s0, s1 - s0, b + (out - s0), total - (s1 - s0), warp, gap, o);
					steps += E;
				}
			}
		}
		free(a);
		free(b);
	}
	printf("%s input, order %s, n = %zu: %.3f wavefronts per warp and step\n", worst ? "worst-case" : "random",
		   names[o], n, (double) waves / (double) steps);
	free(in);
	return 0;
}
