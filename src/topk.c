/*
 * topk.c: gpu_topk(a T[], k, descending), the first k elements of
 * gpu_sort(a, descending), and its aggregate gpu_topk_agg(x T, k
 * [, descending]), the first k of gpu_sort_agg(x [, descending]).  NULLs are
 * placed as there: after the values ascending, before them descending.
 *
 * The sort asks gpusort_run for the first k elements only (GpusortJob.limit),
 * which selects them without sorting the rest.  The aggregate keeps
 * gpu_sort_agg's state with k in it, limited to k (aggregate.c): it holds
 * the best k values seen so far and at most about 2k in all, whatever the
 * number of rows, and its partial states carry at most k.  A row whose value
 * comes no earlier than the k-th of those costs one compare (add_fast).
 */
#include "postgres.h"

#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "gpusort_pg.h"
#include "aggregate.h"

PG_FUNCTION_INFO_V1(gpu_topk);
PG_FUNCTION_INFO_V1(gpu_topk_agg_final);

/* k from argument argno: not NULL, not negative, as LIMIT wants it. */
static int32
get_k(FunctionCallInfo fcinfo, int argno)
{
	int32		k;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("k must not be null")));
	k = PG_GETARG_INT32(argno);
	if (k < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_ROW_COUNT_IN_LIMIT_CLAUSE),
				 errmsg("k must not be negative")));
	return k;
}

static bool
get_descending(FunctionCallInfo fcinfo, int argno)
{
	if (PG_NARGS() <= argno)
		return false;
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("descending must not be null")));
	return PG_GETARG_BOOL(argno);
}

/*
 * A new array for the first k of nvalues packed values and nnulls NULLs in
 * sorted order: min(k, nvalues) values then NULLs ascending, NULLs first
 * descending; *taken_values is how many values it has room for.
 */
static ArrayType *
new_topk_array(Oid elemtype, int64 nvalues, int64 nnulls, int32 k, bool descending,
			   const char *what, int64 *taken_values)
{
	int64		total = Min((int64) k, nvalues + nnulls);
	int64		taken_nulls = descending ? Min(total, nnulls) : total - Min(total, nvalues);

	*taken_values = total - taken_nulls;
	return gpusort_new_array(elemtype, (int16) gs_type_size(gpusort_type_from_oid(elemtype)),
							 *taken_values, taken_nulls, descending, what);
}

/* The first k of nvalues packed values and nnulls NULLs in sorted order, as a new array. */
static ArrayType *
topk_array(Oid elemtype, const char *values, int64 nvalues, int64 nnulls, int32 k,
		   bool descending, const char *what)
{
	int64		taken_values;
	ArrayType  *result = new_topk_array(elemtype, nvalues, nnulls, k, descending, what,
										&taken_values);
	GpusortJob	job;

	if (taken_values == 0)
		return result;

	memset(&job, 0, sizeof(job));
	job.type = gpusort_type_from_oid(elemtype);
	job.n = (size_t) nvalues;
	job.descending = descending;
	job.source = values;
	job.dest = ARR_DATA_PTR(result);
	job.limit = (size_t) taken_values;
	gpusort_run(&job);
	return result;
}

/*
 * gpu_topk(a T[], k int, descending bool DEFAULT false) -> T[]
 */
Datum
gpu_topk(PG_FUNCTION_ARGS)
{
	int32		k = get_k(fcinfo, 1);
	bool		descending = get_descending(fcinfo, 2);
	ArrayType  *array;
	ArrayType  *result;
	bool		owned;
	int			nitems;
	int64		nnulls;
	char	   *values;
	gs_type		type;

	if (PG_ARGISNULL(0))
	{
		gpusort_check_null_array(fcinfo, 0);
		PG_RETURN_NULL();
	}
	array = gpusort_getarg_1d_array(fcinfo, 0, "gpu_topk", &owned);
	if (!gpusort_sorts_type(ARR_ELEMTYPE(array), &type))
		PG_RETURN_ARRAYTYPE_P(gpusort_any_sort_array(array, PG_GET_COLLATION(), descending,
													 descending, k, "gpu_topk"));
	nitems = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	nnulls = gpusort_count_nulls(array, nitems);

	values = gpusort_packed_values(array, nitems, nnulls);
	result = topk_array(ARR_ELEMTYPE(array), values, nitems - nnulls, nnulls, k, descending, "gpu_topk");
	if (values != ARR_DATA_PTR(array))
		pfree(values);
	PG_RETURN_ARRAYTYPE_P(result);
}

