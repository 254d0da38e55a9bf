/*
 * merge_quad.cuh: the four-way merge pass of the merge-path sort
 * (merge_variants.cuh, split GS_MERGE_SPLIT_QUAD).  One pass merges groups of
 * four sorted runs A, B, C, D of length L into runs of 4L, so a sort needs
 * half the passes over global memory of the pairwise one.  The output of a
 * group is merge(X, Y) with X = merge(A, B) and Y = merge(C, D), none of
 * which is ever written out:
 *
 * - A partition kernel finds, for the first output of every pass tile, how
 *   many keys of X it follows (a merge-path search over X and Y whose
 *   elements are themselves found by merge-path searches over A and B, or C
 *   and D), and from that the tile's start in each of the four runs.  One
 *   warp per tile: a 32-way search over X, every lane a bounded binary
 *   search for its candidate's X and Y elements.
 * - The pass block stages the four pieces of its tile in shared memory as
 *   U = [A | C] and V = [B | D], merges U with V under the order (segment,
 *   key) (A and B form segment 0, C and D segment 1), which yields the
 *   tile's pieces of X and Y one after the other, writes them back, and
 *   merges those.  Both merges are the sort's usual per-thread merge path
 *   and serial merge of E outputs.
 *
 * Stable: A before B before C before D on ties, at every level.
 */
#ifndef GPUSORT_MERGE_QUAD_CUH
#define GPUSORT_MERGE_QUAD_CUH

#include "merge_fixed.cuh"

/* A sorted run in global memory (keys, and values when the order needs them). */
template <typename K>
struct gs_quad_run
{
	const K    *k;
	const uint32_t *v;
	size_t		len;
};

/*
 * How many of the first diag outputs of merge(A, B) come from A, given that
 * the same count is c1 at diagonal i1 and c2 at diagonal i2, i1 <= diag <=
 * i2 (both counts and the B side of them only grow along the path, which
 * bounds the search to at most diag - i1 + 1 candidates).
 */
template <typename K, bool PAIR>
static __device__ __forceinline__ size_t
gs_quad_corank(const gs_quad_run<K> &a, const gs_quad_run<K> &b, size_t diag,
			   size_t i1, size_t c1, size_t i2, size_t c2)
{
	size_t		lo = diag > b.len ? diag - b.len : 0;
	size_t		hi = diag < a.len ? diag : a.len;

	if (c1 > lo)
		lo = c1;
	if (diag > i2 - c2 && diag - (i2 - c2) > lo)
		lo = diag - (i2 - c2);
	if (c2 < hi)
		hi = c2;
	if (c1 + (diag - i1) < hi)
		hi = c1 + (diag - i1);
	return gs_merge_path_between<size_t, K, PAIR>(a.k, a.v, b.k, b.v, diag, lo, hi);
}

/* Output i of merge(A, B) (i < |A| + |B|), of which c come from A. */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_quad_element(const gs_quad_run<K> &a, const gs_quad_run<K> &b, size_t i, size_t c, K *key, uint32_t *val)
{
	size_t		j = i - c;
	bool		from_a;

	if (c >= a.len)
		from_a = false;
	else if (j >= b.len)
		from_a = true;
	else
		from_a = gs_le<K, PAIR>(a.k[c], PAIR ? a.v[c] : 0, b.k[j], PAIR ? b.v[j] : 0);
	*key = from_a ? a.k[c] : b.k[j];
	*val = PAIR ? (from_a ? a.v[c] : b.v[j]) : 0;
}

/*
 * Where output diag of merge(merge(A, B), merge(C, D)) falls in each run:
 * out[0..2] = keys of A, of X = merge(A, B) and of C before it (those of B
 * and D follow).  All 32 lanes of a warp call it with the same arguments;
 * all get the result.  The search over X keeps, for both ends of its
 * interval, how many keys of A (of C) the X (Y) index there covers, so each
 * lane's binary searches for X[p] and Y[diag - 1 - p] shrink with the
 * interval: about log2(L) + log2(L / 32) + ... dependent loads in all.
 */
