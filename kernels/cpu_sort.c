/*
 * cpu_sort.c: the CPU sort of kernels/, an LSD radix sort of the ordered keys
 * of keys.h (the CPU member of the library's radix sorts), and its stable argsort.
 *
 * One read computes the histograms of every digit at once; a digit whose
 * histogram has a single non-empty bucket is skipped, and input already in
 * order skips them all.  The key transform is fused into the first scatter
 * and its inverse into the last, so no pass exists only to transform.  The
 * core is written once, as always-inlined functions whose key width and
 * digit size arguments are constants in each instantiation; the five types
 * are thin adapters onto the 16-, 32- and 64-bit instantiations.
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

/*
 * Tuning; bench/NOTES-cpu.md has the measurements.  Digits of 8 bits (256
 * buckets) or 11 bits (2048): 11-bit digits need fewer passes, 3 instead of 4
 * for 32-bit keys and 6 instead of 8 for 64-bit, and win by 10-25% while the
 * data (keys, and positions for an argsort) fit in about 4 MiB of cache.
 * Beyond that a scatter into 2048 lines and pages is more than twice as slow
 * as one into 256, whose lines stay in L1 and combine the writes there, and
 * 8-bit digits win by 25-35%.  Below 4096 elements clearing and scanning the
 * larger histograms costs more than the pass saved.  16-bit keys take 2
 * passes either way and stay at 8 bits.  Up to GS_CPU_INSERTION_MAX
 * elements, insertion sort on the ordered keys (stable: a key only moves
 * past strictly larger ones) beats any histogram.
 * -DGS_CPU_FORCE_DIGIT_BITS=8 or 11 fixes the digit size of 32- and 64-bit
 * keys, to repeat the comparison.
 */
#define GS_CPU_NARROW_BITS	8
#define GS_CPU_WIDE_BITS	11
#define GS_CPU_WIDE_MIN_N	4096
#define GS_CPU_WIDE_MAX_BYTES ((size_t) 4 << 20)
#define GS_CPU_INSERTION_MAX 64

#define GS_CPU_MAX_DIGITS	(64 / GS_CPU_NARROW_BITS)
#define GS_CPU_DIGITS(width, bits) ((int) ((8 * (width) + (bits) - 1) / (bits)))
#define GS_CPU_CHUNK		((size_t) 1 << 20)	/* elements between interrupt polls */
#define GS_CPU_ALIGN		64	/* scratch regions start on cache lines */

/* Largest n whose scratch size cannot overflow size_t. */
#define GS_CPU_MAX_N		(SIZE_MAX / 32)

/* Digit bits for n keys of this width (bytes), sorted alone or with positions. */
static int
gs_cpu_digit_bits(size_t width, size_t n, bool argsort)
{
	size_t		bytes_per_element = width + (argsort ? sizeof(uint32_t) : 0);

	if (width == 2)
		return GS_CPU_NARROW_BITS;
#ifdef GS_CPU_FORCE_DIGIT_BITS
	(void) n;
	(void) bytes_per_element;
	return GS_CPU_FORCE_DIGIT_BITS;
#else
	if (n >= GS_CPU_WIDE_MIN_N && n <= GS_CPU_WIDE_MAX_BYTES / bytes_per_element)
		return GS_CPU_WIDE_BITS;
	return GS_CPU_NARROW_BITS;
#endif
}

/* ------------------------------------------------------------------------
 * Scratch layout.  gs_cpu_scratch_bytes and the sorts both derive it from
 * here, so the size asked for is exactly the size used.  Offsets are from
 * the caller's pointer rounded up to GS_CPU_ALIGN.
 * ------------------------------------------------------------------------ */

typedef struct gs_cpu_layout
{
	size_t		counts;			/* ndigits x radix size_t: the digit histograms */
	size_t		chunk_counts;	/* ndigits x radix uint32: one chunk's histograms */
	size_t		offsets;		/* radix size_t: bucket write positions of a pass */
	size_t		keys0;			/* n keys */
	size_t		keys1;			/* n keys (argsort only) */
	size_t		positions;		/* n uint32 (argsort only) */
	size_t		total;
} gs_cpu_layout;

