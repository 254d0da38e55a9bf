/*
 * aggregate.h: the transition state of gpu_sort_agg (aggregate.c), which the
 * ordered-set aggregates (percentile.c) and gpu_topk_agg share: the non-NULL
 * values gathered unsorted, a NULL count, and the aggregate's constant
 * argument (a fraction, k) as its first row gave it.  A limited state
 * (gpu_topk_agg's) keeps only the best values that can still be among its
 * first k.  The combine, serialize and deserialize functions of aggregate.c
 * handle all of it.
 *
 * The state is an expanded object (utils/expandeddatum.h) in a memory
 * context that the states under one aggregate context share (aggregate.c,
 * gpusort_agg_new_state): the plain aggregates' transition type gpusort_state
 * (agg_state.c) is a datum that points to it, and its flat form is what
 * leaves the process (a parallel worker's or a Citus worker's partial
 * state).  The WITHIN GROUP aggregates pass the same state as internal.
 */
#ifndef GPUSORT_AGGREGATE_H
#define GPUSORT_AGGREGATE_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"
#include "utils/expandeddatum.h"

#include "gpusort.h"
#include "keys.h"

/*
 * A state holds at most this many sorted runs from its partial states; one
 * more halves them by merging neighbours.
 */
#define GPUSORT_AGG_MAX_RUNS 64

typedef struct SortAggState
{
	ExpandedObjectHeader hdr;	/* first: a gpusort_state datum points here */

	/*
	 * What a transition function reads for every row comes first, next to
	 * the header where the datum points (a hash aggregation over many
	 * groups misses the cache once per row on its state, and should not
	 * miss it again on the fields).
	 */
	gs_type		type;
	int32		limit;			/* only the best limit values matter; -1: all */
	uint64		bound_key;		/* bounded: the ordered key (keys.h), in the
								 * state's order, of the worst of limit values
								 * that the state holds; a value whose key is
								 * not below it cannot enter the best limit */
	bool		typbyval;
	bool		descending;
	bool		bounded;		/* bound_key holds (a limited packed state) */
	bool		sorted;			/* values are in ascending order */
	Oid			elemtype;
	int64		nvalues;		/* non-NULL values in values */
	int64		capacity;		/* values has room for this many */
	int64		prune_at;		/* a limited state prunes when it holds this
								 * many values (PG_INT64_MAX: never) */
	char	   *values;
	int64		nnulls;			/* nvalues + nnulls never overflows, nor does
								 * capacity + nnulls */
	int64		kept;			/* values[0 .. kept) are the best (at most
								 * limit) of the values pruned so far, in the
								 * state's order; 0 before the first prune */
	int16		typlen;
	bool		generic;		/* a type gpusort does not pack: values holds
								 * Datums (typlen sizeof(Datum), typbyval
								 * false), each by-reference one a detoasted
								 * copy of its own in the state's context,
								 * sorted with the type's comparator under
								 * collation (any_sort.c); no runs */
	bool		elembyval;		/* generic: the element type's typbyval, */
	char		elemalign;		/* typalign, */
	int16		elemlen;		/* typlen */
	int32		nruns;			/* >= 2: values are nruns ascending runs, run r
								 * at [run_starts[r], run_starts[r + 1]), the
								 * last ending at nvalues; 0: no runs */
	Oid			collation;		/* generic: the collation of the input */
	int32		run_capacity;	/* 0, 9 or 2 GPUSORT_AGG_MAX_RUNS + 1 */
	int32		param_len;
	int64	   *run_starts;		/* room for run_capacity starts, or NULL */
	char	   *param;			/* the constant argument, MAXALIGNed bytes, or NULL */
} SortAggState;

/*
 * A partial state as read, without copying its values: from a flat
 * gpusort_state (agg_state.c) or from a state in memory.
 */
typedef struct SortAggView
{
	Oid			elemtype;
	Oid			collation;		/* a generic state's collation, else InvalidOid */
	bool		descending;
	bool		sorted;			/* values in ascending order */
	bool		limited;		/* param is the limit k (int32) */
	int64		nvalues;
	int64		nnulls;
	const char *param;			/* NULL: none */
	int32		param_len;
	const char *values;
	int32		nruns;			/* as in SortAggState */
	const int64 *run_starts;
} SortAggView;

/* The methods of the state's expanded object (agg_state.c). */
extern const ExpandedObjectMethods gpusort_agg_methods;

/*
 * A new empty state in the states' context under parent; collation matters
 * for a generic state (a type gpusort does not pack) only.
 */
extern SortAggState *gpusort_agg_new_state(MemoryContext parent, Oid elemtype, Oid collation,
										   bool descending);

/* A state under parent that holds what view holds (a copy). */
extern SortAggState *gpusort_agg_state_from_view(MemoryContext parent, const SortAggView *view);

/*
 * Appends the partial state view to state (order does not matter before the
 * sort, except that ties may come out in either partial state's order, which
 * no one can tell apart): its values, NULLs and constant argument, checked
 * against the state's.  Sorted runs stay runs when both are runs.  A limited
 * result is cut to its best limit values.
 */
extern void gpusort_agg_append_view(SortAggState *state, const SortAggView *view);

/* The view of a state in memory. */
extern SortAggView gpusort_agg_view(const SortAggState *state);

/*
 * Writes the first n (at most nvalues) of a packed state's values in the
 * state's order to dest, leaving the state as it is: copied where its last
 * prune left them first, sorted in a copy where they are few, else selected
 * through gpusort_run.
 */
extern void gpusort_agg_first(const SortAggState *state, int64 n, char *dest);

