/*
 * rows.c: gpu_sort_rows, the set-returning form of gpu_sort.
 *
 * The first call sorts the whole array (as gpu_sort does) into the SRF's
 * multi-call memory; each call after that returns one element, or a NULL
 * while it is in the NULLs' block at the start or the end.
 *
 * gpu_sort_support tells the planner how many rows gpu_sort_rows returns and
 * what a sort of an array costs, from the array argument's length, and
 * replaces gpu_sort(array_agg(x)) by gpu_sort_agg(x) (sort_agg_rewrite.c).
 */
#include "postgres.h"

#include <math.h>

#include "access/tupmacs.h"
#include "fmgr.h"
#include "funcapi.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

#include "gpusort_pg.h"

PG_FUNCTION_INFO_V1(gpu_sort_rows);
PG_FUNCTION_INFO_V1(gpu_sort_support);

typedef struct RowsState
{
	int64		nitems;			/* elements, NULLs included */
	int64		values_from;	/* rows values_from .. values_to-1 are not NULL */
	int64		values_to;
	int16		typlen;
	const char *values;			/* the sorted non-NULL elements */
	Datum	   *datums;			/* or, for a type gpusort does not pack, every
								 * row as a Datum */
	bool	   *nulls;
	int64		next;			/* the row to return next */
} RowsState;

/*
 * gpu_sort_rows(a T[], descending bool DEFAULT false, nulls_first bool DEFAULT NULL) -> SETOF T
 */
Datum
gpu_sort_rows(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	RowsState  *state;
	int64		row;

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext oldcontext;
		ArrayType  *array;
		ArrayType  *sorted;
		bool		owned;
		bool		descending;
		bool		nulls_first;
		bool		isnull;
		gs_type		type;

		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);

		state = (RowsState *) palloc0(sizeof(RowsState));
		isnull = !gpusort_get_array_args(fcinfo, "gpu_sort_rows", &array, &owned,
										 &descending, &nulls_first);
		if (!isnull && !gpusort_sorts_type(ARR_ELEMTYPE(array), &type))
		{
			int16		typlen;
			bool		typbyval;
			char		typalign;
			int			nitems;

			sorted = gpusort_any_sort_array(array, PG_GET_COLLATION(), descending, nulls_first,
											-1, "gpu_sort_rows");
			get_typlenbyvalalign(ARR_ELEMTYPE(sorted), &typlen, &typbyval, &typalign);
			deconstruct_array(sorted, ARR_ELEMTYPE(sorted), typlen, typbyval, typalign,
							  &state->datums, &state->nulls, &nitems);
			state->nitems = nitems;
		}
		else if (!isnull)
		{
			int64		nnulls;

			sorted = gpusort_sort_array(array, owned, PG_GETARG_DATUM(0),
										descending, nulls_first);
			if (owned && sorted != array)
				pfree(array);	/* our copy, sorted into a new array */

			state->nitems = ArrayGetNItems(ARR_NDIM(sorted), ARR_DIMS(sorted));
			nnulls = gpusort_count_nulls(sorted, (int) state->nitems);
			state->values_from = nulls_first ? nnulls : 0;
			state->values_to = state->values_from + state->nitems - nnulls;
			state->typlen = (int16) gs_type_size(gpusort_type_from_oid(ARR_ELEMTYPE(sorted)));
			state->values = ARR_DATA_PTR(sorted);
		}
		funcctx->user_fctx = state;
		MemoryContextSwitchTo(oldcontext);
	}

	funcctx = SRF_PERCALL_SETUP();
	state = (RowsState *) funcctx->user_fctx;

	row = state->next++;
	if (row >= state->nitems)
		SRF_RETURN_DONE(funcctx);
	if (state->datums != NULL)
	{
		if (state->nulls[row])
			SRF_RETURN_NEXT_NULL(funcctx);
		SRF_RETURN_NEXT(funcctx, state->datums[row]);
	}
	if (row < state->values_from || row >= state->values_to)
		SRF_RETURN_NEXT_NULL(funcctx);

	/* int8 and float8 are by value where Datum has 8 bytes, else by reference */
	SRF_RETURN_NEXT(funcctx,
					fetch_att(state->values + (row - state->values_from) * state->typlen,
							  state->typlen <= 4 || FLOAT8PASSBYVAL, state->typlen));
}

/*
 * The planner's estimate of the length of the array a call sorts: exact for
 * a constant (or a parameter's value when the plan is made for it), from the
 * column's statistics where PostgreSQL 17 and later keep them, else its
 * default guess, as for unnest.
 */
static double
sorted_array_length(PlannerInfo *root, Node *node)
{
	Node	   *arg;

	if (node == NULL || !is_funcclause(node) || ((FuncExpr *) node)->args == NIL)
		return -1;
	arg = linitial(((FuncExpr *) node)->args);
	if (root != NULL)
		arg = estimate_expression_value(root, arg);
#if PG_VERSION_NUM >= 170000
	return estimate_array_length(root, arg);
#else
	return estimate_array_length(arg);
#endif
}

/*
 * gpu_sort_support(internal) -> internal: the planner support function of
 * gpu_sort, gpu_argsort and gpu_sort_rows.
 *
 * Rows: gpu_sort_rows returns as many rows as its array has elements, where
 * a SETOF function's ROWS would be one fixed guess.
 *
 * Cost: a C function's COST is a constant number of cpu_operator_cost
 * charged per call, 1 by default, which would tell the planner that sorting
 * an array costs as much as adding two integers, however long the array;
 * the planner uses it to order quals (cheapest first) and to cost the plans
 * that call the function once rather than per row.  No constant fits arrays
 * of 10 and 10^8 elements, so the cost follows the estimated length n: what
 * PostgreSQL's cost_sort charges an in-memory sort of n tuples, n log2 n
 * comparisons at 2 * cpu_operator_cost, plus one cpu_operator_cost per
 * element for copying it in and out.  A GPU sort of a large array is cheaper
 * than that, the CPU fallback about as costly; the planner cannot know which
 * runs, so it is charged the CPU's.  A call whose arguments are all
 * constants is sorted once at plan time (the functions are IMMUTABLE) and
 * costs nothing when the plan runs.
 *
 * Simplify: gpu_sort(array_agg(x) [, descending]) becomes the aggregate
 * gpu_sort_agg(x [, descending]), which can run in parallel workers.
 */
Datum
gpu_sort_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestRows))
	{
		SupportRequestRows *req = (SupportRequestRows *) rawreq;
		double		n = sorted_array_length(req->root, req->node);

		if (n >= 0)
		{
			req->rows = n;
			PG_RETURN_POINTER(req);
		}
	}
	else if (IsA(rawreq, SupportRequestCost))
	{
		SupportRequestCost *req = (SupportRequestCost *) rawreq;
		double		n = sorted_array_length(req->root, req->node);

		if (n >= 0)
		{
			n = Max(n, 2.0);
			req->startup = 0;
			req->per_tuple = cpu_operator_cost * (n + 2.0 * n * log2(n));
			PG_RETURN_POINTER(req);
		}
	}
	else if (IsA(rawreq, SupportRequestSimplify))
	{
		SupportRequestSimplify *req = (SupportRequestSimplify *) rawreq;

		PG_RETURN_POINTER(gpusort_rewrite_sort_of_array_agg(req->root, req->fcall));
	}
	PG_RETURN_POINTER(NULL);
}
