/*
 * aggregate.c: gpu_sort_agg(x T [, descending bool]), the same result as
 * array_agg(x ORDER BY x [DESC]), NULL inputs included (last ascending, first
 * descending, as array_agg puts them).
 *
 * The state gathers the non-NULL values unsorted in one growable buffer (huge
 * allocations, so it may pass 1 GB while it accumulates) and counts the NULLs;
 * the final function sorts once into the result array.
 *
 * A partial state leaves its process sorted (gpusort_agg_prepare_to_leave,
 * when a parallel worker's or a Citus worker's state is flattened), so the
 * combine function appends it as one more sorted run instead of unsorted
 * values.  The final function then merges the runs (gs_cpu_merge, or one
 * sort of them all where that would run on the GPU), and the percentiles
 * read their few ranks across the runs without merging them
 * (gs_cpu_runs_select).  The internal-state forms of 1.1 (serialize and
 * deserialize to bytea, in the machine's byte order) are kept for their SQL
 * declarations.
 *
 * The ordered-set aggregates (percentile.c) share the state: they keep a
 * constant argument in it (the fraction) and read the values sorted once
 * (gpusort_agg_sorted), after which a later final call finds them in order.
 *
 * gpu_topk_agg (topk.c) makes its state limited to its k: the values then
 * come in behind the best k kept so far, and once they reach the state's
 * prune size (2k, or more for a small k) those that are not before the k-th
 * kept value are dropped (one compare each) and, when enough remain, the
 * best k are selected again (sorted in place when they are few, else the CPU
 * top-k select).  From its first select on, a packed state keeps the ordered
 * key of its k-th value (its bound), and the transition drops a value that
 * does not come before it with that one compare, without storing it: in a
 * group of n random rows only about k ln(n / k) are ever stored.  A group so
 * holds O(k) values however many rows it has; its partial state is cut to k
 * before it is serialized, and combining two cuts the union to k.
 *
 * The other element types that ORDER BY sorts (numeric, text under any
 * collation, uuid, composite types ...) make a generic state: the values
 * are Datums, each by-reference one a detoasted copy in the states' context,
 * sorted on the CPU with the type's comparator under the input's collation
 * (any_sort.c), with no sorted runs; a limited one prunes by sorting its
 * values and freeing those past its limit.  Their aggregates keep the state
 * as internal, so only the bytea serialize and deserialize functions carry
 * it between processes (datumSerialize's form, with the collation).
 */
#include "postgres.h"

#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "gpusort_pg.h"
#include "aggregate.h"

PG_FUNCTION_INFO_V1(gpu_sort_agg_combine);
PG_FUNCTION_INFO_V1(gpu_sort_agg_combine_state);
PG_FUNCTION_INFO_V1(gpu_sort_agg_serialize);
PG_FUNCTION_INFO_V1(gpu_sort_agg_deserialize);
PG_FUNCTION_INFO_V1(gpu_sort_agg_final);

/*
 * A state and its first values share one allocation: the state, then room
 * for AGG_INLINE_BYTES of values (8 int8 or float8, 16 int4), the end of
 * which a constant argument of a few bytes (a fraction, k) takes while the
 * values still leave it room.  Under a hash aggregation there may be
 * millions of groups of a few rows each: a group costs that one allocation,
 * carved from a block of states (StatesArena) with no chunk header and no
 * rounding up to a power of 2 (sql/1.3/state.sql says why SSPACE is not this size).
 */
#define AGG_INLINE_BYTES 64
#define AGG_STATE_SIZE (MAXALIGN(sizeof(SortAggState)) + AGG_INLINE_BYTES)

/* At most this many values are sorted in place (gs_cpu_sort's insertion sort, no scratch). */
#define AGG_SORT_IN_PLACE_MAX 64

/*
 * A limited generic state prunes at Max(2 limit, AGG_PRUNE_MIN) values
 * (amortising each sort over many rows).  A packed one prunes at Max(2
 * limit, what the room of its first values holds beside k): from its first
 * prune on it knows the worst of its best limit values, and its transition
 * drops the values that come no earlier with one compare of ordered keys
 * (gpusort_agg_key), so that a group of many rows stores few of them, and
 * its prunes sort at most AGG_SORT_IN_PLACE_MAX values in place while 2
 * limit is that few.
 */
#define AGG_PRUNE_MIN 1024
#define AGG_PRUNE_MIN_PACKED_BYTES (AGG_INLINE_BYTES - MAXALIGN(sizeof(int32)))

/*
 * The serialized state: this header, param_len bytes of parameter, then
 * nvalues packed values.  A generic state (a type gpusort does not pack) has
 * its collation (an Oid) between the header and the parameter, and its
 * values as datumSerialize writes them.
 */
typedef struct SortAggSerialHeader
{
	Oid			elemtype;
	int32		descending;
	int64		nvalues;
	int64		nnulls;
	int32		param_len;		/* -1: no parameter */
	int32		limited;		/* 1: a limited state, its parameter the limit
								 * (int32); 0: not limited */
} SortAggSerialHeader;

/*
 * The memory context of the states under an aggregate's context: one for all
 * of them, a child of that context (so that the aggregate adopts a new
 * state's expanded object, and counts its memory).  A context of each
 * state's own made a hash aggregation quadratic in its groups: it adds up
 * the memory of its context and every child each time it adds a group.
 *
 * The states are carved one after another from blocks of that context, which
 * nothing frees before the context goes: gpusort's transition and combine
 * functions return the state they were given, so the executor never
 * replaces (and deletes) a state that is in memory.  The arena that does so
 * lives in the parent, registered as a reset callback on it (found again by
 * its function among the parent's callbacks), and a one-entry cache keeps
 * the last one; a reset or delete of the parent, or a delete of the states'
 * context (a DeleteExpandedObject of one of its states, which no aggregate
 * of gpusort's makes), runs its callbacks.
 */
#define STATES_CONTEXT_NAME "gpusort aggregate states"
#define STATES_FIRST_BLOCK 1024
#define STATES_MAX_BLOCK (64 * 1024)

typedef struct StatesArena
{
	MemoryContextCallback on_parent;	/* first: registered on the parent */
	MemoryContextCallback on_context;	/* registered on the states' context */
	MemoryContext parent;
	MemoryContext context;		/* the states' context; NULL until made again */
	char	   *free;			/* the unused rest of the current block */
	char	   *end;
	Size		next_block;		/* the size of the next block */
} StatesArena;

static StatesArena *current_arena;

/* A reset or delete of the parent: the arena goes with it. */
static void
forget_arena(void *arg)
{
	if (current_arena == (StatesArena *) arg)
		current_arena = NULL;
}

/*
 * A reset or delete of the states' context: its blocks go, and a later state
 * finds it again among the parent's children, or makes it again.
 */
static void
forget_states_context(void *arg)
{
	StatesArena *arena = (StatesArena *) arg;

	arena->context = NULL;
	arena->free = arena->end = NULL;
}

