/*
 * worst_case.h: inputs that maximise shared-memory bank conflicts in the
 * merging stage of a GPU pairwise merge sort (Berney and Sitchinava,
 * "Engineering Worst-Case Inputs for Pairwise Merge Sort on GPUs"), for E keys per thread, b threads per block and w banks.
 *
 * The merge sort being attacked (Thrust, Modern GPU, CUB, and our merge-path
 * variant): each thread sorts E keys, each block merges up to b*E keys in
 * shared memory in log2(b) rounds, then every global pass merges pairs of
 * runs, a block per output tile of b*E keys, the tile's pieces of the two runs
 * A and B side by side in shared memory (A at 0, B after it), and thread t of
 * the tile merging outputs t*E .. t*E+E-1 serially.
 *
 * The construction works backwards from the sorted output 0..n-1: for every
 * merge it chooses, output rank by output rank, whether the key comes from A
 * or from B; that fixes the contents of A and B, which are themselves merge
 * outputs one level down, down to the runs of E keys of a thread.  A merge's
 * choice is made per warp (Berney and Sitchinava, section III): warps of a tile are split in
 * halves L and R; a warp of L takes (E+1)/2*w keys from A and (E-1)/2*w from
 * B (R the reverse), so every warp's pieces of A and B start at bank 0; each
 * thread takes p keys from one list and E-p from the other, one list after
 * the other, and the split (p, which list first) of the w threads is chosen so
 * that as many keys as possible are read at step j from bank s + j ("aligned"):
 * then E threads hit the same bank at every step.
 *
 *   - E > w/2 (E odd): the explicit sequence T of Theorem 9 (r = w - E,
 *     x_i = -ir mod E, y_i = ir mod E, tuples interleaved and (E, 0) / (0, E)
 *     inserted after every group summing to r), aligned to the last E banks;
 *     it aligns (E^2 + E + 2Er - r^2 - r) / 2 keys per warp.
 *   - E < w/2: Theorem 3 aligns E^2 keys per warp by the alignment strategies
 *     of Lemma 2, whose proof the paper only sketches.  Here the same
 *     objective (aligned keys, aligned to the first E banks, under the same
 *     constraints on the splits) is maximised exactly by dynamic programming
 *     over the threads of the warp; it reaches E^2 wherever Theorem 3 does.
 *   - E even, or rounds whose runs do not start at bank 0 (the first in-block
 *     rounds): a random split with half the keys from each run.
 *
 * The merge passes may use another (E, b) than the block sort (a pass tile
 * of b_pass * E_pass keys dividing twice the block sort's tile): the same
 * construction then applies to the passes with their own (E, b), since a
 * pass tile stages its pieces of A and B the same way (A at 0, B after it),
 * and each warp of L (R) takes (E+1)/2*w keys of A (B) again, so every piece
 * starts at bank 0.  gs_worst_case_fill_shape builds that input.
 *
 * Header-only C (C99 and CUDA host C++).  Deterministic in its arguments.
 */
#ifndef GPUSORT_WORST_CASE_H
#define GPUSORT_WORST_CASE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GS_WC_MAX_W 64

/* One thread's share of a warp's merge: p keys from A, E - p from B, A first or not. */
typedef struct gs_wc_split
{
	int			p;
	int			a_first;
} gs_wc_split;

/* Keys a thread reads aligned (step j, bank s + j mod w) given where its pieces start. */
static inline int
gs_wc_aligned(int w, int E, int s, int pa, int pb, int p, int a_first)
{
	int			n = 0;
	int			first_len = a_first ? p : E - p;
	int			first_at = a_first ? pa : pb;
	int			second_at = a_first ? pb : pa;

	/* the first list's keys are read at steps 0 .. first_len-1, the second's after */
	if (first_len > 0 && ((first_at - s) % w + w) % w == 0)
		n += first_len;
	if (E - first_len > 0 && ((second_at - first_len - s) % w + w) % w == 0)
		n += E - first_len;
	return n;
}

