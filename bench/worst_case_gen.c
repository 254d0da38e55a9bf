/*
 * worst_case_gen.c: checks the worst-case generator of worst_case.h on the
 * CPU, no GPU needed.  For (E, b, w) it prints the per-warp splits, the keys
 * they align against 003's counts, and the model cost of a warp's merge
 * (DMM: E steps when conflict-free) for the worst case against random splits.
 * Given n it also builds the input, checks it is a permutation of 0..n-1, and
 * replays the merge sort on it (thread runs of E, then pairwise merges)
 * checking that every patterned merge takes its keys from A and B exactly as
 * intended.
 *
 *   worst_case_gen E b [w [n [pass_E pass_b]]]   e.g. worst_case_gen 17 256 32 1114112
 *
 * pass_E, pass_b: the merge passes' (E, b) when they differ from the block
 * sort's (gs_worst_case_fill_shape); the replay then checks the passes'
 * merges against their own pattern.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worst_case.h"

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a,
				y = *(const uint32_t *) b;

	return x < y ? -1 : x > y;
}

/* Random splits of a warp with the same totals as a warp of L, for comparison. */
static void
random_splits(int w, int E, gs_wc_split *sp, uint64_t *rs)
{
	int			left_a = (E + 1) / 2 * w;
	int			left = w * E;

	for (int t = 0; t < w; t++)
	{
		int			p = 0;

		for (int j = 0; j < E; j++, left--)
			if (gs_wc_rand(rs) % (uint64_t) left < (uint64_t) left_a)
			{
				p++;
				left_a--;
			}
		sp[t].p = p;
		sp[t].a_first = (int) (gs_wc_rand(rs) & 1);
	}
}

/* Replays the merge sort on in[0..n) and checks the patterned merges; returns mismatches. */
static size_t
replay(const uint32_t *in, size_t n, int E, int b, int pass_e, int pass_b, int w,
	   const gs_wc_split *l_split, int have, const gs_wc_split *pass_split, int have_pass)
{
	uint32_t   *cur = malloc(n * sizeof(uint32_t)),
			   *next = malloc(n * sizeof(uint32_t));
	size_t		bad = 0,
				checked = 0;

	memcpy(cur, in, n * sizeof(uint32_t));
	for (size_t i = 0; i < n; i += E)
		qsort(cur + i, E, sizeof(uint32_t), cmp_u32);
	for (size_t m = 2 * E; m <= n; m *= 2)
	{
		int			in_pass = m > (size_t) E * b;
		int			e = in_pass ? pass_e : E;
		size_t		group = in_pass ? gs_wc_group(m, pass_e, pass_b) : gs_wc_group(m, E, b);
		int			patterned = in_pass ? gs_wc_patterned(have_pass, m, pass_e, pass_b, w) :
			gs_wc_patterned(have, m, E, b, w);

		for (size_t base = 0; base < n; base += m)
		{
			size_t		a = base,
						ae = base + m / 2,
						bb = ae,
						be = base + m;

			for (size_t k = 0; k < m; k++)
			{
				int			from_a = bb >= be || (a < ae && cur[a] <= cur[bb]);

				if (patterned)
				{
					checked++;
					bad += from_a != gs_wc_from_a(in_pass ? pass_split : l_split, e, w, group, k);
				}
				next[base + k] = from_a ? cur[a++] : cur[bb++];
			}
		}
		memcpy(cur, next, n * sizeof(uint32_t));
	}
	for (size_t i = 0; i < n; i++)
		bad += cur[i] != i;
	printf("replay: %zu patterned outputs checked, %zu mismatches (sorted at the end: %s)\n",
		   checked, bad, bad ? "no" : "yes");
	free(cur);
	free(next);
	return bad;
}

int
main(int argc, char **argv)
{
	int			E,
				b,
				w = 32;
	size_t		n = 0;
	int			pass_e,
				pass_b;
	gs_wc_split sp[GS_WC_MAX_W],
				pass_sp[GS_WC_MAX_W],
				rnd[GS_WC_MAX_W];
	int			aligned;
	uint64_t	rs = 12345;
	double		rcost = 0;
	int			trials = 2000;

	if (argc < 3)
	{
		fprintf(stderr, "usage: %s E b [w [n [pass_E pass_b]]]\n", argv[0]);
		return 2;
	}
	E = atoi(argv[1]);
	b = atoi(argv[2]);
	if (argc > 3)
		w = atoi(argv[3]);
	if (argc > 4)
		n = strtoull(argv[4], NULL, 10);
	pass_e = argc > 6 ? atoi(argv[5]) : E;
	pass_b = argc > 6 ? atoi(argv[6]) : b;

	aligned = gs_wc_warp_splits(w, E, sp);
	printf("E = %d, b = %d, w = %d\n", E, b, w);
	if (aligned < 0)
	{
		printf("no construction (E even or >= w): random splits only\n");
		return 0;
	}
	{
		int			sum_p = 0;

		printf("splits of a warp of L (p keys from A, first list):");
		for (int t = 0; t < w; t++)
		{
			printf(" %d%s", sp[t].p, sp[t].a_first ? "A" : "B");
			sum_p += sp[t].p;
		}
		printf("\nkeys from A: %d (want %d)\n", sum_p, (E + 1) / 2 * w);
	}
	if (2 * E > w)
	{
		int			r = w - E;

		printf("aligned keys per warp: %d (Theorem 9: %d)\n", aligned, (E * E + E + 2 * E * r - r * r - r) / 2);
	}
	else
		printf("aligned keys per warp: %d (Theorem 3: %d)\n", aligned, E * E);
	{
		gs_wc_split best[GS_WC_MAX_W];

		printf("optimum of the same objective (exhaustive DP, s = %d): %d\n", 2 * E > w ? w - E : 0,
			   gs_wc_best_splits(w, E, 2 * E > w ? w - E : 0, (E + 1) / 2 * w, best));
	}
	for (int i = 0; i < trials; i++)
	{
		random_splits(w, E, rnd, &rs);
		rcost += gs_wc_model_cost(w, E, rnd);
	}
	printf("model cost of a warp's merge (steps; %d = conflict-free): worst case %d, random splits %.2f\n",
		   E, gs_wc_model_cost(w, E, sp), rcost / trials);

	if (n > 0)
	{
		uint32_t   *in = malloc(n * sizeof(uint32_t));
		uint32_t   *chk = malloc(n * sizeof(uint32_t));
		size_t		bad = 0;

		int			have_pass = gs_wc_warp_splits(w, pass_e, pass_sp) >= 0;

		if (gs_worst_case_fill_shape(in, n, E, b, pass_e, pass_b, w, 1) != 0)
		{
			printf("n = %zu: not of the form b*E*2^k, or the pass tile does not divide 2*b*E\n", n);
			return 1;
		}
		if (pass_e != E || pass_b != b)
			printf("merge passes: E = %d, b = %d (construction: %s)\n", pass_e, pass_b,
				   have_pass ? "patterned" : "random splits");
		memcpy(chk, in, n * sizeof(uint32_t));
		qsort(chk, n, sizeof(uint32_t), cmp_u32);
		for (size_t i = 0; i < n; i++)
			bad += chk[i] != i;
		printf("n = %zu: permutation of 0..n-1: %s\n", n, bad ? "NO" : "yes");
		bad += replay(in, n, E, b, pass_e, pass_b, w, sp, 1, pass_sp, have_pass);
		free(in);
		free(chk);
		return bad ? 1 : 0;
	}
	return 0;
}