static StatesArena *
get_arena(MemoryContext parent)
{
	StatesArena *arena = current_arena;
	MemoryContextCallback *callback;

	if (arena == NULL || arena->parent != parent)
	{
		arena = NULL;
		for (callback = parent->reset_cbs; callback != NULL; callback = callback->next)
		{
			if (callback->func == forget_arena)
			{
				arena = (StatesArena *) callback;
				break;
			}
		}
		if (arena == NULL)
		{
			arena = MemoryContextAllocZero(parent, sizeof(StatesArena));
			arena->parent = parent;
			arena->on_parent.func = forget_arena;
			arena->on_parent.arg = arena;
			MemoryContextRegisterResetCallback(parent, &arena->on_parent);
		}
		current_arena = arena;
	}
	if (arena->context == NULL)
	{
		MemoryContext context;

		/* one that a reset of it alone (not a delete) left, or a new one */
		for (context = parent->firstchild; context != NULL; context = context->nextchild)
		{
			if (strcmp(context->name, STATES_CONTEXT_NAME) == 0)
				break;
		}
		if (context == NULL)
			context = AllocSetContextCreate(parent, STATES_CONTEXT_NAME, ALLOCSET_DEFAULT_SIZES);
		arena->context = context;
		arena->on_context.func = forget_states_context;
		arena->on_context.arg = arena;
		MemoryContextRegisterResetCallback(arena->context, &arena->on_context);
		arena->next_block = STATES_FIRST_BLOCK;
	}
	return arena;
}

/* Room for a state in the arena: the rest of its block, or a new block. */
static void *
arena_alloc_state(StatesArena *arena)
{
	char	   *state;

	StaticAssertStmt(AGG_STATE_SIZE == MAXALIGN(AGG_STATE_SIZE) && STATES_FIRST_BLOCK >= AGG_STATE_SIZE,
					 "states are MAXALIGNed and a block holds one at least");
	if ((Size) (arena->end - arena->free) < AGG_STATE_SIZE)
	{
		arena->free = MemoryContextAlloc(arena->context, arena->next_block);
		arena->end = arena->free + arena->next_block;
		arena->next_block = Min(arena->next_block * 2, STATES_MAX_BLOCK);
	}
	state = arena->free;
	arena->free += AGG_STATE_SIZE;
	return state;
}

/*
 * A new empty state in the states' context under parent, its first values
 * in the same allocation.  A window aggregate's state has a context of its
 * own (new_window_state).
 */
static SortAggState *new_state_in(MemoryContext context, void *room, Oid elemtype, Oid collation,
								  bool descending);

SortAggState *
gpusort_agg_new_state(MemoryContext parent, Oid elemtype, Oid collation, bool descending)
{
	StatesArena *arena = get_arena(parent);

	return new_state_in(arena->context, arena_alloc_state(arena), elemtype, collation, descending);
}

/*
 * A new empty state of a window aggregate, in a context of its own under
 * the window's aggregate context: a window holds one state per aggregate, so
 * a context each costs nothing there, and a moving aggregate that pairs
 * gpusort's transition with a user's inverse transition may have the
 * executor delete a state it replaces (DeleteExpandedObject deletes the
 * state's context).
 */
static SortAggState *
new_window_state(MemoryContext aggcontext, Oid elemtype, Oid collation, bool descending)
{
	MemoryContext context = AllocSetContextCreate(aggcontext, "gpusort window aggregate state",
												  ALLOCSET_SMALL_SIZES);

	return new_state_in(context, MemoryContextAlloc(context, AGG_STATE_SIZE), elemtype, collation,
						descending);
}

/* The first values of a state, after it in its allocation. */
static inline char *
inline_values(const SortAggState *state)
{
	return (char *) state + MAXALIGN(sizeof(SortAggState));
}

/* A new empty state in room (AGG_STATE_SIZE bytes of context). */
static SortAggState *
new_state_in(MemoryContext context, void *room, Oid elemtype, Oid collation, bool descending)
{
	SortAggState *state = (SortAggState *) room;

	StaticAssertStmt(AGG_INLINE_BYTES >= 8 * sizeof(int64), "a state has room for 8 values");
	memset(state, 0, sizeof(SortAggState));

	EOH_init_header(&state->hdr, &gpusort_agg_methods, context);
	state->elemtype = elemtype;
	if (gpusort_sorts_type(elemtype, &state->type))
	{
		state->typlen = (int16) gs_type_size(state->type);
		/* int8 and float8 are by reference where Datum has only 4 bytes */
		state->typbyval = state->typlen <= 4 || FLOAT8PASSBYVAL;
	}
	else
	{
		/* a Datum per value; typbyval false keeps the fast paths off */
		gpusort_check_sortable(elemtype);
		state->generic = true;
		state->collation = collation;
		get_typlenbyvalalign(elemtype, &state->elemlen, &state->elembyval, &state->elemalign);
		state->typlen = sizeof(Datum);
		state->typbyval = false;
	}
	state->descending = descending;
	state->sorted = true;		/* no values yet */
	state->limit = -1;
	state->prune_at = PG_INT64_MAX;
	state->values = inline_values(state);
	state->capacity = Min(AGG_INLINE_BYTES / state->typlen, state->prune_at);
	return state;
}

/* Frees the state's buffer of values unless it is the first, in the state's allocation. */
static void
free_values(SortAggState *state)
{
	if (state->values != inline_values(state))
		pfree(state->values);
}

/*
 * A generic state's copy of a value in the state's context: detoasted (and
 * flattened), so that it outlives its row and compares without detoasting.
 */
static Datum
copy_generic_value(const SortAggState *state, Datum value)
{
	MemoryContext oldcontext;

	if (state->elembyval)
		return value;
	oldcontext = MemoryContextSwitchTo(state->hdr.eoh_context);
	if (state->elemlen == -1)
	{
		struct varlena *detoasted = PG_DETOAST_DATUM(value);

		value = detoasted == (struct varlena *) DatumGetPointer(value) ?
			datumCopy(value, false, -1) : PointerGetDatum(detoasted);
	}
	else
		value = datumCopy(value, false, state->elemlen);
	MemoryContextSwitchTo(oldcontext);
	return value;
}

/* The Datums of a generic state's values. */
static inline Datum *
generic_values(const SortAggState *state)
{
	return (Datum *) state->values;
}

/* Frees a generic state's copies of its values from..to-1 (a state drops them). */
static void
free_generic_values(SortAggState *state, int64 from, int64 to)
{
	if (state->elembyval)
		return;
	for (int64 i = from; i < to; i++)
		pfree(DatumGetPointer(generic_values(state)[i]));
}

/*
 * Sorts a generic state's values in place, stably, ascending or in the
 * state's own order (in_state_order), with the type's comparator.
 */
static void
sort_generic(SortAggState *state, bool in_state_order)
{
	SortSupportData ssup;

	gpusort_any_prepare(&ssup, state->elemtype, state->collation,
						in_state_order && state->descending);
	gpusort_any_sort(&ssup, generic_values(state), state->nvalues, NULL);
}

/* The most values of typlen bytes one buffer may hold (MaxAllocHugeSize bytes). */
static int64
max_values(int16 typlen)
{
	return (int64) (MaxAllocHugeSize / (Size) typlen);
}