/*
 * Theorem 9 (E > w/2, E odd): fills split[0 .. w) for a warp of L; returns 0,
 * or -1 when the sequence does not come out with w threads.
 */
static inline int
gs_wc_large_e(int w, int E, gs_wc_split *split)
{
	int			r = w - E;
	int			a[GS_WC_MAX_W],
				b[GS_WC_MAX_W];
	int			ta[2 * GS_WC_MAX_W],
				tb[2 * GS_WC_MAX_W];
	int			nt = 0;
	int			pa = 0,
				pb = 0;

	for (int i = 1; i <= E - 1; i++)
	{
		int			x = ((-i * r) % E + E) % E;
		int			y = (i * r) % E;

		a[i] = (i % 2 == 0) ? x : y;
		b[i] = (i % 2 == 0) ? y : x;
	}
	for (int i = 1; i <= E - 1; i++)
	{
		ta[nt] = a[i];
		tb[nt] = b[i];
		nt++;
		/* rule 1: after (a_1, b_1) and after (a_{E-1}, b_{E-1}) */
		if (i == 1 || i == E - 1)
		{
			ta[nt] = E;
			tb[nt] = 0;
			nt++;
		}
		/* rule 2: after (a_{2k+1}, b_{2k+1}) when a_{2k} + a_{2k+1} = r, k = 1 .. (E-1)/2 - 1 */
		else if (i % 2 == 1 && i >= 3 && i <= E - 2 && a[i - 1] + a[i] == r)
		{
			ta[nt] = E;
			tb[nt] = 0;
			nt++;
		}
		/* rule 3: after (a_{2k}, b_{2k}) when b_{2k-1} + b_{2k} = r, k = 1 .. (E-1)/2 */
		if (i % 2 == 0 && b[i - 1] + b[i] == r)
		{
			ta[nt] = 0;
			tb[nt] = E;
			nt++;
		}
	}
	if (nt != w)
		return -1;
	/* the list to scan first is the one that makes the thread's keys aligned (s = r) */
	for (int t = 0; t < w; t++)
	{
		int			ga = gs_wc_aligned(w, E, r, pa, pb, ta[t], 1);
		int			gb = gs_wc_aligned(w, E, r, pa, pb, ta[t], 0);

		split[t].p = ta[t];
		split[t].a_first = ga >= gb;
		pa += ta[t];
		pb += tb[t];
	}
	return 0;
}

/*
 * The alignment objective solved exactly: over all splits of the w threads
 * with sum p = ka (keys from A), maximise the aligned keys for bank s.
 * Returns the maximum; fills split.
 */
static inline int
gs_wc_best_splits(int w, int E, int s, int ka, gs_wc_split *split)
{
	int			ncols = ka + 1;
	int		   *best = (int *) malloc(sizeof(int) * (size_t) (w + 1) * ncols);
	int		   *from = (int *) malloc(sizeof(int) * (size_t) (w + 1) * ncols);
	int			result;

	for (int i = 0; i <= w; i++)
		for (int x = 0; x < ncols; x++)
			best[i * ncols + x] = -1;
	best[0] = 0;
	for (int i = 0; i < w; i++)
		for (int x = 0; x < ncols; x++)
		{
			int			cur = best[i * ncols + x];
			int			pb = i * E - x;

			if (cur < 0 || pb < 0 || pb > w * E - ka)
				continue;
			for (int p = 0; p <= E && x + p <= ka; p++)
				for (int af = 0; af < 2; af++)
				{
					int			g = cur + gs_wc_aligned(w, E, s, x, pb, p, af);
					int			at = (i + 1) * ncols + x + p;

					if (E - p + pb > w * E - ka)
						continue;
					if (g > best[at])
					{
						best[at] = g;
						from[at] = p * 2 + af;
					}
				}
		}
	result = best[w * ncols + ka];
	for (int i = w, x = ka; i > 0; i--)
	{
		int			f = from[i * ncols + x];

		split[i - 1].p = f / 2;
		split[i - 1].a_first = f % 2;
		x -= f / 2;
	}
	free(best);
	free(from);
	return result;
}

