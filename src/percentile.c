/*
 * percentile.c: gpu_percentile_cont, gpu_percentile_disc, gpu_median and
 * gpu_mode, the answers of PostgreSQL's percentile_cont, percentile_disc and
 * mode (orderedsetaggs.c: the same row choice, interpolation formula and tie
 * rule) from values sorted by gpusort_run.
 *
 * Two forms share the final functions.  The WITHIN GROUP form is an
 * ordered-set aggregate whose fraction is a direct argument; the plain form,
 * gpu_percentile_cont(x, fraction), keeps the fraction in the state (the same
 * in every row) and, unlike an ordered-set aggregate, may run in parallel
 * workers.  Both gather the values in gpu_sort_agg's state (aggregate.h).
 *
 * The values are sorted ascending.  The WITHIN GROUP form answers for the
 * order of its ORDER BY, as PostgreSQL's aggregates do: descending (DESC,
 * USING >) reads the ascending values backwards, so that row i of the order
 * is row n - 1 - i of the values and mode's ties go to the largest value.  A
 * sort operator other than the type's default < and > is an error.  NULLS
 * FIRST / LAST change nothing, since NULLs are left out.  The plain forms
 * answer for ascending order.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/typcache.h"

#include "gpusort_pg.h"
#include "aggregate.h"

PG_FUNCTION_INFO_V1(gpu_percentile_cont_final);
PG_FUNCTION_INFO_V1(gpu_percentile_disc_final);
PG_FUNCTION_INFO_V1(gpu_median_final);
PG_FUNCTION_INFO_V1(gpu_mode_final);

/*
 * The fraction argument as the state keeps it: a kind, then (MAXALIGNed)
 * the float8 or the flat float8[].
 */
typedef enum FractionKind
{
	FRACTION_NULL = 'n',
	FRACTION_SCALAR = 's',
	FRACTION_ARRAY = 'a'
} FractionKind;

#define FRACTION_HEADER MAXALIGN(1)

/* The fraction of a final call: a NULL, one float8, or an array of them. */
typedef struct Fraction
{
	bool		isnull;
	bool		is_array;
	float8		value;
	ArrayType  *array;
} Fraction;

/*
 * The non-NULL values of a final call in the call's sort order: the state's
 * values sorted ascending, read backwards when descending.
 */
typedef struct SortedValues
{
	SortAggState *state;
	const char *values;			/* NULL: read each row from the state's runs */
	bool		descending;
} SortedValues;

/*
 * gpu_percentile_transfn(S, T, fraction float8 | float8[]) -> S for S
 * internal or gpusort_state: the plain forms' transition: gathers the value,
 * keeps the fraction.
 */
static SortAggState *
gpu_percentile_transfn_step(FunctionCallInfo fcinfo)
{
	SortAggState *state = gpusort_agg_state(fcinfo, "gpu_percentile_transfn", false);
	bool		is_array;

	/*
	 * The fraction's kind from the argument's type, looked up once per query
	 * (a state's kept fraction may come from an initial state written by
	 * hand, so it is compared, never trusted: gpusort_agg_param)
	 */
	if (fcinfo->flinfo->fn_extra == NULL)
	{
		bool	   *cached = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(bool));

		*cached = gpusort_fn_argtype(fcinfo->flinfo, 2) == FLOAT8ARRAYOID;
		fcinfo->flinfo->fn_extra = cached;
	}
	is_array = *(bool *) fcinfo->flinfo->fn_extra;

	gpusort_agg_add(state, fcinfo, 1);

	if (PG_ARGISNULL(2))
	{
		char		param[FRACTION_HEADER] = {FRACTION_NULL};

		gpusort_agg_param(state, param, sizeof(param), "the percentile aggregate", "the fraction");
	}
	else if (!is_array)
	{
		char		param[FRACTION_HEADER + sizeof(float8)] = {FRACTION_SCALAR};
		float8		value = PG_GETARG_FLOAT8(2);

		memcpy(param + FRACTION_HEADER, &value, sizeof(value));
		gpusort_agg_param(state, param, sizeof(param), "the percentile aggregate", "the fraction");
	}
	else
	{
		ArrayType  *array = PG_GETARG_ARRAYTYPE_P(2);
		int32		len = FRACTION_HEADER + VARSIZE(array);

		/* the same constant in every row: compare before copying */
		if (state->param == NULL || state->param_len != len ||
			state->param[0] != FRACTION_ARRAY ||
			memcmp(state->param + FRACTION_HEADER, array, VARSIZE(array)) != 0)
		{
			char	   *param = palloc0(len);	/* the padding is compared too */

			param[0] = FRACTION_ARRAY;
			memcpy(param + FRACTION_HEADER, array, VARSIZE(array));
			gpusort_agg_param(state, param, len, "the percentile aggregate", "the fraction");
			pfree(param);
		}
	}
	return state;
}