/* The error of a state whose values and NULLs together would pass PG_INT64_MAX. */
static void
too_many_rows(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("gpu_sort_agg cannot count more than %lld rows", (long long) PG_INT64_MAX)));
}

/*
 * Keeps capacity + nnulls within int64 after nnulls grew: the transition
 * functions' fast paths append while nvalues < capacity without looking at
 * nnulls, so this is what keeps nvalues + nnulls from wrapping when a state
 * (an initial one written by hand) counts nearly PG_INT64_MAX NULLs.  It
 * only records less room than the buffer has.
 */
static inline void
clamp_capacity(SortAggState *state)
{
	state->capacity = Min(state->capacity, PG_INT64_MAX - state->nnulls);
}

/*
 * Makes room for at least extra more values, doubling the buffer (or more,
 * where that is not enough) up to max_values; the buffer lives in the
 * state's context.  Errors when the row count would pass PG_INT64_MAX.
 */
static void
reserve(SortAggState *state, int64 extra)
{
	int64		limit = max_values(state->typlen);
	int64		capacity;

	Assert(extra >= 0 && state->nvalues <= limit);
	if (extra <= state->capacity - state->nvalues)
		return;
	if (extra > PG_INT64_MAX - state->nnulls - state->nvalues)
		too_many_rows();
	if (extra > limit - state->nvalues)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpu_sort_agg cannot hold more than %lld values of %s",
						(long long) limit, format_type_be(state->elemtype))));
	capacity = state->capacity > limit / 2 ? limit : Max(state->capacity, 1) * 2;
	capacity = Min(capacity, state->prune_at);	/* a limited state never holds more */
	if (state->prune_at <= AGG_PRUNE_MIN)
		capacity = state->prune_at; /* and takes room for a few at once */
	capacity = Max(capacity, state->nvalues + extra);

	/*
	 * A new buffer and a copy rather than repalloc: gpusort_alloc_large maps
	 * a large buffer's pages up front in huge pages, where values appended
	 * one at a time into a repalloc'd buffer would fault in each 4 KiB page
	 * (on the development VM that was most of the transition's cost at 10^7
	 * float8).  The copies add up to less than the final buffer.
	 */
	{
		MemoryContext oldcontext = MemoryContextSwitchTo(state->hdr.eoh_context);
		char	   *values = gpusort_alloc_large((Size) capacity * state->typlen);

		MemoryContextSwitchTo(oldcontext);
		memcpy(values, state->values, (Size) state->nvalues * state->typlen);
		free_values(state);
		state->values = values;
	}
	state->capacity = capacity;
	clamp_capacity(state);
}

/* The ordered key of the packed value at p, in the state's order (as gpusort_agg_key). */
static uint64
packed_key(const SortAggState *state, const char *p)
{
	switch (state->typlen)
	{
		case 2:
			{
				uint16		bits;

				memcpy(&bits, p, sizeof(bits));
				return gs_to_key16(bits, state->descending);
			}
		case 4:
			{
				uint32		bits;

				memcpy(&bits, p, sizeof(bits));
				return gs_to_key32(bits, state->type == GS_FLOAT4, state->descending);
			}
		default:
			{
				uint64		bits;

				memcpy(&bits, p, sizeof(bits));
				return gs_to_key64(bits, state->type == GS_FLOAT8, state->descending);
			}
	}
}

/*
 * Sets a limited packed state's bound once it holds limit selected values
 * (at once for a limit of 0: no value enters): the key of the worst of
 * them.  Later values whose key is not below it cannot be among the best
 * limit, since ties are equal values and those held come first.
 */
static void
set_bound(SortAggState *state)
{
	if (state->generic || state->limit < 0)
		return;
	if (state->limit == 0)
	{
		state->bounded = true;
		state->bound_key = 0;
	}
	else if (state->kept == state->limit)
	{
		state->bounded = true;
		state->bound_key = packed_key(state, state->values + (state->kept - 1) * state->typlen);
	}
}

/* Whether a limited packed state's bound drops the by-value element value. */
static inline bool
out_of_bound(const SortAggState *state, Datum value)
{
	return state->bounded && state->typbyval && gpusort_agg_key(state, value) >= state->bound_key;
}

/*
 * A limited state that holds limit values from its last select drops the
 * values after them that come no earlier than the worst of them: those
 * cannot be among the best limit.
 */
static void
drop_hopeless(SortAggState *state)
{
	char	   *pending = state->values + state->kept * state->typlen;

	if (state->kept == 0 || state->kept < state->limit)
		return;					/* no bound yet */
	if (state->generic)
	{
		Datum	   *values = generic_values(state);
		Datum		worst = values[state->kept - 1];
		SortSupportData ssup;
		int64		n = state->kept;

		gpusort_any_prepare(&ssup, state->elemtype, state->collation, state->descending);
		for (int64 i = state->kept; i < state->nvalues; i++)
		{
			if (gpusort_any_compare(&ssup, values[i], worst) < 0)
				values[n++] = values[i];
			else if (!state->elembyval)
				pfree(DatumGetPointer(values[i]));
			if ((i & (GPUSORT_POLL_ITEMS - 1)) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		state->nvalues = n;
		return;
	}
	state->nvalues = state->kept +
		gs_cpu_topk_keep_before(state->type, pending, (size_t) (state->nvalues - state->kept),
								pending - state->typlen, state->descending);
}

/*
 * Keeps the best limit values of a limited state, in its order, at the
 * front: the CPU top-k select (ties are equal values, so which of them stay
 * cannot be told apart).
 */
static void
keep_best(SortAggState *state)
{
	int64		keep = Min(state->limit, state->nvalues);

	if (state->generic)
	{
		/* a sort in the state's order: few values, only those that might stay */
		if (state->kept < state->nvalues)
			sort_generic(state, true);
		free_generic_values(state, keep, state->nvalues);
	}
	else if (keep > 0 && state->kept < state->nvalues && state->nvalues <= AGG_SORT_IN_PLACE_MAX)
	{
		/* a few values: sorted in place in the state's order (an insertion sort) */
		gs_error	err;

		if (gs_cpu_sort(state->type, state->values, (size_t) state->nvalues, state->descending,
						NULL, NULL, NULL, &err) != GS_OK)
			elog(ERROR, "gpusort: the CPU sort of %lld values failed: %s",
				 (long long) state->nvalues, err.message);
	}
	else if (keep > 0 && state->kept < state->nvalues)
	{
		Size		kept_bytes = (Size) keep * state->typlen;
		size_t		scratch_bytes = gs_cpu_topk_scratch_bytes(state->type, (size_t) state->nvalues,
															  (size_t) keep, false);
		char	   *best = MemoryContextAllocHuge(CurrentMemoryContext, kept_bytes + scratch_bytes);
		gs_status	status;
		gs_error	err;

		for (;;)
		{
			status = gs_cpu_topk(state->type, state->values, (size_t) state->nvalues, (size_t) keep,
								 state->descending, best, NULL, best + kept_bytes,
								 gpusort_interrupt_pending, NULL, &err);
			if (status != GS_ERR_INTERRUPTED)
				break;
			CHECK_FOR_INTERRUPTS();
		}
		/* the select fails only for invalid arguments: a bug */
		if (status != GS_OK)
			elog(ERROR, "gpusort: the CPU top-k select failed: %s", err.message);
		memcpy(state->values, best, kept_bytes);
		pfree(best);
	}
	state->nvalues = state->kept = keep;
	set_bound(state);
}

/*
 * Prunes a limited state: drops the values that cannot enter its best limit,
 * then selects the best limit when at least half of the room after the kept
 * ones is taken (fully: when more than limit remain).  Unless fully, the
 * state then holds fewer than prune_at values.
 */
static void
prune(SortAggState *state, bool fully)
{
	Assert(state->limit >= 0);
	drop_hopeless(state);
	if (fully ? state->nvalues > state->limit
		: state->nvalues - state->kept >= (state->prune_at - state->kept) / 2)
		keep_best(state);
	state->sorted = state->nvalues <= 1 || (state->nvalues == state->kept && !state->descending);
}

/*
 * Appends n packed values of the state's type; a limited state prunes as
 * they come, so that it never holds more than prune_at.
 */
static void
append_values(SortAggState *state, const char *values, int64 n)
{
	while (n > 0)
	{
		int64		take;

		if (state->nvalues >= state->prune_at)
			prune(state, false);
		take = Min(n, state->prune_at - state->nvalues);
		reserve(state, take);
		if (state->generic)
		{
			/* Datums of another state: copies of their own in this one's context */
			for (int64 i = 0; i < take; i++)
				generic_values(state)[state->nvalues + i] =
					copy_generic_value(state, ((const Datum *) values)[i]);
		}
		else
			gpusort_copy_large(state->values + state->nvalues * state->typlen, values,
							   (Size) take * state->typlen);
		state->nvalues += take;
		state->sorted = state->nvalues <= 1;
		state->nruns = 0;
		values += take * state->typlen;
		n -= take;
		CHECK_FOR_INTERRUPTS();
	}
}

void
gpusort_agg_set_limit(SortAggState *state, int32 limit)
{
	Assert(limit >= 0);
	if (state->limit >= 0)
	{
		Assert(state->limit == limit);
		return;
	}
	state->limit = limit;
	state->prune_at = Max(2 * (int64) limit,
						  state->generic ? AGG_PRUNE_MIN : AGG_PRUNE_MIN_PACKED_BYTES / state->typlen);
	state->kept = 0;
	set_bound(state);
	if (state->nvalues >= state->prune_at)
		prune(state, false);
}

static void
check_same_direction(SortAggState *state, bool descending, const char *funcname)
{
	if (state->descending != descending)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("descending must be the same for every row of %s", funcname)));
}

