/*
 * array_sort.c: gpu_sort and gpu_argsort, and the array handling they share
 * with the SRF and the aggregate.
 *
 * One C function per SQL function serves all five element types: it reads the
 * element type from the array header.  The elements of these types are fixed
 * width with their alignment equal to their width, so an array's data area is
 * a packed C array of its non-NULL elements.  gpu_sort builds the result's
 * header first and sorts in its data area, so the elements are copied once.
 * Arrays of the other sortable types go to any_sort.c.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "gpusort_pg.h"

PG_FUNCTION_INFO_V1(gpu_sort);
PG_FUNCTION_INFO_V1(gpu_argsort);

bool
gpusort_get_array_args(FunctionCallInfo fcinfo, const char *funcname,
					   ArrayType **array, bool *owned,
					   bool *descending, bool *nulls_first)
{
	/* ORDER BY has no NULL direction, so neither do we */
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("descending must not be null")));
	*descending = PG_GETARG_BOOL(1);
	*nulls_first = PG_ARGISNULL(2) ? *descending : PG_GETARG_BOOL(2);

	if (PG_ARGISNULL(0))
	{
		gpusort_check_null_array(fcinfo, 0);
		return false;
	}

	*array = gpusort_getarg_1d_array(fcinfo, 0, funcname, owned);
	return true;
}

void
gpusort_check_null_array(FunctionCallInfo fcinfo, int argno)
{
	Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, argno);

	if (OidIsValid(argtype) && OidIsValid(get_element_type(argtype)))
		gpusort_check_sortable(get_element_type(argtype));
}

ArrayType *
gpusort_getarg_1d_array(FunctionCallInfo fcinfo, int argno, const char *funcname, bool *owned)
{
	ArrayType  *a = gpusort_getarg_array(fcinfo, argno, owned);

	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support multidimensional arrays", funcname),
				 errdetail("The array has %d dimensions.", ARR_NDIM(a)),
				 errhint("Flatten it first, for example with array(SELECT unnest(a)).")));
	gpusort_check_sortable(ARR_ELEMTYPE(a));
	return a;
}

/* Sets bits lo .. hi-1 of a zeroed bitmap: whole bytes at a time in the middle. */
static void
set_bits(bits8 *map, int64 lo, int64 hi)
{
	while (lo < hi && (lo & 7) != 0)
	{
		map[lo >> 3] |= (bits8) (1 << (lo & 7));
		lo++;
	}
	if (hi - lo >= 8)
	{
		memset(map + (lo >> 3), 0xFF, (hi - lo) >> 3);
		lo += (hi - lo) & ~(int64) 7;
	}
	while (lo < hi)
	{
		map[lo >> 3] |= (bits8) (1 << (lo & 7));
		lo++;
	}
}

ArrayType *
gpusort_new_array(Oid elemtype, int16 typlen, int64 nvalues, int64 nnulls,
				  bool nulls_first, const char *what)
{
	int64		nitems = nvalues + nnulls;
	Size		overhead;
	uint64		nbytes;
	ArrayType  *result;

	if (nitems == 0)
		return construct_empty_array(elemtype);

	overhead = nnulls > 0 ? ARR_OVERHEAD_WITHNULLS(1, nitems) : ARR_OVERHEAD_NONULLS(1);
	nbytes = (uint64) overhead + (uint64) nvalues * typlen;
	if (nitems > (int64) MaxArraySize || !AllocSizeIsValid(nbytes))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s result would exceed the maximum array size", what),
				 errdetail("The result would have %lld elements, the limit is %zu elements and %zu bytes.",
						   (long long) nitems, (Size) MaxArraySize, (Size) MaxAllocSize)));

	/* the data area is the caller's to fill: zero only the header and bitmap */
	result = (ArrayType *) gpusort_alloc_large(nbytes);
	memset(result, 0, overhead);
	SET_VARSIZE(result, nbytes);
	result->ndim = 1;
	result->dataoffset = nnulls > 0 ? (int32) overhead : 0;
	result->elemtype = elemtype;
	ARR_DIMS(result)[0] = (int) nitems;
	ARR_LBOUND(result)[0] = 1;
	if (nnulls > 0)
	{
		int64		first = nulls_first ? nnulls : 0;

		set_bits(ARR_NULLBITMAP(result), first, first + nvalues);
	}
	return result;
}

