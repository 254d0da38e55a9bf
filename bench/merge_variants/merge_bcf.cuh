/*
 * merge_bcf.cuh: the bank-conflict-free merge sort of "Bank Conflict Free
 * Comparison-based Sorting On GPUs" (Sitchinava and Weichert, "BCFMergesort"
 * with pivot buckets), a benchmarked alternative to the library's merge sort
 * (merge_variants.cuh selects it).  Keys only; n < 2^32.
 *
 *   1. Base case: each warp sorts 1024 keys as a 32 x 32 matrix with
 *      ShearSort (log2(32) rounds of row sort in snake order and column sort,
 *      then a final row sort), rows and columns sorted in registers by
 *      Batcher's odd-even merge sort.  Element (i, j) of the matrix lives in
 *      bank (i + j) mod 32, column j (the "shifted diagonals" of section 3.3),
 *      so a row and a column are both read and written without a conflict.
 *   2. Merging: a warp merges a pair of sorted runs page by page (Ye et al.,
 *      section 3.2): it keeps the 512 largest keys seen, loads the next
 *      512-key page from the run whose last loaded key is smaller, merges the
 *      1024 with a bitonic merge in registers (warp shuffles across lanes),
 *      writes out the 512 smallest.  Data-oblivious and without any shared
 *      memory, so no bank conflict by construction (the paper uses one ShearSort
 *      round in shared memory for this step).
 *   3. Distribution: when fewer runs than 2P remain (P = the warps to keep
 *      busy), deterministic splitters (t evenly spaced samples per run,
 *      sorted, P-1 evenly spaced picks, duplicates removed; Aggarwal and
 *      Vitter as in the paper) cut every run into buckets, with a bucket of its own
 *      for keys equal to each splitter (BCFMergesortPB): those are final at
 *      once.  The other buckets' pieces are merged pairwise as in step 2, P
 *      buckets at a time, so no warp idles while few long runs remain.
 */
#ifndef GPUSORT_MERGE_BCF_CUH
#define GPUSORT_MERGE_BCF_CUH

#include <string.h>

#include <cub/block/block_scan.cuh>

#include "merge_common.cuh"

#define GS_BCF_W 32				/* warp width = banks = matrix side */
#define GS_BCF_CHUNK (GS_BCF_W * GS_BCF_W)	/* keys per base-case warp */
#define GS_BCF_PAGE 512			/* keys per merge page */
#define GS_BCF_WARPS 4			/* warps per block */
#define GS_BCF_SAMPLES 256		/* samples per run for the splitters (t) */
#define GS_BCF_WARPS_PER_SM 8	/* buckets per multiprocessor (P / SMs) */

template <typename K>
static __device__ __forceinline__ void
gs_bcf_cas(K &a, K &b)
{
	K			lo = a < b ? a : b;
	K			hi = a < b ? b : a;

	a = lo;
	b = hi;
}

/*
 * Batcher's odd-even merge sort of N (a power of two) keys in registers.
 * Written with loops of fixed trip count over the comparator's low index x,
 * so that full unrolling leaves only constant register indices.
 */
template <typename K, int N>
static __device__ __forceinline__ void
gs_bcf_batcher_sort(K (&r)[N])
{
#pragma unroll
	for (int p = 1; p < N; p <<= 1)
	{
#pragma unroll
		for (int k = p; k >= 1; k >>= 1)
		{
#pragma unroll
			for (int x = 0; x < N; x++)
			{
				const int	j0 = k % p;

				if (x >= j0 && (x - j0) % (2 * k) < k && x + k < N &&
					x / (2 * p) == (x + k) / (2 * p))
					gs_bcf_cas(r[x], r[x + k]);
			}
		}
	}
}

/* Shuffle for any key width (16-bit keys travel as 32-bit). */
template <typename K>
static __device__ __forceinline__ K
gs_bcf_shfl_xor(K v, int mask)
{
	return (K) __shfl_xor_sync(0xFFFFFFFFu, (unsigned) v, mask);
}

template <>
__device__ __forceinline__ uint64_t
gs_bcf_shfl_xor<uint64_t>(uint64_t v, int mask)
{
	return (uint64_t) __shfl_xor_sync(0xFFFFFFFFu, (unsigned long long) v, mask);
}