static MemoryContext
agg_context(FunctionCallInfo fcinfo, const char *funcname)
{
	MemoryContext aggcontext;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "%s called in non-aggregate context", funcname);
	return aggcontext;
}

SortAggState *
gpusort_agg_state(FunctionCallInfo fcinfo, const char *funcname, bool descending)
{
	MemoryContext aggcontext;
	int			kind = AggCheckCallContext(fcinfo, &aggcontext);
	bool		window = kind == AGG_CONTEXT_WINDOW;
	SortAggState *state = gpusort_agg_arg_in_memory(fcinfo);

	if (kind == 0)
		elog(ERROR, "%s called in non-aggregate context", funcname);

	if (state == NULL && !PG_ARGISNULL(0))
	{
		/*
		 * A flat gpusort_state (an aggregate's initial state, which anyone
		 * who may create an aggregate can write): the aggregate's own copy,
		 * of the type of the values it will be given
		 */
		SortAggView view = gpusort_agg_view_arg(fcinfo, 0);
		Oid			argtype = gpusort_fn_argtype(fcinfo->flinfo, 1);

		if (view.elemtype != getBaseType(argtype))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("aggregate state holds values of type %s where %s is expected",
							format_type_be(view.elemtype), format_type_be(argtype)),
					 errdetail("The aggregate's initial state was written for values of another type.")));
		if (window)
		{
			state = new_window_state(aggcontext, view.elemtype, view.collation, view.descending);
			gpusort_agg_append_view(state, &view);
		}
		else
			state = gpusort_agg_state_from_view(aggcontext, &view);
	}
	if (state == NULL && window)
		state = new_window_state(aggcontext, gpusort_fn_argtype(fcinfo->flinfo, 1), PG_GET_COLLATION(),
								 descending);
	else if (state == NULL)
		state = gpusort_agg_new_state(aggcontext, gpusort_fn_argtype(fcinfo->flinfo, 1),
									  PG_GET_COLLATION(), descending);
	else
		check_same_direction(state, descending, funcname);
	return state;
}

void
gpusort_agg_add(SortAggState *state, FunctionCallInfo fcinfo, int argno)
{
	Datum		value;
	char	   *slot;

	if (PG_ARGISNULL(argno))
	{
		if (state->nnulls == PG_INT64_MAX - state->nvalues)
			too_many_rows();
		state->nnulls++;
		clamp_capacity(state);
		return;
	}
	value = PG_GETARG_DATUM(argno);
	if (out_of_bound(state, value))
		return;
	reserve(state, 1);
	slot = state->values + state->nvalues * state->typlen;
	if (state->generic)
		generic_values(state)[state->nvalues] = copy_generic_value(state, value);
	else if (state->typbyval)
		store_att_byval(slot, value, state->typlen);
	else
		memcpy(slot, DatumGetPointer(value), state->typlen);
	state->nvalues++;
	state->sorted = state->nvalues <= 1;
	state->nruns = 0;
	if (state->nvalues >= state->prune_at)
		prune(state, false);
}

/*
 * Room for a constant argument of len bytes: the end of the state's first
 * values while they are in it and leave that room (which then holds fewer
 * values), else an allocation in the state's context.
 */
static char *
param_room(SortAggState *state, int32 len)
{
	Size		bytes = MAXALIGN(Max(len, 1));

	if (state->values == inline_values(state) && bytes <= AGG_INLINE_BYTES &&
		(Size) state->nvalues * state->typlen <= AGG_INLINE_BYTES - bytes)
	{
		state->capacity = Min(state->capacity, (int64) ((AGG_INLINE_BYTES - bytes) / state->typlen));
		return inline_values(state) + AGG_INLINE_BYTES - bytes;
	}
	return MemoryContextAlloc(state->hdr.eoh_context, bytes);
}