static size_t
gs_cpu_round_up(size_t bytes)
{
	return (bytes + GS_CPU_ALIGN - 1) & ~(size_t) (GS_CPU_ALIGN - 1);
}

static void
gs_cpu_layout_make(size_t width, size_t n, bool argsort, gs_cpu_layout *l)
{
	int			bits = gs_cpu_digit_bits(width, n, argsort);
	size_t		ndigits = GS_CPU_DIGITS(width, bits);
	size_t		radix = (size_t) 1 << bits;
	size_t		at = 0;

	l->counts = at;
	at += gs_cpu_round_up(ndigits * radix * sizeof(size_t));
	l->chunk_counts = at;
	at += gs_cpu_round_up(ndigits * radix * sizeof(uint32_t));
	l->offsets = at;
	at += gs_cpu_round_up(radix * sizeof(size_t));
	l->keys0 = at;
	at += gs_cpu_round_up(n * width);
	l->keys1 = at;
	l->positions = at;
	if (argsort)
	{
		at += gs_cpu_round_up(n * width);
		l->positions = at;
		at += gs_cpu_round_up(n * sizeof(uint32_t));
	}
	l->total = at;
}

/* ------------------------------------------------------------------------
 * Width-generic element access and key transforms (keys.h).  width is a
 * constant wherever these are inlined, so the switches fold away.
 * ------------------------------------------------------------------------ */

static GS_ALWAYS_INLINE uint64_t
gs_cpu_load(const void *p, size_t i, size_t width)
{
	switch (width)
	{
		case 2:
			return ((const uint16_t *) p)[i];
		case 4:
			return ((const uint32_t *) p)[i];
		default:
			return ((const uint64_t *) p)[i];
	}
}

static GS_ALWAYS_INLINE void
gs_cpu_store(void *p, size_t i, size_t width, uint64_t v)
{
	switch (width)
	{
		case 2:
			((uint16_t *) p)[i] = (uint16_t) v;
			break;
		case 4:
			((uint32_t *) p)[i] = (uint32_t) v;
			break;
		default:
			((uint64_t *) p)[i] = v;
			break;
	}
}

static GS_ALWAYS_INLINE uint64_t
gs_cpu_to_key(uint64_t bits, size_t width, bool is_float, bool descending)
{
	switch (width)
	{
		case 2:
			return gs_to_key16((uint16_t) bits, descending);
		case 4:
			return gs_to_key32((uint32_t) bits, is_float, descending);
		default:
			return gs_to_key64(bits, is_float, descending);
	}
}

static GS_ALWAYS_INLINE uint64_t
gs_cpu_from_key(uint64_t key, size_t width, bool is_float, bool descending)
{
	switch (width)
	{
		case 2:
			return gs_from_key16((uint16_t) key, descending);
		case 4:
			return gs_from_key32((uint32_t) key, is_float, descending);
		default:
			return gs_from_key64(key, is_float, descending);
	}
}

/* ------------------------------------------------------------------------
 * The radix sort's steps.
 * ------------------------------------------------------------------------ */

typedef struct gs_cpu_sorter
{
	size_t		width;
	bool		is_float;
	bool		descending;
	size_t		n;
	int			bits;			/* digit bits: selects the instantiation */
	size_t	   *counts;
	uint32_t   *chunk_counts;
	size_t	   *offsets;
	gs_interrupt_fn interrupt;
	void	   *interrupt_arg;
	int			npasses;
	int			pass_digit[GS_CPU_MAX_DIGITS];
} gs_cpu_sorter;

static bool
gs_cpu_interrupted(const gs_cpu_sorter *s)
{
	return s->interrupt != NULL && s->interrupt(s->interrupt_arg);
}

/* End of the chunk that starts at begin. */
static size_t
gs_cpu_chunk_end(const gs_cpu_sorter *s, size_t begin)
{
	return s->n - begin > GS_CPU_CHUNK ? begin + GS_CPU_CHUNK : s->n;
}