template <typename K>
static __device__ __forceinline__ K
gs_bcf_shfl(K v, int src)
{
	return (K) __shfl_sync(0xFFFFFFFFu, (unsigned) v, src);
}

template <>
__device__ __forceinline__ uint64_t
gs_bcf_shfl<uint64_t>(uint64_t v, int src)
{
	return (uint64_t) __shfl_sync(0xFFFFFFFFu, (unsigned long long) v, src);
}

/* Shared-memory address of matrix element (row i, column j): bank (i + j) mod 32. */
static __device__ __forceinline__ int
gs_bcf_at(int i, int j)
{
	return j * GS_BCF_W + ((i + j) & (GS_BCF_W - 1));
}

/*
 * ShearSort of the warp's 32 x 32 matrix m into row-major order.  Lane t
 * owns row t, then column t; at every step the 32 lanes touch 32 different
 * banks.  Odd rows are written reversed (snake order) by choosing between
 * two registers whose indices are compile-time constants, so the array
 * never leaves registers.
 */
template <typename K>
static __device__ __forceinline__ void
gs_bcf_shear_sort(K *m, int lane)
{
	K			r[GS_BCF_W];

	for (int round = 0; round <= 5; round++)
	{
		bool		last = round == 5;

		/* rows: snake order (odd rows descending), plain ascending at the end */
#pragma unroll
		for (int j = 0; j < GS_BCF_W; j++)
			r[j] = m[gs_bcf_at(lane, j)];
		gs_bcf_batcher_sort<K, GS_BCF_W>(r);
		{
			bool		reverse = !last && (lane & 1);

#pragma unroll
			for (int j = 0; j < GS_BCF_W; j++)
				m[gs_bcf_at(lane, j)] = reverse ? r[GS_BCF_W - 1 - j] : r[j];
		}
		__syncwarp();
		if (last)
			break;
		/* columns: ascending top to bottom */
#pragma unroll
		for (int j = 0; j < GS_BCF_W; j++)
			r[j] = m[gs_bcf_at(j, lane)];
		gs_bcf_batcher_sort<K, GS_BCF_W>(r);
#pragma unroll
		for (int j = 0; j < GS_BCF_W; j++)
			m[gs_bcf_at(j, lane)] = r[j];
		__syncwarp();
	}
}

/*
 * Base case: warp w of the grid sorts keys [w*1024, w*1024 + 1024).  Row i of
 * the matrix is loaded from keys i*32 .. i*32+31 (coalesced; any placement
 * will do for unsorted input) and the sorted matrix is stored row-major, so
 * sorted position i*32 + j is element (i, j).  The last chunk is padded with
 * the largest key.
 */
template <typename K>
__global__ void __launch_bounds__(GS_BCF_WARPS * 32)
gs_bcf_base_kernel(const K *in, K *out, uint32_t n, gs_key_codec codec, int encode, int decode)
{
	__shared__ K mats[GS_BCF_WARPS][GS_BCF_CHUNK];
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const size_t base = ((size_t) blockIdx.x * GS_BCF_WARPS + warp) * GS_BCF_CHUNK;
	K		   *m = mats[warp];

	if (base >= n)
		return;
	for (int i = 0; i < GS_BCF_W; i++)
	{
		size_t		g = base + (size_t) i * GS_BCF_W + lane;
		K			key = gs_key_max<K>();

		if (g < n)
		{
			key = in[g];
			if (encode)
				key = gs_encode_key<K>(key, codec);
		}
		m[gs_bcf_at(i, lane)] = key;
	}
	__syncwarp();
	gs_bcf_shear_sort<K>(m, lane);
	for (int i = 0; i < GS_BCF_W; i++)
	{
		size_t		g = base + (size_t) i * GS_BCF_W + lane;

		if (g < n)
		{
			K			key = m[gs_bcf_at(i, lane)];

			out[g] = decode ? gs_decode_key<K>(key, codec) : key;
		}
	}
}