template <typename K, bool PAIR>
static __device__ __forceinline__ void
gs_quad_split(const gs_quad_run<K> &a, const gs_quad_run<K> &b, const gs_quad_run<K> &c,
			  const gs_quad_run<K> &d, size_t diag, size_t out[3])
{
	const unsigned lane = threadIdx.x & 31;
	const size_t lx = a.len + b.len;
	const size_t ly = c.len + d.len;
	size_t		lo = diag > ly ? diag - ly : 0;
	size_t		hi = diag < lx ? diag : lx;

	/* X index x1 <= x2 with their A counts; Y index y1 <= y2 with their C counts */
	size_t		x1 = 0,
				xa1 = 0,
				x2 = lx,
				xa2 = a.len;
	size_t		y1 = 0,
				yc1 = 0,
				y2 = ly,
				yc2 = c.len;

	/* invariant: the answer is in [lo, hi], and x1 <= lo, hi <= x2, y1 <= diag - hi, diag - lo <= y2 */
	for (;;)
	{
		size_t		step = hi - lo > 32 ? (hi - lo + 31) / 32 : 1;
		size_t		p = lo + lane * step;
		size_t		ca = 0,
					cc = 0;
		bool		t = false;
		unsigned	ballot;
		int			n;

		if (p < hi)
		{
			size_t		j = diag - 1 - p;
			K			kx,
						ky;
			uint32_t	vx,
						vy;

			ca = gs_quad_corank<K, PAIR>(a, b, p, x1, xa1, x2, xa2);
			cc = gs_quad_corank<K, PAIR>(c, d, j, y1, yc1, y2, yc2);
			gs_quad_element<K, PAIR>(a, b, p, ca, &kx, &vx);
			gs_quad_element<K, PAIR>(c, d, j, cc, &ky, &vy);
			t = gs_le<K, PAIR>(kx, vx, ky, vy);
		}
		/* the predicate is monotone in p: a prefix of the lanes is true */
		ballot = __ballot_sync(0xFFFFFFFFu, t);
		n = __popc(ballot);
		if (step == 1 || n == 0)
		{
			lo = lo + (size_t) n;
			break;
		}
		{
			/* new interval [p(n - 1) + 1, min(p(n), hi)]: its ends' counts come from lanes n - 1 and n */
			size_t		pl = lo + (size_t) (n - 1) * step;
			size_t		cal = __shfl_sync(0xFFFFFFFFu, ca, n - 1);
			size_t		ccl = __shfl_sync(0xFFFFFFFFu, cc, n - 1);
			size_t		ph = lo + (size_t) n * step;
			size_t		cah = __shfl_sync(0xFFFFFFFFu, ca, n & 31);
			size_t		cch = __shfl_sync(0xFFFFFFFFu, cc, n & 31);

			x1 = pl;
			xa1 = cal;
			y2 = diag - 1 - pl;
			yc2 = ccl;
			lo = pl + 1;
			if (n < 32 && ph < hi)
			{
				x2 = ph;
				xa2 = cah;
				y1 = diag - 1 - ph;
				yc1 = cch;
				hi = ph;
			}
		}
	}
	/* lo = how many of the first diag outputs come from X; split X and Y there */
	out[1] = lo;
	out[0] = gs_quad_corank<K, PAIR>(a, b, lo, x1, xa1, x2, xa2);
	out[2] = gs_quad_corank<K, PAIR>(c, d, diag - lo, y1, yc1, y2, yc2);
}

/* The four runs of the group that output position out_begin of a pass with runs of length run falls in. */
template <typename K>
static __device__ __forceinline__ void
gs_quad_runs(const K *keys, const uint32_t *vals, size_t n, size_t run, size_t out_begin,
			 size_t *group_start, gs_quad_run<K> r[4])
{
	const size_t g = out_begin / (4 * run) * (4 * run);

	*group_start = g;
#pragma unroll
	for (int i = 0; i < 4; i++)
	{
		size_t		s = min(g + (size_t) i * run, n);
		size_t		e = min(g + (size_t) (i + 1) * run, n);

		r[i].k = keys + s;
		r[i].v = vals != NULL ? vals + s : NULL;
		r[i].len = e - s;
	}
}

/*
 * The partition of a four-way pass: splits[3 * t .. 3 * t + 2] = tile t's
 * start in A, in X and in C (gs_quad_split), one warp per tile.
 */