GPUSORT_AGG_TRANSITION(gpu_percentile_transfn)

/* True when the final function belongs to a WITHIN GROUP aggregate. */
static bool
is_ordered_set(FunctionCallInfo fcinfo)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);

	if (aggref != NULL)
		return AGGKIND_IS_ORDERED_SET(aggref->aggkind);
	/* a window aggregate: only the plain forms can be one */
	if (AggCheckCallContext(fcinfo, NULL) != AGG_CONTEXT_WINDOW)
		elog(ERROR, "gpusort percentile final function called in non-aggregate context");
	return false;
}

/*
 * Whether a WITHIN GROUP call sorts descending: its ORDER BY's operator is
 * the default btree > of the type rather than its <.  Any other operator (of
 * another operator class) is an error; funcname and pgname name the
 * aggregate and PostgreSQL's own.
 */
static bool
within_group_descending(FunctionCallInfo fcinfo, const char *funcname, const char *pgname)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	SortGroupClause *sortcl;
	TargetEntry *tle;
	TypeCacheEntry *typentry;

	if (aggref == NULL || list_length(aggref->aggorder) != 1)
		elog(ERROR, "%s called without one ORDER BY column", funcname);
	sortcl = linitial_node(SortGroupClause, aggref->aggorder);
	tle = get_sortgroupclause_tle(sortcl, aggref->args);
	typentry = lookup_type_cache(exprType((Node *) tle->expr), TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);

	if (sortcl->sortop == typentry->lt_opr)
		return false;
	if (sortcl->sortop == typentry->gt_opr)
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s does not support sort operator %s",
					funcname, format_operator(sortcl->sortop)),
			 errdetail("%s sorts by the default ascending or descending order of type %s only.",
					   funcname, format_type_be(typentry->type_id)),
			 errhint("Use PostgreSQL's %s for this sort order.", pgname)));
	pg_unreachable();
}

/*
 * The sort order of this final call: the WITHIN GROUP form's ORDER BY, else
 * ascending.
 */
static bool
call_descending(FunctionCallInfo fcinfo, const char *funcname, const char *pgname)
{
	return is_ordered_set(fcinfo) && within_group_descending(fcinfo, funcname, pgname);
}

/*
 * The state's values sorted, in the call's order.  A final function that
 * reads a few rows (every_row false) reads them from sorted runs as they
 * are, without merging them.
 */
static SortedValues
sorted_values(SortAggState *state, bool descending, bool every_row)
{
	SortedValues sv;

	sv.state = state;
	sv.values = every_row || state->nruns < 2 ? gpusort_agg_sorted(state) : NULL;
	sv.descending = descending;
	return sv;
}

/* Row i (0-based) of the call's sort order. */
static const char *
row(const SortedValues *sv, int64 i)
{
	int64		k = sv->descending ? sv->state->nvalues - 1 - i : i;

	if (sv->values == NULL)
		return gpusort_agg_at_rank(sv->state, k);
	return sv->values + k * sv->state->typlen;
}

/*
 * Errors unless the array of fractions that a state keeps (len bytes, from
 * the state's transition or a partial state) is a well-formed float8[]: its
 * header, dimensions, NULL bitmap and data agree with its length.
 */