/*
 * The splits of a warp of L for (w, E): Theorem 9 for large odd E, the exact
 * optimum of the same objective for small odd E.  Returns the aligned keys
 * per warp, or -1 when E is even (no construction: use random splits).
 */
static inline int
gs_wc_warp_splits(int w, int E, gs_wc_split *split)
{
	int			ka = (E + 1) / 2 * w;

	if (E % 2 == 0 || E >= w || w > GS_WC_MAX_W)
		return -1;
	if (2 * E > w && gs_wc_large_e(w, E, split) == 0)
	{
		int			pa = 0,
					pb = 0,
					n = 0;

		for (int t = 0; t < w; t++)
		{
			n += gs_wc_aligned(w, E, w - E, pa, pb, split[t].p, split[t].a_first);
			pa += split[t].p;
			pb += E - split[t].p;
		}
		return n;
	}
	return gs_wc_best_splits(w, E, 0, ka, split);
}

/*
 * Bank conflicts of one warp's merge in the model of 003 (DMM: a step costs
 * the largest number of distinct addresses in one bank), given the splits and
 * the runs starting at bank 0: returns the cost of the E steps (E if
 * conflict-free, up to E*E).
 */
static inline int
gs_wc_model_cost(int w, int E, const gs_wc_split *split)
{
	int			pa = 0,
				pb = 0,
				cost = 0;
	int			addr[GS_WC_MAX_W][64];

	for (int t = 0; t < w; t++)
	{
		int			first_len = split[t].a_first ? split[t].p : E - split[t].p;
		int			fa = split[t].a_first ? pa : (1 << 20) + pb;	/* B lives after A */
		int			sa = split[t].a_first ? (1 << 20) + pb : pa;

		for (int j = 0; j < E; j++)
			addr[t][j] = j < first_len ? fa + j : sa + (j - first_len);
		pa += split[t].p;
		pb += E - split[t].p;
	}
	for (int j = 0; j < E; j++)
	{
		int			worst = 0;

		for (int bank = 0; bank < w; bank++)
		{
			int			seen[GS_WC_MAX_W],
						ns = 0;

			for (int t = 0; t < w; t++)
			{
				int			x = addr[t][j];
				int			dup = 0;

				if (((x % w) + w) % w != bank)
					continue;
				for (int k = 0; k < ns; k++)
					dup |= seen[k] == x;
				if (!dup)
					seen[ns++] = x;
			}
			if (ns > worst)
				worst = ns;
		}
		cost += worst;
	}
	return cost;
}

/*
 * Whether output rank k of a merge comes from A, for a merge whose threads
 * form groups of `group` (a tile of b threads, or all threads of a smaller
 * in-block merge): warps in the first half of a group are of L, the rest of R
 * (A and B exchanged).
 */
static inline int
gs_wc_from_a(const gs_wc_split *l_split, int E, int w, size_t group, size_t k)
{
	size_t		t = k / E;		/* thread in the merge */
	size_t		j = k % E;
	int			is_l = (t % group) / w < group / (2 * (size_t) w);
	const gs_wc_split *sp = &l_split[t % w];
	int			p = is_l ? sp->p : E - sp->p;
	int			a_first = is_l ? sp->a_first : !sp->a_first;
	size_t		first_len = a_first ? (size_t) p : (size_t) (E - p);

	return (j < first_len) == (a_first != 0);
}

/* Threads that share a merge of m outputs in a sort with (E, b): a tile at most. */
static inline size_t
gs_wc_group(size_t m, int E, int b)
{
	size_t		t = m / E;

	return t < (size_t) b ? t : (size_t) b;
}

/* Whether a merge of m outputs gets the pattern (else random splits). */
static inline int
gs_wc_patterned(int have, size_t m, int E, int b, int w)
{
	return have && gs_wc_group(m, E, b) >= (size_t) (2 * w) && (m / 2) % (size_t) w == 0;
}