template <typename K, bool PAIR>
__global__ void __launch_bounds__(256)
gs_merge_quad_partition_kernel(const K *keys, const uint32_t *vals, size_t n, size_t run,
							   int tile, size_t tiles, size_t *splits)
{
	const size_t t = ((size_t) blockIdx.x * blockDim.x + threadIdx.x) / 32;
	size_t		out_begin,
				group_start,
				s[3];
	gs_quad_run<K> r[4];

	gs_pdl_wait();
	gs_pdl_trigger();
	/* whole warps leave together */
	if (t >= tiles)
		return;
	out_begin = t * (size_t) tile;
	gs_quad_runs<K>(keys, vals, n, run, out_begin, &group_start, r);
	gs_quad_split<K, PAIR>(r[0], r[1], r[2], r[3], out_begin - group_start, s);
	if ((threadIdx.x & 31) == 0)
	{
		splits[3 * t] = s[0];
		splits[3 * t + 1] = s[1];
		splits[3 * t + 2] = s[2];
	}
}

/*
 * The four-way pass's first merge for one thread: ITEMS outputs of
 * merge(U, V) from output diag on, under the order (segment, key[, value])
 * with U first on ties: U = [A | C] with A's na keys first, V = [B | D]
 * with B's nb first, A and B segment 0, C and D segment 1, so the result is
 * merge(A, B) followed by merge(C, D).  U lies at [0, nu) of sk/sv, V at
 * [nu, nu + nv); idx receives the shared index of each output.  Outputs past
 * both ends are not used.
 */
template <typename K, bool PAIR>
static __device__ __forceinline__ bool
gs_quad_seg_le(int su, K ku, uint32_t vu, int sw, K kw, uint32_t vw)
{
	return su != sw ? su < sw : gs_le<K, PAIR>(ku, vu, kw, vw);
}