static void
check_kept_array(const ArrayType *array, int32 len)
{
	int			nitems;
	int64		nnulls = 0;
	Size		data_start;

	if (len < (int32) sizeof(ArrayType) || !VARATT_IS_4B_U(array) || VARSIZE(array) != len ||
		ARR_ELEMTYPE(array) != FLOAT8OID || ARR_NDIM(array) < 0 || ARR_NDIM(array) > MAXDIM ||
		len < ARR_OVERHEAD_NONULLS(ARR_NDIM(array)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid fraction array in a percentile aggregate state")));
	nitems = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	data_start = ARR_OVERHEAD_NONULLS(ARR_NDIM(array));
	if (ARR_HASNULL(array))
	{
		data_start = ARR_OVERHEAD_WITHNULLS(ARR_NDIM(array), nitems);
		if (ARR_DATA_OFFSET(array) != data_start || data_start > len)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("invalid fraction array in a percentile aggregate state")));
		nnulls = gpusort_count_nulls((ArrayType *) array, nitems);
	}
	if ((len - data_start) != (Size) (nitems - nnulls) * sizeof(float8))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid fraction array in a percentile aggregate state")));
}

/*
 * Errors unless the fraction a state keeps (the plain forms') is one of
 * gpu_percentile_transfn's, an array where the final function returns one
 * and a single fraction where not: a partial state may bring another.
 */
static void
check_kept_fraction(FunctionCallInfo fcinfo, const SortAggState *state)
{
	const char *param = state->param;
	int32		len = state->param_len;
	bool		returns_array = OidIsValid(get_element_type(gpusort_fn_rettype(fcinfo->flinfo)));
	bool		valid;

	if (param == NULL || len < FRACTION_HEADER)
		valid = false;
	else if (param[0] == FRACTION_NULL)
		valid = len == FRACTION_HEADER;
	else if (param[0] == FRACTION_SCALAR)
		valid = len == FRACTION_HEADER + (int32) sizeof(float8) && !returns_array;
	else if (param[0] == FRACTION_ARRAY && returns_array)
	{
		check_kept_array((const ArrayType *) (param + FRACTION_HEADER), len - FRACTION_HEADER);
		valid = true;
	}
	else
		valid = false;
	if (!valid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid fraction in a percentile aggregate state")));
}

/*
 * The fraction of this final call: the direct argument 1 of a WITHIN GROUP
 * aggregate, else what the state kept.  state may be NULL only for the
 * former.
 */
static Fraction
get_fraction(FunctionCallInfo fcinfo, SortAggState *state)
{
	Fraction	f;

	memset(&f, 0, sizeof(f));
	if (is_ordered_set(fcinfo))
	{
		f.is_array = get_fn_expr_argtype(fcinfo->flinfo, 1) == FLOAT8ARRAYOID;
		f.isnull = PG_ARGISNULL(1);
		if (!f.isnull && f.is_array)
			f.array = PG_GETARG_ARRAYTYPE_P(1);
		else if (!f.isnull)
			f.value = PG_GETARG_FLOAT8(1);
		return f;
	}

	Assert(state != NULL);
	check_kept_fraction(fcinfo, state);
	f.isnull = state->param[0] == FRACTION_NULL;
	f.is_array = state->param[0] == FRACTION_ARRAY;
	if (state->param[0] == FRACTION_SCALAR)
		memcpy(&f.value, state->param + FRACTION_HEADER, sizeof(f.value));
	else if (f.is_array)
		f.array = (ArrayType *) (state->param + FRACTION_HEADER);
	return f;
}

/* PostgreSQL's check and message for a fraction outside [0, 1]. */
static void
check_fraction(float8 p)
{
	if (p < 0 || p > 1 || isnan(p))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("percentile value %g is not between 0 and 1", p)));
}

/* The value at p as float8, as the cast x::float8 gives it. */
static float8
value_float8(const SortAggState *state, const char *p)
{
	switch (state->type)
	{
		case GS_INT2:
			return (float8) *(const int16 *) p;
		case GS_INT4:
			return (float8) *(const int32 *) p;
		case GS_INT8:
			return (float8) *(const int64 *) p;
		case GS_FLOAT4:
			return (float8) *(const float4 *) p;
		case GS_FLOAT8:
			return *(const float8 *) p;
		default:
			elog(ERROR, "unexpected gpusort element type %d", (int) state->type);
	}
	pg_unreachable();
}

/*
 * percentile_cont of fraction p over the n values in the call's order: the
 * rows floor(p * (n - 1)) and ceil(...) (0-based) and float8_lerp between
 * them, with orderedsetaggs.c's arithmetic.
 */