void
gpusort_agg_param(SortAggState *state, const void *param, int32 len,
				  const char *funcname, const char *what)
{
	if (state->param == NULL)
	{
		state->param = param_room(state, len);
		memcpy(state->param, param, len);
		state->param_len = len;
	}
	else if (state->param_len != len || memcmp(state->param, param, len) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be the same for every row of %s", what, funcname)));
}

/*
 * Merges neighbouring runs of the state until it has at most target, each
 * pass into a second buffer of the state's size (the merge cannot run in
 * place), which becomes the values.
 */
static void
merge_runs(SortAggState *state, int32 target)
{
	Size		bytes = Max((Size) state->nvalues * state->typlen, 1);

	while (state->nruns > target)
	{
		MemoryContext oldcontext = MemoryContextSwitchTo(state->hdr.eoh_context);
		char	   *merged = gpusort_alloc_large(bytes);
		int32		nruns = 0;

		MemoryContextSwitchTo(oldcontext);
		for (int32 r = 0; r < state->nruns; r += 2)
		{
			int64		start = state->run_starts[r];
			int64		middle = state->run_starts[Min(r + 1, state->nruns)];
			int64		end = state->run_starts[Min(r + 2, state->nruns)];
			gs_error	err;

			if (gs_cpu_merge(state->type, state->values + start * state->typlen, middle - start,
							 state->values + middle * state->typlen, end - middle,
							 merged + start * state->typlen, &err) != GS_OK)
				elog(ERROR, "gpusort: the CPU merge failed: %s", err.message);
			state->run_starts[nruns++] = start;
			CHECK_FOR_INTERRUPTS();
		}
		state->run_starts[nruns] = state->nvalues;
		free_values(state);
		state->values = merged;
		state->capacity = state->nvalues;
		state->nruns = nruns;
	}
	if (state->nruns <= 1)
	{
		state->nruns = 0;
		state->sorted = true;
	}
}

/*
 * Sorts the state's values once through gpusort_run, into a new buffer so
 * that a failed sort leaves the state as it was (a few values in place).
 */
static void
sort_values(SortAggState *state)
{
	GpusortJob	job;
	MemoryContext oldcontext;
	char	   *sorted;

	/*
	 * A few values (a group of a few rows, or a partial state of one):
	 * sorted in place on the CPU, where a sort through gpusort_run would
	 * cost more in its setup than in the sort
	 */
	if (!state->generic && state->nvalues <= AGG_SORT_IN_PLACE_MAX)
	{
		gs_error	err;

		if (gs_cpu_sort(state->type, state->values, (size_t) state->nvalues, false,
						NULL, NULL, NULL, &err) != GS_OK)
			elog(ERROR, "gpusort: the CPU sort of %lld values failed: %s",
				 (long long) state->nvalues, err.message);
		state->sorted = true;
		state->nruns = 0;
		return;
	}

	if (state->generic)
	{
		/* in place: a sort that fails leaves the same values in the buffer */
		sort_generic(state, false);
		state->sorted = true;
		state->nruns = 0;
		return;
	}

	oldcontext = MemoryContextSwitchTo(state->hdr.eoh_context);
	sorted = gpusort_alloc_large(Max((Size) state->nvalues * state->typlen, 1));
	MemoryContextSwitchTo(oldcontext);

	memset(&job, 0, sizeof(job));
	job.type = state->type;
	job.n = (size_t) state->nvalues;
	job.source = state->values;
	job.dest = sorted;
	gpusort_run(&job);

	free_values(state);
	state->values = sorted;
	state->capacity = state->nvalues;
	state->sorted = true;
	state->nruns = 0;
}

const char *
gpusort_agg_sorted(SortAggState *state)
{
	if (!state->sorted)
	{
		/*
		 * Runs merge on the CPU in ceil(log2 runs) passes; where the values
		 * would be sorted on a GPU, one sort of them all costs less than
		 * those passes.
		 */
		if (state->nruns >= 2 && !gpusort_gpu_likely((size_t) state->nvalues))
			merge_runs(state, 1);
		else
			sort_values(state);
		state->kept = 0;		/* a descending state's best are no longer first */
	}
	return state->values;
}

const char *
gpusort_agg_at_rank(SortAggState *state, int64 rank)
{
	Assert(rank >= 0 && rank < state->nvalues);
	if (!state->sorted && state->nruns >= 2)
	{
		size_t		at;

		StaticAssertStmt(sizeof(int64) == sizeof(size_t), "run starts are read as size_t");
		at = gs_cpu_runs_select(state->type, state->values, (const size_t *) state->run_starts,
								(size_t) state->nruns, (size_t) rank);
		if (at == SIZE_MAX)
			elog(ERROR, "gpusort: rank %lld is not in the state's runs", (long long) rank);
		return state->values + at * state->typlen;
	}
	return gpusort_agg_sorted(state) + rank * state->typlen;
}

void
gpusort_agg_first(const SortAggState *state, int64 n, char *dest)
{
	Size		bytes = (Size) n * state->typlen;
	GpusortJob	job;

	Assert(!state->generic && n >= 0 && n <= state->nvalues);
	if (n == 0)
		return;

	/* a limited state's last prune left its best values first, in its order */
	if (state->limit >= 0 && state->kept == state->nvalues)
	{
		memcpy(dest, state->values, bytes);
		return;
	}

	/*
	 * A few values (a group's after its prunes): sorted in a copy on the
	 * CPU, where a select through gpusort_run would cost more in its setup
	 */
	if (state->nvalues <= AGG_SORT_IN_PLACE_MAX)
	{
		int64		copy[AGG_SORT_IN_PLACE_MAX];
		gs_error	err;

		memcpy(copy, state->values, (Size) state->nvalues * state->typlen);
		if (gs_cpu_sort(state->type, copy, (size_t) state->nvalues, state->descending,
						NULL, NULL, NULL, &err) != GS_OK)
			elog(ERROR, "gpusort: the CPU sort of %lld values failed: %s",
				 (long long) state->nvalues, err.message);
		memcpy(dest, copy, bytes);
		return;
	}

	memset(&job, 0, sizeof(job));
	job.type = state->type;
	job.n = (size_t) state->nvalues;
	job.descending = state->descending;
	job.source = state->values;
	job.dest = dest;
	job.limit = (size_t) n;
	gpusort_run(&job);
}

void
gpusort_agg_prepare_to_leave(SortAggState *state)
{
	if (state->limit >= 0)
		prune(state, true);
	else if (!state->sorted)
		(void) gpusort_agg_sorted(state);
}

Datum
gpusort_agg_datum(const SortAggState *state, const char *p)
{
	if (state->generic)
		return state->elembyval ? *(const Datum *) p :
			datumCopy(*(const Datum *) p, false, state->elemlen);
	if (state->typbyval)
		return fetch_att(p, true, state->typlen);
	return datumCopy(PointerGetDatum(p), false, state->typlen);
}

/*
 * The element type that the final function of fcinfo answers in: its
 * result's element type, or its result type where that is no array; looked
 * up once per query rather than per group.
 */
static Oid
final_elemtype(FunctionCallInfo fcinfo)
{
	Oid		   *expected = (Oid *) fcinfo->flinfo->fn_extra;

	if (expected == NULL)
	{
		Oid			rettype = gpusort_fn_rettype(fcinfo->flinfo);
		Oid			elemtype = get_element_type(rettype);

		expected = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(Oid));
		*expected = OidIsValid(elemtype) ? elemtype : rettype;
		fcinfo->flinfo->fn_extra = expected;
	}
	return *expected;
}

void
gpusort_agg_check_type(FunctionCallInfo fcinfo, const SortAggState *state)
{
	Oid			expected = final_elemtype(fcinfo);

	if (state->elemtype != expected)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("aggregate state holds values of type %s where %s is expected",
						format_type_be(state->elemtype), format_type_be(expected)),
				 errdetail("A partial state of another aggregate was passed to this one.")));
}