/*
 * The upfront read: the histograms of every digit of the ordered keys, and
 * whether the keys are already in order.  If fused_dst is not NULL it also
 * receives the ordered keys.  Counting goes into 32-bit per-chunk histograms
 * (half the cache footprint of size_t ones, and no overflow whatever n is)
 * that are added to the size_t totals after each chunk.  Returns false when
 * interrupted.
 */
static GS_ALWAYS_INLINE bool
gs_cpu_histogram(gs_cpu_sorter *s, const void *src, void *fused_dst, bool *in_order,
				 size_t width, int bits)
{
	const int	ndigits = GS_CPU_DIGITS(width, bits);
	const size_t radix = (size_t) 1 << bits;
	const uint64_t mask = radix - 1;
	uint64_t	prev = 0;
	bool		unordered = false;
	size_t		begin;

	memset(s->counts, 0, ndigits * radix * sizeof(size_t));
	for (begin = 0; begin < s->n; begin += GS_CPU_CHUNK)
	{
		size_t		end = gs_cpu_chunk_end(s, begin);
		uint32_t   *c = s->chunk_counts;
		size_t		i;
		int			d;

		memset(c, 0, ndigits * radix * sizeof(uint32_t));
		for (i = begin; i < end; i++)
		{
			uint64_t	k = gs_cpu_to_key(gs_cpu_load(src, i, width), width, s->is_float, s->descending);

			if (fused_dst != NULL)
				gs_cpu_store(fused_dst, i, width, k);
			/* unrolled (halves the time at -O2): a shift, a mask and an add per digit */
#pragma GCC unroll 8
			for (d = 0; d < ndigits; d++)
				c[d * radix + ((k >> (d * bits)) & mask)]++;
			unordered |= k < prev;
			prev = k;
		}
		for (i = 0; i < ndigits * radix; i++)
			s->counts[i] += c[i];
		if (gs_cpu_interrupted(s))
			return false;
	}
	*in_order = !unordered;
	return true;
}

/*
 * Plans the passes: a digit needs one only if its histogram has more than
 * one non-empty bucket, i.e. the bucket of any one key does not hold all n.
 * Input already in order needs none.
 */
static GS_ALWAYS_INLINE void
gs_cpu_plan(gs_cpu_sorter *s, const void *src, bool in_order, size_t width, int bits)
{
	const int	ndigits = GS_CPU_DIGITS(width, bits);
	const size_t radix = (size_t) 1 << bits;
	uint64_t	k0 = gs_cpu_to_key(gs_cpu_load(src, 0, width), width, s->is_float, s->descending);
	int			d;

	s->npasses = 0;
	if (in_order)
		return;
	for (d = 0; d < ndigits; d++)
	{
		size_t		bucket = (k0 >> (d * bits)) & (radix - 1);

		if (s->counts[d * radix + bucket] != s->n)
			s->pass_digit[s->npasses++] = d;
	}
}

/*
 * One stable scatter of elements [begin, end) by digit.
 * src_raw: src holds the caller's element bits (transform them);
 * dst_raw: write element bits (inverse transform) rather than ordered keys;
 * dst NULL: keys not written (an argsort's last pass without sorted_keys);
 * dst_pos NULL: no positions (plain sort); src_pos NULL with dst_pos: the
 * position is the index itself (an argsort's first pass).
 */
static GS_ALWAYS_INLINE void
gs_cpu_scatter_range(const gs_cpu_sorter *s, int digit,
					 const void *restrict src, const uint32_t *restrict src_pos,
					 void *restrict dst, uint32_t *restrict dst_pos,
					 size_t begin, size_t end, size_t width, int bits, bool src_raw, bool dst_raw)
{
	const int	shift = digit * bits;
	const uint64_t mask = ((uint64_t) 1 << bits) - 1;
	size_t	   *restrict offsets = s->offsets;
	size_t		i;

	for (i = begin; i < end; i++)
	{
		uint64_t	k = gs_cpu_load(src, i, width);
		size_t		o;

		if (src_raw)
			k = gs_cpu_to_key(k, width, s->is_float, s->descending);
		o = offsets[(k >> shift) & mask]++;
		if (dst != NULL)
			gs_cpu_store(dst, o, width, dst_raw ? gs_cpu_from_key(k, width, s->is_float, s->descending) : k);
		if (dst_pos != NULL)
			dst_pos[o] = src_pos != NULL ? src_pos[i] : (uint32_t) i;
	}
}

