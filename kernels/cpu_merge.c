/*
 * cpu_merge.c: sorted runs on the CPU, in gpusort's order (the ordered keys
 * of keys.h, ascending): a two-way merge, an in-order check, and the
 * selection of one rank from several runs without merging them.
 *
 * The merge is the textbook one (Knuth, TAOCP vol. 3, 5.2.4) written without
 * a data-dependent branch in its loop: each step compares the two heads'
 * keys, stores the smaller and advances its side by the comparison's
 * result, so its speed does not depend on how the runs interleave.  Ties
 * take the first run's element first: the merge is stable.
 *
 * The selection finds the smallest key K with more than rank keys <= K in
 * all runs together, by a binary search over the key space whose every step
 * counts with one binary search per run: O(w * r * log n) for keys of w
 * bits in r runs, against O(n) for a merge.
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

static GS_ALWAYS_INLINE uint64_t
gs_merge_key(const void *p, size_t i, size_t width, bool is_float)
{
	switch (width)
	{
		case 2:
			return gs_to_key16(((const uint16_t *) p)[i], false);
		case 4:
			return gs_to_key32(((const uint32_t *) p)[i], is_float, false);
		default:
			return gs_to_key64(((const uint64_t *) p)[i], is_float, false);
	}
}

static GS_ALWAYS_INLINE void
gs_merge_copy(void *dst, size_t di, const void *src, size_t si, size_t width)
{
	switch (width)
	{
		case 2:
			((uint16_t *) dst)[di] = ((const uint16_t *) src)[si];
			break;
		case 4:
			((uint32_t *) dst)[di] = ((const uint32_t *) src)[si];
			break;
		default:
			((uint64_t *) dst)[di] = ((const uint64_t *) src)[si];
			break;
	}
}

static GS_ALWAYS_INLINE void
gs_merge_runs(const void *a, size_t na, const void *b, size_t nb, void *out,
			  size_t width, bool is_float)
{
	size_t		i = 0;
	size_t		j = 0;
	size_t		k = 0;

	while (i < na && j < nb)
	{
		uint64_t	ka = gs_merge_key(a, i, width, is_float);
		uint64_t	kb = gs_merge_key(b, j, width, is_float);
		size_t		take_b = kb < ka;

		if (take_b)
			gs_merge_copy(out, k, b, j, width);
		else
			gs_merge_copy(out, k, a, i, width);
		k++;
		j += take_b;
		i += 1 - take_b;
	}
	memcpy((char *) out + k * width, (const char *) a + i * width, (na - i) * width);
	k += na - i;
	memcpy((char *) out + k * width, (const char *) b + j * width, (nb - j) * width);
}

/* One instantiation per key width and kind, so that the loop has no switch left. */
#define GS_MERGE_INSTANCE(NAME, W, F) \
static void \
NAME(const void *a, size_t na, const void *b, size_t nb, void *out) \
{ \
	gs_merge_runs(a, na, b, nb, out, W, F); \
}
GS_MERGE_INSTANCE(gs_merge_2, 2, false)
GS_MERGE_INSTANCE(gs_merge_4i, 4, false)
GS_MERGE_INSTANCE(gs_merge_4f, 4, true)
GS_MERGE_INSTANCE(gs_merge_8i, 8, false)
GS_MERGE_INSTANCE(gs_merge_8f, 8, true)

static bool
gs_merge_is_float(gs_type type)
{
	return type == GS_FLOAT4 || type == GS_FLOAT8;
}

gs_status
gs_cpu_merge(gs_type type, const void *a, size_t na, const void *b, size_t nb, void *out,
			 gs_error *err)
{
	size_t		width = gs_type_size(type);

	if (width == 0)
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "invalid element type %d", (int) type);
	if ((na > 0 && a == NULL) || (nb > 0 && b == NULL) || (na + nb > 0 && out == NULL))
		return gs_fail(err, GS_ERR_INVALID_ARGUMENT, "a run or the output is null");
	switch (type)
	{
		case GS_INT2:
			gs_merge_2(a, na, b, nb, out);
			break;
		case GS_INT4:
			gs_merge_4i(a, na, b, nb, out);
			break;
		case GS_FLOAT4:
			gs_merge_4f(a, na, b, nb, out);
			break;
		case GS_INT8:
			gs_merge_8i(a, na, b, nb, out);
			break;
		default:
			gs_merge_8f(a, na, b, nb, out);
			break;
	}
	return GS_OK;
}

bool
gs_cpu_is_sorted(gs_type type, const void *keys, size_t n)
{
	size_t		width = gs_type_size(type);
	bool		is_float = gs_merge_is_float(type);

	if (width == 0)
		return false;
	for (size_t i = 1; i < n; i++)
		if (gs_merge_key(keys, i, width, is_float) < gs_merge_key(keys, i - 1, width, is_float))
			return false;
	return true;
}

/* How many keys of the ascending run p[0..n) are <= key. */
static size_t
gs_merge_count_le(const void *p, size_t n, uint64_t key, size_t width, bool is_float)
{
	size_t		lo = 0;
	size_t		hi = n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (gs_merge_key(p, mid, width, is_float) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t
gs_cpu_runs_select(gs_type type, const void *values, const size_t *starts, size_t nruns,
				   size_t rank)
{
	size_t		width = gs_type_size(type);
	bool		is_float = gs_merge_is_float(type);
	uint64_t	lo = 0;
	uint64_t	hi = width == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;

	if (width == 0 || nruns == 0 || rank >= starts[nruns] - starts[0])
		return SIZE_MAX;

	/* the smallest key K with more than rank keys <= K */
	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;
		size_t		count = 0;

		for (size_t r = 0; r < nruns; r++)
			count += gs_merge_count_le((const char *) values + starts[r] * width,
									   starts[r + 1] - starts[r], mid, width, is_float);
		if (count > rank)
			hi = mid;
		else
			lo = mid + 1;
	}

	/* an element with key K: the first in some run that holds one */
	for (size_t r = 0; r < nruns; r++)
	{
		const char *run = (const char *) values + starts[r] * width;
		size_t		len = starts[r + 1] - starts[r];
		size_t		below = lo == 0 ? 0 : gs_merge_count_le(run, len, lo - 1, width, is_float);

		if (below < len && gs_merge_key(run, below, width, is_float) == lo)
			return starts[r] + below;
	}
	return SIZE_MAX;			/* not reached for sorted runs */
}