void
gpusort_agg_check_no_rows(FunctionCallInfo fcinfo)
{
	Oid			type = final_elemtype(fcinfo);

	/* a call without an expression has only the declared, polymorphic type */
	if (get_typtype(type) != TYPTYPE_PSEUDO)
		gpusort_check_sortable(type);
}

/*
 * gpu_sort_agg_transfn(internal | gpusort_state, T [, descending bool]) ->
 * the state
 */
static SortAggState *
gpu_sort_agg_transfn_step(FunctionCallInfo fcinfo)
{
	SortAggState *state;
	bool		descending = false;

	/*
	 * Most rows: a by-value element appended to an ascending state with room
	 * for it.  This path makes no call, since at 10^7 rows each nanosecond
	 * per row is 10 ms of the statement.
	 */
	if (PG_NARGS() == 2 && !PG_ARGISNULL(1) && (state = gpusort_agg_arg_in_memory(fcinfo)) != NULL)
	{
		if (state->typbyval && !state->descending && state->nvalues < state->capacity)
		{
			store_att_byval(state->values + state->nvalues * state->typlen, PG_GETARG_DATUM(1),
							state->typlen);
			state->nvalues++;
			state->sorted = false;	/* two values at least */
			state->nruns = 0;
			return state;
		}
	}

	if (PG_NARGS() > 2)
	{
		if (PG_ARGISNULL(2))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("descending must not be null")));
		descending = PG_GETARG_BOOL(2);
	}

	state = gpusort_agg_state(fcinfo, "gpu_sort_agg", descending);
	gpusort_agg_add(state, fcinfo, 1);
	return state;
}

GPUSORT_AGG_TRANSITION(gpu_sort_agg_transfn)

/*
 * Errors unless state2 can be appended to state1: values of the same type,
 * and a row count (values and NULLs) that does not overflow.
 */
static void
check_combinable(const SortAggState *state1, const SortAggView *state2)
{
	int64		nvalues;
	int64		nnulls;
	int64		nrows;

	if (state1->elemtype != state2->elemtype)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("partial states of one aggregate hold values of types %s and %s",
						format_type_be(state1->elemtype), format_type_be(state2->elemtype))));
	if (pg_add_s64_overflow(state1->nvalues, state2->nvalues, &nvalues) ||
		pg_add_s64_overflow(state1->nnulls, state2->nnulls, &nnulls) ||
		pg_add_s64_overflow(nvalues, nnulls, &nrows))
		too_many_rows();
}

/* How many sorted runs the state's values are: 0 when they are not runs. */
static int32
runs_of(const SortAggState *state)
{
	if (state->nvalues == 0)
		return 0;
	if (state->sorted || state->nvalues == 1)
		return 1;
	return state->nruns;
}

/*
 * After the sorted runs of view were appended at start to a state that held
 * old_nruns runs before, records the runs of both; more than
 * GPUSORT_AGG_MAX_RUNS are merged down to half as many.
 */
static void
add_runs(SortAggState *state, int32 old_nruns, int64 start, const SortAggView *view)
{
	int32		n = old_nruns;
	int32		view_runs = view->nvalues == 0 ? 0 :
		(!view->sorted && view->nruns >= 2 ? view->nruns : 1);

	/*
	 * One run or none: sorted, and no room for run starts (a finalize step
	 * of many groups combines one partial state into most of them)
	 */
	if (old_nruns + view_runs <= 1)
	{
		state->sorted = true;
		state->nruns = 0;
		return;
	}
	if (state->run_capacity < old_nruns + view_runs + 1)
	{
		/* room for a few runs first (most groups have as many as workers), then for all */
		int32		capacity = old_nruns + view_runs + 1 <= 9 ? 9 : 2 * GPUSORT_AGG_MAX_RUNS + 1;

		if (state->run_starts == NULL)
			state->run_starts = MemoryContextAlloc(state->hdr.eoh_context, capacity * sizeof(int64));
		else
			state->run_starts = repalloc(state->run_starts, capacity * sizeof(int64));
		state->run_capacity = capacity;
	}
	if (old_nruns == 1)
		state->run_starts[0] = 0;
	if (view->nvalues > 0 && !view->sorted && view->nruns >= 2)
	{
		for (int32 r = 0; r < view->nruns; r++)
			state->run_starts[n++] = start + view->run_starts[r];
	}
	else if (view->nvalues > 0)
		state->run_starts[n++] = start;
	state->run_starts[n] = state->nvalues;

	state->sorted = n <= 1;
	state->nruns = n <= 1 ? 0 : n;
	if (state->nruns > GPUSORT_AGG_MAX_RUNS)
		merge_runs(state, GPUSORT_AGG_MAX_RUNS / 2);
}

void
gpusort_agg_append_view(SortAggState *state, const SortAggView *view)
{
	int32		old_nruns = runs_of(state);
	bool		keep_runs = !state->generic && state->limit < 0 && !view->limited &&
		(state->nvalues == 0 || old_nruns > 0) &&
		(view->nvalues <= 1 || view->sorted || view->nruns >= 2);
	int64		start = state->nvalues;

	check_same_direction(state, view->descending, "the aggregate");
	check_combinable(state, view);
	if (view->param != NULL)
		gpusort_agg_param(state, view->param, view->param_len,
						  "the aggregate", "the constant argument");
	if (view->limited)
	{
		int32		limit;

		memcpy(&limit, view->param, sizeof(limit));
		gpusort_agg_set_limit(state, limit);
	}

	append_values(state, view->values, view->nvalues);
	state->nnulls += view->nnulls;
	clamp_capacity(state);
	if (keep_runs)
		add_runs(state, old_nruns, start, view);
	if (state->limit >= 0)
		prune(state, true);
}

/*
 * gpu_sort_agg_combine(S, S) -> S for S internal or gpusort_state: appends
 * the second state to the first (gpusort_agg_append_view); NULL when both
 * are NULL.
 */
static SortAggState *
gpu_sort_agg_combine_step(FunctionCallInfo fcinfo)
{
	MemoryContext aggcontext = agg_context(fcinfo, "gpu_sort_agg_combine");
	SortAggState *state1 = gpusort_agg_arg_in_memory(fcinfo);
	SortAggView view2;

	if (PG_ARGISNULL(1))
	{
		if (state1 == NULL && !PG_ARGISNULL(0))
		{
			view2 = gpusort_agg_view_arg(fcinfo, 0);
			state1 = gpusort_agg_state_from_view(aggcontext, &view2);
		}
		return state1;
	}
	view2 = gpusort_agg_view_arg(fcinfo, 1);

	/* the second state may live in another context: copy it into ours */
	if (state1 == NULL && !PG_ARGISNULL(0))
	{
		SortAggView view1 = gpusort_agg_view_arg(fcinfo, 0);

		state1 = gpusort_agg_state_from_view(aggcontext, &view1);
	}
	if (state1 == NULL)
		state1 = gpusort_agg_new_state(aggcontext, view2.elemtype, view2.collation,
									   view2.descending);
	gpusort_agg_append_view(state1, &view2);
	return state1;
}

