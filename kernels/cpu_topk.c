/*
 * cpu_topk.c: the first k elements of the stable sort, on the CPU, without
 * sorting the other n - k: an MSD radix select on the ordered keys of keys.h
 * finds a key range that holds the k-th element, one pass gathers the
 * elements up to that range's end in input order, and the stable argsort of
 * cpu_sort.c orders those few.
 *
 * Each select level is one read of the input: a histogram of the next 16-bit
 * digit of the keys that share the digits chosen so far.  The bucket holding
 * the k-th key becomes the next prefix, the buckets below it are taken
 * whole.  Refinement stops once the bucket holds at most GS_TOPK_SMALL keys
 * (usually after one level) or at the last digit, where the remaining keys
 * are all equal and only the first of them in input order are taken: the
 * gathered set has at most k + GS_TOPK_SMALL elements, exactly k at full
 * depth, so even all-equal input costs two reads.  For small n, or k close
 * to n, a full sort is cheaper and is used instead.
 *
 * gs_cpu_topk_keep_before is the companion for accumulating a top-k: it
 * drops, in one read, the new elements that cannot displace the k-th of a
 * top-k already held.
 */
#include <stdint.h>
#include <string.h>

#include "gpusort.h"
#include "internal.h"
#include "keys.h"

#ifdef __GNUC__
#define GS_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define GS_ALWAYS_INLINE inline
#endif

#define GS_TOPK_DIGIT_BITS	16
#define GS_TOPK_RADIX		((size_t) 1 << GS_TOPK_DIGIT_BITS)
#define GS_TOPK_SMALL		((size_t) 1 << 16)	/* stop refining at a bucket this small */
#define GS_TOPK_CHUNK		((size_t) 1 << 20)	/* elements between interrupt polls */
#define GS_TOPK_ALIGN		64

/* A full sort when n is this small, or k more than n / GS_TOPK_FULL_FRACTION. */
#define GS_TOPK_FULL_MAX_N	((size_t) 1 << 16)
#define GS_TOPK_FULL_FRACTION 8

static bool
gs_topk_full_sort(size_t n, size_t k)
{
	return n <= GS_TOPK_FULL_MAX_N || k > n / GS_TOPK_FULL_FRACTION;
}

static size_t
gs_topk_round_up(size_t bytes)
{
	return (bytes + GS_TOPK_ALIGN - 1) & ~(size_t) (GS_TOPK_ALIGN - 1);
}

/*
 * Scratch layout (offsets from the caller's pointer aligned up to
 * GS_TOPK_ALIGN), derived in one place for the size query and the run.
 * Full sort: the sorted keys (n), the perm (n, with positions), the sort's
 * scratch.  Select: the histogram, the gathered keys and positions (g), the
 * perm of the gathered (g), the argsort's scratch.
 */
typedef struct gs_topk_layout
{
	size_t		hist;
	size_t		keys;
	size_t		positions;
	size_t		perm;
	size_t		sort_scratch;
	size_t		total;
} gs_topk_layout;

static void
gs_topk_layout_make(gs_type type, size_t n, size_t k, bool positions, gs_topk_layout *l)
{
	size_t		width = gs_type_size(type);
	size_t		at = 0;

	if (gs_topk_full_sort(n, k))
	{
		l->hist = l->positions = 0;
		l->keys = at;
		at += gs_topk_round_up(n * width);
		l->perm = at;
		if (positions)
			at += gs_topk_round_up(n * sizeof(uint32_t));
		l->sort_scratch = at;
		at += gs_cpu_scratch_bytes(type, n, positions);
	}
	else
	{
		size_t		g = k + GS_TOPK_SMALL < n ? k + GS_TOPK_SMALL : n;

		l->hist = at;
		at += gs_topk_round_up(GS_TOPK_RADIX * sizeof(uint32_t));
		l->keys = at;
		at += gs_topk_round_up(g * width);
		l->positions = at;
		at += gs_topk_round_up(g * sizeof(uint32_t));
		l->perm = at;
		at += gs_topk_round_up(g * sizeof(uint32_t));
		l->sort_scratch = at;
		at += gs_cpu_scratch_bytes(type, g, true);
	}
	l->total = at;
}

size_t
gs_cpu_topk_scratch_bytes(gs_type type, size_t n, size_t k, bool positions)
{
	gs_topk_layout l;

	if (gs_type_size(type) == 0 || k == 0 || n == 0)
		return 0;
	if (n > UINT32_MAX)
		return SIZE_MAX;
	if (k > n)
		k = n;
	gs_topk_layout_make(type, n, k, positions, &l);
	return l.total + GS_TOPK_ALIGN - 1;
}

/* ------------------------------------------------------------------------
 * Width-generic element access; width is a constant where these inline.
 * ------------------------------------------------------------------------ */

static GS_ALWAYS_INLINE uint64_t
gs_topk_key(const void *p, size_t i, size_t width, bool is_float, bool descending)
{
	switch (width)
	{
		case 2:
			return gs_to_key16(((const uint16_t *) p)[i], descending);
		case 4:
			return gs_to_key32(((const uint32_t *) p)[i], is_float, descending);
		default:
			return gs_to_key64(((const uint64_t *) p)[i], is_float, descending);
	}
}