template <typename K, int ITEMS, bool PAIR>
static __device__ __forceinline__ void
gs_quad_first_merge(const K *sk, const uint32_t *sv, int na, int nu, int nb, int nv, int diag,
					K (&out)[ITEMS], int (&idx)[ITEMS])
{
	const K    *vk = sk + nu;
	const uint32_t *vvals = sv + nu;
	int			lo = diag > nv ? diag - nv : 0;
	int			hi = diag < nu ? diag : nu;
	int			u,
				v;
	K			ku,
				kv;
	uint32_t	vu,
				vv;

	while (lo < hi)
	{
		int			mid = (lo + hi) >> 1;
		int			j = diag - 1 - mid;

		if (gs_quad_seg_le<K, PAIR>(mid >= na, sk[mid], PAIR ? sv[mid] : 0,
									j >= nb, vk[j], PAIR ? vvals[j] : 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	u = lo;
	v = diag - lo;
	ku = u < nu ? sk[u] : gs_key_max<K>();
	kv = v < nv ? vk[v] : gs_key_max<K>();
	vu = PAIR && u < nu ? sv[u] : 0;
	vv = PAIR && v < nv ? vvals[v] : 0;
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		/* V first only when strictly before U */
		bool		take_v = v < nv && (u >= nu || !gs_quad_seg_le<K, PAIR>(u >= na, ku, vu, v >= nb, kv, vv));

		out[i] = take_v ? kv : ku;
		idx[i] = take_v ? nu + v : u;
		if (take_v)
		{
			v++;
			kv = v < nv ? vk[v] : gs_key_max<K>();
			if (PAIR)
				vv = v < nv ? vvals[v] : 0;
		}
		else
		{
			u++;
			ku = u < nu ? sk[u] : gs_key_max<K>();
			if (PAIR)
				vu = u < nu ? sv[u] : 0;
		}
	}
}

/*
 * One four-way merge pass: sorted runs of length run become runs of
 * 4*run.  Block = one output tile of THREADS*ITEMS elements (4*run is a
 * multiple of the tile); its start in the four runs comes from splits
 * (gs_merge_quad_partition_kernel), its end from the next tile's, or is the
 * group's end.
 */
template <typename K, bool VALUES, bool PAIR, int THREADS, int ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
gs_merge_quad_pass_kernel(const K *keys_in, K *keys_out,
						  const uint32_t *vals_in, uint32_t *vals_out,
						  size_t n, size_t run, const size_t *splits, gs_key_codec codec, int decode)
{
	constexpr int TILE = THREADS * ITEMS;
	extern __shared__ __align__(16) unsigned char gs_smem[];
	K		   *sk = (K *) gs_smem;
	uint32_t   *sv = (uint32_t *) (sk + TILE);
	const int	tid = threadIdx.x;
	const size_t out_begin = (size_t) blockIdx.x * TILE;
	const size_t g = out_begin / (4 * run) * (4 * run);
	size_t		len[4],
				lx,
				ly,
				diag0,
				diag1,
				s0[3],
				s1[3];
	int			total,
				na,
				nb,
				nc,
				nd,
				nu,
				nv;
	K			k[ITEMS];
	uint32_t	v[ITEMS];
	int			idx[ITEMS];

	gs_pdl_wait();
	gs_pdl_trigger();
#pragma unroll
	for (int i = 0; i < 4; i++)
		len[i] = min(g + (size_t) (i + 1) * run, n) - min(g + (size_t) i * run, n);
	lx = len[0] + len[1];
	ly = len[2] + len[3];
	diag0 = out_begin - g;
	diag1 = min(diag0 + TILE, lx + ly);
	total = (int) (diag1 - diag0);
	s0[0] = splits[3 * (size_t) blockIdx.x];
	s0[1] = splits[3 * (size_t) blockIdx.x + 1];
	s0[2] = splits[3 * (size_t) blockIdx.x + 2];
	if (diag1 == lx + ly)
	{
		s1[0] = len[0];
		s1[1] = lx;
		s1[2] = len[2];
	}
	else
	{
		s1[0] = splits[3 * (size_t) blockIdx.x + 3];
		s1[1] = splits[3 * (size_t) blockIdx.x + 4];
		s1[2] = splits[3 * (size_t) blockIdx.x + 5];
	}
	na = (int) (s1[0] - s0[0]);
	nb = (int) ((s1[1] - s1[0]) - (s0[1] - s0[0]));
	nc = (int) (s1[2] - s0[2]);
	nd = total - na - nb - nc;
	nu = na + nc;
	nv = nb + nd;
	{
		/* shared layout: A's piece, C's, B's, D's */
		const size_t a0 = g + s0[0];
		const size_t c0 = g + 2 * run + s0[2];
		const size_t b0 = g + run + (s0[1] - s0[0]);
		const size_t d0 = g + 3 * run + ((diag0 - s0[1]) - s0[2]);

#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			int			j = tid + i * THREADS;

			if (j < total)
			{
				size_t		src = j < na ? a0 + j
					: j < nu ? c0 + (j - na)
					: j < nu + nb ? b0 + (j - nu)
					: d0 + (j - nu - nb);

				sk[j] = keys_in[src];
				if (VALUES)
					sv[j] = vals_in[src];
			}
		}
	}
	__syncthreads();

	/* first merge: U with V by (segment, key) gives X's piece (na + nb keys), then Y's */
	{
		const int	d = tid * ITEMS;

		if (d < total)
		{
			gs_quad_first_merge<K, ITEMS, PAIR>(sk, sv, na, nu, nb, nv, d, k, idx);
			if (VALUES)
			{
#pragma unroll
				for (int i = 0; i < ITEMS; i++)
					v[i] = d + i < total ? sv[idx[i]] : 0;
			}
		}
		__syncthreads();
		if (d < total)
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				if (d + i < total)
				{
					sk[d + i] = k[i];
					if (VALUES)
						sv[d + i] = v[i];
				}
			}
		}
		__syncthreads();

		/* second merge: X's piece with Y's */
		gs_merge_tile_items<K, VALUES, PAIR, ITEMS>(sk, sv, na + nb, total, d, k, v);
	}
	gs_store_merged<K, VALUES, THREADS, ITEMS>(sk, sv, k, v, total, keys_out + out_begin, vals_out + out_begin,
											  decode, codec);
}

#endif							/* GPUSORT_MERGE_QUAD_CUH */