/*
 * Most rows: a by-value element for a state of the same k and direction,
 * dropped with one compare when it comes no earlier than the worst of the
 * best k that the state holds (the state's bound, from its first prune on),
 * else appended when there is room for it before the next prune, without a
 * call (at 10^7 rows each nanosecond per row is 10 ms of the statement).
 * False when the row needs the full path: the first row, a NULL, an argument
 * that differs, a prune.
 */
static inline bool
add_fast(FunctionCallInfo fcinfo)
{
	SortAggState *state;
	bool		descending = false;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2) || (state = gpusort_agg_arg_in_memory(fcinfo)) == NULL)
		return false;
	if (PG_NARGS() > 3)
	{
		if (PG_ARGISNULL(3))
			return false;
		descending = PG_GETARG_BOOL(3);
	}
	if (!state->typbyval || state->descending != descending ||
		state->limit != PG_GETARG_INT32(2))
		return false;
	if (state->bounded && gpusort_agg_key(state, PG_GETARG_DATUM(1)) >= state->bound_key)
		return true;
	if (state->nvalues >= state->capacity || state->nvalues + 1 >= state->prune_at)
		return false;
	store_att_byval(state->values + state->nvalues * state->typlen, PG_GETARG_DATUM(1),
					state->typlen);
	state->nvalues++;
	state->sorted = state->nvalues <= 1;
	return true;
}

/*
 * gpu_topk_agg_transfn(S, T, k int [, descending bool]) -> S for S internal
 * or gpusort_state
 */
static SortAggState *
gpu_topk_agg_transfn_step(FunctionCallInfo fcinfo)
{
	int32		k;
	SortAggState *state;

	if (add_fast(fcinfo))
		return gpusort_agg_arg_in_memory(fcinfo);

	k = get_k(fcinfo, 2);
	state = gpusort_agg_state(fcinfo, "gpu_topk_agg", get_descending(fcinfo, 3));
	gpusort_agg_param(state, &k, sizeof(k), "gpu_topk_agg", "k");
	gpusort_agg_set_limit(state, k);
	gpusort_agg_add(state, fcinfo, 1);
	return state;
}

GPUSORT_AGG_TRANSITION(gpu_topk_agg_transfn)

/*
 * The k that a state keeps, checked: a partial state may bring none, or one
 * that gpu_topk_agg_transfn would not have taken.
 */
static int32
kept_k(const SortAggState *state)
{
	int32		k;

	if (state->param == NULL || state->param_len != sizeof(k))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid gpu_topk_agg state"),
				 errdetail("It keeps a k of %d bytes.", state->param == NULL ? 0 : state->param_len)));
	memcpy(&k, state->param, sizeof(k));
	if (k < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid gpu_topk_agg state"),
				 errdetail("It keeps k = %d.", k)));
	return k;
}

/*
 * gpu_topk_agg_final(internal) -> T[], declared once per element type: the
 * first k of array_agg(x ORDER BY x [DESC]).  No rows give NULL.
 */
Datum
gpu_topk_agg_final(PG_FUNCTION_ARGS)
{
	SortAggState *state;
	int32		k;
	int64		taken_values;
	ArrayType  *result;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "gpu_topk_agg_final called in non-aggregate context");
	state = gpusort_agg_arg(fcinfo, 0);
	if (state == NULL)
	{
		gpusort_agg_check_no_rows(fcinfo);
		PG_RETURN_NULL();
	}
	gpusort_agg_check_type(fcinfo, state);
	k = kept_k(state);
	if (state->generic)
		PG_RETURN_ARRAYTYPE_P(gpusort_agg_generic_array(state, k, "gpu_topk_agg"));
	result = new_topk_array(state->elemtype, state->nvalues, state->nnulls, k, state->descending,
							"gpu_topk_agg", &taken_values);
	gpusort_agg_first(state, taken_values, ARR_DATA_PTR(result));
	PG_RETURN_ARRAYTYPE_P(result);
}