/*
 * A whole scatter pass by digit, polling the interrupt every chunk.  Each
 * transform combination gets its own loop, with the flags constant inside.
 * Returns false when interrupted.
 */
static GS_ALWAYS_INLINE bool
gs_cpu_scatter(gs_cpu_sorter *s, int digit,
			   const void *src, const uint32_t *src_pos, void *dst, uint32_t *dst_pos,
			   bool src_raw, bool dst_raw, size_t width, int bits)
{
	const size_t radix = (size_t) 1 << bits;
	const size_t *c = s->counts + digit * radix;
	size_t		sum = 0;
	size_t		b,
				begin;

	/* bucket write positions: exclusive prefix sum of the digit's histogram */
	for (b = 0; b < radix; b++)
	{
		s->offsets[b] = sum;
		sum += c[b];
	}

	for (begin = 0; begin < s->n; begin += GS_CPU_CHUNK)
	{
		size_t		end = gs_cpu_chunk_end(s, begin);

		if (src_raw && dst_raw)
			gs_cpu_scatter_range(s, digit, src, src_pos, dst, dst_pos, begin, end, width, bits, true, true);
		else if (src_raw)
			gs_cpu_scatter_range(s, digit, src, src_pos, dst, dst_pos, begin, end, width, bits, true, false);
		else if (dst_raw)
			gs_cpu_scatter_range(s, digit, src, src_pos, dst, dst_pos, begin, end, width, bits, false, true);
		else
			gs_cpu_scatter_range(s, digit, src, src_pos, dst, dst_pos, begin, end, width, bits, false, false);
		if (gs_cpu_interrupted(s))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------------
 * The sorts, generic over the key width.
 * ------------------------------------------------------------------------ */

/*
 * Sorts keys in place through one scratch buffer tmp.  Passes alternate
 * between keys and tmp; for the last one to land in keys, an even number of
 * passes starts from keys and an odd number from tmp, which must then hold
 * the ordered keys already.  The histogram read writes them there when the
 * digit count is odd (3 digits of 11 bits for 32-bit keys), the likely pass
 * count, and a copy is made only when skipped digits change the parity.
 */
static GS_ALWAYS_INLINE bool
gs_cpu_radix_sort(gs_cpu_sorter *s, void *keys, void *tmp, size_t width, int bits)
{
	bool		fused = (GS_CPU_DIGITS(width, bits) & 1) != 0;
	bool		in_order;
	void	   *src = keys;
	void	   *dst = tmp;
	bool		src_raw = true;
	int			p;

	if (!gs_cpu_histogram(s, keys, fused ? tmp : NULL, &in_order, width, bits))
		return false;
	gs_cpu_plan(s, keys, in_order, width, bits);
	if (s->npasses == 0)
		return true;			/* the input is the answer */

	if (s->npasses & 1)
	{
		if (!fused)
		{
			size_t		begin,
						i;

			for (begin = 0; begin < s->n; begin += GS_CPU_CHUNK)
			{
				size_t		end = gs_cpu_chunk_end(s, begin);

				for (i = begin; i < end; i++)
					gs_cpu_store(tmp, i, width,
								 gs_cpu_to_key(gs_cpu_load(keys, i, width), width, s->is_float, s->descending));
				if (gs_cpu_interrupted(s))
					return false;
			}
		}
		src = tmp;
		dst = keys;
		src_raw = false;
	}

	for (p = 0; p < s->npasses; p++)
	{
		void	   *t;

		if (!gs_cpu_scatter(s, s->pass_digit[p], src, NULL, dst, NULL,
							src_raw, p == s->npasses - 1, width, bits))
			return false;
		t = src;
		src = dst;
		dst = t;
		src_raw = false;
	}
	return true;
}

/*
 * Stable argsort: ordered keys and positions move together.  The first pass
 * reads the caller's keys, positions implied by the index; the last writes
 * positions to perm and, if wanted, the element bits to sorted_keys.  Pass p
 * writes buffer set (npasses - 1 - p) % 2: set 0 is perm with sorted_keys (or
 * scratch keys1 when there is none), set 1 is scratch positions with scratch
 * keys0, so consecutive passes never share a buffer and the last one lands in
 * the caller's.
 */
static GS_ALWAYS_INLINE bool
gs_cpu_radix_argsort(gs_cpu_sorter *s, const void *keys, uint32_t *perm, void *sorted_keys,
					 void *keys0, void *keys1, uint32_t *positions, size_t width, int bits)
{
	void	   *set_keys[2];
	uint32_t   *set_pos[2];
	const void *src = keys;
	const uint32_t *src_pos = NULL;
	bool		in_order;
	int			p;

	if (!gs_cpu_histogram(s, keys, NULL, &in_order, width, bits))
		return false;
	gs_cpu_plan(s, keys, in_order, width, bits);
	if (s->npasses == 0)
	{
		/* the identity, polled per chunk like a pass: n may be 2^32 - 1 */
		size_t		begin,
					i;

		for (begin = 0; begin < s->n; begin += GS_CPU_CHUNK)
		{
			size_t		end = gs_cpu_chunk_end(s, begin);

			for (i = begin; i < end; i++)
				perm[i] = (uint32_t) i;
			if (sorted_keys != NULL)
				memcpy((char *) sorted_keys + begin * width, (const char *) keys + begin * width,
					   (end - begin) * width);
			if (gs_cpu_interrupted(s))
				return false;
		}
		return true;
	}

	set_keys[0] = sorted_keys != NULL ? sorted_keys : keys1;
	set_pos[0] = perm;
	set_keys[1] = keys0;
	set_pos[1] = positions;
	for (p = 0; p < s->npasses; p++)
	{
		int			set = (s->npasses - 1 - p) & 1;
		bool		last = p == s->npasses - 1;

		if (!gs_cpu_scatter(s, s->pass_digit[p], src, src_pos,
							last ? sorted_keys : set_keys[set], set_pos[set],
							p == 0, last, width, bits))
			return false;
		src = set_keys[set];
		src_pos = set_pos[set];
	}
	return true;
}

/* Insertion sort of n <= GS_CPU_INSERTION_MAX keys in place, on their ordered keys. */
static GS_ALWAYS_INLINE void
gs_cpu_insertion_sort(void *keys, size_t n, bool is_float, bool descending, size_t width)
{
	uint64_t	k[GS_CPU_INSERTION_MAX];
	size_t		i;

	for (i = 0; i < n; i++)
	{
		uint64_t	key = gs_cpu_to_key(gs_cpu_load(keys, i, width), width, is_float, descending);
		size_t		j = i;

		for (; j > 0 && k[j - 1] > key; j--)
			k[j] = k[j - 1];
		k[j] = key;
	}
	for (i = 0; i < n; i++)
		gs_cpu_store(keys, i, width, gs_cpu_from_key(k[i], width, is_float, descending));
}

/* Insertion argsort of n <= GS_CPU_INSERTION_MAX keys. */
static GS_ALWAYS_INLINE void
gs_cpu_insertion_argsort(const void *keys, size_t n, bool is_float, bool descending,
						 uint32_t *perm, void *sorted_keys, size_t width)
{
	uint64_t	k[GS_CPU_INSERTION_MAX];
	size_t		i;

	for (i = 0; i < n; i++)
	{
		uint64_t	key = gs_cpu_to_key(gs_cpu_load(keys, i, width), width, is_float, descending);
		size_t		j = i;

		for (; j > 0 && k[j - 1] > key; j--)
		{
			k[j] = k[j - 1];
			perm[j] = perm[j - 1];
		}
		k[j] = key;
		perm[j] = (uint32_t) i;
	}
	if (sorted_keys != NULL)
		for (i = 0; i < n; i++)
			gs_cpu_store(sorted_keys, i, width, gs_cpu_load(keys, perm[i], width));
}

/* ------------------------------------------------------------------------
 * Instantiations: the radix sorts per (key width, digit bits) in use, the
 * insertion sorts per width.
 * ------------------------------------------------------------------------ */

#define GS_CPU_INSTANTIATE_RADIX(W, B) \
static bool \
gs_cpu_radix_sort_##W##_##B(gs_cpu_sorter *s, void *keys, void *tmp) \
{ \
	return gs_cpu_radix_sort(s, keys, tmp, W, B); \
} \
static bool \
gs_cpu_radix_argsort_##W##_##B(gs_cpu_sorter *s, const void *keys, uint32_t *perm, \
							   void *sorted_keys, void *keys0, void *keys1, uint32_t *positions) \
{ \
	return gs_cpu_radix_argsort(s, keys, perm, sorted_keys, keys0, keys1, positions, W, B); \
}

#define GS_CPU_INSTANTIATE_INSERTION(W) \
static void \
gs_cpu_insertion_sort_##W(void *keys, size_t n, bool is_float, bool descending) \
{ \
	gs_cpu_insertion_sort(keys, n, is_float, descending, W); \
} \
static void \
gs_cpu_insertion_argsort_##W(const void *keys, size_t n, bool is_float, bool descending, \
							 uint32_t *perm, void *sorted_keys) \
{ \
	gs_cpu_insertion_argsort(keys, n, is_float, descending, perm, sorted_keys, W); \
}