/*
 * Merges the carry c = r[0..15] (512 sorted keys, key e = reg*32 + lane) with
 * the page r[16..31] (512 sorted keys) into 1024 sorted keys in r.  Bitonic
 * merge with all comparators pointing up: the first stage compares key e with
 * key 1023 - e (register 31 - reg of lane lane ^ 31), then half-cleaners of
 * strides 256..32 inside each lane's registers and 16..1 across lanes.
 */
template <typename K>
static __device__ __forceinline__ void
gs_bcf_merge_pages(K (&r)[GS_BCF_W], int lane)
{
#pragma unroll
	for (int i = 0; i < GS_BCF_W / 2; i++)
	{
		K			x = gs_bcf_shfl_xor<K>(r[GS_BCF_W - 1 - i], 31);
		K			y = gs_bcf_shfl_xor<K>(r[i], 31);

		r[i] = r[i] < x ? r[i] : x;
		r[GS_BCF_W - 1 - i] = r[GS_BCF_W - 1 - i] < y ? y : r[GS_BCF_W - 1 - i];
	}
#pragma unroll
	for (int s = 8; s >= 1; s >>= 1)
	{
#pragma unroll
		for (int i = 0; i < GS_BCF_W; i++)
			if ((i & s) == 0)
				gs_bcf_cas(r[i], r[i + s]);
	}
#pragma unroll
	for (int s = 16; s >= 1; s >>= 1)
	{
#pragma unroll
		for (int i = 0; i < GS_BCF_W; i++)
		{
			K			x = gs_bcf_shfl_xor<K>(r[i], s);

			r[i] = (lane & s) ? (r[i] < x ? x : r[i]) : (r[i] < x ? r[i] : x);
		}
	}
}

/* Loads 512 keys of [pos, end) into r[16..31] (key q = (reg-16)*32 + lane), padding with the largest key. */
template <typename K>
static __device__ __forceinline__ void
gs_bcf_load_page(const K *in, uint32_t pos, uint32_t end, K (&r)[GS_BCF_W], int lane)
{
#pragma unroll
	for (int i = 0; i < GS_BCF_W / 2; i++)
	{
		uint32_t	g = pos + (uint32_t) (i * GS_BCF_W + lane);

		r[GS_BCF_W / 2 + i] = g < end ? in[g] : gs_key_max<K>();
	}
}

/*
 * Which pairs of runs a merge launch works on.  Uniform: runs of length run
 * over [0, n).  Bucketed (after the distribution): for each non-equal bucket
 * q = 2*qb, its pieces (one per original run, sp of them counting empty
 * padding) are runs; round stride merges runs k*stride .. (k+1)*stride.
 */
typedef struct gs_bcf_pairs
{
	int			bucketed;
	uint32_t	n;
	uint32_t	run;			/* uniform */
	uint32_t	npairs;			/* uniform */
	const uint32_t *boff;		/* bucketed: bucket starts */
	const uint32_t *bsize;		/* bucket sizes */
	const uint32_t *frag;		/* piece starts inside bucket q: frag[q * s + r] */
	const int  *nsplit;			/* U, the number of splitters (device) */
	uint32_t	s;				/* pieces per bucket */
	uint32_t	sp;				/* s rounded up to a power of two */
	uint32_t	stride;			/* pieces per run in this round */
} gs_bcf_pairs;

static __device__ __forceinline__ uint32_t
gs_bcf_piece(const gs_bcf_pairs &p, uint32_t q, uint32_t r)
{
	return p.boff[q] + (r < p.s ? p.frag[(size_t) q * p.s + r] : p.bsize[q]);
}

/* The pair g's left run [a0, a1) and right run [a1, b1); false when g has none. */
static __device__ __forceinline__ bool
gs_bcf_pair(const gs_bcf_pairs &p, uint32_t g, uint32_t *a0, uint32_t *a1, uint32_t *b1)
{
	if (!p.bucketed)
	{
		uint64_t	s0 = (uint64_t) g * 2 * p.run;

		if (g >= p.npairs)
			return false;
		*a0 = (uint32_t) s0;
		*a1 = (uint32_t) min(s0 + p.run, (uint64_t) p.n);
		*b1 = (uint32_t) min(s0 + 2 * (uint64_t) p.run, (uint64_t) p.n);
		return true;
	}
	else
	{
		uint32_t	per_bucket = p.sp / (2 * p.stride);
		uint32_t	qb = g / per_bucket;
		uint32_t	i = g % per_bucket;
		uint32_t	q = 2 * qb;

		if ((int) qb > *p.nsplit)
			return false;
		*a0 = gs_bcf_piece(p, q, 2 * i * p.stride);
		*a1 = gs_bcf_piece(p, q, (2 * i + 1) * p.stride);
		*b1 = gs_bcf_piece(p, q, (2 * i + 2) * p.stride);
		return true;
	}
}

