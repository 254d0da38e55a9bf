/*
 * aggregate.h: the transition state of gpu_sort_agg (aggregate.c), which the
 * ordered-set aggregates (percentile.c) and gpu_topk_agg share: the non-NULL
 * values gathered unsorted, a NULL count, and the aggregate's constant
 * argument (a fraction, k) as its first row gave it.  A limited state
 * (gpu_topk_agg's) keeps only the best values that can still be among its
 * first k.  The combine, serialize and deserialize functions of aggregate.c
 * handle all of it.
 */
#ifndef GPUSORT_AGGREGATE_H
#define GPUSORT_AGGREGATE_H

#include "postgres.h"

#include "fmgr.h"

#include "gpusort.h"

typedef struct SortAggState
{
	Oid			elemtype;
	gs_type		type;
	int16		typlen;
	bool		typbyval;
	bool		descending;
	bool		sorted;			/* values are in ascending order */
	int64		nvalues;		/* non-NULL values in values */
	int64		nnulls;			/* nvalues + nnulls never overflows */
	int64		capacity;		/* values has room for this many */
	char	   *values;
	char	   *param;			/* the constant argument, MAXALIGNed bytes, or NULL */
	int32		param_len;
	int64		limit;			/* only the best limit values matter; -1: all */
	int64		prune_at;		/* a limited state prunes when it holds this
								 * many values (PG_INT64_MAX: never) */
	int64		kept;			/* values[0 .. kept) are the best (at most
								 * limit) of the values pruned so far, in the
								 * state's order; 0 before the first prune */
} SortAggState;

/*
 * The state of a transition function (argument 0), created on the first row
 * for the element type of argument 1; errors outside an aggregate, and when
 * descending differs from the first row's (funcname names the aggregate).
 */
extern SortAggState *gpusort_agg_state(FunctionCallInfo fcinfo, const char *funcname,
									   bool descending);

/* Adds argument argno (a value or a NULL) to the state. */
extern void gpusort_agg_add(SortAggState *state, FunctionCallInfo fcinfo, int argno);

/*
 * Stores the aggregate's constant argument (len bytes) on the first row and
 * errors when a later row, or another partial state, has another one; what
 * names the argument in the message.
 */
extern void gpusort_agg_param(SortAggState *state, const void *param, int32 len,
							  const char *funcname, const char *what);

/*
 * Makes the state limited: from now on it keeps only the values that can
 * still be among the first limit of its order (ties are equal values, so any
 * of them will do), at most Max(2 limit, 1024) at a time.
 */
extern void gpusort_agg_set_limit(SortAggState *state, int32 limit);

/*
 * The values in ascending order: sorts them once through gpusort_run (into a
 * new buffer, so a failed sort leaves the state as it was) and keeps them
 * sorted until a value is added.
 */
extern const char *gpusort_agg_sorted(SortAggState *state);

/* The value at p, of the state's element type, as a Datum. */
extern Datum gpusort_agg_datum(const SortAggState *state, const char *p);

/*
 * Errors unless the state holds values of the type that the final function
 * of fcinfo returns (or of its element type, when it returns an array): a
 * partial state of another aggregate would have its values read as that
 * type.
 */
extern void gpusort_agg_check_type(FunctionCallInfo fcinfo, const SortAggState *state);

#endif							/* GPUSORT_AGGREGATE_H */