GS_CPU_INSTANTIATE_RADIX(2, 8)
GS_CPU_INSTANTIATE_RADIX(4, 8)
GS_CPU_INSTANTIATE_RADIX(4, 11)
GS_CPU_INSTANTIATE_RADIX(8, 8)
GS_CPU_INSTANTIATE_RADIX(8, 11)
GS_CPU_INSTANTIATE_INSERTION(2)
GS_CPU_INSTANTIATE_INSERTION(4)
GS_CPU_INSTANTIATE_INSERTION(8)

/* ------------------------------------------------------------------------
 * The API.
 * ------------------------------------------------------------------------ */

size_t
gs_cpu_scratch_bytes(gs_type type, size_t n, bool argsort)
{
	size_t		width = gs_type_size(type);
	gs_cpu_layout l;

	if (width == 0 || n <= GS_CPU_INSERTION_MAX)
		return 0;
	if (n > GS_CPU_MAX_N)
		return SIZE_MAX;
	gs_cpu_layout_make(width, n, argsort, &l);
	return l.total + GS_CPU_ALIGN - 1;	/* slack to align the caller's pointer */
}

/*
 * Fills the sorter and carves the scratch (aligned up to GS_CPU_ALIGN); *base
 * receives the aligned start, to which the layout's offsets are relative.
 */
