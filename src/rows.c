/*
 * rows.c: gpu_sort_rows, the set-returning form of gpu_sort.
 *
 * The first call sorts the whole array (as gpu_sort does) into the SRF's
 * multi-call memory; each call after that returns one element, or a NULL
 * while it is in the NULLs' block at the start or the end.
 */
#include "postgres.h"

#include "access/tupmacs.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"

#include "gpusort_pg.h"

PG_FUNCTION_INFO_V1(gpu_sort_rows);

typedef struct RowsState
{
	int64		nitems;			/* elements, NULLs included */
	int64		values_from;	/* rows values_from .. values_to-1 are not NULL */
	int64		values_to;
	int16		typlen;
	const char *values;			/* the sorted non-NULL elements */
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

		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);

		state = (RowsState *) palloc0(sizeof(RowsState));
		isnull = !gpusort_get_array_args(fcinfo, "gpu_sort_rows", &array, &owned,
										 &descending, &nulls_first);
		if (!isnull)
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
	if (row < state->values_from || row >= state->values_to)
		SRF_RETURN_NEXT_NULL(funcctx);

	/* int8 and float8 are by value where Datum has 8 bytes, else by reference */
	SRF_RETURN_NEXT(funcctx,
					fetch_att(state->values + (row - state->values_from) * state->typlen,
							  state->typlen <= 4 || FLOAT8PASSBYVAL, state->typlen));
}