typedef struct gs_topk_select
{
	size_t		n;
	size_t		k;
	bool		is_float;
	bool		descending;
	gs_interrupt_fn interrupt;
	void	   *interrupt_arg;
} gs_topk_select;

static bool
gs_topk_interrupted(const gs_topk_select *s)
{
	return s->interrupt != NULL && s->interrupt(s->interrupt_arg);
}

/*
 * The select levels: on return the first k ordered keys are exactly those
 * <= *last (all of those < *last, and when *full those == *last only up to
 * *need of them in input order: they are all equal).  False when
 * interrupted.
 */
static GS_ALWAYS_INLINE bool
gs_topk_find_range(const gs_topk_select *s, const void *keys, uint32_t *hist, size_t width,
				   uint64_t *last, size_t *need, bool *full)
{
	int			key_bits = (int) (8 * width);
	uint64_t	all = key_bits == 64 ? UINT64_MAX : ((UINT64_C(1) << key_bits) - 1);
	uint64_t	prefix = 0;
	uint64_t	mask = 0;
	size_t		want = s->k;	/* among the keys matching prefix, the rank sought */
	int			shift;

	for (shift = key_bits - GS_TOPK_DIGIT_BITS; shift >= 0; shift -= GS_TOPK_DIGIT_BITS)
	{
		size_t		begin,
					below = 0,
					b;

		memset(hist, 0, GS_TOPK_RADIX * sizeof(uint32_t));
		for (begin = 0; begin < s->n; begin += GS_TOPK_CHUNK)
		{
			size_t		end = begin + GS_TOPK_CHUNK < s->n ? begin + GS_TOPK_CHUNK : s->n;
			size_t		i;

			if (mask == 0)
				for (i = begin; i < end; i++)
					hist[gs_topk_key(keys, i, width, s->is_float, s->descending) >> shift]++;
			else
				for (i = begin; i < end; i++)
				{
					uint64_t	key = gs_topk_key(keys, i, width, s->is_float, s->descending);

					if ((key & mask) == prefix)
						hist[(key >> shift) & (GS_TOPK_RADIX - 1)]++;
				}
			if (gs_topk_interrupted(s))
				return false;
		}

		/* the bucket of the want-th key: the buckets below it are taken whole */
		for (b = 0; below + hist[b] < want; b++)
			below += hist[b];
		want -= below;
		prefix |= (uint64_t) b << shift;
		mask |= (uint64_t) (GS_TOPK_RADIX - 1) << shift;
		if (hist[b] <= GS_TOPK_SMALL || shift == 0)
		{
			*full = mask == all;
			*last = prefix | (all & ~mask);
			*need = want;
			return true;
		}
	}
	return false;				/* not reached: shift 0 always returns */
}

/*
 * Gathers, in input order, the keys <= last (those == last only up to need
 * when full) with their positions; returns how many, or SIZE_MAX when
 * interrupted.
 */
static GS_ALWAYS_INLINE size_t
gs_topk_gather(const gs_topk_select *s, const void *keys, uint64_t last, size_t need, bool full,
			   void *out, uint32_t *positions, size_t width)
{
	size_t		got = 0;
	size_t		begin;

	for (begin = 0; begin < s->n; begin += GS_TOPK_CHUNK)
	{
		size_t		end = begin + GS_TOPK_CHUNK < s->n ? begin + GS_TOPK_CHUNK : s->n;
		size_t		i;

		for (i = begin; i < end; i++)
		{
			uint64_t	key = gs_topk_key(keys, i, width, s->is_float, s->descending);

			if (key > last)
				continue;
			if (full && key == last)
			{
				if (need == 0)
					continue;
				need--;
			}
			memcpy((char *) out + got * width, (const char *) keys + i * width, width);
			positions[got++] = (uint32_t) i;
		}
		if (gs_topk_interrupted(s))
			return SIZE_MAX;
	}
	return got;
}

#define GS_TOPK_INSTANTIATE(W) \
static bool \
gs_topk_find_range_##W(const gs_topk_select *s, const void *keys, uint32_t *hist, \
					   uint64_t *last, size_t *need, bool *full) \
{ \
	return gs_topk_find_range(s, keys, hist, W, last, need, full); \
} \
static size_t \
gs_topk_gather_##W(const gs_topk_select *s, const void *keys, uint64_t last, size_t need, \
				   bool full, void *out, uint32_t *positions) \
{ \
	return gs_topk_gather(s, keys, last, need, full, out, positions, W); \
}

GS_TOPK_INSTANTIATE(2)
GS_TOPK_INSTANTIATE(4)
GS_TOPK_INSTANTIATE(8)