static void
gs_cpu_sorter_init(gs_cpu_sorter *s, gs_type type, size_t n, bool descending, void *scratch,
				   bool argsort, gs_interrupt_fn interrupt, void *interrupt_arg,
				   gs_cpu_layout *l, unsigned char **base)
{
	*base = (unsigned char *) (((uintptr_t) scratch + GS_CPU_ALIGN - 1) & ~(uintptr_t) (GS_CPU_ALIGN - 1));
	s->width = gs_type_size(type);
	s->is_float = type == GS_FLOAT4 || type == GS_FLOAT8;
	s->descending = descending;
	s->n = n;
	s->bits = gs_cpu_digit_bits(s->width, n, argsort);
	gs_cpu_layout_make(s->width, n, argsort, l);
	s->counts = (size_t *) (*base + l->counts);
	s->chunk_counts = (uint32_t *) (*base + l->chunk_counts);
	s->offsets = (size_t *) (*base + l->offsets);
	s->interrupt = interrupt;
	s->interrupt_arg = interrupt_arg;
	s->npasses = 0;
}

gs_status
gs_cpu_sort(gs_type type, void *keys, size_t n, bool descending,
			void *scratch, gs_interrupt_fn interrupt, void *interrupt_arg,
			gs_error *err)
{
	size_t		width = gs_type_size(type);
	bool		is_float = type == GS_FLOAT4 || type == GS_FLOAT8;
	gs_cpu_sorter s;
	gs_cpu_layout l;
	unsigned char *base;
	bool		done;

	if (width == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "invalid element type %d", (int) type);
	if (n > GS_CPU_MAX_N)
		return gs_fail(err, GS_ERR_TOO_LARGE, "cannot sort %zu elements", n);
	if (n > 0 && keys == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "keys is null for %zu elements", n);
	if (n <= GS_CPU_INSERTION_MAX)
	{
		if (width == 2)
			gs_cpu_insertion_sort_2(keys, n, is_float, descending);
		else if (width == 4)
			gs_cpu_insertion_sort_4(keys, n, is_float, descending);
		else
			gs_cpu_insertion_sort_8(keys, n, is_float, descending);
		return GS_OK;
	}
	if (scratch == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "scratch is null for %zu elements", n);

	gs_cpu_sorter_init(&s, type, n, descending, scratch, false, interrupt, interrupt_arg, &l, &base);
	if (width == 2)
		done = gs_cpu_radix_sort_2_8(&s, keys, base + l.keys0);
	else if (width == 4)
		done = s.bits == GS_CPU_WIDE_BITS ? gs_cpu_radix_sort_4_11(&s, keys, base + l.keys0) :
			gs_cpu_radix_sort_4_8(&s, keys, base + l.keys0);
	else
		done = s.bits == GS_CPU_WIDE_BITS ? gs_cpu_radix_sort_8_11(&s, keys, base + l.keys0) :
			gs_cpu_radix_sort_8_8(&s, keys, base + l.keys0);
	if (!done)
		return gs_fail(err, GS_ERR_INTERRUPTED, "cpu sort interrupted");
	return GS_OK;
}