/* One round of pairwise merging, a warp per pair of runs (step 2). */
template <typename K>
__global__ void __launch_bounds__(GS_BCF_WARPS * 32)
gs_bcf_merge_kernel(const K *in, K *out, gs_bcf_pairs pairs, gs_key_codec codec, int decode)
{
	const int	lane = threadIdx.x & 31;
	const uint32_t g = blockIdx.x * GS_BCF_WARPS + (threadIdx.x >> 5);
	uint32_t	a0,
				a1,
				b1;
	K			r[GS_BCF_W];

	if (!gs_bcf_pair(pairs, g, &a0, &a1, &b1))
		return;
	if (a0 == a1 || a1 == b1)
	{
		/* nothing to merge: copy */
		for (uint32_t i = a0 + lane; i < b1; i += 32)
			out[i] = decode ? gs_decode_key<K>(in[i], codec) : in[i];
		return;
	}
	{
		const uint32_t pages_a = (a1 - a0 + GS_BCF_PAGE - 1) / GS_BCF_PAGE;
		const uint32_t pages_b = (b1 - a1 + GS_BCF_PAGE - 1) / GS_BCF_PAGE;
		uint32_t	pa = 1,
					pb = 0;
		uint32_t	o = a0;
		K			last_a,
					last_b = 0;	/* nothing loaded from B: below everything in it */

		/* the carry starts as A's first page */
		gs_bcf_load_page<K>(in, a0, a1, r, lane);
#pragma unroll
		for (int i = 0; i < GS_BCF_W / 2; i++)
			r[i] = r[GS_BCF_W / 2 + i];
		last_a = gs_bcf_shfl<K>(r[GS_BCF_W / 2 - 1], 31);

		while (pa < pages_a || pb < pages_b)
		{
			/*
			 * Load from the run whose last loaded key is smaller: then the
			 * 512 smallest of carry + page are <= every key not yet loaded.
			 */
			bool		from_a = pb >= pages_b || (pa < pages_a && last_a <= last_b);

			if (from_a)
			{
				gs_bcf_load_page<K>(in, a0 + pa * GS_BCF_PAGE, a1, r, lane);
				pa++;
				last_a = gs_bcf_shfl<K>(r[GS_BCF_W - 1], 31);
			}
			else
			{
				gs_bcf_load_page<K>(in, a1 + pb * GS_BCF_PAGE, b1, r, lane);
				pb++;
				last_b = gs_bcf_shfl<K>(r[GS_BCF_W - 1], 31);
			}
			gs_bcf_merge_pages<K>(r, lane);
#pragma unroll
			for (int i = 0; i < GS_BCF_W / 2; i++)
			{
				uint32_t	d = o + (uint32_t) (i * GS_BCF_W + lane);

				if (d < b1)
					out[d] = decode ? gs_decode_key<K>(r[i], codec) : r[i];
				r[i] = r[GS_BCF_W / 2 + i];
			}
			o += GS_BCF_PAGE;
		}
		/* the carry holds the largest keys (and padding, never stored) */
#pragma unroll
		for (int i = 0; i < GS_BCF_W / 2; i++)
		{
			uint32_t	d = o + (uint32_t) (i * GS_BCF_W + lane);

			if (d < b1)
				out[d] = decode ? gs_decode_key<K>(r[i], codec) : r[i];
		}
	}
}

/* ---- distribution (step 3) ---- */