static float8
cont_value(const SortedValues *sv, float8 p)
{
	int64		n = sv->state->nvalues;
	int64		first_row = (int64) floor(p * (n - 1));
	int64		second_row = (int64) ceil(p * (n - 1));
	float8		lo = value_float8(sv->state, row(sv, first_row));
	float8		hi;
	float8		proportion;

	if (first_row == second_row)
		return lo;
	hi = value_float8(sv->state, row(sv, second_row));
	proportion = (p * (n - 1)) - first_row;
	return lo + (proportion * (hi - lo));
}

/* percentile_disc of fraction p: row K (1-based) of the order, the smallest K with K/n >= p, at least 1. */
static Datum
disc_value(const SortedValues *sv, float8 p)
{
	int64		k = (int64) ceil(p * sv->state->nvalues);

	return gpusort_agg_datum(sv->state, row(sv, Max(k, 1) - 1));
}

/*
 * The result for an array of fractions: the same shape as the array, NULL
 * where a fraction is NULL; elements of type elemtype computed by cont (a
 * float8) or disc (a value of the state's type).
 */
static ArrayType *
multi_result(SortAggState *state, bool descending, ArrayType *fractions, bool cont)
{
	Datum	   *items;
	bool	   *nulls;
	int			n;
	Datum	   *result;
	SortedValues sv = {0};
	Oid			elemtype = cont ? FLOAT8OID : state->elemtype;
	int16		typlen = cont ? sizeof(float8) : state->typlen;
	bool		typbyval = cont ? FLOAT8PASSBYVAL : state->typbyval;
	char		typalign = typlen == 2 ? TYPALIGN_SHORT :
		typlen == 4 ? TYPALIGN_INT : TYPALIGN_DOUBLE;

	if (!cont && state->generic)
	{
		typlen = state->elemlen;
		typbyval = state->elembyval;
		typalign = state->elemalign;
	}

	deconstruct_array(fractions, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &items, &nulls, &n);
	if (n == 0)
		return construct_empty_array(elemtype);

	/* every fraction is checked before any value is read, as PostgreSQL does */
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			check_fraction(DatumGetFloat8(items[i]));

	result = palloc(n * sizeof(Datum));
	for (int i = 0; i < n; i++)
	{
		float8		p;

		if (nulls[i])
		{
			result[i] = (Datum) 0;
			continue;
		}
		if (sv.state == NULL)
			sv = sorted_values(state, descending, false);
		p = DatumGetFloat8(items[i]);
		if (cont)
			result[i] = Float8GetDatum(cont_value(&sv, p));
		else
			result[i] = disc_value(&sv, p);
	}
	return construct_md_array(result, nulls, ARR_NDIM(fractions), ARR_DIMS(fractions),
							  ARR_LBOUND(fractions), elemtype, typlen, typbyval, typalign);
}

/*
 * Errors unless the state's values are of a type that the final function of
 * fcinfo answers for: percentile_cont's (a float8 from any numeric type) or
 * the type percentile_disc and mode return.
 */
static void
check_state_type(FunctionCallInfo fcinfo, const SortAggState *state, bool cont)
{
	if (!cont)
		gpusort_agg_check_type(fcinfo, state);
	else if (TypeCategory(state->elemtype) != TYPCATEGORY_NUMERIC)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("aggregate state holds values of type %s where a numeric type is expected",
						format_type_be(state->elemtype)),
				 errdetail("A partial state of another aggregate was passed to this one.")));
}

/*
 * The shared part of the cont and disc final functions, in PostgreSQL's order
 * of checks: one fraction: NULL gives NULL, then a fraction outside [0, 1]
 * is an error, then no values give NULL; an array: no values give NULL, then
 * a NULL array NULL.  An unsupported sort order is an error first.
 */