int64
gpusort_count_nulls(ArrayType *array, int nitems)
{
	bits8	   *bitmap = ARR_NULLBITMAP(array);
	int			full = nitems / 8;
	uint64		nonnull;

	if (bitmap == NULL)
		return 0;
	nonnull = pg_popcount((const char *) bitmap, full);
	if (nitems % 8 != 0)
		nonnull += pg_number_of_ones[bitmap[full] & ((1 << (nitems % 8)) - 1)];
	return nitems - (int64) nonnull;
}

/*
 * Walks a 1-D array with NULLs: copies its non-NULL elements, packed, to dest
 * in runs, and when positions is not NULL stores each one's 0-based position
 * in positions and each NULL's subscript (lower bound + position) in
 * null_subscripts.
 */
static void
compact_array(ArrayType *array, char *dest, uint32 *positions, int32 *null_subscripts)
{
	int			nitems = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	int			lbound = ARR_LBOUND(array)[0];
	size_t		size = gs_type_size(gpusort_type_from_oid(ARR_ELEMTYPE(array)));
	bits8	   *bitmap = ARR_NULLBITMAP(array);
	const char *src = ARR_DATA_PTR(array);
	int			run = 0;		/* non-NULL elements not yet copied */
	int			i;

	for (i = 0; i < nitems; i++)
	{
		if (bitmap[i >> 3] & (1 << (i & 7)))
		{
			if (positions != NULL)
				*positions++ = (uint32) i;
			run++;
		}
		else
		{
			if (null_subscripts != NULL)
				*null_subscripts++ = lbound + i;
			memcpy(dest, src, run * size);
			dest += run * size;
			src += run * size;
			run = 0;
		}
		/* every slice: copy the run so far, and let a cancel in */
		if ((i & (GPUSORT_POLL_ITEMS - 1)) == GPUSORT_POLL_ITEMS - 1)
		{
			memcpy(dest, src, run * size);
			dest += run * size;
			src += run * size;
			run = 0;
			CHECK_FOR_INTERRUPTS();
		}
	}
	memcpy(dest, src, run * size);
}

char *
gpusort_packed_values(ArrayType *array, int nitems, int64 nnulls)
{
	char	   *values;

	if (nnulls == 0)
		return ARR_DATA_PTR(array);
	values = gpusort_alloc_large(Max((nitems - nnulls) * gs_type_size(gpusort_type_from_oid(ARR_ELEMTYPE(array))), 1));
	compact_array(array, values, NULL, NULL);
	return values;
}

static void
fill_from_array(void *dest, void *arg)
{
	compact_array((ArrayType *) arg, (char *) dest, NULL, NULL);
}

/* An owned copy sorted in place, and the argument it came from. */
typedef struct InPlaceSort
{
	ArrayType  *copy;
	Datum		datum;
} InPlaceSort;

/* A sort that stopped early left the copy undefined: read the argument again. */
static void
refill_in_place(void *dest, void *arg)
{
	InPlaceSort *in_place = (InPlaceSort *) arg;

	gpusort_refetch_array(in_place->datum, in_place->copy);
	Assert(ARR_DATA_PTR(in_place->copy) == (char *) dest);
}

ArrayType *
gpusort_sort_array(ArrayType *array, bool owned, Datum datum,
				   bool descending, bool nulls_first)
{
	Oid			elemtype = ARR_ELEMTYPE(array);
	gs_type		type = gpusort_type_from_oid(elemtype);
	int16		typlen = (int16) gs_type_size(type);
	int			nitems = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	int64		nnulls;
	ArrayType  *result;
	GpusortJob	job;

	if (nitems == 0)
		return construct_empty_array(elemtype);

	nnulls = gpusort_count_nulls(array, nitems);
	if (owned && nnulls == 0)
	{
		/* sort the function's own copy where it is: no second copy of the array */
		InPlaceSort in_place = {array, datum};

		memset(&job, 0, sizeof(job));
		job.type = type;
		job.n = (size_t) nitems;
		job.descending = descending;
		job.dest = ARR_DATA_PTR(array);
		job.dest_filled = true;
		job.fill = refill_in_place;
		job.fill_arg = &in_place;
		gpusort_run(&job);
		ARR_LBOUND(array)[0] = 1;
		return array;
	}
	result = gpusort_new_array(elemtype, typlen, nitems - nnulls, nnulls, nulls_first, "gpu_sort");

	memset(&job, 0, sizeof(job));
	job.type = type;
	job.n = (size_t) (nitems - nnulls);
	job.descending = descending;
	job.dest = ARR_DATA_PTR(result);
	if (nnulls == 0)
		job.source = ARR_DATA_PTR(array);
	else
	{
		job.fill = fill_from_array;
		job.fill_arg = array;
	}
	gpusort_run(&job);
	return result;
}