/* t evenly spaced samples of each run of length run (the last may be shorter). */
template <typename K>
__global__ void
gs_bcf_sample_kernel(const K *in, uint32_t n, uint32_t run, uint32_t s, K *samples)
{
	size_t		i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < (size_t) s * GS_BCF_SAMPLES)
	{
		uint32_t	r = (uint32_t) (i / GS_BCF_SAMPLES);
		uint32_t	k = (uint32_t) (i % GS_BCF_SAMPLES);
		uint64_t	start = (uint64_t) r * run;
		uint64_t	len = min((uint64_t) n, start + run) - start;

		samples[i] = in[start + ((uint64_t) (k + 1) * len) / (GS_BCF_SAMPLES + 1)];
	}
}

/*
 * Picks nb - 1 evenly spaced splitters from the m sorted samples and drops
 * repeats (one block).  *nsplit receives how many remain.
 */
template <typename K>
__global__ void __launch_bounds__(1024)
gs_bcf_splitter_kernel(const K *samples, size_t m, uint32_t nb, K *splitters, int *nsplit)
{
	typedef cub::BlockScan<int, 1024> scan_t;
	__shared__ typename scan_t::TempStorage ts;
	__shared__ int carry;

	if (threadIdx.x == 0)
		carry = 0;
	__syncthreads();
	for (uint32_t base = 0; base < nb - 1; base += 1024)
	{
		uint32_t	j = base + threadIdx.x;
		int			keep = 0,
					pos,
					total;
		K			v = 0;

		if (j < nb - 1)
		{
			v = samples[((size_t) (j + 1) * m) / nb];
			keep = j == 0 || samples[((size_t) j * m) / nb] != v;
		}
		scan_t(ts).ExclusiveSum(keep, pos, total);
		if (keep)
			splitters[carry + pos] = v;
		__syncthreads();
		if (threadIdx.x == 0)
			carry += total;
		__syncthreads();
	}
	if (threadIdx.x == 0)
		*nsplit = carry;
}

/*
 * Cuts of every run at every splitter: bnd[r * qs + 2j + 1] = lower bound of
 * splitter j in run r, bnd[r * qs + 2j + 2] = its upper bound, so piece q of
 * run r is [bnd[q], bnd[q + 1]): even q holds keys strictly between two
 * splitters, odd q = 2j + 1 the keys equal to splitter j.
 */
template <typename K>
__global__ void
gs_bcf_cut_kernel(const K *in, uint32_t n, uint32_t run, uint32_t s, const K *splitters,
				  const int *nsplit, uint32_t qs, uint32_t *bnd)
{
	uint32_t	r = blockIdx.y;
	uint32_t	c = blockIdx.x * blockDim.x + threadIdx.x;	/* cut index 0 .. 2U + 1 */
	uint32_t	u = (uint32_t) *nsplit;
	uint64_t	start = (uint64_t) r * run;
	uint32_t	len = (uint32_t) (min((uint64_t) n, start + run) - start);
	const K    *a = in + start;

	if (c > 2 * u + 1)
		return;
	if (c == 0 || c == 2 * u + 1)
	{
		bnd[(size_t) r * qs + c] = c == 0 ? 0 : len;
		return;
	}
	{
		K			v = splitters[(c - 1) / 2];
		bool		upper = (c & 1) == 0;
		uint32_t	lo = 0,
					hi = len;

		while (lo < hi)
		{
			uint32_t	mid = (lo + hi) >> 1;

			if (upper ? a[mid] <= v : a[mid] < v)
				lo = mid + 1;
			else
				hi = mid;
		}
		bnd[(size_t) r * qs + c] = lo;
	}
}

/* Bucket sizes and where each run's piece starts inside its bucket (thread per bucket). */
__global__ void
gs_bcf_size_kernel(const uint32_t *bnd, uint32_t s, uint32_t qs, const int *nsplit,
				   uint32_t *frag, uint32_t *bsize)
{
	uint32_t	q = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t	sum = 0;

	if (q > 2 * (uint32_t) *nsplit)
		return;
	for (uint32_t r = 0; r < s; r++)
	{
		frag[(size_t) q * s + r] = sum;
		sum += bnd[(size_t) r * qs + q + 1] - bnd[(size_t) r * qs + q];
	}
	bsize[q] = sum;
}