Datum
gpu_sort_agg_combine(PG_FUNCTION_ARGS)
{
	SortAggState *state = gpu_sort_agg_combine_step(fcinfo);

	if (state == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(state);
}

Datum
gpu_sort_agg_combine_state(PG_FUNCTION_ARGS)
{
	SortAggState *state = gpu_sort_agg_combine_step(fcinfo);

	if (state == NULL)
		PG_RETURN_NULL();
	return gpusort_agg_datum_of(state);
}

/* The bytes of a generic state's values, as datumSerialize writes them. */
static uint64
generic_values_size(const SortAggState *state)
{
	uint64		size = 0;

	for (int64 i = 0; i < state->nvalues; i++)
	{
		size += datumEstimateSpace(generic_values(state)[i], false, state->elembyval,
								   state->elemlen);
		if ((i & (GPUSORT_POLL_ITEMS - 1)) == GPUSORT_POLL_ITEMS - 1)
			CHECK_FOR_INTERRUPTS();
	}
	return size;
}

/*
 * gpu_sort_agg_serialize(internal) -> bytea; a limited state is cut to its
 * best limit values first.  A generic state's values are written with
 * datumSerialize (the parallel leader is the same build on the same
 * machine), a packed state's as they are.
 */
Datum
gpu_sort_agg_serialize(PG_FUNCTION_ARGS)
{
	SortAggState *state;
	SortAggSerialHeader header;
	Size		start;			/* where the parameter starts */
	uint64		nbytes;
	bytea	   *result;

	(void) agg_context(fcinfo, "gpu_sort_agg_serialize");
	state = (SortAggState *) PG_GETARG_POINTER(0);
	if (state->limit >= 0)
		prune(state, true);

	start = sizeof(header) + (state->generic ? sizeof(Oid) : 0);
	nbytes = VARHDRSZ + start + state->param_len +
		(state->generic ? generic_values_size(state) : (uint64) state->nvalues * state->typlen);
	if (!AllocSizeIsValid(nbytes))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpu_sort_agg partial state is too large to pass to the parallel leader"),
				 errdetail("A parallel worker gathered %lld values, more than 1 GB.",
						   (long long) state->nvalues),
				 errhint("Run the query without parallel workers: SET max_parallel_workers_per_gather = 0.")));

	memset(&header, 0, sizeof(header));
	header.elemtype = state->elemtype;
	header.descending = state->descending;
	header.nvalues = state->nvalues;
	header.nnulls = state->nnulls;
	header.param_len = state->param != NULL ? state->param_len : -1;
	header.limited = state->limit >= 0;

	result = (bytea *) gpusort_alloc_large(nbytes);
	SET_VARSIZE(result, nbytes);
	memcpy(VARDATA(result), &header, sizeof(header));
	if (state->generic)
		memcpy(VARDATA(result) + sizeof(header), &state->collation, sizeof(Oid));
	if (state->param != NULL)
		memcpy(VARDATA(result) + start, state->param, state->param_len);
	if (state->generic)
	{
		char	   *p = VARDATA(result) + start + state->param_len;

		for (int64 i = 0; i < state->nvalues; i++)
		{
			datumSerialize(generic_values(state)[i], false, state->elembyval, state->elemlen, &p);
			if ((i & (GPUSORT_POLL_ITEMS - 1)) == GPUSORT_POLL_ITEMS - 1)
				CHECK_FOR_INTERRUPTS();
		}
		Assert(p == (char *) result + nbytes);
	}
	else if (state->nvalues > 0)
		gpusort_copy_large(VARDATA(result) + start + state->param_len, state->values,
						   (Size) state->nvalues * state->typlen);
	PG_RETURN_BYTEA_P(result);
}

/* The error for a malformed partial state; the arguments are errdetail's. */
#define invalid_state(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION), \
			 errmsg("invalid gpu_sort_agg partial state"), \
			 errdetail(__VA_ARGS__)))

/* Errors unless the parameter of param_len bytes at param is a limit: an int32, not negative. */
static void
check_limit(const char *param, int32 param_len)
{
	int32		limit;

	if (param_len < 0)
		invalid_state("It is limited but has no limit.");
	if (param_len != sizeof(limit))
		invalid_state("It is limited, but its limit has %d bytes.", param_len);
	memcpy(&limit, param, sizeof(limit));
	if (limit < 0)
		invalid_state("It is limited to %d values.", limit);
}

/*
 * The header of a serialized state of datalen bytes, checked against that
 * length with divisions (never a product or sum that could wrap) and for
 * counts the state can hold; the element type is checked by new_state.
 */
static SortAggSerialHeader
read_header(const char *data, Size datalen, Size *start, Oid *collation)
{
	SortAggSerialHeader header;
	Size		rest;
	int16		typlen;
	gs_type		type;
	bool		generic;

	if (datalen < sizeof(header))
		invalid_state("The state has %zu bytes, fewer than its %zu-byte header.", datalen, sizeof(header));
	memcpy(&header, data, sizeof(header));
	rest = datalen - sizeof(header);
	*start = sizeof(header);
	*collation = InvalidOid;

	if (header.descending != 0 && header.descending != 1)
		invalid_state("Its descending flag is %d.", header.descending);
	if (header.limited != 0 && header.limited != 1)
		invalid_state("Its limited flag is %d.", header.limited);
	typlen = get_typlen(header.elemtype);
	if (typlen == 0)
		invalid_state("Its element type %u does not exist.", header.elemtype);
	generic = !gpusort_sorts_type(header.elemtype, &type);
	if (generic)
	{
		gpusort_check_sortable(header.elemtype);
		if (rest < sizeof(Oid))
			invalid_state("It has no collation.");
		memcpy(collation, data + sizeof(header), sizeof(Oid));
		*start += sizeof(Oid);
		rest -= sizeof(Oid);
	}
	if (header.nvalues < 0 || header.nnulls < 0)
		invalid_state("It counts %lld values and %lld NULLs.",
					  (long long) header.nvalues, (long long) header.nnulls);
	if (header.param_len < -1 || (Size) Max(header.param_len, 0) > rest)
		invalid_state("Its constant argument of %d bytes does not fit in its %zu bytes after the header.",
					  header.param_len, rest);
	if (header.limited)
		check_limit(data + *start, header.param_len);
	rest -= Max(header.param_len, 0);

	/* a generic state's values are checked as they are read */
	if (!generic && (rest % typlen != 0 || rest / typlen != (uint64) header.nvalues))
		invalid_state("It has %zu bytes of values for %lld values of %d bytes.",
					  rest, (long long) header.nvalues, typlen);
	if (header.nnulls > PG_INT64_MAX - header.nvalues)
		invalid_state("Its %lld values and %lld NULLs overflow a count.",
					  (long long) header.nvalues, (long long) header.nnulls);
	return header;
}

/*
 * Whether the size bytes at v can be a by-reference value of the state's
 * type as gpu_sort_agg_serialize writes them: as long as the type's length,
 * a detoasted varlena of that size, or a C string that ends there.
 */
