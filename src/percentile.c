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
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

#include "gpusort_pg.h"
#include "aggregate.h"

PG_FUNCTION_INFO_V1(gpu_percentile_transfn);
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
 * gpu_percentile_transfn(internal, T, fraction float8 | float8[]) -> internal:
 * the plain forms' transition: gathers the value, keeps the fraction.
 */
Datum
gpu_percentile_transfn(PG_FUNCTION_ARGS)
{
	SortAggState *state = gpusort_agg_state(fcinfo, "gpu_percentile_transfn", false);
	bool		is_array;

	/* the fraction's type, looked up once per query rather than per row */
	if (fcinfo->flinfo->fn_extra == NULL)
	{
		bool	   *cached = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(bool));

		*cached = get_fn_expr_argtype(fcinfo->flinfo, 2) == FLOAT8ARRAYOID;
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
	PG_RETURN_POINTER(state);
}

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

	Assert(state != NULL && state->param != NULL);
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

/* Value i of the sorted values as float8, as the cast x::float8 gives it. */
static float8
value_float8(const SortAggState *state, const char *values, int64 i)
{
	const char *p = values + i * state->typlen;

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
 * percentile_cont of fraction p over the n sorted values: the rows
 * floor(p * (n - 1)) and ceil(...) (0-based) and float8_lerp between them,
 * with orderedsetaggs.c's arithmetic.
 */
static float8
cont_value(const SortAggState *state, const char *values, float8 p)
{
	int64		n = state->nvalues;
	int64		first_row = (int64) floor(p * (n - 1));
	int64		second_row = (int64) ceil(p * (n - 1));
	float8		lo = value_float8(state, values, first_row);
	float8		hi;
	float8		proportion;

	if (first_row == second_row)
		return lo;
	hi = value_float8(state, values, second_row);
	proportion = (p * (n - 1)) - first_row;
	return lo + (proportion * (hi - lo));
}

/* percentile_disc of fraction p: the smallest K with K/n >= p, at least 1 (1-based). */
static int64
disc_row(const SortAggState *state, float8 p)
{
	int64		row = (int64) ceil(p * state->nvalues);

	return Max(row, 1) - 1;
}

/*
 * The result for an array of fractions: the same shape as the array, NULL
 * where a fraction is NULL; elements of type elemtype computed by cont (a
 * float8) or disc (a value of the state's type).
 */
static ArrayType *
multi_result(SortAggState *state, ArrayType *fractions, bool cont)
{
	Datum	   *items;
	bool	   *nulls;
	int			n;
	Datum	   *result;
	const char *values = NULL;
	Oid			elemtype = cont ? FLOAT8OID : state->elemtype;
	int16		typlen = cont ? sizeof(float8) : state->typlen;
	bool		typbyval = cont ? FLOAT8PASSBYVAL : state->typbyval;
	char		typalign = typlen == 2 ? TYPALIGN_SHORT :
		typlen == 4 ? TYPALIGN_INT : TYPALIGN_DOUBLE;

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
		if (values == NULL)
			values = gpusort_agg_sorted(state);
		p = DatumGetFloat8(items[i]);
		if (cont)
			result[i] = Float8GetDatum(cont_value(state, values, p));
		else
			result[i] = gpusort_agg_datum(state, values, disc_row(state, p));
	}
	return construct_md_array(result, nulls, ARR_NDIM(fractions), ARR_DIMS(fractions),
							  ARR_LBOUND(fractions), elemtype, typlen, typbyval, typalign);
}

/*
 * The shared part of the cont and disc final functions, in PostgreSQL's order
 * of checks: one fraction: NULL gives NULL, then a fraction outside [0, 1]
 * is an error, then no values give NULL; an array: no values give NULL, then
 * a NULL array NULL.
 */
static Datum
percentile_final(FunctionCallInfo fcinfo, bool cont)
{
	SortAggState *state = PG_ARGISNULL(0) ? NULL : (SortAggState *) PG_GETARG_POINTER(0);
	Fraction	f;

	if (state == NULL && !is_ordered_set(fcinfo))
		PG_RETURN_NULL();		/* no rows: the plain form never saw its fraction */
	f = get_fraction(fcinfo, state);

	if (!f.is_array)
	{
		const char *values;

		if (f.isnull)
			PG_RETURN_NULL();
		check_fraction(f.value);
		if (state == NULL || state->nvalues == 0)
			PG_RETURN_NULL();
		values = gpusort_agg_sorted(state);
		if (cont)
			PG_RETURN_FLOAT8(cont_value(state, values, f.value));
		PG_RETURN_DATUM(gpusort_agg_datum(state, values, disc_row(state, f.value)));
	}

	if (state == NULL || state->nvalues == 0 || f.isnull)
		PG_RETURN_NULL();
	PG_RETURN_ARRAYTYPE_P(multi_result(state, f.array, cont));
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
	SortAggState *state = PG_ARGISNULL(0) ? NULL : (SortAggState *) PG_GETARG_POINTER(0);

	if (state == NULL || state->nvalues == 0)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(cont_value(state, gpusort_agg_sorted(state), 0.5));
}

/*
 * Whether sorted values i and j are one value for mode: bitwise for integers
 * and dates; for floats, as float8eq says (-0 = +0, every NaN equal).
 */
static bool
same_value(const SortAggState *state, const char *values, int64 i, int64 j)
{
	const char *a = values + i * state->typlen;
	const char *b = values + j * state->typlen;

	if (state->type == GS_FLOAT4 || state->type == GS_FLOAT8)
	{
		float8		x = value_float8(state, values, i);
		float8		y = value_float8(state, values, j);

		return x == y || (isnan(x) && isnan(y));
	}
	return memcmp(a, b, state->typlen) == 0;
}

/*
 * gpu_mode_final(internal, T) -> T: the most frequent value, the smallest of
 * those equally frequent (the first run of the sorted values that is longer
 * than every run before it, as mode_final takes it).
 */
Datum
gpu_mode_final(PG_FUNCTION_ARGS)
{
	SortAggState *state = PG_ARGISNULL(0) ? NULL : (SortAggState *) PG_GETARG_POINTER(0);
	const char *values;
	int64		mode = 0;
	int64		mode_freq = 0;
	int64		start = 0;		/* the current run's first value */

	if (state == NULL || state->nvalues == 0)
		PG_RETURN_NULL();
	values = gpusort_agg_sorted(state);

	for (int64 i = 1; i <= state->nvalues; i++)
	{
		if ((i & (GPUSORT_POLL_ITEMS - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
		if (i < state->nvalues && same_value(state, values, start, i))
			continue;
		if (i - start > mode_freq)
		{
			mode = start;
			mode_freq = i - start;
		}
		start = i;
	}
	PG_RETURN_DATUM(gpusort_agg_datum(state, values, mode));
}