/*
 * gpu_sort(a T[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL) -> T[]
 */
Datum
gpu_sort(PG_FUNCTION_ARGS)
{
	ArrayType  *array;
	bool		owned;
	bool		descending;
	bool		nulls_first;
	gs_type		type;

	if (!gpusort_get_array_args(fcinfo, "gpu_sort", &array, &owned, &descending, &nulls_first))
		PG_RETURN_NULL();
	if (!gpusort_sorts_type(ARR_ELEMTYPE(array), &type))
		PG_RETURN_ARRAYTYPE_P(gpusort_any_sort_array(array, PG_GET_COLLATION(), descending,
													 nulls_first, -1, "gpu_sort"));
	PG_RETURN_ARRAYTYPE_P(gpusort_sort_array(array, owned, PG_GETARG_DATUM(0),
											 descending, nulls_first));
}

/*
 * gpu_argsort(a T[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL) -> int4[]
 *
 * The subscripts of a (as given, so from its lower bound) in sorted order,
 * stable.  The library's 0-based positions are written straight into the
 * result's data area and turned into subscripts there.
 */
Datum
gpu_argsort(PG_FUNCTION_ARGS)
{
	ArrayType  *array;
	bool		owned;
	bool		descending;
	bool		nulls_first;
	gs_type		type;
	int			nitems;
	int			lbound;
	int64		nnulls;
	int64		n;
	ArrayType  *result;
	int32	   *subscripts;
	uint32	   *perm;
	uint32	   *positions = NULL;
	GpusortJob	job;
	int64		i;

	if (!gpusort_get_array_args(fcinfo, "gpu_argsort", &array, &owned, &descending, &nulls_first))
		PG_RETURN_NULL();
	if (!gpusort_sorts_type(ARR_ELEMTYPE(array), &type))
		PG_RETURN_ARRAYTYPE_P(gpusort_any_argsort(array, PG_GET_COLLATION(), descending,
												  nulls_first));

	nitems = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	if (nitems == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT4OID));
	lbound = ARR_LBOUND(array)[0];
	nnulls = gpusort_count_nulls(array, nitems);
	n = nitems - nnulls;

	result = gpusort_new_array(INT4OID, sizeof(int32), nitems, 0, false, "gpu_argsort");
	subscripts = (int32 *) ARR_DATA_PTR(result);
	perm = (uint32 *) (nulls_first ? subscripts + nnulls : subscripts);

	memset(&job, 0, sizeof(job));
	job.type = type;
	job.n = (size_t) n;
	job.descending = descending;
	job.perm = perm;
	if (nnulls == 0)
		job.source = ARR_DATA_PTR(array);
	else
	{
		/* the keys packed, each one's position, and the NULLs' subscripts in place */
		char	   *keys = gpusort_alloc_large(Max(n * gs_type_size(type), 1));

		positions = gpusort_alloc_large(Max(n * sizeof(uint32), 1));
		compact_array(array, keys, positions,
					  nulls_first ? subscripts : subscripts + n);
		job.source = keys;
	}

	gpusort_run(&job);

	/* ArrayCheckBounds guaranteed that lbound + nitems - 1 fits in an int */
	if (positions != NULL)
	{
		for (i = 0; i < n; i++)
		{
			perm[i] = (uint32) (lbound + (int32) positions[perm[i]]);
			if ((i & (GPUSORT_POLL_ITEMS - 1)) == GPUSORT_POLL_ITEMS - 1)
				CHECK_FOR_INTERRUPTS();
		}
		pfree(positions);
		pfree((void *) job.source);
	}
	else
		for (i = 0; i < n; i++)
		{
			perm[i] = (uint32) (lbound + (int32) perm[i]);
			if ((i & (GPUSORT_POLL_ITEMS - 1)) == GPUSORT_POLL_ITEMS - 1)
				CHECK_FOR_INTERRUPTS();
		}

	PG_RETURN_ARRAYTYPE_P(result);
}