/* Bucket starts: exclusive sum of the sizes (one block). */
__global__ void __launch_bounds__(1024)
gs_bcf_offset_kernel(const uint32_t *bsize, const int *nsplit, uint32_t *boff)
{
	typedef cub::BlockScan<uint32_t, 1024> scan_t;
	__shared__ typename scan_t::TempStorage ts;
	__shared__ uint32_t carry;
	uint32_t	nq = 2 * (uint32_t) *nsplit + 1;

	if (threadIdx.x == 0)
		carry = 0;
	__syncthreads();
	for (uint32_t base = 0; base < nq; base += 1024)
	{
		uint32_t	q = base + threadIdx.x;
		uint32_t	v = q < nq ? bsize[q] : 0,
					pos,
					total;

		scan_t(ts).ExclusiveSum(v, pos, total);
		if (q < nq)
			boff[q] = carry + pos;
		__syncthreads();
		if (threadIdx.x == 0)
			carry += total;
		__syncthreads();
	}
}

/* Moves every piece of run r (one block per run, a warp per piece) to its bucket. */
template <typename K>
__global__ void __launch_bounds__(256)
gs_bcf_scatter_kernel(const K *in, K *out, uint32_t n, uint32_t run, uint32_t s, uint32_t qs,
					  const uint32_t *bnd, const uint32_t *frag, const uint32_t *boff,
					  const int *nsplit)
{
	const uint32_t r = blockIdx.x;
	const int	lane = threadIdx.x & 31;
	const uint32_t nq = 2 * (uint32_t) *nsplit + 1;
	const uint64_t start = (uint64_t) r * run;

	(void) n;
	for (uint32_t q = threadIdx.x >> 5; q < nq; q += blockDim.x >> 5)
	{
		uint32_t	b = bnd[(size_t) r * qs + q];
		uint32_t	e = bnd[(size_t) r * qs + q + 1];
		uint32_t	d = boff[q] + frag[(size_t) q * s + r];

		for (uint32_t i = b + lane; i < e; i += 32)
			out[d + (i - b)] = in[start + i];
	}
}

/* Buckets of keys equal to a splitter are final: decode them into the result buffer. */
template <typename K>
__global__ void
gs_bcf_equal_kernel(const K *in, K *out, const uint32_t *boff, const uint32_t *bsize,
					const int *nsplit, gs_key_codec codec)
{
	int			u = *nsplit;

	for (int j = 0; j < u; j++)
	{
		uint32_t	q = 2 * j + 1;
		uint32_t	b = boff[q];
		uint32_t	sz = bsize[q];

		for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < sz; i += gridDim.x * blockDim.x)
			out[b + i] = gs_decode_key<K>(in[b + i], codec);
	}
}

/* ---- host side ---- */

/* Sizes of one BCF sort of n keys of width ksize on a device with sms multiprocessors. */
typedef struct gs_bcf_plan
{
	uint32_t	rounds;			/* uniform merge rounds before the distribution */
	uint32_t	run;			/* run length when the distribution starts */
	uint32_t	s;				/* runs then */
	uint32_t	sp;				/* s rounded up to a power of two */
	uint32_t	nb;				/* buckets asked for (P); 2*nb - 1 with the equal ones */
	uint32_t	qs;				/* row length of bnd: 2*nb */
	size_t		off_samples[2],
				off_splitters,
				off_nsplit,
				off_bnd,
				off_frag,
				off_bsize,
				off_boff;
	size_t		temp_bytes;
} gs_bcf_plan;

