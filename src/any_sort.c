/*
 * any_sort.c: the element types that gpusort does not pack into sort keys
 * (numeric, text under any collation, uuid, interval, composite types,
 * domains, ...), sorted on the CPU with PostgreSQL's own comparator: the
 * SortSupport of the type's default btree ordering, under the collation of
 * the call, with the abbreviated keys the type offers (as tuplesort uses
 * them: the abbreviated key orders, the full comparator breaks its ties).
 * Ties of the full comparator go by input position, so the sort is stable.
 *
 * gpu_sort, gpu_argsort, gpu_topk and gpu_sort_rows come here for such
 * arrays; the aggregates keep such values as Datums in their state
 * (aggregate.c) and sort them with gpusort_any_sort.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"
#include "utils/typcache.h"

#include "gpusort_pg.h"

/* One value being sorted: its abbreviated key (or the value), the value, its position. */
typedef struct AnySortItem
{
	Datum		key;
	Datum		value;
	int64		position;
} AnySortItem;

typedef struct AnySortContext
{
	SortSupport ssup;
	bool		abbreviated;
} AnySortContext;

void
gpusort_check_sortable(Oid elemtype)
{
	TypeCacheEntry *typentry;
	gs_type		type;

	if (gpusort_sorts_type(elemtype, &type))
		return;
	typentry = lookup_type_cache(elemtype, TYPECACHE_LT_OPR);
	if (!OidIsValid(typentry->lt_opr))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("gpusort cannot sort elements of type %s", format_type_be(elemtype)),
				 errdetail("Type %s has no default btree ordering, so ORDER BY cannot sort it either.",
						   format_type_be(elemtype)),
				 errhint("Sort by an expression of a type that has one.")));
}