static inline uint64_t
gs_wc_rand(uint64_t *s)
{
	uint64_t	z = (*s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/*
 * Fills out[0 .. n) with a permutation of 0 .. n-1 that is a worst case for a
 * merge sort on w banks whose block sort has (E, b) and whose merge passes
 * have (pass_e, pass_b); n must be b * E * 2^k.  Returns 0, or -1 when n has
 * the wrong form or memory runs out.
 */
static inline int
gs_worst_case_fill_shape(uint32_t *out, size_t n, int E, int b, int pass_e, int pass_b, int w,
						 uint64_t seed)
{
	const size_t tile = (size_t) b * E;
	gs_wc_split l_split[GS_WC_MAX_W],
				pass_split[GS_WC_MAX_W];
	int			have = gs_wc_warp_splits(w, E, l_split) >= 0;
	int			have_pass = gs_wc_warp_splits(w, pass_e, pass_split) >= 0;
	uint32_t   *cur,
			   *next;
	size_t		m;
	uint64_t	rs = seed * UINT64_C(0x2545F4914F6CDD1D) + 1;

	if (n < tile || n % tile != 0 || ((n / tile) & (n / tile - 1)) != 0 || b % (2 * w) != 0 ||
		pass_b % (2 * w) != 0 || (2 * tile) % ((size_t) pass_b * pass_e) != 0)
		return -1;
	cur = out;
	next = (uint32_t *) malloc(n * sizeof(uint32_t));
	if (next == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		cur[i] = (uint32_t) i;

	/* from the last merge (runs of n/2) down to the first (runs of E) */
	for (m = n; m > (size_t) E; m /= 2)
	{
		const size_t half = m / 2;
		/* a merge pass (runs longer than a tile) or a round of the block sort */
		const int	in_pass = m > tile;
		const int	e = in_pass ? pass_e : E;
		const gs_wc_split *sp = in_pass ? pass_split : l_split;
		/* threads that share this merge and whether their runs start at bank 0 */
		const size_t group = in_pass ? gs_wc_group(m, pass_e, pass_b) : gs_wc_group(m, E, b);
		const int	patterned = in_pass ? gs_wc_patterned(have_pass, m, pass_e, pass_b, w) :
			gs_wc_patterned(have, m, E, b, w);

		for (size_t base = 0; base < n; base += m)
		{
			size_t		na = 0,
						nb = 0;

			for (size_t k = 0; k < m; k++)
			{
				int			from_a;

				if (patterned)
					from_a = gs_wc_from_a(sp, e, w, group, k);
				else
				{
					/* random, with exactly half from each run over the merge */
					size_t		left_a = half - na,
								left = m - k;

					from_a = gs_wc_rand(&rs) % left < left_a;
				}
				if (from_a)
					next[base + na++] = cur[base + k];
				else
					next[base + half + nb++] = cur[base + k];
			}
			if (na != half)
			{
				/* a pattern that does not balance (cannot happen for b % 2w == 0) */
				free(next);
				return -1;
			}
		}
		memcpy(cur, next, n * sizeof(uint32_t));
	}
	/* each thread's E keys arrive in reverse, so its sorting network has work */
	for (size_t base = 0; base < n; base += E)
		for (size_t i = 0; i < (size_t) E / 2; i++)
		{
			uint32_t	t = cur[base + i];

			cur[base + i] = cur[base + E - 1 - i];
			cur[base + E - 1 - i] = t;
		}
	free(next);
	return 0;
}

/* The worst case for a sort whose passes have the block sort's (E, b). */
static inline int
gs_worst_case_fill(uint32_t *out, size_t n, int E, int b, int w, uint64_t seed)
{
	return gs_worst_case_fill_shape(out, n, E, b, E, b, w, seed);
}

#endif							/* GPUSORT_WORST_CASE_H */