gs_status
gs_cpu_argsort(gs_type type, const void *keys, size_t n, bool descending,
			   uint32_t *perm, void *sorted_keys,
			   void *scratch, gs_interrupt_fn interrupt, void *interrupt_arg,
			   gs_error *err)
{
	size_t		width = gs_type_size(type);
	bool		is_float = type == GS_FLOAT4 || type == GS_FLOAT8;
	gs_cpu_sorter s;
	gs_cpu_layout l;
	unsigned char *base;
	bool		done;

	if (width == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "invalid element type %d", (int) type);
	if (n > UINT32_MAX)
		return gs_fail(err, GS_ERR_TOO_LARGE,
					   "cannot argsort %zu elements: positions are 32-bit, so at most %u", n,
					   (unsigned) UINT32_MAX);
	if (n > 0 && keys == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "keys is null for %zu elements", n);
	if (n > 0 && perm == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "perm is null for %zu elements", n);
	if (n > 0 && sorted_keys != NULL &&
		(uintptr_t) sorted_keys < (uintptr_t) keys + n * width &&
		(uintptr_t) keys < (uintptr_t) sorted_keys + n * width)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "sorted_keys overlaps keys");
	if (n <= GS_CPU_INSERTION_MAX)
	{
		if (width == 2)
			gs_cpu_insertion_argsort_2(keys, n, is_float, descending, perm, sorted_keys);
		else if (width == 4)
			gs_cpu_insertion_argsort_4(keys, n, is_float, descending, perm, sorted_keys);
		else
			gs_cpu_insertion_argsort_8(keys, n, is_float, descending, perm, sorted_keys);
		return GS_OK;
	}
	if (scratch == NULL)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "scratch is null for %zu elements", n);

	gs_cpu_sorter_init(&s, type, n, descending, scratch, true, interrupt, interrupt_arg, &l, &base);
#define GS_CPU_ARGSORT(W, B) \
	gs_cpu_radix_argsort_##W##_##B(&s, keys, perm, sorted_keys, base + l.keys0, base + l.keys1, \
								   (uint32_t *) (base + l.positions))
	if (width == 2)
		done = GS_CPU_ARGSORT(2, 8);
	else if (width == 4)
		done = s.bits == GS_CPU_WIDE_BITS ? GS_CPU_ARGSORT(4, 11) : GS_CPU_ARGSORT(4, 8);
	else
		done = s.bits == GS_CPU_WIDE_BITS ? GS_CPU_ARGSORT(8, 11) : GS_CPU_ARGSORT(8, 8);
#undef GS_CPU_ARGSORT
	if (!done)
		return gs_fail(err, GS_ERR_INTERRUPTED, "cpu argsort interrupted");
	return GS_OK;
}