static void
gs_bcf_make_plan(size_t n, size_t ksize, int sms, gs_bcf_plan *p)
{
	uint64_t	target = (uint64_t) (sms > 0 ? sms : 1) * GS_BCF_WARPS_PER_SM;
	uint64_t	run = GS_BCF_CHUNK;
	uint64_t	s = (n + run - 1) / run;
	size_t		t = 0;
	size_t		m;

	p->rounds = 0;
	while (s > 2 * target)
	{
		run *= 2;
		s = (n + run - 1) / run;
		p->rounds++;
	}
	p->run = (uint32_t) run;
	p->s = (uint32_t) s;
	p->sp = 1;
	while (p->sp < p->s)
		p->sp *= 2;
	/* no smaller buckets than about two pages on average */
	p->nb = (uint32_t) min(target, max((uint64_t) 2, (uint64_t) (n / (2 * GS_BCF_PAGE))));
	p->qs = 2 * p->nb;
	m = (size_t) p->s * GS_BCF_SAMPLES;

#define GS_BCF_TAKE(field, bytes) do { t = gs_align_up(t, 256); p->field = t; t += (bytes); } while (0)
	GS_BCF_TAKE(off_samples[0], m * ksize);
	GS_BCF_TAKE(off_samples[1], m * ksize);
	GS_BCF_TAKE(off_splitters, (size_t) p->nb * ksize);
	GS_BCF_TAKE(off_nsplit, sizeof(int));
	GS_BCF_TAKE(off_bnd, (size_t) p->s * p->qs * sizeof(uint32_t));
	GS_BCF_TAKE(off_frag, (size_t) p->qs * p->s * sizeof(uint32_t));
	GS_BCF_TAKE(off_bsize, (size_t) p->qs * sizeof(uint32_t));
	GS_BCF_TAKE(off_boff, (size_t) p->qs * sizeof(uint32_t));
#undef GS_BCF_TAKE
	p->temp_bytes = gs_align_up(t, 256);
}

static int
gs_bcf_sm_count(void)
{
	int			dev = 0,
				sms = 0;

	if (cudaGetDevice(&dev) != cudaSuccess ||
		cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return 132;
	}
	return sms;
}

/* Temporary memory of a sort (never 0, so that a second call is not a size query again). */
static size_t
gs_merge_bcf_temp_bytes(const gs_gpu_sort_args *args)
{
	gs_bcf_plan p;

	if (args->values[0] != NULL)
		return 256;
	gs_bcf_make_plan(args->n, gs_type_size(args->type), gs_bcf_sm_count(), &p);
	return p.temp_bytes;
}