gs_status
gs_cpu_topk(gs_type type, const void *keys, size_t n, size_t k, bool descending,
			void *out_keys, uint32_t *out_perm,
			void *scratch, gs_interrupt_fn interrupt, void *interrupt_arg,
			gs_error *err)
{
	size_t		width = gs_type_size(type);
	gs_topk_layout l;
	unsigned char *base;
	gs_status	status;
	size_t		i;

	if (width == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "invalid element type %d", (int) type);
	if (n > UINT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE,
					   "cannot select from %zu elements: positions are 32-bit, so at most %u", n,
					   (unsigned) UINT32_MAX);
	if (k > n)
		k = n;
	if (k == 0)
		return GS_OK;
	if (keys == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "keys is null for %zu elements", n);
	if (out_keys == NULL && out_perm == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "neither keys nor positions are wanted");
	if (scratch == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "scratch is null for %zu elements", n);

	base = (unsigned char *) (((uintptr_t) scratch + GS_TOPK_ALIGN - 1) &
							  ~(uintptr_t) (GS_TOPK_ALIGN - 1));
	gs_topk_layout_make(type, n, k, out_perm != NULL, &l);

	if (gs_topk_full_sort(n, k))
	{
		void	   *sorted = base + l.keys;

		if (out_perm != NULL)
		{
			uint32_t   *perm = (uint32_t *) (base + l.perm);

			status = gs_cpu_argsort(type, keys, n, descending, perm, sorted,
									base + l.sort_scratch, interrupt, interrupt_arg, err);
			if (status == GS_OK)
				memcpy(out_perm, perm, k * sizeof(uint32_t));
		}
		else
		{
			memcpy(sorted, keys, n * width);
			status = gs_cpu_sort(type, sorted, n, descending,
								 base + l.sort_scratch, interrupt, interrupt_arg, err);
		}
		if (status == GS_OK && out_keys != NULL)
			memcpy(out_keys, sorted, k * width);
		return status;
	}
	else
	{
		gs_topk_select s;
		uint32_t   *hist = (uint32_t *) (base + l.hist);
		void	   *gathered = base + l.keys;
		uint32_t   *positions = (uint32_t *) (base + l.positions);
		uint32_t   *perm = (uint32_t *) (base + l.perm);
		uint64_t	last = 0;
		size_t		need = 0;
		size_t		g;
		bool		full = false;
		bool		found;

		s.n = n;
		s.k = k;
		s.is_float = type == GS_FLOAT4 || type == GS_FLOAT8;
		s.descending = descending;
		s.interrupt = interrupt;
		s.interrupt_arg = interrupt_arg;

		if (width == 2)
			found = gs_topk_find_range_2(&s, keys, hist, &last, &need, &full);
		else if (width == 4)
			found = gs_topk_find_range_4(&s, keys, hist, &last, &need, &full);
		else
			found = gs_topk_find_range_8(&s, keys, hist, &last, &need, &full);
		if (!found)
			return gs_fail(err, GS_ERR_INTERRUPTED, "cpu top-k interrupted");

		if (width == 2)
			g = gs_topk_gather_2(&s, keys, last, need, full, gathered, positions);
		else if (width == 4)
			g = gs_topk_gather_4(&s, keys, last, need, full, gathered, positions);
		else
			g = gs_topk_gather_8(&s, keys, last, need, full, gathered, positions);
		if (g == SIZE_MAX)
			return gs_fail(err, GS_ERR_INTERRUPTED, "cpu top-k interrupted");
		if (g < k)
			return gs_fail(err, GS_ERR_INVALID_ARGUMENT,
						   "cpu top-k gathered %zu of %zu elements", g, k);

		/* the gathered are in input order: a stable argsort keeps ties so */
		status = gs_cpu_argsort(type, gathered, g, descending, perm, NULL,
								base + l.sort_scratch, interrupt, interrupt_arg, err);
		if (status != GS_OK)
			return status;
		for (i = 0; i < k; i++)
		{
			if (out_keys != NULL)
				memcpy((char *) out_keys + i * width, (char *) gathered + (size_t) perm[i] * width, width);
			if (out_perm != NULL)
				out_perm[i] = positions[perm[i]];
		}
		return GS_OK;
	}
}

/*
 * gs_cpu_topk_keep_before for one key width: a branch-free compaction (each
 * element is copied to the next free slot, which advances only when it is
 * kept), one read of the keys.
 */
static GS_ALWAYS_INLINE size_t
gs_topk_keep_before(void *keys, size_t n, const void *bound, size_t width, bool is_float,
					bool descending)
{
	uint64_t	limit = gs_topk_key(bound, 0, width, is_float, descending);
	size_t		kept = 0;
	size_t		i;

	for (i = 0; i < n; i++)
	{
		uint64_t	key = gs_topk_key(keys, i, width, is_float, descending);

		memmove((char *) keys + kept * width, (const char *) keys + i * width, width);
		kept += key < limit;
	}
	return kept;
}

size_t
gs_cpu_topk_keep_before(gs_type type, void *keys, size_t n, const void *bound, bool descending)
{
	bool		is_float = type == GS_FLOAT4 || type == GS_FLOAT8;

	switch (gs_type_size(type))
	{
		case 2:
			return gs_topk_keep_before(keys, n, bound, 2, false, descending);
		case 4:
			return gs_topk_keep_before(keys, n, bound, 4, is_float, descending);
		case 8:
			return gs_topk_keep_before(keys, n, bound, 8, is_float, descending);
		default:
			return n;
	}
}