static bool
valid_serialized_value(const SortAggState *state, const char *v, int size)
{
	if (state->elemlen > 0)
		return size == state->elemlen;
	if (state->elemlen == -1)
	{
		int32		header;

		if (size < VARHDRSZ)
			return false;
		memcpy(&header, v, sizeof(header));
		return VARATT_IS_4B_U(&header) && VARSIZE(&header) == (Size) size;
	}
	return size >= 1 && memchr(v, '\0', size) == v + size - 1;
}

/*
 * Appends the nvalues values of a generic state that datumSerialize wrote
 * in the len bytes at data, each checked to lie within them.
 */
static void
append_serialized_generic(SortAggState *state, const char *data, Size len, int64 nvalues)
{
	const char *end = data + len;
	char	   *p = (char *) data;
	Datum	   *values = palloc(Max(Min(nvalues, (int64) 1024), 1) * sizeof(Datum));
	int64		nbatch = 0;

	for (int64 i = 0; i < nvalues; i++)
	{
		int			size;
		bool		isnull;

		if (end - p < (ptrdiff_t) sizeof(int))
			invalid_state("Its value %lld lies past its end.", (long long) i);
		memcpy(&size, p, sizeof(int));
		if (size == -1 ? !state->elembyval || (Size) (end - p) - sizeof(int) < sizeof(Datum) :
			size < 0 || state->elembyval || (Size) (end - p) - sizeof(int) < (Size) size)
			invalid_state("Its value %lld has a header of %d.", (long long) i, size);
		if (size >= 0 && !valid_serialized_value(state, p + sizeof(int), size))
			invalid_state("Its value %lld of %d bytes is not a value of type %s.",
						  (long long) i, size, format_type_be(state->elemtype));
		values[nbatch++] = datumRestore(&p, &isnull);
		if (nbatch == 1024 || i == nvalues - 1)
		{
			append_values(state, (const char *) values, nbatch);
			if (!state->elembyval)
				for (int64 j = 0; j < nbatch; j++)
					pfree(DatumGetPointer(values[j]));
			nbatch = 0;
		}
	}
	if (p != end)
		invalid_state("It has %zu bytes after its values.", (Size) (end - p));
	pfree(values);
}

/*
 * gpu_sort_agg_deserialize(bytea, internal) -> internal
 */
Datum
gpu_sort_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *serial;
	const char *data;
	SortAggSerialHeader header;
	SortAggState *state;
	int32		param_len;
	Size		start;
	Oid			collation;

	/*
	 * In the memory of the call (the input tuple's), as PostgreSQL's own
	 * deserialize functions: the combine function copies the state into the
	 * aggregate's memory, so nothing of it outlives the tuple.
	 */
	(void) agg_context(fcinfo, "gpu_sort_agg_deserialize");
	serial = PG_GETARG_BYTEA_PP(0);
	data = VARDATA_ANY(serial);
	header = read_header(data, VARSIZE_ANY_EXHDR(serial), &start, &collation);
	state = gpusort_agg_new_state(CurrentMemoryContext, header.elemtype, collation,
								  header.descending != 0);
	param_len = Max(header.param_len, 0);

	if (header.param_len >= 0)
		gpusort_agg_param(state, data + start, header.param_len,
						  "the aggregate", "the constant argument");
	if (header.limited)
	{
		int32		limit;

		memcpy(&limit, data + start, sizeof(limit));
		gpusort_agg_set_limit(state, limit);
	}
	if (state->generic)
		append_serialized_generic(state, data + start + param_len,
								  VARSIZE_ANY_EXHDR(serial) - start - param_len,
								  header.nvalues);
	else
		append_values(state, data + start + param_len, header.nvalues);
	state->nnulls = header.nnulls;
	clamp_capacity(state);
	PG_RETURN_POINTER(state);
}

ArrayType *
gpusort_agg_generic_array(SortAggState *state, int64 ntake, const char *what)
{
	Datum	   *values;
	ArrayType  *result;

	Assert(state->generic);
	(void) gpusort_agg_sorted(state);
	values = generic_values(state);
	if (state->descending && state->nvalues > 1)
	{
		values = MemoryContextAllocHuge(CurrentMemoryContext, (Size) state->nvalues * sizeof(Datum));
		for (int64 i = 0; i < state->nvalues; i++)
			values[i] = generic_values(state)[state->nvalues - 1 - i];
	}
	result = gpusort_any_result(state->elemtype, values, state->nvalues, state->nnulls,
								state->descending, ntake, what);
	if (values != generic_values(state))
		pfree(values);
	return result;
}

/*
 * Copies the state's n sorted values into dest, in reverse when descending:
 * the descending order is the exact reverse of the ascending one.
 */
static void
copy_sorted(const SortAggState *state, char *dest)
{
	const char *src = state->values;
	int16		typlen = state->typlen;

	if (!state->descending)
	{
		gpusort_copy_large(dest, src, (Size) state->nvalues * typlen);
		return;
	}
	for (int64 i = 0; i < state->nvalues; i++)
	{
		memcpy(dest + i * typlen, src + (state->nvalues - 1 - i) * typlen, typlen);
		if ((i & (GPUSORT_POLL_ITEMS - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * gpu_sort_agg_final(internal | gpusort_state) -> T[], declared once per
 * element type.
 *
 * Unsorted values are sorted from the state into the result's data area, so
 * the state is left as it was (the final function may run more than once on
 * it); sorted values are copied.
 */
Datum
gpu_sort_agg_final(PG_FUNCTION_ARGS)
{
	SortAggState *state;
	ArrayType  *result;
	GpusortJob	job;

	(void) agg_context(fcinfo, "gpu_sort_agg_final");
	state = gpusort_agg_arg(fcinfo, 0);
	if (state == NULL)
	{
		gpusort_agg_check_no_rows(fcinfo);
		PG_RETURN_NULL();		/* no rows, as array_agg */
	}
	gpusort_agg_check_type(fcinfo, state);
	if (state->generic)
		PG_RETURN_ARRAYTYPE_P(gpusort_agg_generic_array(state, state->nvalues + state->nnulls,
														"gpu_sort_agg"));

	/* array_agg's NULL placement: last ascending, first descending */
	result = gpusort_new_array(state->elemtype, state->typlen, state->nvalues,
							   state->nnulls, state->descending, "gpu_sort_agg");

	/*
	 * Sorted runs merge in the state on the CPU; where the sort would run on
	 * a GPU, it sorts them into the result directly, as unsorted values.
	 */
	if (state->nruns >= 2 && !gpusort_gpu_likely((size_t) state->nvalues))
		(void) gpusort_agg_sorted(state);
	if (state->sorted || state->nvalues <= 1)
	{
		copy_sorted(state, ARR_DATA_PTR(result));
		PG_RETURN_ARRAYTYPE_P(result);
	}

	memset(&job, 0, sizeof(job));
	job.type = state->type;
	job.n = (size_t) state->nvalues;
	job.descending = state->descending;
	job.source = state->values;
	job.dest = ARR_DATA_PTR(result);
	gpusort_run(&job);

	PG_RETURN_ARRAYTYPE_P(result);
}