template <typename K>
static gs_status
gs_merge_bcf_run(gs_gpu_sort_args *args, gs_error *err)
{
	K		   *keys[2] = {(K *) args->keys[0], (K *) args->keys[1]};
	gs_key_codec codec = gs_codec_of(args);
	cudaStream_t stream = (cudaStream_t) args->stream;
	const uint32_t n = (uint32_t) args->n;
	unsigned char *temp = (unsigned char *) args->temp;
	const unsigned threads = GS_BCF_WARPS * 32;
	gs_bcf_plan p;
	int			cur = 0;
	uint32_t	chunks;

	if (args->values[0] != NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "the bcf merge variant sorts keys only");
	if (args->n > ((size_t) 1 << 31))
		return gs_fail(err, GS_ERR_TOO_LARGE, "the bcf merge variant sorts at most 2^31 keys");
	gs_bcf_make_plan(args->n, sizeof(K), gs_bcf_sm_count(), &p);
	if (args->temp_bytes < p.temp_bytes)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "merge sort: temp_bytes %zu is too small (need %zu)",
					   args->temp_bytes, p.temp_bytes);

	/* 1. base case (in place: each warp reads its chunk before writing it) */
	chunks = (n + GS_BCF_CHUNK - 1) / GS_BCF_CHUNK;
	gs_bcf_base_kernel<K><<<(chunks + GS_BCF_WARPS - 1) / GS_BCF_WARPS, threads, 0, stream>>>
		(keys[0], keys[0], n, codec, 1, chunks == 1);
	GS_LAUNCH_CHECK("merge sort (bcf): base case launch", err);
	if (chunks == 1)
	{
		args->result_selector = 0;
		return GS_OK;
	}

	/* 2. uniform pairwise rounds while runs are plentiful (at least two remain) */
	for (uint32_t i = 0; i < p.rounds; i++)
	{
		gs_bcf_pairs pr;
		uint32_t	run = GS_BCF_CHUNK << i;

		memset(&pr, 0, sizeof(pr));
		pr.n = n;
		pr.run = run;
		pr.npairs = (uint32_t) (((uint64_t) n + 2 * (uint64_t) run - 1) / (2 * (uint64_t) run));
		gs_bcf_merge_kernel<K><<<(pr.npairs + GS_BCF_WARPS - 1) / GS_BCF_WARPS, threads, 0, stream>>>
			(keys[cur], keys[cur ^ 1], pr, codec, 0);
		GS_LAUNCH_CHECK("merge sort (bcf): merge launch", err);
		cur ^= 1;
	}

	/* 3. distribution into buckets with deterministic splitters */
	{
		K		   *samples[2] = {(K *) (temp + p.off_samples[0]), (K *) (temp + p.off_samples[1])};
		K		   *splitters = (K *) (temp + p.off_splitters);
		int		   *nsplit = (int *) (temp + p.off_nsplit);
		uint32_t   *bnd = (uint32_t *) (temp + p.off_bnd);
		uint32_t   *frag = (uint32_t *) (temp + p.off_frag);
		uint32_t   *bsize = (uint32_t *) (temp + p.off_bsize);
		uint32_t   *boff = (uint32_t *) (temp + p.off_boff);
		size_t		m = (size_t) p.s * GS_BCF_SAMPLES;
		uint32_t	final_rounds = 0;
		int			x,
					f;
		gs_status	st;

		while ((1u << final_rounds) < p.sp)
			final_rounds++;
		x = cur ^ 1;			/* buckets go here ... */
		f = x ^ (final_rounds & 1); /* ... and end up here */

		gs_bcf_sample_kernel<K><<<(unsigned) ((m + 255) / 256), 256, 0, stream>>>
			(keys[cur], n, p.run, p.s, samples[0]);
		GS_LAUNCH_CHECK("merge sort (bcf): sample launch", err);
		st = gs_merge_sort_ordered<K>(samples, NULL, m, false, stream, err);
		if (st != GS_OK)
			return st;
		gs_bcf_splitter_kernel<K><<<1, 1024, 0, stream>>>(samples[0], m, p.nb, splitters, nsplit);
		GS_LAUNCH_CHECK("merge sort (bcf): splitter launch", err);
		{
			dim3		grid((p.qs + 255) / 256, p.s);

			gs_bcf_cut_kernel<K><<<grid, 256, 0, stream>>>(keys[cur], n, p.run, p.s, splitters, nsplit,
															 p.qs, bnd);
			GS_LAUNCH_CHECK("merge sort (bcf): cut launch", err);
		}
		gs_bcf_size_kernel<<<(p.qs + 255) / 256, 256, 0, stream>>>(bnd, p.s, p.qs, nsplit, frag, bsize);
		GS_LAUNCH_CHECK("merge sort (bcf): size launch", err);
		gs_bcf_offset_kernel<<<1, 1024, 0, stream>>>(bsize, nsplit, boff);
		GS_LAUNCH_CHECK("merge sort (bcf): offset launch", err);
		gs_bcf_scatter_kernel<K><<<p.s, 256, 0, stream>>>(keys[cur], keys[x], n, p.run, p.s, p.qs,
															bnd, frag, boff, nsplit);
		GS_LAUNCH_CHECK("merge sort (bcf): scatter launch", err);
		gs_bcf_equal_kernel<K><<<264, 256, 0, stream>>>(keys[x], keys[f], boff, bsize, nsplit, codec);
		GS_LAUNCH_CHECK("merge sort (bcf): equal-bucket launch", err);

		/* 4. merge the pieces inside every bucket, all buckets at once */
		cur = x;
		for (uint32_t i = 0; i < final_rounds; i++)
		{
			gs_bcf_pairs pr;
			uint32_t	warps;

			memset(&pr, 0, sizeof(pr));
			pr.bucketed = 1;
			pr.n = n;
			pr.boff = boff;
			pr.bsize = bsize;
			pr.frag = frag;
			pr.nsplit = nsplit;
			pr.s = p.s;
			pr.sp = p.sp;
			pr.stride = 1u << i;
			warps = p.nb * (p.sp >> (i + 1));
			gs_bcf_merge_kernel<K><<<(warps + GS_BCF_WARPS - 1) / GS_BCF_WARPS, threads, 0, stream>>>
				(keys[cur], keys[cur ^ 1], pr, codec, i == final_rounds - 1);
			GS_LAUNCH_CHECK("merge sort (bcf): bucket merge launch", err);
			cur ^= 1;
		}
		args->result_selector = cur;
	}
	return GS_OK;
}

#endif							/* GPUSORT_MERGE_BCF_CUH */