void
gpusort_any_prepare(SortSupport ssup, Oid elemtype, Oid collation, bool reverse)
{
	TypeCacheEntry *typentry;

	gpusort_check_sortable(elemtype);
	typentry = lookup_type_cache(elemtype, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	memset(ssup, 0, sizeof(SortSupportData));
	ssup->ssup_cxt = CurrentMemoryContext;
	ssup->ssup_collation = collation;
	ssup->ssup_nulls_first = false;
	ssup->abbreviate = true;
	/* the operator sets ssup_reverse: > is the reverse of the comparator */
	PrepareSortSupportFromOrderingOp(reverse ? typentry->gt_opr : typentry->lt_opr, ssup);
}

bool
gpusort_any_equal(SortSupport ssup, Datum a, Datum b)
{
	if (ssup->abbrev_converter != NULL)
		return ssup->abbrev_full_comparator(a, b, ssup) == 0;
	return ssup->comparator(a, b, ssup) == 0;
}

int
gpusort_any_compare(SortSupport ssup, Datum a, Datum b)
{
	if (ssup->abbrev_converter != NULL)
		return ApplySortAbbrevFullComparator(a, false, b, false, ssup);
	return ApplySortComparator(a, false, b, false, ssup);
}

static inline int
compare_items(const AnySortItem *x, const AnySortItem *y, AnySortContext *context)
{
	int			r;

	r = ApplySortComparator(x->key, false, y->key, false, context->ssup);
	if (r == 0 && context->abbreviated)
		r = ApplySortAbbrevFullComparator(x->value, false, y->value, false, context->ssup);
	if (r == 0)
		r = (x->position > y->position) - (x->position < y->position);
	return r;
}

/*
 * sort_items: PostgreSQL's quicksort template with the comparison inlined,
 * as tuplesort's, interruptible
 */
#define ST_SORT sort_items
#define ST_ELEMENT_TYPE AnySortItem
#define ST_COMPARE(a, b, arg) compare_items(a, b, arg)
#define ST_COMPARE_ARG_TYPE AnySortContext
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

void
gpusort_any_sort(SortSupport ssup, Datum *values, int64 n, int64 *positions)
{
	AnySortContext context;
	AnySortItem *items;

	if (n <= 1)
	{
		if (n == 1 && positions != NULL)
			positions[0] = 0;
		return;
	}
	items = MemoryContextAllocHuge(CurrentMemoryContext, (Size) n * sizeof(AnySortItem));
	context.ssup = ssup;
	context.abbreviated = ssup->abbrev_converter != NULL;
	for (int64 i = 0; i < n; i++)
	{
		items[i].value = values[i];
		items[i].key = context.abbreviated ? ssup->abbrev_converter(values[i], ssup) : values[i];
		items[i].position = i;
		if ((i & (GPUSORT_POLL_ITEMS - 1)) == GPUSORT_POLL_ITEMS - 1)
			CHECK_FOR_INTERRUPTS();
	}

	/* as tuplesort: abbreviated keys that do not tell values apart are given up */
	if (context.abbreviated && ssup->abbrev_abort(n, ssup))
	{
		ssup->comparator = ssup->abbrev_full_comparator;
		ssup->abbrev_converter = NULL;
		ssup->abbrev_abort = NULL;
		context.abbreviated = false;
		for (int64 i = 0; i < n; i++)
			items[i].key = items[i].value;
	}

	sort_items(items, (size_t) n, &context);

	for (int64 i = 0; i < n; i++)
	{
		values[i] = items[i].value;
		if (positions != NULL)
			positions[i] = items[i].position;
	}
	pfree(items);
}

/*
 * The elements of a 1-D array: the non-NULL ones in values, each one's
 * 0-based position in the array in value_positions, and the NULLs'
 * positions; after sort_any_array, values are sorted and positions[i] is
 * the array position of values[i].
 */
typedef struct AnyArray
{
	Oid			elemtype;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			nitems;
	int64		nvalues;
	Datum	   *values;
	int32	   *value_positions;
	int64	   *positions;
	int64		nnulls;
	int32	   *null_positions;
} AnyArray;

static AnyArray
read_any_array(ArrayType *array)
{
	AnyArray	a;
	Datum	   *elems;
	bool	   *nulls;
	int			nitems;

	a.elemtype = ARR_ELEMTYPE(array);
	get_typlenbyvalalign(a.elemtype, &a.typlen, &a.typbyval, &a.typalign);
	deconstruct_array(array, a.elemtype, a.typlen, a.typbyval, a.typalign, &elems, &nulls, &nitems);
	a.nitems = nitems;
	a.values = palloc(Max(nitems, 1) * sizeof(Datum));
	a.value_positions = palloc(Max(nitems, 1) * sizeof(int32));
	a.positions = palloc(Max(nitems, 1) * sizeof(int64));
	a.null_positions = palloc(Max(nitems, 1) * sizeof(int32));
	a.nvalues = a.nnulls = 0;
	for (int i = 0; i < nitems; i++)
	{
		if (nulls[i])
			a.null_positions[a.nnulls++] = i;
		else
		{
			a.value_positions[a.nvalues] = i;
			a.values[a.nvalues++] = elems[i];
		}
	}
	pfree(elems);
	pfree(nulls);
	return a;
}

/* Sorts the array's values, stably, and records where each came from. */
static void
sort_any_array(AnyArray *a, Oid collation, bool descending)
{
	SortSupportData ssup;

	gpusort_any_prepare(&ssup, a->elemtype, collation, descending);
	gpusort_any_sort(&ssup, a->values, a->nvalues, a->positions);
	for (int64 i = 0; i < a->nvalues; i++)
		a->positions[i] = a->value_positions[a->positions[i]];
}

/*
 * The first ntake of nvalues sorted values and nnulls NULLs, the NULLs first
 * or last, as a new 1-D array.
 */
ArrayType *
gpusort_any_result(Oid elemtype, const Datum *values, int64 nvalues, int64 nnulls,
				   bool nulls_first, int64 ntake, const char *what)
{
	int64		nitems = Min(nvalues + nnulls, ntake);
	int64		taken_nulls = nulls_first ? Min(nitems, nnulls) : nitems - Min(nitems, nvalues);
	int64		taken_values = nitems - taken_nulls;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *items;
	bool	   *nulls;
	int			dims[1];
	int			lbs[1] = {1};
	int64		first_value = nulls_first ? taken_nulls : 0;

	if (nitems == 0)
		return construct_empty_array(elemtype);
	if (nitems > (int64) MaxArraySize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s result would exceed the maximum array size", what)));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	items = palloc(nitems * sizeof(Datum));
	nulls = palloc0(nitems * sizeof(bool));
	for (int64 i = 0; i < nitems; i++)
	{
		if (i >= first_value && i < first_value + taken_values)
			items[i] = values[i - first_value];
		else
		{
			items[i] = (Datum) 0;
			nulls[i] = true;
		}
	}
	dims[0] = (int) nitems;
	return construct_md_array(items, nulls, 1, dims, lbs, elemtype, typlen, typbyval, typalign);
}

ArrayType *
gpusort_any_sort_array(ArrayType *array, Oid collation, bool descending, bool nulls_first,
					   int64 limit, const char *what)
{
	AnyArray	a = read_any_array(array);

	if (a.nitems == 0)
		return construct_empty_array(a.elemtype);
	sort_any_array(&a, collation, descending);
	return gpusort_any_result(a.elemtype, a.values, a.nvalues, a.nnulls, nulls_first,
							  limit < 0 ? a.nvalues + a.nnulls : limit, what);
}

ArrayType *
gpusort_any_argsort(ArrayType *array, Oid collation, bool descending, bool nulls_first)
{
	AnyArray	a = read_any_array(array);
	int			lbound = ARR_LBOUND(array)[0];
	ArrayType  *result;
	int32	   *subscripts;
	int32	   *value_subscripts;
	int32	   *null_subscripts;

	if (a.nitems == 0)
		return construct_empty_array(INT4OID);
	sort_any_array(&a, collation, descending);

	result = gpusort_new_array(INT4OID, sizeof(int32), a.nitems, 0, false, "gpu_argsort");
	subscripts = (int32 *) ARR_DATA_PTR(result);
	value_subscripts = nulls_first ? subscripts + a.nnulls : subscripts;
	null_subscripts = nulls_first ? subscripts : subscripts + a.nvalues;
	/* ArrayCheckBounds guaranteed that lbound + nitems - 1 fits in an int */
	for (int64 i = 0; i < a.nvalues; i++)
		value_subscripts[i] = lbound + (int32) a.positions[i];
	for (int64 i = 0; i < a.nnulls; i++)
		null_subscripts[i] = lbound + a.null_positions[i];
	return result;
}