/*
 * Readies a state to leave its process: a limited one keeps its best limit
 * values, any other is sorted (its runs merged).
 */
extern void gpusort_agg_prepare_to_leave(SortAggState *state);

/*
 * The state that argument argno carries, NULL for a NULL: an internal
 * state, an expanded gpusort_state, or a flat one (copied into
 * CurrentMemoryContext).
 */
extern SortAggState *gpusort_agg_arg(FunctionCallInfo fcinfo, int argno);

/*
 * The view of argument argno (not NULL) without copying a flat
 * gpusort_state's values.
 */
extern SortAggView gpusort_agg_view_arg(FunctionCallInfo fcinfo, int argno);

/* The gpusort_state datum of a state (read-write: the aggregate may change it). */
static inline Datum
gpusort_agg_datum_of(SortAggState *state)
{
	return EOHPGetRWDatum(&state->hdr);
}

/*
 * The state that p points to when it is in memory already: an internal
 * state, or an expanded gpusort_state (read-write only, when read_write);
 * else NULL (a flat gpusort_state).
 */
static inline SortAggState *
gpusort_agg_in_memory(Pointer p, bool read_write)
{
	if (read_write ? VARATT_IS_EXTERNAL_EXPANDED_RW(p) : VARATT_IS_EXTERNAL_EXPANDED(p))
	{
		/* DatumGetEOHP, inline: a transition function runs this for every row */
		varatt_expanded ptr;

		memcpy(&ptr, VARDATA_EXTERNAL(p), sizeof(ptr));
		return (SortAggState *) ptr.eohptr;
	}
	if (*(const int32 *) p == EOH_HEADER_MAGIC)
		return (SortAggState *) p;
	return NULL;
}

/*
 * The state of argument 0 of a transition function when it is in memory
 * already, else NULL: the transition functions' fast path.
 */
static inline SortAggState *
gpusort_agg_arg_in_memory(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(0))
		return NULL;
	return gpusort_agg_in_memory(DatumGetPointer(PG_GETARG_DATUM(0)), true);
}

/*
 * The ordered key (keys.h) of a by-value element of a packed state in the
 * state's order: of two values, the one with the smaller key comes first,
 * and equal keys are equal values (the same bits).
 */
static inline uint64
gpusort_agg_key(const SortAggState *state, Datum value)
{
	switch (state->type)
	{
		case GS_INT2:
			return gs_to_key16((uint16) DatumGetInt16(value), state->descending);
		case GS_INT4:
			return gs_to_key32(DatumGetUInt32(value), false, state->descending);
		case GS_FLOAT4:
			return gs_to_key32(DatumGetUInt32(value), true, state->descending);
		case GS_INT8:
			return gs_to_key64((uint64) DatumGetInt64(value), false, state->descending);
		default:
			return gs_to_key64((uint64) DatumGetInt64(value), true, state->descending);
	}
}

/*
 * Declares a transition function twice from one body, name##_step(fcinfo)
 * returning the state: name returns it as internal, name##_state as a
 * gpusort_state.
 */
#define GPUSORT_AGG_TRANSITION(name) \
PG_FUNCTION_INFO_V1(name); \
PG_FUNCTION_INFO_V1(name##_state); \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_POINTER(name##_step(fcinfo)); \
} \
Datum \
name##_state(PG_FUNCTION_ARGS) \
{ \
	return gpusort_agg_datum_of(name##_step(fcinfo)); \
}

/*
 * The declared type of argument argno, or the result, of a function: from
 * its call expression where there is one, else from its pg_proc entry (a
 * call through Citus's aggregate wrappers has none).
 */
extern Oid	gpusort_fn_argtype(FmgrInfo *flinfo, int argno);
extern Oid	gpusort_fn_rettype(FmgrInfo *flinfo);

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
 * of them will do), at most Max(2 limit, 1024) at a time, or for a packed
 * type Max(2 limit, the few that the state's own room holds).
 */
extern void gpusort_agg_set_limit(SortAggState *state, int32 limit);

/*
 * The values in ascending order: merges the state's sorted runs (on the CPU,
 * or by a sort of them all where that would run on the GPU) or sorts them
 * once through gpusort_run (into a new buffer, so a failed sort leaves the
 * state as it was), and keeps them sorted until a value is added.
 */
extern const char *gpusort_agg_sorted(SortAggState *state);

/*
 * The value of rank rank (0-based) in ascending order, for a few ranks of
 * many values: read from the sorted runs of a state that has them (a
 * selection, not a merge), else from the sorted values.
 */
extern const char *gpusort_agg_at_rank(SortAggState *state, int64 rank);

/*
 * A generic state's values sorted in the state's order, NULLs placed as
 * array_agg places them (last ascending, first descending), cut to the
 * first ntake, as a new array; what names the caller in an error.
 */
extern ArrayType *gpusort_agg_generic_array(SortAggState *state, int64 ntake, const char *what);

/* The value at p, of the state's element type, as a Datum. */
extern Datum gpusort_agg_datum(const SortAggState *state, const char *p);

/*
 * Errors unless the state holds values of the type that the final function
 * of fcinfo returns (or of its element type, when it returns an array): a
 * partial state of another aggregate would have its values read as that
 * type.
 */
extern void gpusort_agg_check_type(FunctionCallInfo fcinfo, const SortAggState *state);

/*
 * Errors unless the type that the final function of fcinfo answers in is
 * one that ORDER BY sorts, for a final call without a state (no rows): the
 * error a state of rows would have raised, whatever the rows.
 */
extern void gpusort_agg_check_no_rows(FunctionCallInfo fcinfo);

#endif							/* GPUSORT_AGGREGATE_H */