static Datum
percentile_final(FunctionCallInfo fcinfo, bool cont)
{
	SortAggState *state = gpusort_agg_arg(fcinfo, 0);
	const char *funcname = cont ? "gpu_percentile_cont" : "gpu_percentile_disc";
	bool		descending = call_descending(fcinfo, funcname, cont ? "percentile_cont" : "percentile_disc");
	Fraction	f;

	if (state == NULL)
		gpusort_agg_check_no_rows(fcinfo);
	if (state == NULL && !is_ordered_set(fcinfo))
		PG_RETURN_NULL();		/* no rows: the plain form never saw its fraction */
	if (state != NULL)
		check_state_type(fcinfo, state, cont);
	f = get_fraction(fcinfo, state);

	if (!f.is_array)
	{
		SortedValues sv;

		if (f.isnull)
			PG_RETURN_NULL();
		check_fraction(f.value);
		if (state == NULL || state->nvalues == 0)
			PG_RETURN_NULL();
		sv = sorted_values(state, descending, false);
		if (cont)
			PG_RETURN_FLOAT8(cont_value(&sv, f.value));
		PG_RETURN_DATUM(disc_value(&sv, f.value));
	}

	if (state == NULL || state->nvalues == 0 || f.isnull)
		PG_RETURN_NULL();
	PG_RETURN_ARRAYTYPE_P(multi_result(state, descending, f.array, cont));
}

/*
 * gpu_percentile_cont_final(internal, fraction float8 | float8[]) for the
 * WITHIN GROUP form, (internal) for the plain one -> float8 | float8[]
 */
Datum
gpu_percentile_cont_final(PG_FUNCTION_ARGS)
{
	return percentile_final(fcinfo, true);
}

/*
 * gpu_percentile_disc_final(internal, fraction float8 | float8[], T) for the
 * WITHIN GROUP form, (internal, T, fraction) for the plain one -> T | T[]
 */
Datum
gpu_percentile_disc_final(PG_FUNCTION_ARGS)
{
	return percentile_final(fcinfo, false);
}

/* gpu_median_final(internal) -> float8: percentile_cont(0.5) */
Datum
gpu_median_final(PG_FUNCTION_ARGS)
{
	SortAggState *state;
	SortedValues sv;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "gpu_median_final called in non-aggregate context");
	state = gpusort_agg_arg(fcinfo, 0);
	if (state == NULL || state->nvalues == 0)
		PG_RETURN_NULL();
	check_state_type(fcinfo, state, true);
	sv = sorted_values(state, false, false);
	PG_RETURN_FLOAT8(cont_value(&sv, 0.5));
}

/*
 * Whether the values at a and b are one value for mode: bitwise for integers
 * and dates; for floats, as float8eq says (-0 = +0, every NaN equal); for
 * the other types, as their comparator (ssup) says, under the input's
 * collation: as the type's = operator, which mode_final applies.
 */
static bool
same_value(const SortAggState *state, SortSupport ssup, const char *a, const char *b)
{
	if (state->generic)
		return gpusort_any_equal(ssup, *(const Datum *) a, *(const Datum *) b);
	if (state->type == GS_FLOAT4 || state->type == GS_FLOAT8)
	{
		float8		x = value_float8(state, a);
		float8		y = value_float8(state, b);

		return x == y || (isnan(x) && isnan(y));
	}
	return memcmp(a, b, state->typlen) == 0;
}

/*
 * gpu_mode_final(internal, T) -> T: the most frequent value, the first in
 * the call's sort order of those equally frequent (the first run of the
 * sorted values that is longer than every run before it, as mode_final
 * takes it): the smallest ascending, the largest descending.
 */
Datum
gpu_mode_final(PG_FUNCTION_ARGS)
{
	SortAggState *state = gpusort_agg_arg(fcinfo, 0);
	bool		descending = call_descending(fcinfo, "gpu_mode", "mode");
	SortedValues sv;
	int64		mode = 0;
	int64		mode_freq = 0;
	int64		start = 0;		/* the current run's first row */
	SortSupportData ssup;

	if (state == NULL)
		gpusort_agg_check_no_rows(fcinfo);
	if (state == NULL || state->nvalues == 0)
		PG_RETURN_NULL();
	check_state_type(fcinfo, state, false);
	sv = sorted_values(state, descending, true);
	if (state->generic)
		gpusort_any_prepare(&ssup, state->elemtype, state->collation, false);

	for (int64 i = 1; i <= state->nvalues; i++)
	{
		if ((i & (GPUSORT_POLL_ITEMS - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
		if (i < state->nvalues && same_value(state, &ssup, row(&sv, start), row(&sv, i)))
			continue;
		if (i - start > mode_freq)
		{
			mode = start;
			mode_freq = i - start;
		}
		start = i;
	}
	PG_RETURN_DATUM(gpusort_agg_datum(state, row(&sv, mode)));
}
