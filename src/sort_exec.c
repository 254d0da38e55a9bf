/*
 * sort_exec.c: the executor side of gpusort's sort node (sort_plan.c says
 * where the planner puts it).
 *
 * The executor reads the child's tuples into memory, keeps each key as an
 * unsigned ordered value (keys.h's transforms, -0 and NaN payloads made equal
 * as PostgreSQL's comparisons have them, DESC inverted), then packs the keys
 * of a row into one 32-, 64- or 128-bit word, first key in the high bits, a
 * NULL bit above a key's value only where that key had NULLs.  One stable
 * argsort through gpusort_run orders words of up to 64 bits; 128-bit words
 * take two (low word, then high word: LSD order).  Tuples come back in that
 * order, ties in input order.  Where the words end with a string's first
 * bytes, rows tied on them are ordered by rounds of the same word sort over
 * the string's next bytes, MSD radix style; rows whose strings are equal are
 * then ordered by the later keys' bits in the same way, and only what no
 * bits order goes to PostgreSQL's comparators.  Its arrays grow within
 * work_mem; when the input outgrows that it hands what it holds to a
 * tuplesort with the same keys and goes on as Sort would.  Under a Gather
 * Merge, EXPLAIN ANALYZE shows each worker's figures as well as the
 * leader's.
 */
#include "postgres.h"

#include <math.h>
#ifdef __linux__
#include <sys/statvfs.h>
#endif

#include "access/nbtree.h"
#include "access/parallel.h"
#include "common/int.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#endif
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "port/atomics.h"
#include "port/pg_bitutils.h"
#include "port/pg_bswap.h"
#include "portability/instr_time.h"
#include "storage/barrier.h"
#include "storage/dsm_impl.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/builtins.h"
#include "utils/dsa.h"
#include "utils/ruleutils.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"
#if PG_VERSION_NUM >= 170000
#include "utils/wait_classes.h"
#else
#include "utils/wait_event.h"
#endif


#include "gpusort_pg.h"
#include "keys.h"
#include "sort_node.h"

typedef struct SortKeyInfo
{
	AttrNumber	column;
	Oid			type;
	Oid			sortop;
	Oid			collation;
	bool		descending;
	bool		nulls_first;
	SortKeyBits bits;			/* the leading bits it gives (sort_keys.c) */
	SortSupportData abbrev;		/* an abbreviated key's conversion */
	SortSupportData full;		/* PostgreSQL's comparator, for the tie pass */
	bool		in_bits;		/* its column is kept as its bits (bits_column) */
	SortSupportData bits_cmp;	/* the comparator of those bits, in full's place */
	SortKeyXfrm *xfrm;			/* a byte string's conversion (bits.byte_string) */
	bool		batched;		/* read_input batches its strings (batched_key) */
#ifdef GS_INJECTION_POINTS
	bool		invert_xfrm;	/* tests: its bits inverted, an order the check refutes */
#endif
} SortKeyInfo;

/*
 * A key's strings read whose words wait for their transformation: under an
 * ICU collation or a libc collation other than C, read_input copies each
 * row's string here and transforms a batch at a time on several threads
 * (sort_key_xfrm_words), then writes the words into the rows' values.
 */
typedef struct XfrmBatch
{
	int64		n;
	int64		capacity;		/* strings the arrays below hold */
	uint32	   *row;			/* each string's row */
	uint64	   *offset;			/* its place in data, a NUL after it */
	uint32	   *len;
	uint64	   *words;
	char	   *data;
	Size		size;
	Size		room;
} XfrmBatch;

/* A batch's strings and bytes, transformed when either is reached. */
#define XFRM_BATCH_ROWS 65536
#define XFRM_BATCH_BYTES ((Size) 8 * 1024 * 1024)

/*
 * Where each key's bits go in a row's word: keys 0 to nkeys - 1, key k's
 * field (its value and NULL bit) shifted right by drop[k] (the bits past
 * SORT_NODE_MAX_BITS) and then left by shift[k].
 */
typedef struct PackLayout
{
	int			nkeys;
	int			shift[SORT_NODE_MAX_BITS];
	int			drop[SORT_NODE_MAX_BITS];
} PackLayout;

/*
 * What EXPLAIN ANALYZE shows of one sort: the node's own, or a parallel
 * worker's, which the worker writes into shared memory.
 */
typedef struct SortNodeFigures
{
	bool		done;			/* the sort is done (a worker's: written) */
	bool		tuplesort;		/* past work_mem: tuplesort's figures */
	bool		tuplesort_ties; /* ... not past work_mem: the leading key bits
								 * tied too often to prune by */
	int			device;			/* -1 the CPU */
	int			key_bits;
	int			key_threads;	/* the most threads that made the strings' keys */
	int64		rows;			/* read from the input */
	int64		bound;			/* the rows kept under a LIMIT, or -1 */
	bool		bound_peers;	/* a run condition's: bound is a rank, the
								 * rows of rank up to it and the next peer
								 * group are kept */
	bool		per_partition;	/* ... in each partition */
	bool		prefix_bound;	/* a LIMIT's rows pruned by the keys' leading
								 * bits: their ties are kept too */
	bool		handed;			/* a worker's: its rows went to the leader */
	int64		from_workers;	/* the leader's: the rows its workers handed it */
	int64		kept;			/* the rows kept, to return; under a LIMIT
								 * pruned by leading bits, the rows held
								 * when the input ended, which the sort
								 * ordered */
	int64		memory;			/* bytes */
	TuplesortInstrumentation tuplesort_stats;
	double		extract_ms;
	double		sort_ms;
	double		emit_ms;
} SortNodeFigures;

/*
 * The node's part of the parallel query's shared memory: the workers'
 * figures, one entry per planned worker (none when EXPLAIN ANALYZE is not
 * running), which the leader copies out before the shared memory goes; and,
 * where the leader sorts every participant's rows (together), the barrier
 * they read their input under and, after the figures, one entry per planned
 * worker for the rows it hands the leader (read_together).
 */
typedef struct SortNodeShared
{
	int			nworkers;
	int			nhanded;
	bool		together;
	Barrier		reading;
	pg_atomic_uint32 workers_read;	/* workers done reading (tests) */
	pg_atomic_uint64 handing;	/* bytes the workers are handing */
	SortNodeFigures workers[FLEXIBLE_ARRAY_MEMBER];
} SortNodeShared;

/*
 * The rows a worker hands the leader, in one chunk of the query's DSA area:
 * this header, a flag per key (its NULL flags follow, its partial flags
 * follow) and per column (its NULL flags follow), then per key its ordered
 * values and the flags, and then per column its values and NULL flags
 * (columnar) or the tuples one after another, each MAXALIGNed.
 */
typedef struct HandedRows
{
	int64		nrows;
	Size		bytes;
} HandedRows;

/* a chunk of HandedRows, read: the arrays in it */
typedef struct HandedView
{
	int64		nrows;
	uint64	  **values;
	uint8	  **nulls;
	uint8	  **partial;
	Datum	  **cols;
	bool	  **colnulls;
	char	   *tuples;
} HandedView;

typedef struct SortNodeState
{
	CustomScanState css;
	int			nkeys;
	SortKeyInfo *keys;
	int			nvalued;		/* the leading keys whose bits are kept: up to
								 * the first without bits or the first inexact */
	MemoryContext convert_context;	/* abbreviated keys' conversions */
	bool		keys_prepared;	/* prepare_keys has run */
	bool		check_order;	/* some key's bits are not trusted: the
								 * sorted rows are checked with the
								 * comparators */
	bool		random_access;	/* backward scans, mark/restore or rewinds asked for */
	TupleTableSlot *sorted_slot;	/* minimal tuples: the rows, the tuplesort's */
	TupleTableSlot *out_slot;	/* the sorted rows: sorted_slot, or the
								 * (virtual) scan slot for the columns */
	MemoryContext tuple_context;	/* the keys, the permutation, the sorted tuples */
	MemoryContext row_context;	/* the tuples as read, in tuple_context (NULL:
								 * none yet, or gone at a reset) */
	int64		row_bytes;		/* their lengths, each rounded up to 8 as
								 * gs_gather_records places them, handed
								 * ones too */
	int64		row_space;		/* the memory of row_context's tuples */
	int64		mem_peak;		/* the most mem_used was while both copies of
								 * the rows were held (gather_tuples) */

	bool		sort_done;

	/* in memory */
	int64		ntuples;
	int64		capacity;
	MinimalTuple *tuples;		/* whole rows (when not columnar) */
	bool		columnar;		/* every column is by value, or a numeric key
								 * kept as its bits: kept as arrays */
	int			ncols;
	int		   *bits_column;	/* per column: the key whose SORT_KEY_NUMERIC
								 * bits it is kept as (columnar), rebuilt as
								 * it is returned; -1 for the value itself */
	uint64	   *row_bits;		/* read_input's: a row's bits of those columns */
	char	   *rebuilt;		/* per column: the last value rebuilt */
	Datum	  **cols;			/* per column: each row's value */
	bool	  **colnulls;		/* per column: NULL flags, allocated at its first NULL */
	uint64	  **values;			/* per key: the ordered value of each row */
	uint8	  **nulls;			/* per key: NULL flags, allocated at its first NULL */
	uint8	  **partial;		/* per string key of its first bytes: rows whose
								 * string is longer than those, allocated at the
								 * first; a row's bits of the later keys count
								 * only where its string is whole */
	uint32	   *perm;			/* the sorted order */
	struct XfrmBatch **batches; /* per key: strings read whose words wait
								 * for their transformation (NULL: none) */
	int64		mem_used;
	int64		current;		/* the next row to return going forward */
	bool		eof_reached;
	int64		mark_current;
	bool		mark_eof;

	bool		grown_to_limit; /* the row arrays' last growth is done */
	int64		rows_in;		/* rows read from the input */
	int64		rows_held;		/* rows in memory when the input ended */

	/*
	 * Under a Limit: the first bound rows are kept (-1: all).  Where the keys
	 * pack into 128 bits with a NULL bit each (or without, while they have no
	 * NULL: prune_no_nulls), the rows read are pruned to the
	 * bound's best whenever prune_at are held, and after the first pruning a
	 * row whose word is not below the bound's last (threshold) is passed
	 * over as it is read.  Where they do not, but the first key has bits
	 * whose order is trusted (prune_prefix), the words are the keys' leading
	 * 64 bits: a pruning keeps the rows whose word is at most the bound's
	 * last, and a row read after it is passed over only where its word is
	 * above that word.
	 *
	 * Under a WindowAgg's run condition (bound_peers, sort_node.h's
	 * PRIV_RANK_BOUND): the rows of rank up to bound and the peer group after
	 * them are kept; a pruning keeps those, and the threshold is the word of
	 * that next group, which the rows read next must not be above.
	 */
	ExprState  *count_expr;
	ExprState  *offset_expr;
	int			nrank;			/* the run condition's bounds */
	ExprState **rank_exprs;
	Oid		   *rank_types;
	int		   *rank_adjust;
	bool		bound_peers;
	int			part_keys;		/* under bound_peers: the leading keys that
								 * are the WindowAgg's partition; the bound
								 * then holds in each partition */
	int64		bound;
	bool		pruning;
	bool		prune_prefix;	/* under a LIMIT, the pruning words are the
								 * keys' leading bits only: a row whose word
								 * equals the bound's last is kept too */
	bool		prune_no_nulls; /* the pruning words have no NULL bits (the
								 * keys fill the words without them): the
								 * pruning ends at the first NULL of a key */
	int			prune_bits;		/* the pruning words' width, up to 128 */
	PackLayout	prune_layout;
	int64		prune_at;
	bool		have_threshold;
	uint128		threshold;

	/*
	 * The ranking functions of the WindowAggs the node took (PRIV_WINDOW):
	 * function w (a WINDOW_*) is scan column ncols + w, its partitions runs
	 * of the first win_part[w] keys, its peers runs of the first
	 * win_keys[w].  win_diff holds, for each sorted row in memory, the
	 * first of the first win_max_keys keys on which it differs from the row
	 * before (win_max_keys for none, 0 for the first row); from a
	 * tuplesort, each row is compared with the one before (win_prev).
	 */
	int			nwin;
	int		   *win_kinds;
	int		   *win_part;
	int		   *win_keys;
	int		   *win_arg;		/* ntile's */
	int			win_max_keys;
	bool		win_lookahead;	/* some function needs its partition's size
								 * or its peers' count (percent_rank,
								 * cume_dist, ntile): the tuplesort then
								 * allows going back */
	TupleTableSlot *win_ahead;	/* the rows read ahead, from a tuplesort */
	uint8	   *win_diff;
	TupleTableSlot *win_prev;	/* the row returned before, from a tuplesort */
	TupleTableSlot *row_slot;	/* a row's columns, before the functions' */
	bool		win_started;	/* a row has been returned since the scan began */
	int64	   *win_row;		/* each function's last row_number, rank and dense_rank */
	int64	   *win_rank;
	int64	   *win_dense;
	int64	   *win_total;		/* ... its partition's rows */
	int64	   *win_peer_end;	/* ... the row_number of its peers' last */

	/* past work_mem */
	Tuplesortstate *tuplesort;
	bool		tuplesort_ties; /* ... or a LIMIT's rows whose leading key
								 * bits tie too often to prune by
								 * (prune_rows): Sort's bounded heap */

	/* for EXPLAIN ANALYZE */
	int			device;			/* -1 the CPU */
	int			key_bits;
	int			key_threads;	/* the most threads a batch of strings' keys took */
	double		extract_ms;
	double		sort_ms;
	double		emit_ms;

	/* under a Gather Merge, with EXPLAIN ANALYZE */
	SortNodeShared *shared;		/* the shared figures, while attached */
	SortNodeShared *worker_figures; /* the leader's copy of them */
	bool		am_worker;

	/*
	 * Under a Gather Merge where every key's bits are exact: the workers
	 * hand their rows to the leader, which sorts them with its own
	 * (read_together).
	 */
	bool		together;
	dsa_area   *area;			/* the query's DSA area (the leader's) */
	bool		handed;			/* a worker's rows went to the leader */
	int64		from_workers;	/* the leader's: rows the workers handed */
} SortNodeState;

static Node *create_sort_state(CustomScan *cscan);
static void begin_sort(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_sort(CustomScanState *node);
static void end_sort(CustomScanState *node);
static void rescan_sort(CustomScanState *node);
static void mark_sort(CustomScanState *node);
static void restore_sort(CustomScanState *node);
static void explain_sort(CustomScanState *node, List *ancestors, ExplainState *es);
static Size estimate_dsm_sort(CustomScanState *node, ParallelContext *pcxt);
static void init_dsm_sort(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void reinit_dsm_sort(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void init_worker_sort(CustomScanState *node, shm_toc *toc, void *coordinate);
static void shutdown_sort(CustomScanState *node);
static void publish_figures(SortNodeState *state);
static bool numeric_bits_column(SortNodeState *state, TupleDesc desc, int c);
static int	compare_bits(Datum a, Datum b, SortSupport ssup);

const CustomScanMethods gpusort_sort_scan_methods = {
	.CustomName = SORT_NODE_NAME,
	.CreateCustomScanState = create_sort_state,
};

static const CustomExecMethods sort_exec_methods = {
	.CustomName = SORT_NODE_NAME,
	.BeginCustomScan = begin_sort,
	.ExecCustomScan = exec_sort,
	.EndCustomScan = end_sort,
	.ReScanCustomScan = rescan_sort,
	.MarkPosCustomScan = mark_sort,
	.RestrPosCustomScan = restore_sort,
	.EstimateDSMCustomScan = estimate_dsm_sort,
	.InitializeDSMCustomScan = init_dsm_sort,
	.ReInitializeDSMCustomScan = reinit_dsm_sort,
	.InitializeWorkerCustomScan = init_worker_sort,
	.ShutdownCustomScan = shutdown_sort,
	.ExplainCustomScan = explain_sort,
};

/* ----------------------------------------------------------------
 * Execution
 * ---------------------------------------------------------------- */

static Node *
create_sort_state(CustomScan *cscan)
{
	SortNodeState *state = (SortNodeState *) newNode(sizeof(SortNodeState), T_CustomScanState);
	List	   *private = cscan->custom_private;
	List	   *columns = (List *) list_nth(private, PRIV_COLUMNS);
	int			i = 0;
	ListCell   *lc;

	state->css.methods = &sort_exec_methods;
	state->nkeys = list_length(columns);
	state->keys = (SortKeyInfo *) palloc0(sizeof(SortKeyInfo) * state->nkeys);
	foreach(lc, columns)
	{
		SortKeyInfo *key = &state->keys[i];
		int			flags = list_nth_int((List *) list_nth(private, PRIV_FLAGS), i);

		key->column = (AttrNumber) lfirst_int(lc);
		key->type = list_nth_oid((List *) list_nth(private, PRIV_TYPES), i);
		key->sortop = list_nth_oid((List *) list_nth(private, PRIV_OPERATORS), i);
		key->collation = list_nth_oid((List *) list_nth(private, PRIV_COLLATIONS), i);
		key->descending = (flags & KEY_DESC) != 0;
		key->nulls_first = (flags & KEY_NULLS_FIRST) != 0;
		i++;
	}
	if (list_length(private) > PRIV_WINDOW)
	{
		List	   *window = (List *) list_nth(private, PRIV_WINDOW);

		state->nwin = list_length(window) / 4;
		state->win_kinds = palloc(sizeof(int) * state->nwin);
		state->win_part = palloc(sizeof(int) * state->nwin);
		state->win_keys = palloc(sizeof(int) * state->nwin);
		state->win_arg = palloc(sizeof(int) * state->nwin);
		state->win_row = palloc0(sizeof(int64) * state->nwin);
		state->win_rank = palloc0(sizeof(int64) * state->nwin);
		state->win_dense = palloc0(sizeof(int64) * state->nwin);
		state->win_total = palloc0(sizeof(int64) * state->nwin);
		state->win_peer_end = palloc0(sizeof(int64) * state->nwin);
		for (int w = 0; w < state->nwin; w++)
		{
			state->win_kinds[w] = list_nth_int(window, 4 * w);
			state->win_part[w] = list_nth_int(window, 4 * w + 1);
			state->win_keys[w] = list_nth_int(window, 4 * w + 2);
			state->win_arg[w] = list_nth_int(window, 4 * w + 3);
			state->win_max_keys = Max(state->win_max_keys, state->win_keys[w]);
			if (state->win_kinds[w] >= WINDOW_PERCENT_RANK)
				state->win_lookahead = true;
		}
	}
	state->device = -1;
	return (Node *) state;
}

static void
begin_sort(CustomScanState *node, EState *estate, int eflags)
{
	SortNodeState *state = (SortNodeState *) node;
	Plan	   *child = outerPlan(node->ss.ps.plan);
	TupleDesc	desc;

	state->random_access = (eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;
	/* as Sort: the child is read once, forwards */
	outerPlanState(node) = ExecInitNode(child, estate,
										eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
	desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	if (state->nwin > 0)
	{
		/* the input's columns: the scan tuple's without the functions' */
		List	   *tlist = ((CustomScan *) node->ss.ps.plan)->custom_scan_tlist;

		desc = ExecTypeFromTL(list_truncate(list_copy(tlist), list_length(tlist) - state->nwin));
	}
	state->sorted_slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);

	/*
	 * Rows of by-value columns only (the usual ORDER BY over numbers and
	 * times) are kept as one array per column, not as tuples: a third of the
	 * memory, and no tuple to form or deform.
	 */
	state->columnar = desc->natts > 0;
	state->bits_column = palloc(sizeof(int) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		state->bits_column[i] = -1;
		if (TupleDescAttr(desc, i)->attisdropped ||
			(!TupleDescAttr(desc, i)->attbyval && !numeric_bits_column(state, desc, i)))
			state->columnar = false;
	}
	state->ncols = desc->natts;
	if (state->columnar)
	{
		state->row_bits = palloc(sizeof(uint64) * desc->natts);
		state->rebuilt = palloc(SORT_KEY_NUMERIC_DATUM_MAX * desc->natts);
	}
	for (int k = 0; k < state->nkeys; k++)
		state->keys[k].in_bits = state->columnar && state->bits_column[state->keys[k].column - 1] >= 0;
	if (state->nwin > 0)
	{
		/*
		 * In a WindowAgg's place: each row's columns and its functions'
		 * values into the scan slot, and the WindowAgg's target list over
		 * them (the projection ExecInitCustomScan set up).
		 */
		state->row_slot = state->columnar ? ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual) : NULL;
		state->out_slot = state->columnar ? state->row_slot : state->sorted_slot;
		state->win_prev = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);
		state->win_ahead = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);
	}
	else
	{
		state->out_slot = state->columnar ? node->ss.ss_ScanTupleSlot : state->sorted_slot;

		/*
		 * The node returns its input's tuples as they are, out_slot itself
		 * (plan_sort_path says why not through the target list): no
		 * projection, and its parent's expressions must know that slot's
		 * kind to deform it.
		 */
		if (list_length(node->ss.ps.plan->targetlist) != desc->natts)
			elog(ERROR, "gpusort sort node: %d output columns for %d input columns",
				 list_length(node->ss.ps.plan->targetlist), desc->natts);
		node->ss.ps.ps_ProjInfo = NULL;
		node->ss.ps.resultops = state->out_slot->tts_ops;
		node->ss.ps.resultopsfixed = true;
		node->ss.ps.resultopsset = true;
	}
	state->tuple_context = AllocSetContextCreate(CurrentMemoryContext, "gpusort sort node",
												 ALLOCSET_DEFAULT_SIZES);
	state->convert_context = AllocSetContextCreate(CurrentMemoryContext, "gpusort key conversion",
												   ALLOCSET_DEFAULT_SIZES);

	state->bound = -1;
	if (list_length(((CustomScan *) node->ss.ps.plan)->custom_private) > PRIV_RANK_BOUND &&
		list_nth(((CustomScan *) node->ss.ps.plan)->custom_private, PRIV_RANK_BOUND) != NIL)
	{
		List	   *exprs = ((CustomScan *) node->ss.ps.plan)->custom_exprs;
		List	   *adjust = (List *) list_nth(((CustomScan *) node->ss.ps.plan)->custom_private,
											   PRIV_RANK_BOUND);
		int			i = 0;
		ListCell   *lc;

		state->nrank = list_length(exprs);
		state->rank_exprs = palloc(sizeof(ExprState *) * state->nrank);
		state->rank_types = palloc(sizeof(Oid) * state->nrank);
		state->rank_adjust = palloc(sizeof(int) * state->nrank);
		foreach(lc, exprs)
		{
			state->rank_exprs[i] = ExecInitExpr((Expr *) lfirst(lc), &node->ss.ps);
			state->rank_types[i] = exprType((Node *) lfirst(lc));
			state->rank_adjust[i] = list_nth_int(adjust, i);
			i++;
		}
		state->bound_peers = true;
		state->part_keys = linitial_int((List *) list_nth(((CustomScan *) node->ss.ps.plan)->custom_private,
														  PRIV_PART_KEYS));
	}
	else if (((CustomScan *) node->ss.ps.plan)->custom_exprs != NIL)
	{
		List	   *exprs = ((CustomScan *) node->ss.ps.plan)->custom_exprs;

		state->count_expr = ExecInitExpr((Expr *) linitial(exprs), &node->ss.ps);
		state->offset_expr = ExecInitExpr((Expr *) lsecond(exprs), &node->ss.ps);
	}
}

/*
 * The run condition's rank bound: the least k (plus its adjustment) of its
 * conditions, at least 0.  A NULL k makes the condition false at the first
 * row, as a k below 1 does: the WindowAgg reads that row's peer group only.
 */
static int64
current_rank_bound(SortNodeState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	int64		bound = PG_INT64_MAX;

	for (int i = 0; i < state->nrank; i++)
	{
		bool		isnull;
		Datum		value = ExecEvalExprSwitchContext(state->rank_exprs[i], econtext, &isnull);
		int64		k;

		if (isnull)
			k = 0;
		else if (state->rank_types[i] == INT2OID)
			k = DatumGetInt16(value);
		else if (state->rank_types[i] == INT4OID)
			k = DatumGetInt32(value);
		else
			k = DatumGetInt64(value);
		/* k - 1 for < k, which k > 0 keeps from overflowing */
		k = k > 0 ? k + state->rank_adjust[i] : 0;
		bound = Min(bound, k);
	}
	return bound;
}

/*
 * The Limit's count + offset (as its recompute_limits reads them), or -1 for
 * no bound: no Limit, a NULL count, or a sum past int64.
 */
static int64
current_bound(SortNodeState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	Datum		value;
	bool		isnull;
	int64		count;
	int64		offset = 0;
	int64		bound;

	if (state->bound_peers)
		return current_rank_bound(state);
	if (state->count_expr == NULL)
		return -1;
	value = ExecEvalExprSwitchContext(state->count_expr, econtext, &isnull);
	if (isnull || (count = DatumGetInt64(value)) <= 0)
		return -1;
	if (state->offset_expr != NULL)
	{
		value = ExecEvalExprSwitchContext(state->offset_expr, econtext, &isnull);
		if (!isnull && DatumGetInt64(value) > 0)
			offset = DatumGetInt64(value);
	}
	if (pg_add_s64_overflow(count, offset, &bound))
		return -1;
	return bound;
}

static int	layout_keys(SortNodeState *state, PackLayout *layout, int *bits, int max_bits,
						bool prefix);

/*
 * The layout of words of at most 64 bits that order the rows in part: the
 * keys' leading bits, a NULL bit each, up to and including the first key
 * that the words do not order exactly (its leading bits, a string's first
 * bytes, an abbreviated key).  A row whose word is below another's comes
 * before it in the sort's order; rows of equal words may come in either.
 * False where the first key has no such bits: none, or strxfrm's, whose
 * order is not trusted (a row passed over could not be checked).
 */
static bool
prefix_layout(SortNodeState *state, PackLayout *layout, int *bits)
{
	layout_keys(state, layout, bits, 64, true);
	return layout->nkeys > 0;
}

/*
 * Sets the bound for the next sort, and whether its rows are pruned as they
 * are read: keys that all pack exactly into words of 128 bits (64 under a
 * run condition), a NULL bit each, or without NULL bits until a key's first
 * NULL (prune_no_nulls), or under a LIMIT the first key's trusted leading
 * bits (prefix_layout).
 *
 * exact_prune_layout: where every key is exact, the words of all of them
 * (first key highest, a NULL bit each with null_bits) into prune_layout,
 * and their width; past max_bits, or max_bits + 1 where a key is not
 * exact, they do not fit.
 */
static int
exact_prune_layout(SortNodeState *state, bool null_bits, int max_bits)
{
	int			bits = 0;

	if (state->nvalued != state->nkeys)
		return max_bits + 1;
	for (int k = state->nkeys - 1; k >= 0; k--)
	{
		if (!state->keys[k].bits.exact)
			return max_bits + 1;
		state->prune_layout.shift[k] = bits;
		state->prune_layout.drop[k] = 0;
		bits += state->keys[k].bits.width + (null_bits ? 1 : 0);
		if (bits > max_bits)
			return bits;
	}
	state->prune_layout.nkeys = state->nkeys;
	return bits;
}

static void
set_bound(SortNodeState *state)
{
	/* a LIMIT's words may take two halves; a run condition's one (select_peers) */
	int			max_bits = state->bound_peers ? 64 : 128;
	int			bits;

	state->bound = current_bound(state);
	state->pruning = false;
	state->prune_prefix = false;
	state->prune_no_nulls = false;
	state->have_threshold = false;
	/* a bound in each partition: every row is read, and cut after the sort */
	if (state->bound < 0 || state->part_keys > 0)
		return;
	/* past what the row arrays can hold, the rows are read whole */
	if (state->bound <= PG_UINT32_MAX / 4)
	{
		state->prune_bits = bits = exact_prune_layout(state, true, max_bits);
		state->pruning = (bits <= max_bits);
	}

	/*
	 * Keys that fill the words exactly but for their NULL bits (a float8,
	 * int8 or timestamp key under a run condition, two of them under a
	 * LIMIT): words without NULL bits while the keys have no NULLs.  A row
	 * passed over before a key's first NULL had bound rows (and under a run
	 * condition the next peer group) before it among the rows read then, and
	 * has them still, whatever the NULLs sort before or after.
	 */
	if (!state->pruning && state->bound <= PG_UINT32_MAX / 4 &&
		(bits = exact_prune_layout(state, false, max_bits)) <= max_bits)
	{
		state->prune_bits = bits;
		state->pruning = state->prune_no_nulls = true;
	}
	if (!state->pruning && !state->bound_peers && state->bound <= PG_UINT32_MAX / 4 &&
		prefix_layout(state, &state->prune_layout, &state->prune_bits))
		state->pruning = state->prune_prefix = true;
	/* twice the bound, saturated: a LIMIT and OFFSET may add up to near INT64_MAX */
	state->prune_at = state->bound > PG_INT64_MAX / 2 ? PG_INT64_MAX :
		Max(state->bound * 2, SORT_NODE_PRUNE_MIN);
}

static uint8 *alloc_null_flags(SortNodeState *state);

/*
 * A key's first NULL where the pruning words have no NULL bits: under a
 * LIMIT the rows read from here on are pruned by the first key's leading
 * bits and a NULL bit each (prefix_layout), the NULL flags of the keys in
 * those words made now (the rows before had none); under a run condition
 * they are all held.
 * The rows held stay: each row passed over had the bound's rows before it,
 * and has them still.
 */
static void
prune_with_nulls(SortNodeState *state)
{
	state->pruning = state->prune_no_nulls = state->have_threshold = false;
	if (!state->bound_peers && prefix_layout(state, &state->prune_layout, &state->prune_bits))
	{
		for (int k = 0; k < state->prune_layout.nkeys; k++)
		{
			if (state->nulls[k] == NULL)
				state->nulls[k] = alloc_null_flags(state);
		}
		state->pruning = state->prune_prefix = true;
	}
}

static inline uint128 packed_key(SortNodeState *state, const PackLayout *layout, int64 i);
static void argsort_words(SortNodeState *state, const void *words, int64 n, int bits,
						  uint32 *perm, int64 limit);
static int64 select_peers(SortNodeState *state, const void *words, int bits, int64 n, int64 c,
						  uint32 *perm, uint64 *threshold, bool *have_next);

/* Drops what a sort holds, for a rescan or the end. */
static void
reset_sort(SortNodeState *state)
{
	ExecClearTuple(state->sorted_slot);
	ExecClearTuple(state->out_slot);
	if (state->tuplesort)
	{
		tuplesort_end(state->tuplesort);
		state->tuplesort = NULL;
	}
	MemoryContextReset(state->tuple_context);
	state->row_context = NULL;
	state->row_bytes = state->row_space = 0;
	state->tuples = NULL;
	state->cols = NULL;
	state->colnulls = NULL;
	state->values = NULL;
	state->nulls = NULL;
	state->partial = NULL;
	state->batches = NULL;
	state->perm = NULL;
	state->win_diff = NULL;
	state->win_started = false;
	if (state->win_prev)
		ExecClearTuple(state->win_prev);
	state->ntuples = 0;
	state->capacity = 0;
	state->grown_to_limit = false;
	state->rows_in = 0;
	state->rows_held = 0;
	state->have_threshold = false;
	state->tuplesort_ties = false;
	state->mem_used = 0;
	state->mem_peak = 0;
	state->current = 0;
	state->eof_reached = false;
	state->sort_done = false;
	state->handed = false;
	state->from_workers = 0;
	state->key_threads = 0;
	state->extract_ms = state->sort_ms = state->emit_ms = 0;
}

#define WIDTH_MASK(width) ((width) >= 64 ? ~UINT64CONST(0) : (UINT64CONST(1) << (width)) - 1)

/*
 * The unsigned ordered value of a non-NULL key, DESC inverted, in its
 * width's low bits: integers and floats here, other kinds in sort_keys.c.
 */
static inline uint64
ordered_value(SortKeyInfo *key, Datum value)
{
	uint64		k;

	if (key->bits.kind != SORT_KEY_SIGNED && key->bits.kind != SORT_KEY_FLOAT4 &&
		key->bits.kind != SORT_KEY_FLOAT8)
	{
		if (key->bits.kind == SORT_KEY_STRXFRM)
		{
			bool		whole;

			k = sort_key_xfrm(key->xfrm, value, &whole);
#ifdef GS_INJECTION_POINTS
			if (key->invert_xfrm)
				k = ~k;
#endif
		}
		else
			k = sort_key_value(&key->bits, value, &key->abbrev);
		return key->descending ? ~k & WIDTH_MASK(key->bits.width) : k;
	}
	switch (key->bits.width)
	{
		case 16:
			k = gs_int2_to_key((uint16) DatumGetInt16(value));
			return key->descending ? (uint16) ~k : k;
		case 32:
			if (key->bits.kind == SORT_KEY_FLOAT4)
			{
				float4		f = DatumGetFloat4(value);
				uint32		bits;

				/* PostgreSQL's float order: -0 = 0, every NaN equal and last */
				if (isnan(f))
					f = get_float4_nan();
				else if (f == 0)
					f = 0;
				memcpy(&bits, &f, sizeof(bits));
				k = gs_float4_to_key(bits);
			}
			else
				k = gs_int4_to_key((uint32) DatumGetInt32(value));
			return key->descending ? (uint32) ~k : k;
		default:
			if (key->bits.kind == SORT_KEY_FLOAT8)
			{
				float8		f = DatumGetFloat8(value);
				uint64		bits;

				if (isnan(f))
					f = get_float8_nan();
				else if (f == 0)
					f = 0;
				memcpy(&bits, &f, sizeof(bits));
				k = gs_float8_to_key(bits);
			}
			else
				k = gs_int8_to_key((uint64) DatumGetInt64(value));
			return key->descending ? ~k : k;
	}
}

/* A tuplesort with the node's keys, as Sort would begin it. */
static Tuplesortstate *
begin_tuplesort(SortNodeState *state)
{
	TupleDesc	desc = state->sorted_slot->tts_tupleDescriptor;
	AttrNumber *columns = palloc(sizeof(AttrNumber) * state->nkeys);
	Oid		   *operators = palloc(sizeof(Oid) * state->nkeys);
	Oid		   *collations = palloc(sizeof(Oid) * state->nkeys);
	bool	   *nulls_first = palloc(sizeof(bool) * state->nkeys);
	Tuplesortstate *ts;

	for (int i = 0; i < state->nkeys; i++)
	{
		columns[i] = state->keys[i].column;
		operators[i] = state->keys[i].sortop;
		collations[i] = state->keys[i].collation;
		nulls_first[i] = state->keys[i].nulls_first;
	}
	ts = tuplesort_begin_heap(desc, state->nkeys, columns, operators, collations,
							  nulls_first, work_mem, NULL,
							  (state->random_access || state->win_lookahead ?
							   TUPLESORT_RANDOMACCESS : TUPLESORT_NONE) |
							  (state->bound >= 0 && !state->bound_peers ? TUPLESORT_ALLOWBOUNDED : 0));
	/* a run condition's bound keeps peers, which tuplesort's does not: every row */
	if (state->bound >= 0 && !state->bound_peers)
		tuplesort_set_bound(ts, state->bound);
	/* the tuplesort copied the keys: a rescan's would pile up in the query's context */
	pfree(columns);
	pfree(operators);
	pfree(collations);
	pfree(nulls_first);
	return ts;
}

/*
 * Column c's value from its kept value: a numeric kept as its key's bits
 * rebuilt in the column's buffer, which holds it until the column's next
 * value is rebuilt (the next row returned or stored).
 */
static inline Datum
column_value(SortNodeState *state, int c, Datum kept, bool isnull)
{
	char	   *buf;

	if (isnull || state->bits_column[c] < 0)
		return kept;
	buf = state->rebuilt + SORT_KEY_NUMERIC_DATUM_MAX * c;
	sort_key_numeric_datum(&state->keys[state->bits_column[c]].bits, (uint64) kept, buf);
	return PointerGetDatum(buf);
}

/* Row i of the columns into the virtual slot. */
static inline void
store_columns(SortNodeState *state, int64 i, TupleTableSlot *slot)
{
	ExecClearTuple(slot);
	for (int c = 0; c < state->ncols; c++)
	{
		slot->tts_isnull[c] = state->colnulls[c] ? state->colnulls[c][i] : false;
		slot->tts_values[c] = column_value(state, c, state->cols[c][i], slot->tts_isnull[c]);
	}
	ExecStoreVirtualTuple(slot);
}

/* Past work_mem: everything read so far goes to a tuplesort, and the memory with it. */
static void
switch_to_tuplesort(SortNodeState *state)
{
	state->tuplesort = begin_tuplesort(state);
	for (int64 i = 0; i < state->ntuples; i++)
	{
		if (state->columnar)
		{
			store_columns(state, i, state->out_slot);
			tuplesort_puttupleslot(state->tuplesort, state->out_slot);
			ExecClearTuple(state->out_slot);
		}
		else
		{
			ExecStoreMinimalTuple(state->tuples[i], state->sorted_slot, false);
			tuplesort_puttupleslot(state->tuplesort, state->sorted_slot);
			ExecClearTuple(state->sorted_slot);
			pfree(state->tuples[i]);
		}
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	MemoryContextReset(state->tuple_context);
	state->row_context = NULL;
	state->row_bytes = state->row_space = 0;
	state->tuples = NULL;
	state->cols = NULL;
	state->colnulls = NULL;
	state->values = NULL;
	state->nulls = NULL;
	state->partial = NULL;
	state->batches = NULL;
	state->ntuples = 0;
	state->capacity = 0;
}

/*
 * Bytes of the row arrays a row takes (the NULL flags allocated so far
 * included), and later the packed keys and the permutation.
 */
static Size
row_array_bytes(SortNodeState *state)
{
	Size		bytes = (state->columnar ? sizeof(Datum) * state->ncols : sizeof(MinimalTuple)) +
		sizeof(uint64) * state->nvalued + 16 + sizeof(uint32);

	for (int k = 0; state->nulls && k < state->nvalued; k++)
		bytes += (state->nulls[k] ? 1 : 0) + (state->partial[k] ? 1 : 0);
	for (int c = 0; state->colnulls && c < state->ncols; c++)
		bytes += state->colnulls[c] ? 1 : 0;
	return bytes;
}

/*
 * A row array in the node's memory: huge-page advised and mapped up front
 * (gpusort_alloc_large), since first touches of fresh 4 KiB pages would cost
 * more than the sort.
 */
static void *
alloc_rows(SortNodeState *state, Size bytes)
{
	MemoryContext old = MemoryContextSwitchTo(state->tuple_context);
	void	   *p = gpusort_alloc_large(Max(bytes, 64));

	MemoryContextSwitchTo(old);
	return p;
}

/* array (old_bytes used) moved into a new row array of new_bytes, the rest zeroed when zero */
static void *
grow_array(SortNodeState *state, void *array, Size old_bytes, Size new_bytes, bool zero)
{
	char	   *p = alloc_rows(state, new_bytes);

	memcpy(p, array, old_bytes);
	if (zero)
		memset(p + old_bytes, 0, new_bytes - old_bytes);
	pfree(array);
	return p;
}

/*
 * How many rows the row arrays hold next, within limit bytes as tuplesort's
 * grow_memtuples keeps its array: first the planner's estimate (at least
 * 1024 rows, at most what limit holds); then twice as many while the rows so
 * far (arrays and tuples) take at most half of limit, else as many as limit
 * holds at the rows' average size so far, once.  0 when not one more row
 * fits: the rows then go to a tuplesort.
 */
static int64
next_capacity(SortNodeState *state, int64 limit)
{
	int64		old = state->capacity;
	double		row_bytes = row_array_bytes(state);
	double		capacity;

	if (old == 0)
		capacity = Min(Max(state->css.ss.ps.plan->plan_rows, 1024), limit / row_bytes);
	else if (state->grown_to_limit)
		return 0;
	else if (state->mem_used * 2 <= limit)
		capacity = (double) old * 2;
	else
	{
		double		tuple_bytes = (state->mem_used - old * row_bytes) / old;

		capacity = limit / (row_bytes + tuple_bytes);
		state->grown_to_limit = true;
	}
	/* a pruned sort holds at most prune_at rows */
	if (state->pruning)
		capacity = Min(capacity, (double) state->prune_at);
	capacity = floor(Min(capacity, Min((double) MaxAllocHugeSize / sizeof(Datum), (double) PG_UINT32_MAX)));
	if (old == 0)
		return (int64) Max(capacity, 1);
	return (int64) capacity > old ? (int64) capacity : 0;
}

/* The row arrays allocated for capacity rows, at the first row. */
static void
alloc_row_arrays(SortNodeState *state, int64 capacity)
{
	state->values = MemoryContextAllocZero(state->tuple_context, sizeof(uint64 *) * state->nkeys);
	state->nulls = MemoryContextAllocZero(state->tuple_context, sizeof(uint8 *) * state->nkeys);
	state->partial = MemoryContextAllocZero(state->tuple_context, sizeof(uint8 *) * state->nkeys);
	if (state->columnar)
	{
		state->cols = MemoryContextAllocZero(state->tuple_context, sizeof(Datum *) * state->ncols);
		state->colnulls = MemoryContextAllocZero(state->tuple_context, sizeof(bool *) * state->ncols);
		for (int c = 0; c < state->ncols; c++)
			state->cols[c] = alloc_rows(state, sizeof(Datum) * capacity);
	}
	else
		state->tuples = alloc_rows(state, sizeof(MinimalTuple) * capacity);
	for (int k = 0; k < state->nvalued; k++)
		state->values[k] = alloc_rows(state, sizeof(uint64) * capacity);
}

/* The row arrays moved into arrays of capacity rows. */
static void
move_row_arrays(SortNodeState *state, int64 capacity)
{
	int64		old = state->capacity;

	if (state->columnar)
	{
		for (int c = 0; c < state->ncols; c++)
		{
			state->cols[c] = grow_array(state, state->cols[c], sizeof(Datum) * old,
										sizeof(Datum) * capacity, false);
			if (state->colnulls[c])
				state->colnulls[c] = grow_array(state, state->colnulls[c], old, capacity, true);
		}
	}
	else
		state->tuples = grow_array(state, state->tuples, sizeof(MinimalTuple) * old,
								   sizeof(MinimalTuple) * capacity, false);
	for (int k = 0; k < state->nvalued; k++)
	{
		state->values[k] = grow_array(state, state->values[k], sizeof(uint64) * old,
									  sizeof(uint64) * capacity, false);
		if (state->nulls[k])
			state->nulls[k] = grow_array(state, state->nulls[k], old, capacity, true);
		if (state->partial[k])
			state->partial[k] = grow_array(state, state->partial[k], old, capacity, true);
	}
}

/*
 * Room for at least one more row in the row arrays, within limit bytes
 * (next_capacity); false when there is none.
 */
static bool
grow_rows(SortNodeState *state, int64 limit)
{
	int64		old = state->capacity;
	int64		capacity = next_capacity(state, limit);

	if (capacity == 0)
		return false;
	if (old == 0)
		alloc_row_arrays(state, capacity);
	else
		move_row_arrays(state, capacity);
	state->mem_used += (capacity - old) * row_array_bytes(state);
	state->capacity = capacity;
	/* a pruned sort's words have a NULL bit for every key they hold, but for prune_no_nulls */
	for (int k = 0; old == 0 && state->pruning && !state->prune_no_nulls && k < state->prune_layout.nkeys; k++)
		state->nulls[k] = alloc_null_flags(state);
	return true;
}

/* A zeroed NULL-flag array for the row arrays' capacity, at a column's first NULL. */
static uint8 *
alloc_null_flags(SortNodeState *state)
{
	uint8	   *flags = alloc_rows(state, state->capacity);

	memset(flags, 0, state->capacity);
	state->mem_used += state->capacity;
	return flags;
}

/*
 * The k rows of perm (sorted positions) moved to the front of every row
 * array, in perm's order; tuples not among them freed.
 */
static void
keep_rows(SortNodeState *state, const uint32 *perm, int64 k)
{
	int64		n = state->ntuples;
	char	   *tmp = MemoryContextAlloc(state->tuple_context, sizeof(uint64) * Max(k, 1));

#define GATHER(array, type) \
	do { \
		type	   *a_ = (type *) (array); \
		for (int64 i_ = 0; i_ < k; i_++) \
			((type *) tmp)[i_] = a_[perm[i_]]; \
		memcpy(a_, tmp, sizeof(type) * k); \
	} while (0)
/* a 1-byte flag array: gathered, the rest cleared for the rows read next */
#define GATHER_FLAGS(array) \
	do { \
		GATHER(array, uint8); \
		memset((uint8 *) (array) + k, 0, state->capacity - k); \
	} while (0)

	if (state->columnar)
	{
		for (int c = 0; c < state->ncols; c++)
		{
			GATHER(state->cols[c], Datum);
			if (state->colnulls[c])
				GATHER_FLAGS(state->colnulls[c]);
		}
	}
	else
	{
		bool	   *kept = MemoryContextAllocZero(state->tuple_context, Max(n, 1));

		for (int64 i = 0; i < k; i++)
			kept[perm[i]] = true;
		for (int64 i = 0; i < n; i++)
		{
			if (kept[i])
				continue;
			state->mem_used -= GetMemoryChunkSpace(state->tuples[i]);
			state->row_space -= GetMemoryChunkSpace(state->tuples[i]);
			state->row_bytes -= TYPEALIGN(8, state->tuples[i]->t_len);
			pfree(state->tuples[i]);
		}
		pfree(kept);
		GATHER(state->tuples, MinimalTuple);
	}
	for (int key = 0; key < state->nvalued; key++)
	{
		GATHER(state->values[key], uint64);
		if (state->nulls[key])
			GATHER_FLAGS(state->nulls[key]);
		if (state->partial[key])
			GATHER_FLAGS(state->partial[key]);
	}
#undef GATHER_FLAGS
#undef GATHER
	pfree(tmp);
	state->ntuples = k;
}

/*
 * Under a run condition's bound c < n: the rows of rank at most c (the
 * first c rows of the stable order and their peers) and the peer group
 * after them, in order, into perm (room for n); returns how many.  words
 * are the n rows' exact words of bits (32 or 64, the sign bit flipped as
 * argsort_words takes them): equal words, equal keys.  The first c come
 * from argsort_words's select; the two peer groups are the rows whose words
 * equal the c-th's and the least word above it, in input order.
 * *threshold: that least word (unflipped), when there is one (*have_next).
 * With have_next NULL (c > 0): the rows up to the c-th's peers only, and
 * *threshold the c-th's word.
 */
static int64
select_peers(SortNodeState *state, const void *words, int bits, int64 n, int64 c,
			 uint32 *perm, uint64 *threshold, bool *have_next)
{
#define PEER_WORD(i) (bits <= 32 ? \
	(uint64) (((const uint32 *) words)[i] ^ UINT32_C(0x80000000)) : \
	((const uint64 *) words)[i] ^ UINT64_C(0x8000000000000000))
	uint64		last = 0;
	uint64		next = 0;
	bool		have_last = (c > 0);
	bool		want_next = (have_next != NULL);
	bool		found_next = false;
	int64		prefix = 0;
	int64		nlast = 0;
	int64		at_last;
	int64		at_next;

	Assert(c < n);
	Assert(want_next || have_last);
	if (have_last)
	{
		argsort_words(state, words, n, bits <= 32 ? 32 : 64, perm, c);
		last = PEER_WORD(perm[c - 1]);
		while (prefix < c && PEER_WORD(perm[prefix]) < last)
			prefix++;
	}
	for (int64 i = 0; i < n; i++)
	{
		uint64		w = PEER_WORD(i);

		if (have_last && w == last)
			nlast++;
		else if (want_next && (!have_last || w > last) && (!found_next || w < next))
		{
			next = w;
			found_next = true;
		}
		if ((i & 0xFFFFF) == 0xFFFFF)
			CHECK_FOR_INTERRUPTS();
	}
	/* after the rows below the c-th's word, its peers, then the next group's */
	at_last = prefix;
	at_next = prefix + nlast;
	for (int64 i = 0; i < n; i++)
	{
		uint64		w = PEER_WORD(i);

		if (have_last && w == last)
			perm[at_last++] = (uint32) i;
		else if (found_next && w == next)
			perm[at_next++] = (uint32) i;
	}
	if (want_next)
	{
		*have_next = found_next;
		*threshold = next;
	}
	else
		*threshold = last;
	return at_next;
#undef PEER_WORD
}

/*
 * A bounded sort's rows pruned to the bound's best (the first bound rows of
 * the stable order); the last of them is the threshold that the rows read
 * next must be below.  Under a run condition's bound, select_peers's rows,
 * and the rows read next must not be above its next group's word.  Where
 * the words are the keys' leading bits (prune_prefix), the rows whose word
 * is at most the bound's last, which the rows read next must not be above:
 * a row of a greater word has at least bound rows before it.  The rows
 * kept stay in the order of the sort, ahead of the rows read later, so
 * ties keep the input's order.  False, pruning nothing, where the leading
 * bits tie too often to prune by.
 */
static bool
prune_rows(SortNodeState *state)
{
	int64		n = state->ntuples;
	int64		k = state->bound;
	MemoryContext old = MemoryContextSwitchTo(state->tuple_context);
	uint64	   *words = gpusort_alloc_large(sizeof(uint64) * n);
	uint32	   *perm = gpusort_alloc_large(sizeof(uint32) * n);

	if (state->prune_bits > 64)
	{
		/* two halves: the low ones' stable order, then the high ones' select in it */
		uint64	   *high = gpusort_alloc_large(sizeof(uint64) * n);
		uint32	   *first = gpusort_alloc_large(sizeof(uint32) * n);

		Assert(!state->bound_peers);
		for (int64 i = 0; i < n; i++)
		{
			uint128		w = packed_key(state, &state->prune_layout, i);

			words[i] = (uint64) w ^ UINT64_C(0x8000000000000000);
			high[i] = (uint64) (w >> 64);
		}
		argsort_words(state, words, n, 64, first, 0);
		for (int64 i = 0; i < n; i++)
			words[i] = high[first[i]] ^ UINT64_C(0x8000000000000000);
		argsort_words(state, words, n, 64, perm, k);
		for (int64 i = 0; i < k; i++)
			perm[i] = first[perm[i]];
		pfree(high);
		pfree(first);
	}
	else
	{
		for (int64 i = 0; i < n; i++)
			words[i] = (uint64) packed_key(state, &state->prune_layout, i) ^ UINT64_C(0x8000000000000000);
		if (!state->bound_peers && !state->prune_prefix)
			argsort_words(state, words, n, 64, perm, k);
	}
	if (state->bound_peers || state->prune_prefix)
	{
		uint64		threshold;
		int64		kept = select_peers(state, words, 64, n, k, perm, &threshold,
										state->prune_prefix ? NULL : &state->have_threshold);

		/*
		 * Rows that tie on the leading bits past the bound's last, more
		 * than the bound and than a 32nd of those held (long shared
		 * prefixes, numbers equal in their first digits, a first key of few
		 * values before one without bits): pruning would keep that share of
		 * every row read, and the comparator would order them all, where
		 * the heap's comparisons of each row with its top mostly end at the
		 * first key.  Sort's bounded heap then (its ties in its order, not
		 * the input's).  Up to the bound's count of ties, the rows held stay
		 * within twice the bound, as an exact pruning's.
		 */
		if (state->prune_prefix && kept - k > Max(n / 32, k))
		{
			pfree(words);
			pfree(perm);
			MemoryContextSwitchTo(old);
			return false;
		}
		if (state->prune_prefix)
			state->have_threshold = true;

		state->threshold = threshold;
		keep_rows(state, perm, kept);
		/* many peers: the next pruning when as many more are held */
		if (kept > state->prune_at / 2)
			state->prune_at = kept > PG_INT64_MAX / 2 ? PG_INT64_MAX : kept * 2;
	}
	else
	{
		keep_rows(state, perm, k);
		state->threshold = packed_key(state, &state->prune_layout, k - 1);
		state->have_threshold = true;
	}
	pfree(words);
	pfree(perm);
	MemoryContextSwitchTo(old);
	CHECK_FOR_INTERRUPTS();
	return true;
}

/*
 * The key conversions' context is reset every 1024 rows, and sooner once it
 * holds more than this: a conversion detoasts its value there, and 1024
 * detoasted strings of a few megabytes would be gigabytes.
 */
#define CONVERT_RESET_BYTES ((Size) 1024 * 1024)

static inline void
reset_conversions(SortNodeState *state, int64 row)
{
	if ((row & 1023) == 0 ||
		MemoryContextMemAllocated(state->convert_context, false) > CONVERT_RESET_BYTES)
		MemoryContextReset(state->convert_context);
}

/*
 * Whether key k's words wait for batches of their strings: a collation's
 * transformation that may run on several threads, where the rows are not
 * pruned as they are read (which needs each row's word at once).
 */
static bool
batched_key(SortNodeState *state, int k)
{
	SortKeyInfo *key = &state->keys[k];

	return !state->pruning && key->xfrm != NULL &&
		(key->bits.kind == SORT_KEY_STRXFRM ||
		 (key->bits.kind == SORT_KEY_ABBREV_UNSIGNED && key->bits.byte_string)) &&
		sort_key_xfrm_threaded(key->xfrm);
}

/* Bytes of a batch's arrays per string. */
#define XFRM_BATCH_ENTRY (2 * sizeof(uint32) + 2 * sizeof(uint64))

/*
 * Copies row's string of key k into its batch.  The batch grows with what
 * it holds, up to a batch's strings and bytes (past them for a long
 * string), and its memory counts in mem_used as the rows' does.
 */
static void
batch_string(SortNodeState *state, int k, const char *p, size_t len, int64 row)
{
	XfrmBatch  *b = state->batches[k];

	if (b == NULL)
	{
		b = MemoryContextAllocZero(state->tuple_context, sizeof(XfrmBatch));
		state->batches[k] = b;
	}
	if (len >= PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a sort key string of %zu bytes is too long for gpusort", len)));
	if (b->n == b->capacity)
	{
		int64		capacity = Min(Max(b->capacity * 2, 1024), XFRM_BATCH_ROWS);

		if (b->capacity == 0)
		{
			b->row = MemoryContextAlloc(state->tuple_context, sizeof(uint32) * capacity);
			b->offset = MemoryContextAlloc(state->tuple_context, sizeof(uint64) * capacity);
			b->len = MemoryContextAlloc(state->tuple_context, sizeof(uint32) * capacity);
			b->words = MemoryContextAlloc(state->tuple_context, sizeof(uint64) * capacity);
		}
		else
		{
			b->row = repalloc(b->row, sizeof(uint32) * capacity);
			b->offset = repalloc(b->offset, sizeof(uint64) * capacity);
			b->len = repalloc(b->len, sizeof(uint32) * capacity);
			b->words = repalloc(b->words, sizeof(uint64) * capacity);
		}
		state->mem_used += (capacity - b->capacity) * XFRM_BATCH_ENTRY;
		b->capacity = capacity;
	}
	if (b->size + len + 1 > b->room)
	{
		Size		room = Max(Min(Max(b->room * 2, 64 * 1024), XFRM_BATCH_BYTES),
							   b->size + len + 1);

		if (b->data == NULL)
			b->data = MemoryContextAllocHuge(state->tuple_context, room);
		else
			b->data = repalloc_huge(b->data, room);
		state->mem_used += room - b->room;
		b->room = room;
	}
	memcpy(b->data + b->size, p, len);
	b->data[b->size + len] = '\0';
	b->row[b->n] = (uint32) row;
	b->offset[b->n] = b->size;
	b->len[b->n] = (uint32) len;
	b->size += len + 1;
	b->n++;
}

/* Frees the batches and takes their memory out of mem_used. */
static void
free_batches(SortNodeState *state)
{
	for (int k = 0; state->batches && k < state->nvalued; k++)
	{
		XfrmBatch  *b = state->batches[k];

		if (b == NULL)
			continue;
		Assert(b->n == 0);
		if (b->capacity > 0)
		{
			pfree(b->row);
			pfree(b->offset);
			pfree(b->len);
			pfree(b->words);
		}
		if (b->data)
			pfree(b->data);
		state->mem_used -= b->capacity * XFRM_BATCH_ENTRY + b->room;
		pfree(b);
		state->batches[k] = NULL;
	}
}

/* Transforms the strings batched so far and writes their rows' words. */
static void
flush_batches(SortNodeState *state)
{
	for (int k = 0; state->batches && k < state->nvalued; k++)
	{
		XfrmBatch  *b = state->batches[k];
		SortKeyInfo *key = &state->keys[k];
		int			threads;

		if (b == NULL || b->n == 0)
			continue;
		threads = sort_key_xfrm_words(key->xfrm, b->data, b->offset, b->len, b->n, b->words);
		state->key_threads = Max(state->key_threads, threads);
		for (int64 i = 0; i < b->n; i++)
		{
			uint64		v = b->words[i];

#ifdef GS_INJECTION_POINTS
			if (key->invert_xfrm)
				v = ~v;
#endif
			state->values[k][b->row[i]] = key->descending ? ~v : v;
		}
		b->n = 0;
		b->size = 0;
		/* a batch grown past its bytes by long strings starts again */
		if (b->room > XFRM_BATCH_BYTES)
		{
			pfree(b->data);
			b->data = NULL;
			state->mem_used -= b->room;
			b->room = 0;
		}
	}
}

/* Whether a batch is full. */
static inline bool
batches_full(SortNodeState *state)
{
	for (int k = 0; k < state->nvalued; k++)
	{
		XfrmBatch  *b = state->batches[k];

		if (b && (b->n == XFRM_BATCH_ROWS || b->size >= XFRM_BATCH_BYTES))
			return true;
	}
	return false;
}

/* Reads the child: into memory, or into a tuplesort once past work_mem. */
static void
read_input(SortNodeState *state)
{
	PlanState  *child = outerPlanState(state);
	int64		limit = (int64) work_mem * 1024;
	bool		timing = (state->css.ss.ps.instrument != NULL);
	bool		batching = false;
	bool		late_bits = false;	/* a column kept as the bits of a key past nvalued */

	for (int k = 0; k < state->nvalued; k++)
	{
		state->keys[k].batched = batched_key(state, k);
		batching = batching || state->keys[k].batched;
	}
	for (int c = 0; state->columnar && c < state->ncols; c++)
		late_bits = late_bits || state->bits_column[c] >= state->nvalued;
	if (batching && state->batches == NULL)
		state->batches = MemoryContextAllocZero(state->tuple_context,
												sizeof(XfrmBatch *) * state->nvalued);

	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(child);
		instr_time	start;
		bool		unpackable = false;

		if (TupIsNull(slot))
			break;
		if (state->tuplesort)
		{
			tuplesort_puttupleslot(state->tuplesort, slot);
			continue;
		}
		if (timing)
			INSTR_TIME_SET_CURRENT(start);
		if (state->ntuples == state->capacity && !grow_rows(state, limit))
		{
			switch_to_tuplesort(state);
			tuplesort_puttupleslot(state->tuplesort, slot);
			continue;
		}
		for (int k = 0; k < state->nvalued; k++)
		{
			SortKeyInfo *key = &state->keys[k];
			bool		isnull;
			Datum		value = slot_getattr(slot, key->column, &isnull);

			if (isnull)
			{
				if (state->nulls[k] == NULL)
					state->nulls[k] = alloc_null_flags(state);
				state->nulls[k][state->ntuples] = 1;
				state->values[k][state->ntuples] = 0;
				if (state->prune_no_nulls)
					prune_with_nulls(state);
			}
			else
			{
				if (key->bits.kind == SORT_KEY_BYTES)
				{
					MemoryContext old = MemoryContextSwitchTo(state->convert_context);
					bool		whole;
					uint64		v;

					reset_conversions(state, state->rows_in);
					v = sort_key_xfrm(key->xfrm, value, &whole);
					MemoryContextSwitchTo(old);
					state->values[k][state->ntuples] = key->descending ? ~v : v;
					if (!whole && state->partial[k] == NULL)
						state->partial[k] = alloc_null_flags(state);
					if (state->partial[k])
						state->partial[k][state->ntuples] = !whole;
				}
				else if (key->bits.kind == SORT_KEY_NUMERIC)
				{
					uint64		v;

					/*
					 * a value past its typmod's scale or precision, or kept
					 * as these bits and not at its display scale: Sort's
					 * way, below
					 */
					if (!(key->in_bits ? sort_key_numeric_column(&key->bits, value, &v) :
						  sort_key_numeric(&key->bits, value, &v)))
					{
						unpackable = true;
						break;
					}
					state->values[k][state->ntuples] = key->descending ? ~v & WIDTH_MASK(key->bits.width) : v;
				}
				else if (batching && key->batched && state->batches)
				{
					MemoryContext old = MemoryContextSwitchTo(state->convert_context);
					size_t		len;
					const char *p;

					reset_conversions(state, state->rows_in);
					p = sort_key_xfrm_string(key->xfrm, value, &len);
					batch_string(state, k, p, len, state->ntuples);
					MemoryContextSwitchTo(old);
					state->values[k][state->ntuples] = 0;
				}
				else if (key->bits.kind >= SORT_KEY_ABBREV_UNSIGNED)
				{
					/* a conversion may detoast or allocate: a context reset now and then */
					MemoryContext old = MemoryContextSwitchTo(state->convert_context);

					reset_conversions(state, state->rows_in);
					state->values[k][state->ntuples] = ordered_value(key, value);
					MemoryContextSwitchTo(old);
				}
				else
					state->values[k][state->ntuples] = ordered_value(key, value);
				if (state->nulls[k])
					state->nulls[k][state->ntuples] = 0;
			}
		}
		/* the columns kept as the bits of a key past those read above */
		for (int c = 0; late_bits && c < state->ncols && !unpackable; c++)
		{
			bool		isnull;
			Datum		value;

			if (state->bits_column[c] < state->nvalued)
				continue;
			value = slot_getattr(slot, c + 1, &isnull);
			if (!isnull &&
				!sort_key_numeric_column(&state->keys[state->bits_column[c]].bits, value,
										 &state->row_bits[c]))
				unpackable = true;
		}
		if (unpackable)
		{
			/* the rows so far and the rest go to a tuplesort, as past work_mem */
			switch_to_tuplesort(state);
			tuplesort_puttupleslot(state->tuplesort, slot);
			continue;
		}
		state->rows_in++;
		if (state->have_threshold &&
			(state->bound_peers || state->prune_prefix ?
			 packed_key(state, &state->prune_layout, state->ntuples) > state->threshold :
			 packed_key(state, &state->prune_layout, state->ntuples) >= state->threshold))
		{
			/* not among the bound's best: passed over */
		}
		else if (state->columnar)
		{
			slot_getallattrs(slot);
			for (int c = 0; c < state->ncols; c++)
			{
				int			k = state->bits_column[c];

				if (k < 0 || slot->tts_isnull[c])
					state->cols[c][state->ntuples] = slot->tts_values[c];
				else if (k < state->nvalued)
				{
					/* the key's bits, ascending */
					uint64		v = state->values[k][state->ntuples];

					state->cols[c][state->ntuples] = (Datum)
						(state->keys[k].descending ? ~v & WIDTH_MASK(state->keys[k].bits.width) : v);
				}
				else
					state->cols[c][state->ntuples] = (Datum) state->row_bits[c];
				if (slot->tts_isnull[c])
				{
					if (state->colnulls[c] == NULL)
						state->colnulls[c] = (bool *) alloc_null_flags(state);
					state->colnulls[c][state->ntuples] = true;
				}
			}
			state->ntuples++;
		}
		else
		{
			MemoryContext old;
			MinimalTuple tuple;

			if (state->row_context == NULL)
				state->row_context = AllocSetContextCreate(state->tuple_context, "gpusort sort node rows",
														   ALLOCSET_DEFAULT_SIZES);
			old = MemoryContextSwitchTo(state->row_context);
			tuple = ExecCopySlotMinimalTuple(slot);
			MemoryContextSwitchTo(old);
			state->tuples[state->ntuples++] = tuple;
			state->mem_used += GetMemoryChunkSpace(tuple);
			state->row_space += GetMemoryChunkSpace(tuple);
			state->row_bytes += TYPEALIGN(8, tuple->t_len);
		}
		if (batching && state->batches && batches_full(state))
			flush_batches(state);
		if (state->pruning && state->ntuples >= state->prune_at && !prune_rows(state))
		{
			/* the rows so far and the rest go to a tuplesort's bounded heap */
			state->tuplesort_ties = true;
			switch_to_tuplesort(state);
			continue;
		}
		if (timing)
		{
			instr_time	now;

			INSTR_TIME_SET_CURRENT(now);
			INSTR_TIME_SUBTRACT(now, start);
			state->extract_ms += INSTR_TIME_GET_MILLISEC(now);
		}
		if (state->mem_used > limit || state->ntuples == (int64) PG_UINT32_MAX)
			switch_to_tuplesort(state);
	}
	if (batching && state->batches && state->tuplesort == NULL)
	{
		instr_time	start;

		if (timing)
			INSTR_TIME_SET_CURRENT(start);
		flush_batches(state);
		free_batches(state);
		if (timing)
		{
			instr_time	now;

			INSTR_TIME_SET_CURRENT(now);
			INSTR_TIME_SUBTRACT(now, start);
			state->extract_ms += INSTR_TIME_GET_MILLISEC(now);
		}
	}
}

/* ----------------------------------------------------------------
 * Every participant's rows sorted in the leader
 *
 * Under a Gather Merge, where every key's bits are exact, the workers do not
 * sort their shares for the Gather Merge to merge.  Each reads its input as
 * the node always does (its rows and their keys' values in its memory, within
 * work_mem), copies them into one chunk of the query's DSA area, and returns
 * no row.  The leader reads its own share, waits until every worker that read
 * has handed its rows, takes them into its arrays (the tuples stay in the DSA
 * area), and sorts them all at once: one sort of every row, on the GPU where
 * there is one, and the Gather Merge has one stream to pass on.
 *
 * A participant reads its input only while the barrier is at its first
 * phase, attached before it reads.  The phase ends when every participant
 * attached has read its input to the end, so every row the partial plan
 * gives has been read by then: one that attaches later reads nothing.  A
 * worker whose rows went past work_mem (a tuplesort), or that finds no room
 * in the DSA area, keeps its rows and returns them sorted, as without this,
 * and the Gather Merge merges its stream with the leader's.
 * ---------------------------------------------------------------- */

#ifdef GS_INJECTION_POINTS
/* tests: whether the setting name is on */
static bool
test_flag(const char *name)
{
	const char *value = GetConfigOption(name, true, false);

	return value != NULL && strcmp(value, "on") == 0;
}
#endif

/* the shared memory's figures, and after them its handed rows' entries */
static Size
figures_size(int nworkers)
{
	return MAXALIGN(add_size(offsetof(SortNodeShared, workers),
							 mul_size(nworkers, sizeof(SortNodeFigures))));
}

static dsa_pointer *
handed_slots(SortNodeShared *shared)
{
	return (dsa_pointer *) ((char *) shared + figures_size(shared->nworkers));
}

/* the bytes of a HandedRows chunk for the rows held */
static Size
handed_bytes(SortNodeState *state)
{
	int64		n = state->ntuples;
	Size		size = MAXALIGN(sizeof(HandedRows)) + MAXALIGN(2 * state->nvalued + state->ncols);

	for (int k = 0; k < state->nvalued; k++)
		size += MAXALIGN(sizeof(uint64) * n) + (state->nulls[k] ? MAXALIGN(n) : 0) +
			(state->partial[k] ? MAXALIGN(n) : 0);
	if (state->columnar)
	{
		for (int c = 0; c < state->ncols; c++)
			size += MAXALIGN(sizeof(Datum) * n) + (state->colnulls[c] ? MAXALIGN(n) : 0);
	}
	else
	{
		for (int64 i = 0; i < n; i++)
			size += MAXALIGN(state->tuples[i]->t_len);
	}
	return size;
}

/*
 * Whether the system's shared memory has room for the chunks the workers
 * are handing, bytes of them this one's, twice over.  The DSA area grows by
 * POSIX shared memory segments (/dev/shm on Linux, 64 MB in a container by
 * default), and a segment that finds no room there raises an error, where
 * the worker can sort its share instead.
 */
static bool
shared_memory_room(SortNodeState *state, Size bytes)
{
	uint64		handing = pg_atomic_add_fetch_u64(&state->shared->handing, bytes);

#ifdef __linux__
	if (dynamic_shared_memory_type == DSM_IMPL_POSIX)
	{
		struct statvfs fs;

		if (statvfs("/dev/shm", &fs) == 0 &&
			(double) fs.f_bavail * fs.f_frsize < 2.0 * handing)
		{
			pg_atomic_sub_fetch_u64(&state->shared->handing, bytes);
			return false;
		}
	}
#endif
	return true;
}

/*
 * A worker's rows into a chunk of the DSA area, named in its entry of the
 * shared memory; false where the area or the system's shared memory has no
 * room for them.
 */
static bool
hand_rows(SortNodeState *state)
{
	dsa_area   *area = state->css.ss.ps.state->es_query_dsa;
	int64		n = state->ntuples;
	Size		size;
	dsa_pointer dp;
	char	   *base;
	char	   *flags;
	char	   *p;

	if (n == 0)
		return true;
	if (area == NULL || ParallelWorkerNumber < 0 || ParallelWorkerNumber >= state->shared->nhanded)
		return false;
#ifdef GS_INJECTION_POINTS
	/* tests: as if the DSA area had no room */
	if (test_flag("gpusort_test.no_room_to_hand"))
		return false;
#endif
	size = handed_bytes(state);
	if (!shared_memory_room(state, size))
		return false;
	dp = dsa_allocate_extended(area, size, DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(dp))
		return false;
	base = dsa_get_address(area, dp);
	((HandedRows *) base)->nrows = n;
	((HandedRows *) base)->bytes = size;
	flags = base + MAXALIGN(sizeof(HandedRows));
	p = flags + MAXALIGN(2 * state->nvalued + state->ncols);
#define HAND(array, bytes) \
	do { memcpy(p, (array), (bytes)); p += MAXALIGN(bytes); } while (0)
	for (int k = 0; k < state->nvalued; k++)
	{
		flags[2 * k] = (state->nulls[k] != NULL);
		flags[2 * k + 1] = (state->partial[k] != NULL);
		HAND(state->values[k], sizeof(uint64) * n);
		if (state->nulls[k])
			HAND(state->nulls[k], n);
		if (state->partial[k])
			HAND(state->partial[k], n);
	}
	if (state->columnar)
	{
		for (int c = 0; c < state->ncols; c++)
		{
			flags[2 * state->nvalued + c] = (state->colnulls[c] != NULL);
			HAND(state->cols[c], sizeof(Datum) * n);
			if (state->colnulls[c])
				HAND(state->colnulls[c], n);
		}
	}
	else
	{
		for (int64 i = 0; i < n; i++)
		{
			HAND(state->tuples[i], state->tuples[i]->t_len);
			if ((i & 0xFFFF) == 0)
				CHECK_FOR_INTERRUPTS();
		}
	}
#undef HAND
	Assert(p == base + size);
	handed_slots(state->shared)[ParallelWorkerNumber] = dp;
	return true;
}

/* A chunk of handed rows read: its arrays into view, allocated in the tuple context. */
static void
view_handed(SortNodeState *state, char *base, HandedView *view)
{
	int64		n = ((HandedRows *) base)->nrows;
	char	   *flags = base + MAXALIGN(sizeof(HandedRows));
	char	   *p = flags + MAXALIGN(2 * state->nvalued + state->ncols);
	MemoryContext cxt = state->tuple_context;

	view->nrows = n;
	view->values = MemoryContextAllocZero(cxt, sizeof(uint64 *) * Max(state->nvalued, 1));
	view->nulls = MemoryContextAllocZero(cxt, sizeof(uint8 *) * Max(state->nvalued, 1));
	view->partial = MemoryContextAllocZero(cxt, sizeof(uint8 *) * Max(state->nvalued, 1));
	view->cols = MemoryContextAllocZero(cxt, sizeof(Datum *) * Max(state->ncols, 1));
	view->colnulls = MemoryContextAllocZero(cxt, sizeof(bool *) * Max(state->ncols, 1));
	view->tuples = NULL;
#define VIEW(field, bytes) \
	do { (field) = (void *) p; p += MAXALIGN(bytes); } while (0)
	for (int k = 0; k < state->nvalued; k++)
	{
		VIEW(view->values[k], sizeof(uint64) * n);
		if (flags[2 * k])
			VIEW(view->nulls[k], n);
		if (flags[2 * k + 1])
			VIEW(view->partial[k], n);
	}
	if (state->columnar)
	{
		for (int c = 0; c < state->ncols; c++)
		{
			VIEW(view->cols[c], sizeof(Datum) * n);
			if (flags[2 * state->nvalued + c])
				VIEW(view->colnulls[c], n);
		}
	}
	else
		view->tuples = p;
#undef VIEW
}

/* A handed chunk's rows into the tuplesort the leader's rows went to. */
static void
handed_to_tuplesort(SortNodeState *state, HandedView *view)
{
	char	   *p = view->tuples;

	for (int64 i = 0; i < view->nrows; i++)
	{
		if (state->columnar)
		{
			TupleTableSlot *slot = state->out_slot;

			ExecClearTuple(slot);
			for (int c = 0; c < state->ncols; c++)
			{
				slot->tts_isnull[c] = view->colnulls[c] ? view->colnulls[c][i] : false;
				slot->tts_values[c] = column_value(state, c, view->cols[c][i], slot->tts_isnull[c]);
			}
			ExecStoreVirtualTuple(slot);
			tuplesort_puttupleslot(state->tuplesort, slot);
			ExecClearTuple(slot);
		}
		else
		{
			MinimalTuple tuple = (MinimalTuple) p;

			p += MAXALIGN(tuple->t_len);
			ExecStoreMinimalTuple(tuple, state->sorted_slot, false);
			tuplesort_puttupleslot(state->tuplesort, state->sorted_slot);
			ExecClearTuple(state->sorted_slot);
		}
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The leader takes the rows its workers handed it into its row arrays after
 * its own (the tuples where they are, in the DSA area), or into its
 * tuplesort where its own went past work_mem or the arrays of every row
 * would hold more than each participant's work_mem together.
 */
static void
absorb_rows(SortNodeState *state)
{
	SortNodeShared *shared = state->shared;
	dsa_pointer *slots = handed_slots(shared);
	HandedView *views = palloc0(sizeof(HandedView) * Max(shared->nhanded, 1));
	int64		total = state->ntuples;
	int			nchunks = 0;
	int64		at;
	int64		old;

	for (int w = 0; w < shared->nhanded; w++)
	{
		if (!DsaPointerIsValid(slots[w]))
			continue;
		view_handed(state, dsa_get_address(state->area, slots[w]), &views[w]);
		total += views[w].nrows;
		nchunks++;
	}
	if (nchunks == 0)
		return;
#ifdef GS_INJECTION_POINTS
	/* tests: as if the leader's own rows had gone past work_mem */
	if (state->tuplesort == NULL && test_flag("gpusort_test.leader_past_work_mem"))
		switch_to_tuplesort(state);
#endif
	if (state->tuplesort == NULL &&
		(total > (int64) PG_UINT32_MAX ||
		 (double) total * row_array_bytes(state) > (double) work_mem * 1024 * (nchunks + 1)))
		switch_to_tuplesort(state);
	if (state->tuplesort)
	{
		for (int w = 0; w < shared->nhanded; w++)
		{
			if (views[w].nrows > 0)
			{
				handed_to_tuplesort(state, &views[w]);
				state->from_workers += views[w].nrows;
			}
		}
		return;
	}

	/* room for every row; the flags of a later first NULL are zeroed for the rows before */
	old = state->capacity;
	if (old == 0)
		alloc_row_arrays(state, total);
	else if (total > old)
		move_row_arrays(state, total);
	if (total > old)
	{
		state->capacity = total;
		state->mem_used += (total - old) * row_array_bytes(state);
	}
	at = state->ntuples;
	for (int w = 0; w < shared->nhanded; w++)
	{
		HandedView *view = &views[w];
		int64		n = view->nrows;

		if (n == 0)
			continue;
		for (int k = 0; k < state->nvalued; k++)
		{
			memcpy(state->values[k] + at, view->values[k], sizeof(uint64) * n);
			if (view->nulls[k])
			{
				if (state->nulls[k] == NULL)
					state->nulls[k] = alloc_null_flags(state);
				memcpy(state->nulls[k] + at, view->nulls[k], n);
			}
			if (view->partial[k])
			{
				if (state->partial[k] == NULL)
					state->partial[k] = alloc_null_flags(state);
				memcpy(state->partial[k] + at, view->partial[k], n);
			}
		}
		if (state->columnar)
		{
			for (int c = 0; c < state->ncols; c++)
			{
				memcpy(state->cols[c] + at, view->cols[c], sizeof(Datum) * n);
				if (view->colnulls[c])
				{
					if (state->colnulls[c] == NULL)
						state->colnulls[c] = (bool *) alloc_null_flags(state);
					memcpy(state->colnulls[c] + at, view->colnulls[c], n);
				}
			}
		}
		else
		{
			char	   *p = view->tuples;

			for (int64 i = 0; i < n; i++)
			{
				state->tuples[at + i] = (MinimalTuple) p;
				state->row_bytes += TYPEALIGN(8, ((MinimalTuple) p)->t_len);
				p += MAXALIGN(((MinimalTuple) p)->t_len);
			}
			state->mem_used += p - view->tuples;
		}
		at += n;
		state->from_workers += n;
		CHECK_FOR_INTERRUPTS();
	}
	state->ntuples = at;
}

/*
 * Under a Gather Merge (together): a worker reads its share and hands it to
 * the leader; the leader reads its own, waits for the workers that read, and
 * takes their rows.
 */
static void
read_together(SortNodeState *state)
{
	Barrier    *reading = &state->shared->reading;
	int			phase;

#ifdef GS_INJECTION_POINTS
	/* tests: the leader reads after every planned worker, which then read every row */
	if (!state->am_worker && test_flag("gpusort_test.leader_reads_last"))
	{
		for (int waited = 0; waited < 30000 &&
			 pg_atomic_read_u32(&state->shared->workers_read) < (uint32) state->shared->nhanded; waited++)
		{
			CHECK_FOR_INTERRUPTS();
			pg_usleep(1000L);
		}
	}
#endif
	phase = BarrierAttach(reading);
	if (phase == 0)
		read_input(state);
	if (state->am_worker)
	{
		/*
		 * A worker past work_mem, or without room, sorts and returns its
		 * rows; one that came late read none, and handed them all.
		 */
		if (phase > 0 || (state->tuplesort == NULL && hand_rows(state)))
		{
			state->handed = true;
			state->ntuples = 0;
		}
		if (phase == 0)
			BarrierArriveAndDetach(reading);
		else
			BarrierDetach(reading);
#ifdef GS_INJECTION_POINTS
		pg_atomic_fetch_add_u32(&state->shared->workers_read, 1);
#endif
		return;
	}
	if (phase == 0)
		BarrierArriveAndWait(reading, PG_WAIT_EXTENSION);
	BarrierDetach(reading);
	absorb_rows(state);
}

/*
 * Stable argsort of n words of width bits (32 or 64) into perm; with 0 <
 * limit < n, only the first limit positions (a select, then a sort of those).
 */
static void
argsort_words(SortNodeState *state, const void *words, int64 n, int bits, uint32 *perm,
			  int64 limit)
{
	GpusortJob	job;

	memset(&job, 0, sizeof(job));
	job.type = bits == 32 ? GS_INT4 : GS_INT8;
	job.n = (size_t) n;
	job.descending = false;
	job.source = words;
	job.perm = perm;
	job.limit = (size_t) limit;
	gpusort_run(&job);
	if (gpusort_last.valid)
		state->device = gpusort_last.device;
}

/*
 * The n elements of size width of array (array_bytes long) in perm's order:
 * into *spare when it is large enough, which array then becomes, else into a
 * new array, array freed.  Reusing the buffers the sort is done with saves
 * mapping (and the kernel zeroing) fresh memory of the arrays' size.
 */
static void *
permute_array(void *array, Size array_bytes, int width, const uint32 *perm, int64 n,
			  void **spare, Size *spare_bytes)
{
	Size		bytes = (Size) width * Max(n, 1);
	char	   *sorted;

	if (*spare != NULL && *spare_bytes >= bytes)
		sorted = *spare;
	else
		sorted = gpusort_alloc_large(bytes);

	if (width == 8)
	{
		uint64	   *to = (uint64 *) sorted;
		const uint64 *from = (const uint64 *) array;

		for (int64 i = 0; i < n; i++)
			to[i] = from[perm[i]];
	}
	else
	{
		for (int64 i = 0; i < n; i++)
			memcpy(sorted + i * width, (char *) array + (Size) perm[i] * width, width);
	}
	if (sorted == *spare)
	{
		*spare = array;
		*spare_bytes = array_bytes;
	}
	else
		pfree(array);
	return sorted;
}

/*
 * Row i's keys in one word (layout): each key's value with its NULL bit
 * above it where the key had NULLs (1 for a NULL under NULLS LAST, for a
 * value under NULLS FIRST), its leading bits at its place.
 */
static inline uint128
packed_key(SortNodeState *state, const PackLayout *layout, int64 i)
{
	uint128		w = 0;

	for (int k = 0; k < layout->nkeys; k++)
	{
		uint128		v = state->values[k][i];

		if (state->nulls[k])
		{
			uint128		flag = (state->nulls[k][i] != 0) != state->keys[k].nulls_first;

			v |= flag << state->keys[k].bits.width;
		}
		w |= (v >> layout->drop[k]) << layout->shift[k];
		/* a string longer than its bits: the later keys' bits would split its run */
		if (state->partial[k] && state->partial[k][i])
			break;
	}
	return w;
}

/*
 * The packed words of the rows, by input position, as sort_in_memory left
 * them for the tie pass: 32- or 64-bit words in words, or 128-bit words as
 * low and high halves.
 */
typedef struct PackedWords
{
	int			bits;
	const void *words;
	const uint64 *low;
	const uint64 *high;
} PackedWords;

static inline bool
same_word(const PackedWords *w, uint32 a, uint32 b)
{
	if (w->bits <= 32)
		return ((const uint32 *) w->words)[a] == ((const uint32 *) w->words)[b];
	if (w->bits <= 64)
		return ((const uint64 *) w->words)[a] == ((const uint64 *) w->words)[b];
	return w->low[a] == w->low[b] && w->high[a] == w->high[b];
}

/* Row a's word (its top bit flipped, as argsort_words takes it) */
static inline uint128
word_at(const PackedWords *w, uint32 a)
{
	if (w->bits <= 32)
		return ((const uint32 *) w->words)[a];
	if (w->bits <= 64)
		return ((const uint64 *) w->words)[a];
	return ((uint128) w->high[a] << 64) | w->low[a];
}

/* What the comparison of two rows of a run reads: their keys' values. */
typedef struct TieRun
{
	SortNodeState *state;
	int			first_key;		/* the keys compared: first_key to the last */
	int			nkeys;
	Datum	   *values;			/* row r's key j at r * nkeys + j */
	bool	   *isnull;
	uint32	   *position;		/* row r's input position */
} TieRun;

/*
 * The comparator of key's values as fetch_key and fetch_keys give them: its
 * bits' where its column is kept as them, else PostgreSQL's.
 */
static inline SortSupport
row_comparator(SortKeyInfo *key)
{
	return key->in_bits ? &key->bits_cmp : &key->full;
}

/*
 * Row row's keys from first_key on into values and isnull: by-reference
 * values point into the kept tuple, which outlives the sorted_slot's hold;
 * a column kept as its key's bits gives those (row_comparator).
 */
static inline void
fetch_keys(SortNodeState *state, uint32 row, int first_key, Datum *values, bool *isnull)
{
	TupleTableSlot *slot = state->sorted_slot;

	if (!state->columnar)
		ExecStoreMinimalTuple(state->tuples[row], slot, false);
	for (int k = first_key; k < state->nkeys; k++)
	{
		int			c = state->keys[k].column - 1;

		if (state->columnar)
		{
			values[k - first_key] = state->cols[c][row];
			isnull[k - first_key] = state->colnulls[c] ? state->colnulls[c][row] : false;
		}
		else
			values[k - first_key] = slot_getattr(slot, c + 1, &isnull[k - first_key]);
	}
}

static int
compare_tie_rows(const void *a, const void *b, void *arg)
{
	TieRun	   *run = (TieRun *) arg;
	uint32		ra = *(const uint32 *) a;
	uint32		rb = *(const uint32 *) b;

	for (int j = 0; j < run->nkeys; j++)
	{
		int			c = ApplySortComparator(run->values[ra * run->nkeys + j], run->isnull[ra * run->nkeys + j],
											run->values[rb * run->nkeys + j], run->isnull[rb * run->nkeys + j],
											row_comparator(&run->state->keys[run->first_key + j]));

		if (c != 0)
			return c;
	}
	/* the input's order among peers: stable */
	return run->position[ra] < run->position[rb] ? -1 : run->position[ra] > run->position[rb];
}

/*
 * The rows of perm[0 .. m - 1] (input positions, whose words are equal) in
 * the order of PostgreSQL's comparators over keys first_key on, peers in
 * input order.  run holds the buffers, grown as needed.
 */
static void
order_run(SortNodeState *state, uint32 *perm, int64 m, TieRun *run, int64 *room)
{
	uint32	   *order;

	if (m > *room)
	{
		int64		r = Max(m, *room * 2);

		if (run->values)
		{
			pfree(run->values);
			pfree(run->isnull);
			pfree(run->position);
		}
		run->values = MemoryContextAllocHuge(state->tuple_context, sizeof(Datum) * r * run->nkeys);
		run->isnull = MemoryContextAllocHuge(state->tuple_context, sizeof(bool) * r * run->nkeys);
		run->position = MemoryContextAllocHuge(state->tuple_context, sizeof(uint32) * r * 2);
		*room = r;
	}
	order = run->position + *room;
	for (int64 i = 0; i < m; i++)
	{
		run->position[i] = perm[i];
		order[i] = (uint32) i;
		fetch_keys(state, perm[i], run->first_key, &run->values[i * run->nkeys],
				   &run->isnull[i * run->nkeys]);
		if ((i & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
	}
	ExecClearTuple(state->sorted_slot);
	qsort_arg(order, m, sizeof(uint32), compare_tie_rows, run);
	for (int64 i = 0; i < m; i++)
		perm[i] = run->position[order[i]];
}

/*
 * A run of fewer rows than this is ordered by the comparators alone: the
 * rounds cost each row its byte string (a strxfrm, an ICU sort key) and a
 * share of a sort per round, about what log2 of this many comparisons do.
 */
#define SORT_NODE_REFINE_MIN 16

/* Runs of rows still tied: perm positions [start[r], start[r] + len[r]). */
typedef struct RunList
{
	int64		nruns;
	int64		room;
	int64	   *start;
	int64	   *len;
} RunList;

static void
add_run(SortNodeState *state, RunList *runs, int64 start, int64 len)
{
	if (runs->nruns == runs->room)
	{
		int64		room = Max(runs->room * 2, 64);
		int64	   *s = MemoryContextAllocHuge(state->tuple_context, sizeof(int64) * room);
		int64	   *l = MemoryContextAllocHuge(state->tuple_context, sizeof(int64) * room);

		if (runs->nruns > 0)
		{
			memcpy(s, runs->start, sizeof(int64) * runs->nruns);
			memcpy(l, runs->len, sizeof(int64) * runs->nruns);
			pfree(runs->start);
			pfree(runs->len);
		}
		runs->start = s;
		runs->len = l;
		runs->room = room;
	}
	runs->start[runs->nruns] = start;
	runs->len[runs->nruns] = len;
	runs->nruns++;
}

/* A tied row's byte string: at offset in the strings' arena, len bytes. */
typedef struct RowBytes
{
	uint64		offset;
	uint64		len;
} RowBytes;

/* The bytes [at, at + width) of a byte string as a big-endian integer, zero padded. */
static inline uint64
byte_window(const unsigned char *bytes, uint64 len, uint64 at, int width)
{
	uint64		w = 0;

	if (at + 8 <= len)
	{
		memcpy(&w, bytes + at, 8);
		w = pg_ntoh64(w);
		return width == 8 ? w : w >> (64 - 8 * width);
	}
	for (int i = 0; i < width; i++)
		w = (w << 8) | (at + i < len ? bytes[at + i] : 0);
	return w;
}

/*
 * A tied row's string key: the value in its kept tuple (a string key is not
 * columnar), never NULL in the tie pass's string rounds.
 */
static inline Datum
tied_string(SortNodeState *state, SortKeyInfo *key, uint32 row)
{
	bool		isnull;
	Datum		value;

	ExecStoreMinimalTuple(state->tuples[row], state->sorted_slot, false);
	value = slot_getattr(state->sorted_slot, key->column, &isnull);
	Assert(!isnull);
	return value;
}

/* Fewer tied rows than this are transformed on the backend's thread alone. */
#define SORT_NODE_THREADED_XFRM_MIN 4096

/*
 * gather_byte_strings's work where the key's transformation may run on
 * several threads (sort_key_xfrm_threaded): the strings copied, then
 * transformed at once.  NULL where the copies and the arena would take more
 * than limit bytes.
 */
static unsigned char *
gather_byte_strings_threaded(SortNodeState *state, SortKeyInfo *key, const RunList *runs,
							 int64 m, uint32 *rows, RowBytes *bytes, int64 limit)
{
	Size		size = 0;
	Size		room;
	int64		j = 0;
	MemoryContext old;
	char	   *data;
	uint64	   *offset;
	uint32	   *len;
	uint64	   *out_offset;
	uint64	   *out_len;
	char	   *arena = NULL;

	/* the strings' places in and out, then the strings and their transformations */
	limit -= m * (3 * sizeof(uint64) + sizeof(uint32));
	if (limit < 2 * m)
		return NULL;
	room = Min(1024 * 1024, limit);
	data = MemoryContextAllocHuge(state->tuple_context, room);
	offset = MemoryContextAllocHuge(state->tuple_context, sizeof(uint64) * m);
	len = MemoryContextAllocHuge(state->tuple_context, sizeof(uint32) * m);
	out_offset = MemoryContextAllocHuge(state->tuple_context, sizeof(uint64) * m);
	out_len = MemoryContextAllocHuge(state->tuple_context, sizeof(uint64) * m);
	old = MemoryContextSwitchTo(state->convert_context);
	for (int64 r = 0; r < runs->nruns && limit > 0; r++)
	{
		for (int64 i = 0; i < runs->len[r]; i++, j++)
		{
			uint32		row = state->perm[runs->start[r] + i];
			const char *p;
			size_t		n;

			reset_conversions(state, j);
			if ((j & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			p = sort_key_xfrm_string(key->xfrm, tied_string(state, key, row), &n);
			if (size + n + 1 > room)
			{
				if ((int64) (size + n + 1) > limit || n >= PG_UINT32_MAX)
				{
					limit = 0;
					break;
				}
				room = Min(Max(room * 2, size + n + 1), (Size) limit);
				data = repalloc_huge(data, room);
			}
			memcpy(data + size, p, n);
			data[size + n] = '\0';
			rows[j] = row;
			offset[j] = size;
			len[j] = (uint32) n;
			size += n + 1;
		}
	}
	MemoryContextReset(state->convert_context);
	ExecClearTuple(state->sorted_slot);
	MemoryContextSwitchTo(state->tuple_context);
	if (limit > 0 && (int64) size < limit)
	{
		Size		arena_size;

		int			threads = 0;

		arena = sort_key_xfrm_strings(key->xfrm, data, offset, len, m, out_offset, out_len,
									  (Size) (limit - size), &arena_size, &threads);
		state->key_threads = Max(state->key_threads, threads);
		for (int64 i = 0; arena != NULL && i < m; i++)
		{
			bytes[i].offset = out_offset[i];
			bytes[i].len = out_len[i];
		}
	}
	MemoryContextSwitchTo(old);
	pfree(data);
	pfree(offset);
	pfree(len);
	pfree(out_offset);
	pfree(out_len);
	return (unsigned char *) arena;
}

/*
 * The byte strings of the rows of runs (sort_key_xfrm_bytes: the string, or
 * its strxfrm or ICU sort key) copied into one arena, each row's place in
 * bytes[j] (j: the rows of the runs one after the other); rows[j] is its
 * input position.  NULL where the arena would take more than limit bytes.
 */
static unsigned char *
gather_byte_strings(SortNodeState *state, SortKeyInfo *key, const RunList *runs,
					uint32 *rows, RowBytes *bytes, int64 limit)
{
	Size		size = 0;
	Size		room;
	unsigned char *arena;
	int64		j = 0;
	int64		m = 0;
	MemoryContext old;

	for (int64 r = 0; r < runs->nruns; r++)
		m += runs->len[r];
	if (m >= SORT_NODE_THREADED_XFRM_MIN && sort_key_xfrm_threaded(key->xfrm))
	{
		arena = gather_byte_strings_threaded(state, key, runs, m, rows, bytes, limit);
		if (arena != NULL)
			return arena;
	}
	room = Min(1024 * 1024, limit);
	arena = MemoryContextAllocHuge(state->tuple_context, room);
	old = MemoryContextSwitchTo(state->convert_context);

	for (int64 r = 0; r < runs->nruns; r++)
	{
		for (int64 i = 0; i < runs->len[r]; i++, j++)
		{
			uint32		row = state->perm[runs->start[r] + i];
			const char *p;
			size_t		len;

			reset_conversions(state, j);
			if ((j & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			p = sort_key_xfrm_bytes(key->xfrm, tied_string(state, key, row), &len,
									(size_t) (limit - size));
			if (p == NULL || size + len > room)
			{
				if (p == NULL || (int64) (size + len) > limit)
				{
					MemoryContextSwitchTo(old);
					ExecClearTuple(state->sorted_slot);
					pfree(arena);
					return NULL;
				}
				room = Min(Max(room * 2, size + len), (Size) limit);
				arena = repalloc_huge(arena, room);
			}
			memcpy(arena + size, p, len);
			rows[j] = row;
			bytes[j].offset = size;
			bytes[j].len = len;
			size += len;
		}
	}
	MemoryContextReset(state->convert_context);
	MemoryContextSwitchTo(old);
	ExecClearTuple(state->sorted_slot);
	return arena;
}

/*
 * Row row's key k: a by-reference value points into the kept tuple; a
 * column kept as its key's bits gives those (row_comparator).
 */
static inline Datum
fetch_key(SortNodeState *state, uint32 row, int k, bool *isnull)
{
	int			c = state->keys[k].column - 1;

	if (state->columnar)
	{
		*isnull = state->colnulls[c] ? state->colnulls[c][row] : false;
		return state->cols[c][row];
	}
	ExecStoreMinimalTuple(state->tuples[row], state->sorted_slot, false);
	return slot_getattr(state->sorted_slot, c + 1, isnull);
}

/* Each run of runs in the order of PostgreSQL's comparators over keys k on. */
static void
order_runs_from(SortNodeState *state, int k, const RunList *runs)
{
	TieRun		run;
	int64		room = 0;

	memset(&run, 0, sizeof(run));
	run.state = state;
	run.first_key = k;
	run.nkeys = state->nkeys - k;
	for (int64 r = 0; r < runs->nruns; r++)
		order_run(state, state->perm + runs->start[r], runs->len[r], &run, &room);
	if (run.values)
	{
		pfree(run.values);
		pfree(run.isnull);
		pfree(run.position);
	}
}

/*
 * Runs of rows equal on every key before key k, ordered by the keys from k
 * on: each round packs, for every row still tied, its run's number above
 * key k's field (a NULL bit where the key has NULLs, then its bits, as
 * packed_key has them) and sorts those words with the node's word sort.
 * Rows whose words are equal go on to key k + 1 where key k's bits are
 * exact, and to the comparators from key k where they are a prefix.  A key
 * whose bits need a conversion that the node has not begun (a string's),
 * or a value its bits cannot hold, sends the runs left to the comparators.
 */
static void
order_later_keys(SortNodeState *state, int k, RunList *runs)
{
	RunList		next;
	RunList		compare;
	int64		limit = (int64) work_mem * 1024 - state->mem_used;
	/* EXPLAIN's Sort Device is the whole sort's, not a round's */
	int			device = state->device;

	memset(&next, 0, sizeof(next));
	memset(&compare, 0, sizeof(compare));
	while (runs->nruns > 0 && k < state->nkeys)
	{
		SortKeyInfo *key = &state->keys[k];
		int64		m = 0;
		int64		j = 0;
		uint32	   *rows;
		uint64	   *values;
		uint8	   *flags;
		uint64	   *words;
		uint32	   *order;
		bool		has_nulls = false;
		bool		usable;
		int			run_bits;
		int			field;

		for (int64 r = 0; r < runs->nruns; r++)
			m += runs->len[r];
		usable = key->bits.kind != SORT_KEY_NONE && key->bits.kind != SORT_KEY_BYTES &&
			key->bits.kind != SORT_KEY_STRXFRM && key->bits.width <= 64 &&
			m * (int64) (3 * sizeof(uint32) + 3 * sizeof(uint64) + 1) <= limit;
		if (!usable)
			break;
		rows = gpusort_alloc_large(sizeof(uint32) * m);
		values = gpusort_alloc_large(sizeof(uint64) * m);
		flags = gpusort_alloc_large(m);
		for (int64 r = 0; r < runs->nruns && usable; r++)
		{
			for (int64 i = 0; i < runs->len[r] && usable; i++, j++)
			{
				uint32		row = state->perm[runs->start[r] + i];
				bool		isnull;
				Datum		value = fetch_key(state, row, k, &isnull);

				if ((j & 1023) == 1023)
					CHECK_FOR_INTERRUPTS();
				rows[j] = row;
				flags[j] = isnull != key->nulls_first;
				values[j] = 0;
				has_nulls = has_nulls || isnull;
				if (isnull)
					continue;
				if (key->bits.kind == SORT_KEY_NUMERIC)
				{
					uint64		v = (uint64) value;

					/* a column kept as these bits holds them already */
					if (!key->in_bits)
						usable = sort_key_numeric(&key->bits, value, &v);
					values[j] = key->descending ? ~v & WIDTH_MASK(key->bits.width) : v;
				}
				else if (key->bits.kind >= SORT_KEY_ABBREV_UNSIGNED)
				{
					MemoryContext old = MemoryContextSwitchTo(state->convert_context);

					reset_conversions(state, j);
					values[j] = ordered_value(key, value);
					MemoryContextSwitchTo(old);
				}
				else
					values[j] = ordered_value(key, value);
			}
		}
		MemoryContextReset(state->convert_context);
		ExecClearTuple(state->sorted_slot);
		if (!usable)
		{
			pfree(rows);
			pfree(values);
			pfree(flags);
			break;
		}

		/* run number, NULL bit, bits: one word where they fit, else two sorts */
		run_bits = runs->nruns > 1 ? pg_leftmost_one_pos64((uint64) runs->nruns - 1) + 1 : 0;
		field = key->bits.width + (has_nulls ? 1 : 0);
		words = gpusort_alloc_large(sizeof(uint64) * m);
		order = gpusort_alloc_large(sizeof(uint32) * m);
		if (run_bits + field <= 64)
		{
			j = 0;
			for (int64 r = 0; r < runs->nruns; r++)
				for (int64 i = 0; i < runs->len[r]; i++, j++)
				{
					uint64		w = values[j];

					if (has_nulls)
						w |= (uint64) flags[j] << key->bits.width;
					if (run_bits > 0)
						w |= (uint64) r << field;
					words[j] = w ^ UINT64_C(0x8000000000000000);
				}
			argsort_words(state, words, m, 64, order, 0);
		}
		else
		{
			uint32	   *first = gpusort_alloc_large(sizeof(uint32) * m);
			uint64	   *high = gpusort_alloc_large(sizeof(uint64) * m);

			for (j = 0; j < m; j++)
				words[j] = values[j] ^ UINT64_C(0x8000000000000000);
			argsort_words(state, words, m, 64, first, 0);
			/* then the run numbers and NULL bits in that order, sorted stably */
			j = 0;
			for (int64 r = 0; r < runs->nruns; r++)
				for (int64 i = 0; i < runs->len[r]; i++, j++)
					high[j] = ((uint64) r << 1) | flags[j];
			for (j = 0; j < m; j++)
				words[j] = high[first[j]] ^ UINT64_C(0x8000000000000000);
			argsort_words(state, words, m, 64, order, 0);
			for (j = 0; j < m; j++)
				order[j] = first[order[j]];
			pfree(first);
			pfree(high);
		}
		pfree(words);

		/* each run's rows in their order (its number led), then its equal groups */
		next.nruns = 0;
		compare.nruns = 0;
		j = 0;
		for (int64 r = 0; r < runs->nruns; r++)
		{
			int64		base = j;

			for (int64 i = 0; i < runs->len[r]; i++, j++)
				state->perm[runs->start[r] + i] = rows[order[j]];
			for (int64 a = base, b; a < j; a = b)
			{
				uint32		oa = order[a];

				b = a + 1;
				while (b < j && flags[order[b]] == flags[oa] && values[order[b]] == values[oa])
					b++;
				if (b - a < 2)
					continue;
				/* NULLs are equal whatever the bits */
				if (key->bits.exact || (flags[oa] != key->nulls_first))
				{
					if (k + 1 < state->nkeys)
						add_run(state, &next, runs->start[r] + (a - base), b - a);
				}
				else
					add_run(state, &compare, runs->start[r] + (a - base), b - a);
			}
		}
		pfree(rows);
		pfree(values);
		pfree(flags);
		pfree(order);
		order_runs_from(state, k, &compare);
		{
			RunList		swap = *runs;

			*runs = next;
			next = swap;
		}
		k++;
	}
	state->device = device;
	/* the keys left, or those without bits: the comparators */
	if (k < state->nkeys)
		order_runs_from(state, k, runs);
	runs->nruns = 0;
	if (next.room > 0)
	{
		pfree(next.start);
		pfree(next.len);
	}
	if (compare.room > 0)
	{
		pfree(compare.start);
		pfree(compare.len);
	}
}

/*
 * Runs of rows whose byte strings of key first_key are equal.  A run whose
 * strings PostgreSQL's comparator finds equal as well goes on to the later
 * keys (order_later_keys); any other (a collation's strxfrm or ICU sort keys
 * can be equal for strings that are not) is ordered by the comparators over
 * key first_key on.  C's bytes are the strings: equal ones are equal.
 */
static void
settle_equal_strings(SortNodeState *state, int first_key, const RunList *equal, TieRun *run,
					 int64 *room)
{
	SortKeyInfo *key = &state->keys[first_key];
	RunList		later;

	memset(&later, 0, sizeof(later));
	for (int64 r = 0; r < equal->nruns; r++)
	{
		uint32	   *perm = state->perm + equal->start[r];
		bool		same = true;

		CHECK_FOR_INTERRUPTS();
		if (key->bits.kind != SORT_KEY_BYTES)
		{
			bool		isnull;
			Datum		first = fetch_key(state, perm[0], first_key, &isnull);

			for (int64 i = 1; i < equal->len[r] && same; i++)
			{
				Datum		value = fetch_key(state, perm[i], first_key, &isnull);

				if ((i & 0xFFFF) == 0xFFFF)
					CHECK_FOR_INTERRUPTS();

				same = ApplySortComparator(first, false, value, false, row_comparator(key)) == 0;
			}
			ExecClearTuple(state->sorted_slot);
		}
		if (!same)
			order_run(state, perm, equal->len[r], run, room);
		else if (first_key + 1 < state->nkeys)
			add_run(state, &later, equal->start[r], equal->len[r]);
	}
	if (later.nruns > 0)
		order_later_keys(state, first_key + 1, &later);
	if (later.room > 0)
	{
		pfree(later.start);
		pfree(later.len);
	}
}

/*
 * Runs of rows tied on their words, ordered by a string key's byte strings,
 * most significant bytes first as an MSD radix sort goes: each round packs,
 * for every row still tied, its run's number above the next bytes of its
 * byte string (from offset at first, which the words held equal), sorts
 * those words with the node's word sort (the GPU's where there is one), and
 * keeps tied the rows whose words are still equal and whose strings go on.
 * Rows whose byte strings are equal end in runs that settle_equal_strings
 * orders: where PostgreSQL's comparator finds their strings equal too, by
 * the later keys' bits (order_later_keys), else by the comparators over key
 * first_key and the later ones, which break a deterministic collation's
 * ties as it does (strxfrm and ICU sort keys may be equal for strings that
 * are not) and leave a nondeterministic one's peers equal.  Where the
 * strings would take more than work_mem, every run goes to the comparators.
 */
static void
refine_string_runs(SortNodeState *state, int first_key, int offset, RunList *runs,
				   TieRun *run, int64 *room)
{
	SortKeyInfo *key = &state->keys[first_key];
	/* C's bytes are the strings: equal ones need no comparator unless keys follow */
	bool		compare_equal = !(key->bits.kind == SORT_KEY_BYTES && first_key == state->nkeys - 1);
	int64		m = 0;
	uint32	   *rows;
	uint32	   *rows_sorted;
	RowBytes   *bytes;
	RowBytes   *bytes_sorted;
	uint64	   *words;
	uint32	   *order;
	unsigned char *arena;
	int64		limit = (int64) work_mem * 1024 - state->mem_used;
	RunList		next;
	RunList		equal;

	for (int64 r = 0; r < runs->nruns; r++)
		m += runs->len[r];
	limit -= m * (2 * sizeof(uint32) + 2 * sizeof(RowBytes) + sizeof(uint64) + sizeof(uint32));
	if (limit <= 0)
	{
		/* past work_mem: the comparators */
		for (int64 r = 0; r < runs->nruns; r++)
			order_run(state, state->perm + runs->start[r], runs->len[r], run, room);
		return;
	}
	rows = gpusort_alloc_large(sizeof(uint32) * m);
	rows_sorted = gpusort_alloc_large(sizeof(uint32) * m);
	bytes = gpusort_alloc_large(sizeof(RowBytes) * m);
	bytes_sorted = gpusort_alloc_large(sizeof(RowBytes) * m);
	words = gpusort_alloc_large(sizeof(uint64) * m);
	order = gpusort_alloc_large(sizeof(uint32) * m);
	arena = gather_byte_strings(state, key, runs, rows, bytes, limit);
	memset(&next, 0, sizeof(next));
	memset(&equal, 0, sizeof(equal));

	while (arena != NULL && runs->nruns > 0)
	{
		/* the largest run number's bits, and as many whole bytes as fit below them */
		int			run_bits = runs->nruns > 1 ? pg_leftmost_one_pos64((uint64) runs->nruns - 1) + 1 : 0;
		int			width = Min(8, (64 - run_bits) / 8);
		uint64		mask = width == 8 ? ~UINT64CONST(0) : (UINT64CONST(1) << (8 * width)) - 1;
		int64		j = 0;
		bool		uniform = true;

		CHECK_FOR_INTERRUPTS();
		for (int64 r = 0; r < runs->nruns; r++)
		{
			uint64		high = width == 8 ? 0 : (uint64) r << (8 * width);
			int64		first = j;

			for (int64 i = 0; i < runs->len[r]; i++, j++)
			{
				uint64		w = byte_window(arena + bytes[j].offset, bytes[j].len, offset, width);

				if (key->descending)
					w = ~w & mask;
				words[j] = (high | w) ^ UINT64_C(0x8000000000000000);
				uniform = uniform && words[j] == words[first];
			}
		}
		if (uniform)
		{
			/* every run's window is one value (a prefix they share): in place */
			for (j = 0; j < m; j++)
				order[j] = (uint32) j;
		}
		else
		{
			int			device = state->device;

			/* EXPLAIN's Sort Device is the whole sort's, not a round's */
			argsort_words(state, words, m, 64, order, 0);
			state->device = device;
		}

		/*
		 * The sort keeps each run in its place (its number leads): the rows
		 * go back to the run's positions in perm, and each group of equal
		 * words there is a run of the next round or ordered now.
		 */
		next.nruns = 0;
		j = 0;
		for (int64 r = 0; r < runs->nruns; r++)
		{
			int64		base = j;

			for (int64 i = 0; i < runs->len[r]; i++, j++)
			{
				rows_sorted[j] = rows[order[j]];
				bytes_sorted[j] = bytes[order[j]];
				state->perm[runs->start[r] + i] = rows_sorted[j];
			}
			for (int64 a = base, b; a < j; a = b)
			{
				bool		goes_on = false;

				b = a + 1;
				while (b < j && words[order[b]] == words[order[a]])
					b++;
				if (b - a < 2)
					continue;
				/* equal windows: the strings differ further on only where one goes on */
				for (int64 i = a; i < b && !goes_on; i++)
					goes_on = bytes_sorted[i].len > (uint64) offset + width;
				if (goes_on)
					add_run(state, &next, runs->start[r] + (a - base), b - a);
				else if (compare_equal)
					add_run(state, &equal, runs->start[r] + (a - base), b - a);
			}
		}

		/* the rows of the next round's runs, in their order */
		j = 0;
		for (int64 r = 0, at = 0, base = 0; r < next.nruns; r++)
		{
			/* the sorted rows' index of perm position next.start[r] */
			while (at < runs->nruns && runs->start[at] + runs->len[at] <= next.start[r])
				base += runs->len[at++];
			for (int64 i = 0; i < next.len[r]; i++, j++)
			{
				int64		from = base + (next.start[r] - runs->start[at]) + i;

				rows[j] = rows_sorted[from];
				bytes[j] = bytes_sorted[from];
			}
		}
		m = j;
		offset += width;
		{
			RunList		swap = *runs;

			*runs = next;
			next = swap;
		}
	}
	/* past work_mem: the comparators */
	for (int64 r = 0; arena == NULL && r < runs->nruns; r++)
		order_run(state, state->perm + runs->start[r], runs->len[r], run, room);
	if (arena)
		pfree(arena);
	if (next.room > 0)
	{
		pfree(next.start);
		pfree(next.len);
	}
	pfree(rows);
	pfree(rows_sorted);
	pfree(bytes);
	pfree(bytes_sorted);
	pfree(words);
	pfree(order);
	/* the rows whose byte strings are equal: by the comparator's equality, then the later keys */
	if (equal.nruns > 0)
	{
		settle_equal_strings(state, first_key, &equal, run, room);
		pfree(equal.start);
		pfree(equal.len);
	}
}

/*
 * The tie pass: after the sort by the words, which are a prefix of the
 * order, each run of rows with equal words that begins among the first out
 * rows is put in order by PostgreSQL's comparators over every key from
 * first_key on (the keys before it packed exactly, so equal there).  With
 * refine_from >= 0, key first_key is a byte string whose first refine_from
 * bytes the words hold, and it is not NULL in some run's rows only if in
 * all: its runs of SORT_NODE_REFINE_MIN rows or more are refined by its
 * bytes first (refine_string_runs).
 */
static void
order_ties(SortNodeState *state, const PackedWords *words, int first_key, int64 out,
		   int refine_from)
{
	uint32	   *perm = state->perm;
	int64		n = state->ntuples;
	int64		room = 0;
	int64		since_check = 0;
	TieRun		run;
	RunList		runs;
	uint8	   *nulls = refine_from >= 0 ? state->nulls[first_key] : NULL;

	memset(&run, 0, sizeof(run));
	memset(&runs, 0, sizeof(runs));
	run.state = state;
	run.first_key = first_key;
	run.nkeys = state->nkeys - first_key;
	for (int64 start = 0, end; start < out; start = end)
	{
		end = start + 1;
		while (end < n && same_word(words, perm[start], perm[end]))
			end++;
		if (end - start > 1)
		{
			if (refine_from >= 0 && end - start >= SORT_NODE_REFINE_MIN && !(nulls && nulls[perm[start]]))
				add_run(state, &runs, start, end - start);
			else
				order_run(state, perm + start, end - start, &run, &room);
		}
		since_check += end - start;
		if (since_check >= 16384)
		{
			CHECK_FOR_INTERRUPTS();
			since_check = 0;
		}
	}
	if (runs.nruns > 0)
		refine_string_runs(state, first_key, refine_from, &runs, &run, &room);
	if (runs.room > 0)
	{
		pfree(runs.start);
		pfree(runs.len);
	}
	if (run.values)
	{
		pfree(run.values);
		pfree(run.isnull);
		pfree(run.position);
	}
}

/*
 * Whether the sorted rows (perm) are in the order of PostgreSQL's
 * comparators over every key: each row against the next, one comparison
 * each.  Where a key's bits come from strxfrm, which PostgreSQL does not
 * trust to agree with strcoll, this is what proves the order.
 */
static bool
rows_in_order(SortNodeState *state)
{
	int			nkeys = state->nkeys;
	Datum	   *values = palloc(sizeof(Datum) * nkeys * 2);
	bool	   *isnull = palloc(sizeof(bool) * nkeys * 2);
	bool		ordered = true;

	for (int64 i = 0; i < state->ntuples && ordered; i++)
	{
		int			cur = (i & 1) * nkeys;
		int			prev = nkeys - cur;

		fetch_keys(state, state->perm[i], 0, values + cur, isnull + cur);
		for (int k = 0; i > 0 && k < nkeys; k++)
		{
			int			c = ApplySortComparator(values[prev + k], isnull[prev + k],
												values[cur + k], isnull[cur + k],
												row_comparator(&state->keys[k]));

			if (c < 0)
				break;
			if (c > 0)
			{
				ordered = false;
				break;
			}
		}
		if ((i & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
	}
	ExecClearTuple(state->sorted_slot);
	pfree(values);
	pfree(isnull);
	return ordered;
}

/*
 * Where the words' order was not the comparators' (rows_in_order), every row
 * sorted with the comparators alone, ties in input order.
 */
static void
order_all_rows(SortNodeState *state)
{
	TieRun		run;
	int64		room = 0;

	memset(&run, 0, sizeof(run));
	run.state = state;
	run.first_key = 0;
	run.nkeys = state->nkeys;
	for (int64 i = 0; i < state->ntuples; i++)
		state->perm[i] = (uint32) i;
	order_run(state, state->perm, state->ntuples, &run, &room);
	pfree(run.values);
	pfree(run.isnull);
	pfree(run.position);
}

/*
 * Where each key's bits go in the words (layout), first key highest, the
 * total in *bits: the keys with bits, up to max_bits (the key that crosses
 * it keeps its leading bits).  Returns the first key that the words do not
 * order exactly (the tie pass's first), or nkeys for none.  A key's field
 * is its bits and, where it has NULLs, a NULL bit; with prefix (a LIMIT's
 * pruning, prefix_layout), a NULL bit always, as rows read later may bring
 * the first NULL, and the keys end before one whose bits are not trusted
 * (strxfrm's).
 */
static int
layout_keys(SortNodeState *state, PackLayout *layout, int *bits, int max_bits, bool prefix)
{
	int			first_inexact = state->nkeys;
	int			total = 0;

	layout->nkeys = 0;
	for (int k = 0; k < state->nvalued; k++)
	{
		SortKeyBits *kb = &state->keys[k].bits;
		int			field = kb->width + (prefix || state->nulls[k] ? 1 : 0);

		if (prefix && (kb->kind == SORT_KEY_NONE || kb->kind == SORT_KEY_STRXFRM))
		{
			first_inexact = k;
			break;
		}
		if (total == max_bits)
		{
			first_inexact = k;
			break;
		}
		layout->drop[k] = Max(total + field - max_bits, 0);
		total += field - layout->drop[k];
		layout->nkeys = k + 1;
		/*
		 * A string's first bytes end the packed keys: the later keys are
		 * ordered by the tie pass (packing them after strings that are whole
		 * in some rows only gave TPC-H's Q16 groups split in two)
		 */
		if (kb->kind == SORT_KEY_BYTES || layout->drop[k] > 0 || !kb->exact)
		{
			first_inexact = k;
			break;
		}
	}
	if (first_inexact == state->nkeys && layout->nkeys < state->nkeys)
		first_inexact = layout->nkeys;
	/* field offsets from the last key up: the value, then a NULL bit if any */
	for (int k = layout->nkeys - 1, at = 0; k >= 0; k--)
	{
		layout->shift[k] = at;
		at += state->keys[k].bits.width + (prefix || state->nulls[k] ? 1 : 0) - layout->drop[k];
	}
	*bits = total;
	return first_inexact;
}

/* The main sort's layout (layout_keys): up to SORT_NODE_MAX_BITS. */
static int
pack_layout(SortNodeState *state, PackLayout *layout, int *bits)
{
	return layout_keys(state, layout, bits, SORT_NODE_MAX_BITS, false);
}

/*
 * Under a run condition's bound c < n, after the sort by the words: where
 * the tie pass must have ordered the rows for the peer group of row c (its
 * c-th, or the first for c = 0) and the group after it to be found.  Peers
 * have equal words; the run of equal words that holds row c may hold the
 * next group too, else it begins the next run.  order_ties orders the runs
 * beginning before what this returns.
 */
static int64
peer_runs_end(SortNodeState *state, const PackedWords *words, int64 c)
{
	int64		n = state->ntuples;
	int64		end = c;

	if (c == 0)
		return 1;
	while (end < n && same_word(words, state->perm[c - 1], state->perm[end]))
		end++;
	return Min(end + 1, n);
}

/*
 * Whether the sorted rows a and b (input positions) are equal on their first
 * nequal keys, by the comparators; values and isnull have room for twice
 * nkeys.
 */
static bool
keys_equal(SortNodeState *state, uint32 a, uint32 b, int nequal, Datum *values, bool *isnull)
{
	int			nkeys = state->nkeys;
	bool		equal = true;

	fetch_keys(state, a, 0, values, isnull);
	fetch_keys(state, b, 0, values + nkeys, isnull + nkeys);
	for (int k = 0; k < nequal && equal; k++)
		equal = ApplySortComparator(values[k], isnull[k], values[nkeys + k], isnull[nkeys + k],
									row_comparator(&state->keys[k])) == 0;
	return equal;
}

/*
 * Under a run condition's bound c < n, the sorted rows in order: how many
 * the node keeps, the rows up to the c-th's peers and the next peer group,
 * peers by PostgreSQL's comparators.
 */
static int64
peers_end(SortNodeState *state, int64 c)
{
	int64		n = state->ntuples;
	Datum	   *values = palloc(sizeof(Datum) * state->nkeys * 2);
	bool	   *isnull = palloc(sizeof(bool) * state->nkeys * 2);
	int64		end = c;

	if (c > 0)
		while (end < n && keys_equal(state, state->perm[c - 1], state->perm[end], state->nkeys, values, isnull))
			end++;
	if (end < n)
	{
		int64		first = end++;

		while (end < n && keys_equal(state, state->perm[first], state->perm[end], state->nkeys, values, isnull))
			end++;
	}
	ExecClearTuple(state->sorted_slot);
	pfree(values);
	pfree(isnull);
	return end;
}

/*
 * Under a run condition's bound c in each partition (part_keys > 0), the
 * sorted rows in order: keeps in perm, in order, each partition's rows up
 * to its c-th's peers, its next peer group and the first row after that
 * group, and returns how many.  The WindowAgg reads that row to find where
 * the group ends (the frame of the group's first row, whose window
 * functions it computes before its run condition fails), and once in
 * WINDOWAGG_PASSTHROUGH_STRICT still computes the target list of the rows
 * it had read (nodeWindowAgg.c), which may fail (1 / x) or have side
 * effects (nextval()).  A partition's later rows are those its WindowAgg
 * reads past without computing anything.  Partitions and peers are told by
 * the words where they hold the keys exactly (part_exact: the partition
 * keys are packed whole above bit part_shift; all_exact: every key is),
 * else by PostgreSQL's comparators.
 */
static int64
partition_cut(SortNodeState *state, const PackedWords *words, bool part_exact, int part_shift,
			  bool all_exact, int64 c)
{
	int64		n = state->ntuples;
	uint32	   *perm = state->perm;
	int			nkeys = state->nkeys;
	Datum	   *values = palloc(sizeof(Datum) * nkeys * 2);
	bool	   *isnull = palloc(sizeof(bool) * nkeys * 2);
	int64		out = 0;
	int64		pos = 0;		/* the row's place in its partition */
	int			groups_past = 0;	/* its partition's peer groups begun at c or later */
	uint32		prev = 0;

	for (int64 i = 0; i < n; i++)
	{
		uint32		row = perm[i];
		bool		new_partition = (i == 0);
		bool		begins_past;

		if (i > 0)
		{
			if (part_exact)
				new_partition = (word_at(words, prev) >> part_shift) != (word_at(words, row) >> part_shift);
			else
				new_partition = !keys_equal(state, prev, row, state->part_keys, values, isnull);
		}
		if (new_partition)
		{
			pos = 0;
			groups_past = 0;
		}
		/* the peer group's first row at c or past it: its rank is past c */
		begins_past = (pos >= c && groups_past < 2 &&
					   (new_partition ||
						!(all_exact ? same_word(words, prev, row) :
						  keys_equal(state, prev, row, nkeys, values, isnull))));
		if (begins_past)
			groups_past++;
		if (groups_past <= 1 || begins_past)
			perm[out++] = row;
		pos++;
		prev = row;
		if ((i & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
	}
	ExecClearTuple(state->sorted_slot);
	pfree(values);
	pfree(isnull);
	return out;
}

/*
 * Under WindowAggs' ranking functions (nwin > 0), the sorted rows in order
 * (perm's first n): into win_diff, for each row, the first of the first
 * win_max_keys keys on which it differs from the row before (see
 * SortNodeState).  The keys below first_inexact by the words, where the
 * highest bit in which two rows' words differ falls in that key's field;
 * the others by PostgreSQL's comparators, which the WindowAgg's equality
 * operators agree with (the same btree families).
 */
static void
mark_window_runs(SortNodeState *state, const PackedWords *words, const PackLayout *layout,
				 int first_inexact, int64 n)
{
	uint32	   *perm = state->perm;
	int			nkeys = state->nkeys;
	int			max_keys = state->win_max_keys;
	int			exact = Min(first_inexact, max_keys);
	int			exact_shift = exact > 0 ? layout->shift[exact - 1] : 0;
	Datum	   *values = palloc(sizeof(Datum) * nkeys * 2);
	bool	   *isnull = palloc(sizeof(bool) * nkeys * 2);
	uint8	   *diff = gpusort_alloc_large(Max(n, 1));

	if (n > 0)
		diff[0] = 0;
	for (int64 i = 1; i < n; i++)
	{
		uint32		prev = perm[i - 1];
		uint32		row = perm[i];
		int			d = exact;

		if (exact > 0)
		{
			uint128		x = (word_at(words, prev) ^ word_at(words, row)) >> exact_shift;

			if (x != 0)
			{
				uint64		high = (uint64) (x >> 64);
				int			bit = exact_shift + (high != 0 ? 64 + pg_leftmost_one_pos64(high) :
												 pg_leftmost_one_pos64((uint64) x));

				/* the key whose field holds that bit: fields from the first key down */
				d = 0;
				while (layout->shift[d] > bit)
					d++;
			}
		}
		if (d == exact && exact < max_keys)
		{
			fetch_keys(state, prev, exact, values, isnull);
			fetch_keys(state, row, exact, values + nkeys, isnull + nkeys);
			while (d < max_keys &&
				   ApplySortComparator(values[d - exact], isnull[d - exact],
									   values[nkeys + d - exact], isnull[nkeys + d - exact],
									   row_comparator(&state->keys[d])) == 0)
				d++;
		}
		diff[i] = (uint8) d;
		if ((i & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
	}
	ExecClearTuple(state->sorted_slot);
	pfree(values);
	pfree(isnull);
	state->win_diff = diff;
}

/*
 * A partition's best values, for preselect_partitions: up to c + 3 distinct
 * values of its ordering keys' bits, ascending, with how many rows hold each.
 */
typedef struct PartitionBest
{
	uint128		part;			/* the partition keys' bits */
	uint128		last;			/* where full, the last of the values: a row
								 * past it is not kept */
	int			nvalues;
	bool		full;			/* nvalues reaches past the c-th row: the
								 * last two values are the next peer
								 * group's and the one after it */
} PartitionBest;

/* The partitions whose best values are kept are at most this many per row read */
#define PRESELECT_MAX_SLOTS_PER_ROW 0.5
#define PRESELECT_MAX_BOUND 64
#define PRESELECT_MIN_ROWS 4096

static inline uint64
mix_bits(uint128 v)
{
	uint64		h = (uint64) v ^ ((uint64) (v >> 64) * UINT64_C(0x9E3779B97F4A7C15));

	h ^= h >> 33;
	h *= UINT64_C(0xFF51AFD7ED558CCD);
	h ^= h >> 33;
	return h;
}

/*
 * Under a run condition's bound c in each partition, where every key packs
 * exactly: the rows that the cut after the sort (partition_cut) keeps, found
 * before the sort, so that only those are sorted.  A row's word is its
 * partition's bits above part_shift and its ordering keys' bits below; a
 * partition keeps the rows whose ordering bits are at most its threshold:
 * the second least value above the c-th row's value (the value after the
 * next peer group's, whose first row the cut keeps), or, for c = 0, its
 * second least value.  One pass finds each partition's threshold in a
 * hash table of its best values and notes the rows within the threshold of
 * their time (a threshold only falls, so no other row can be kept); a
 * second checks those against the final thresholds and keeps the rows
 * (keep_rows, in input order).  Returns false, leaving the rows as they
 * are, where the partitions are so many that few rows would go.
 */
static bool
preselect_partitions(SortNodeState *state, const PackLayout *layout, int part_shift, int64 c)
{
	int64		n = state->ntuples;
	int			slots = (int) c + 3;
	uint128		low_mask = ((uint128) 1 << part_shift) - 1;
	int64		max_parts = (int64) (n * PRESELECT_MAX_SLOTS_PER_ROW) / slots;
	int64		max_capacity = 1024;
	int64		capacity = 1024;	/* the table's, doubled as partitions come */
	int64		nparts = 0;
	int64		kept = 0;
	int64		candidates = 0;
	int32	   *table;
	PartitionBest *parts;
	uint128    *values;
	int64	   *counts;
	uint32	   *perm;
	bool		ok = true;

	if (n < PRESELECT_MIN_ROWS || c > PRESELECT_MAX_BOUND || part_shift >= 128)
		return false;
	while (max_capacity < 2 * Min(max_parts, n / 16 + 1))
		max_capacity *= 2;

	/*
	 * Not gpusort_alloc_large, which faults every page in: the partitions'
	 * arrays are sized for the most partitions and the candidates for every
	 * row, and few of their pages are used where the rows kept are few.  The
	 * table starts small and doubles, so that with the partitions' hot
	 * fields it stays in the CPU's caches where the partitions are few (a
	 * row past its partition's last value costs two loads, most of the pass).
	 */
	table = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int32) * max_capacity);
	memset(table, -1, sizeof(int32) * capacity);
	parts = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(PartitionBest) * (max_capacity / 2));
	values = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint128) * slots * (max_capacity / 2));
	counts = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * slots * (max_capacity / 2));

	/* the rows that pass the first pass's thresholds, in input order */
	perm = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint32) * Max(n, 1));
	for (int64 i = 0; i < n && ok; i++)
	{
		uint128		w = packed_key(state, layout, i);
		uint128		part = w >> part_shift;
		uint128		v = w & low_mask;
		int64		slot = mix_bits(part) & (capacity - 1);
		PartitionBest *p;
		uint128    *pv;
		int64	   *pc;
		int			j;
		int64		cum;

		if ((i & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
		while (table[slot] >= 0 && parts[table[slot]].part != part)
			slot = (slot + 1) & (capacity - 1);
		if (table[slot] < 0)
		{
			if (nparts + 1 > max_parts || nparts + 1 > max_capacity / 2)
			{
				ok = false;
				break;
			}
			if (nparts + 1 > capacity / 2)
			{
				/* the table doubled, its partitions placed again */
				capacity *= 2;
				memset(table, -1, sizeof(int32) * capacity);
				for (int64 q = 0; q < nparts; q++)
				{
					int64		at = mix_bits(parts[q].part) & (capacity - 1);

					while (table[at] >= 0)
						at = (at + 1) & (capacity - 1);
					table[at] = (int32) q;
				}
				slot = mix_bits(part) & (capacity - 1);
				while (table[slot] >= 0)
					slot = (slot + 1) & (capacity - 1);
			}
			table[slot] = (int32) nparts;
			parts[nparts].part = part;
			parts[nparts].nvalues = 0;
			parts[nparts].full = false;
			nparts++;
		}
		p = &parts[table[slot]];
		pv = values + (Size) table[slot] * slots;
		pc = counts + (Size) table[slot] * slots;
		/* past the value after the next peer group's: not kept, as thresholds only fall */
		if (p->full && v > p->last)
			continue;
		perm[candidates++] = (uint32) i;
		for (j = 0; j < p->nvalues && pv[j] < v; j++)
			;
		if (j < p->nvalues && pv[j] == v)
			pc[j]++;
		else
		{
			int			last = Min(p->nvalues, slots - 1);

			for (int m = last; m > j; m--)
			{
				pv[m] = pv[m - 1];
				pc[m] = pc[m - 1];
			}
			pv[j] = v;
			pc[j] = 1;
			p->nvalues = last + 1;
		}
		/* the values up to the first whose rows reach c, and the next two */
		cum = 0;
		p->full = false;
		for (j = 0; j < p->nvalues; j++)
		{
			if (cum >= c)
			{
				if (j + 1 < p->nvalues)
				{
					p->nvalues = j + 2;
					p->full = true;
					p->last = pv[j + 1];
				}
				break;
			}
			cum += pc[j];
		}
	}
	if (ok)
	{
		/* the candidates against their partitions' final thresholds */
		for (int64 r = 0; r < candidates; r++)
		{
			int64		i = perm[r];
			uint128		w = packed_key(state, layout, i);
			uint128		part = w >> part_shift;
			int64		slot = mix_bits(part) & (capacity - 1);
			PartitionBest *p;

			while (parts[table[slot]].part != part)
				slot = (slot + 1) & (capacity - 1);
			p = &parts[table[slot]];
			if (!p->full || (w & low_mask) <= p->last)
				perm[kept++] = (uint32) i;
		}
		if (kept < n)
			keep_rows(state, perm, kept);
	}
	pfree(perm);
	pfree(table);
	pfree(parts);
	pfree(values);
	pfree(counts);
	return ok;
}

#define SORT_NODE_PREFETCH 8
#if defined(__GNUC__) || defined(__clang__)
#define prefetch_tuple(p) __builtin_prefetch(p)
#else
#define prefetch_tuple(p) ((void) 0)
#endif

/*
 * The first n tuples (state->tuples, in sorted order) copied one after
 * another into one block, in that order, and the tuples as read freed.
 * Emitting then reads memory in order: following the pointers instead costs
 * a cache and TLB miss a row (about 50-100 ns at 10^7 rows), while the
 * copy's misses overlap, a few rows ahead on each of up to
 * gpusort.key_threads threads (gs_gather_records).
 *
 * Only where it pays and fits:
 * - on GATHER_MIN_THREADS threads or more, as many as gpusort.key_threads,
 *   the CPUs online and the rows allow (gs_gather_records gives a thread
 *   GS_GATHER_RECORDS_PER_THREAD rows or more): on one, an H200 host's 10^7
 *   numeric rows took 2,412 ms with the copy and 2,239 without; on two, a
 *   2-core VM's 2*10^6 text rows 948 and 817; on four, the H200 host's
 *   2,767 and 3,260;
 * - rows of GATHER_MAX_WIDTH bytes or less on average: a wider row's miss
 *   is a small part of reading it, and its copy costs its bytes;
 * - within work_mem, which must hold both copies for the time of the copy
 *   (mem_peak, which Sort Memory counts); under a bound of at most half the
 *   rows held the block holds the first n rows only.
 *
 * A block that
 * cannot be allocated leaves the rows where they are.  Tuples handed by
 * workers stay in the DSA area as well.  The threads call no PostgreSQL
 * function; interrupts are checked between slices of about GATHER_SLICE_BYTES.
 */
#define GATHER_MIN_ROWS 16384
#define GATHER_MIN_THREADS 4
#define GATHER_MAX_WIDTH 256
#define GATHER_SLICE_BYTES ((int64) 64 * 1024 * 1024)

static void
gather_tuples(SortNodeState *state, int64 n)
{
	char	   *block;
	char	   *to;
	Size		room = Max(state->row_bytes, 1);
	Size		at = 0;
	int			threads = (int) Min((int64) sort_key_thread_limit(), n / GS_GATHER_RECORDS_PER_THREAD);
	int64		width = state->row_bytes / Max(state->ntuples, 1);
	int64		slice = Min(Max(GATHER_SLICE_BYTES / Max(width, 1), GATHER_MIN_ROWS),
							INT64CONST(1) << 21);

	if (n < GATHER_MIN_ROWS || width > GATHER_MAX_WIDTH)
		return;
#ifdef GS_INJECTION_POINTS
	/* tests: no copy, or one on fewer threads than pay */
	if (test_flag("gpusort_test.no_gather"))
		return;
	if (threads < GATHER_MIN_THREADS && !test_flag("gpusort_test.gather_any_threads"))
		return;
#else
	if (threads < GATHER_MIN_THREADS)
		return;
#endif

	/*
	 * A bound's first n of at least twice as many rows held: a block of
	 * their bytes alone, counted in one pass over them (a miss a row, on one
	 * thread, which a bound near the rows held would not repay).
	 */
	if (n <= state->ntuples / 2)
	{
		Size		bytes = 0;

		for (int64 i = 0; i < n; i++)
		{
			if (i + SORT_NODE_PREFETCH < n)
				prefetch_tuple(state->tuples[i + SORT_NODE_PREFETCH]);
			bytes += TYPEALIGN(8, state->tuples[i]->t_len);
		}
		room = Max(bytes, 1);
	}
	if (state->mem_used + (int64) room > (int64) work_mem * 1024)
		return;
	/* gs_gather_records places the copies at multiples of 8 from an aligned start */
	block = MemoryContextAllocExtended(state->tuple_context, room + 8,
									   MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (block == NULL)
		return;
	to = (char *) TYPEALIGN(8, block);
	for (int64 i = 0; i < n; i += slice)
	{
		size_t		used;
		gs_error	err;

		if (gs_gather_records((void **) state->tuples + i, Min(slice, n - i), to + at,
							  room - at, threads, &used, &err) != GS_OK)
			elog(ERROR, "gpusort sort node: %s", err.message);
		at += used;
		CHECK_FOR_INTERRUPTS();
	}
	state->mem_peak = Max(state->mem_peak, state->mem_used + (int64) GetMemoryChunkSpace(block));
	if (state->row_context != NULL)
	{
		MemoryContextDelete(state->row_context);
		state->row_context = NULL;
	}
	state->mem_used += GetMemoryChunkSpace(block) - state->row_space;
	state->row_space = 0;
	state->row_bytes = at;
}

/*
 * Packs each row's keys into one word, first key highest, and argsorts the
 * words.  The library orders signed integers: flipping the top bit makes
 * their order the words' unsigned order.  Where the words are a prefix of
 * the order, the tie pass then orders the rows whose words are equal.
 */
static void
sort_rows(SortNodeState *state)
{
	int64		n = state->ntuples;
	/* a run condition's bound in each partition: the whole sort, then the cut */
	bool		cut = (state->bound_peers && state->part_keys > 0);
	int64		out = (!cut && state->bound >= 0 && state->bound < n) ? state->bound : n;
	PackLayout	layout;
	int			bits;
	int			first_inexact = pack_layout(state, &layout, &bits);
	bool		ties = (first_inexact < state->nkeys);
	/* a run condition's bound below n: the rows up to the peer group past it */
	bool		peers = (state->bound_peers && out < n);
	uint64	   *high = NULL;
	int64		rank = out;
	int			refine_from = -1;
	PackedWords packed;
	void	   *spare;
	Size		spare_bytes;
	MemoryContext old = MemoryContextSwitchTo(state->tuple_context);

	state->key_bits = bits;
	state->perm = gpusort_alloc_large(sizeof(uint32) * Max(n, 1));

	/*
	 * A byte string that the words end with is refined by its bytes in the
	 * tie pass, from the first byte that the words do not hold (ICU's from
	 * its first: its abbreviated key's bytes need not be its sort key's).
	 */
	if (ties && first_inexact < layout.nkeys && state->keys[first_inexact].bits.byte_string &&
		state->keys[first_inexact].xfrm != NULL)
	{
		SortKeyInfo *key = &state->keys[first_inexact];

		refine_from = key->bits.kind == SORT_KEY_BYTES || key->bits.kind == SORT_KEY_STRXFRM ?
			(key->bits.width - layout.drop[first_inexact]) / 8 : 0;
	}
	memset(&packed, 0, sizeof(packed));
	packed.bits = bits;

	/*
	 * The words go where the first key's values were: row i's word is written
	 * after its values are read, and never past them (4 or 8 bytes of 8).
	 */
	if (bits <= 64)
	{
		void	   *words = state->values[0];
		uint32	   *words32 = (uint32 *) words;
		uint64	   *words64 = (uint64 *) words;

		for (int64 i = 0; i < n; i++)
		{
			uint64		w = (uint64) packed_key(state, &layout, i);

			if (bits <= 32)
				words32[i] = (uint32) w ^ UINT32_C(0x80000000);
			else
				words64[i] = w ^ UINT64_C(0x8000000000000000);
		}
		for (int k = 1; k < state->nvalued; k++)
			pfree(state->values[k]);
		packed.words = words;
		if (peers && !ties)
		{
			uint64		threshold;
			bool		have_next;

			/* exact words: the peers are the rows of equal words */
			out = select_peers(state, words, bits, n, rank, state->perm, &threshold, &have_next);
			peers = false;
		}
		else
		{
			/* with ties to order, the whole sort first: a run may cross the bound */
			argsort_words(state, words, n, bits <= 32 ? 32 : 64, state->perm,
						  out < n && !ties && !peers ? out : 0);
			if (ties)
				order_ties(state, &packed, first_inexact,
						   state->check_order ? n : peers ? peer_runs_end(state, &packed, rank) : out,
						   refine_from);
		}
	}
	else
	{
		uint64	   *low = state->values[0];
		uint32	   *first = gpusort_alloc_large(sizeof(uint32) * Max(n, 1));
		/* the low words stay for the tie pass, the cut and the window's runs, else they take the high */
		uint64	   *second = ties || cut || state->nwin > 0 ?
			gpusort_alloc_large(sizeof(uint64) * Max(n, 1)) : low;
		/* a bound's first rows only, where no tie pass may reorder them */
		int64		selected = (out < n && !ties && !peers) ? out : n;

		high = gpusort_alloc_large(sizeof(uint64) * Max(n, 1));
		for (int64 i = 0; i < n; i++)
		{
			uint128		w = packed_key(state, &layout, i);

			low[i] = (uint64) w ^ UINT64_C(0x8000000000000000);
			high[i] = (uint64) (w >> 64);
		}
		for (int k = 1; k < state->nvalued; k++)
			pfree(state->values[k]);
		argsort_words(state, low, n, 64, first, 0);
		/* the high words in the low words' order, then a stable sort of those */
		for (int64 i = 0; i < n; i++)
			second[i] = high[first[i]] ^ UINT64_C(0x8000000000000000);
		argsort_words(state, second, n, 64, state->perm, selected < n ? selected : 0);
		for (int64 i = 0; i < selected; i++)
			state->perm[i] = first[state->perm[i]];
		packed.low = low;
		packed.high = high;
		if (ties)
		{
			order_ties(state, &packed, first_inexact,
					   state->check_order ? n : peers ? peer_runs_end(state, &packed, rank) : out,
					   refine_from);
		}
		if (second != low)
			pfree(second);
		pfree(first);
	}
	if (state->check_order && !rows_in_order(state))
		order_all_rows(state);
	if (peers)
		out = peers_end(state, rank);
	if (cut)
		out = partition_cut(state, &packed, first_inexact >= state->part_keys,
							first_inexact >= state->part_keys ? layout.shift[state->part_keys - 1] : 0,
							!ties, state->bound);
	if (state->nwin > 0)
		mark_window_runs(state, &packed, &layout, first_inexact, out);
	if (high)
		pfree(high);

	/* the first key's buffer, free now, takes the first permuted array */
	spare = state->values[0];
	spare_bytes = sizeof(uint64) * state->capacity;
	state->values = NULL;

	/*
	 * The rows in sorted order (the tuple pointers, or each column): emitting
	 * then reads arrays in order, where following perm would add a cache miss
	 * a row; this loop's misses overlap.
	 */
	if (state->columnar)
	{
		for (int c = 0; c < state->ncols; c++)
		{
			state->cols[c] = permute_array(state->cols[c], sizeof(Datum) * state->capacity,
										   sizeof(Datum), state->perm, out, &spare, &spare_bytes);
			if (state->colnulls[c])
				state->colnulls[c] = permute_array(state->colnulls[c], state->capacity, sizeof(bool),
												   state->perm, out, &spare, &spare_bytes);
		}
	}
	else
	{
		state->tuples = permute_array(state->tuples, sizeof(MinimalTuple) * state->capacity,
									  sizeof(MinimalTuple), state->perm, out, &spare, &spare_bytes);
		gather_tuples(state, out);
	}
	pfree(spare);
	pfree(state->perm);
	state->perm = NULL;
	state->ntuples = out;
	MemoryContextSwitchTo(old);
}

/*
 * The rows in order (sort_rows); under a run condition's bound in each
 * partition with every key packed exactly, only the rows that its cut keeps
 * (preselect_partitions), on either device: at 10^7 rows, 10^4 partitions
 * and k = 10 on an H200 host the selection took 336 ms, the GPU's sort of
 * every row (two passes of 64-bit words, the partition and ordering keys
 * filling 96 bits) 551-586 ms.
 */
static void
sort_in_memory(SortNodeState *state)
{
	if (state->bound_peers && state->part_keys > 0 && state->bound <= PRESELECT_MAX_BOUND)
	{
		PackLayout	layout;
		int			bits;

		if (pack_layout(state, &layout, &bits) == state->nkeys && layout.nkeys == state->nkeys)
			preselect_partitions(state, &layout, layout.shift[state->part_keys - 1], state->bound);
	}
	sort_rows(state);
}

/*
 * An exact packing that the key's input column's typmod allows (numeric(p,s),
 * sort_key_numeric_typmod), in place of bits's prefix.
 */
static void
key_typmod_packing(SortNodeState *state, SortKeyInfo *key, SortKeyBits *bits)
{
	CustomScan *cscan = (CustomScan *) state->css.ss.ps.plan;
	TargetEntry *tle = get_tle_by_resno(cscan->custom_scan_tlist, key->column);

	if (tle != NULL)
		sort_key_numeric_typmod(exprType((Node *) tle->expr), exprTypmod((Node *) tle->expr), bits);
}

/*
 * Whether column c (not by value) can be kept as the bits of the keys on
 * it: every key on it a numeric(p,s) key whose bits give its values back
 * (sort_key_numeric_rebuilds), and bits_column[c] the first; at the node's
 * start, from the bits prepare_keys will find.  A value those bits do not
 * give back sends the rows to a tuplesort as they are read (read_input).
 */
static bool
numeric_bits_column(SortNodeState *state, TupleDesc desc, int c)
{
#if SIZEOF_DATUM == 8
	Form_pg_attribute attr = TupleDescAttr(desc, c);

	if (getBaseType(attr->atttypid) != NUMERICOID)
		return false;
	for (int k = 0; k < state->nkeys; k++)
	{
		SortKeyInfo *key = &state->keys[k];
		SortKeyBits bits;

		if (key->column != c + 1)
			continue;
		sort_key_bits(key->sortop, key->collation, key->nulls_first, &bits, NULL);
		key_typmod_packing(state, key, &bits);
		if (!sort_key_numeric_rebuilds(&bits))
		{
			state->bits_column[c] = -1;
			return false;
		}
		if (state->bits_column[c] < 0)
			state->bits_column[c] = k;
	}
	return state->bits_column[c] >= 0;
#else
	/* the bits are 64: a Datum of a column */
	return false;
#endif
}

/* The order of two keys' bits (a column kept as them), as unsigned integers. */
static int
compare_bits(Datum a, Datum b, SortSupport ssup)
{
	return (uint64) a < (uint64) b ? -1 : (uint64) a > (uint64) b ? 1 : 0;
}

/*
 * Each key's leading bits, with its abbreviated key's conversion where that
 * gives them, and its full comparator for the rows whose bits are equal; at
 * the first sort, as Sort prepares its keys (an EXPLAIN without ANALYZE
 * prepares nothing; begin_sort only looks at the bits of numeric key
 * columns, numeric_bits_column).  Bits are kept up to the first key that gives none or
 * that is not exact: past that, bits would order rows that the pass must
 * see as one run.
 */
static void
prepare_keys(SortNodeState *state)
{
	MemoryContext cxt = state->css.ss.ps.state->es_query_cxt;
	MemoryContext old = MemoryContextSwitchTo(cxt);

	state->nvalued = 0;
	for (int k = 0; k < state->nkeys; k++)
	{
		SortKeyInfo *key = &state->keys[k];

		key->abbrev.ssup_cxt = cxt;
		sort_key_bits(key->sortop, key->collation, key->nulls_first, &key->bits, &key->abbrev);
		key_typmod_packing(state, key, &key->bits);
		key->full.ssup_cxt = cxt;
		key->full.ssup_collation = key->collation;
		key->full.ssup_nulls_first = key->nulls_first;
		key->full.ssup_attno = key->column;
		PrepareSortSupportFromOrderingOp(key->sortop, &key->full);
		if (key->in_bits)
		{
			if (!sort_key_numeric_rebuilds(&key->bits))
				elog(ERROR, "gpusort sort node: key %d's column is kept as bits the key does not give", k + 1);
			memset(&key->bits_cmp, 0, sizeof(key->bits_cmp));
			key->bits_cmp.ssup_cxt = cxt;
			key->bits_cmp.ssup_nulls_first = key->nulls_first;
			key->bits_cmp.ssup_reverse = key->full.ssup_reverse;
			key->bits_cmp.comparator = compare_bits;
		}
	}
	state->check_order = false;
	for (int k = 0; k < state->nkeys && state->keys[k].bits.kind != SORT_KEY_NONE; k++)
	{
		SortKeyInfo *key = &state->keys[k];

		state->nvalued = k + 1;
		if (key->bits.kind == SORT_KEY_BYTES)
			key->xfrm = sort_key_xfrm_begin(key->collation, key->bits.type, false);
		/* an ICU string's sort keys, for the tie pass's rounds */
		if (key->bits.kind == SORT_KEY_ABBREV_UNSIGNED && key->bits.byte_string)
			key->xfrm = sort_key_xfrm_begin(key->collation, key->bits.type, true);
		if (key->bits.kind == SORT_KEY_STRXFRM)
		{
			key->xfrm = sort_key_xfrm_begin(key->collation, key->bits.type, true);
			state->check_order = true;
#ifdef GS_INJECTION_POINTS
			{
				const char *invert = GetConfigOption("gpusort_test.invert_strxfrm", true, false);

				key->invert_xfrm = (invert != NULL && strcmp(invert, "on") == 0);
			}
#endif
		}
		/* a string's first bytes are exact where it is shorter: on to the next */
		if (!key->bits.exact && key->bits.kind != SORT_KEY_BYTES)
			break;
	}
	if (state->nvalued == 0)
		elog(ERROR, "gpusort sort node: the first sort key gives no bits to order by");
	state->keys_prepared = true;
	MemoryContextSwitchTo(old);
}

static void
do_sort(SortNodeState *state)
{
	instr_time	start;
	instr_time	now;

	if (!state->keys_prepared)
		prepare_keys(state);
	set_bound(state);
	if (state->together)
		read_together(state);
	else
		read_input(state);
	/* the sort cuts its rows to the bound: EXPLAIN counts those it orders */
	state->rows_held = state->ntuples;
	INSTR_TIME_SET_CURRENT(start);
	if (state->tuplesort)
		tuplesort_performsort(state->tuplesort);
	else if (state->ntuples > 0)
		sort_in_memory(state);
	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	state->sort_ms = INSTR_TIME_GET_MILLISEC(now);
	state->current = 0;
	state->eof_reached = false;
	state->sort_done = true;
	if (state->am_worker)
		publish_figures(state);
}


/*
 * The next row in direction forward, following tuplesort's in-memory rules,
 * or -1 at either end.
 */
static int64
next_row(SortNodeState *state, bool forward)
{
	if (forward)
	{
		if (state->current < state->ntuples)
		{
			/* the tuple a few calls ahead, so that its miss overlaps this one's work */
			if (!state->columnar && state->current + SORT_NODE_PREFETCH < state->ntuples)
				prefetch_tuple(state->tuples[state->current + SORT_NODE_PREFETCH]);
			return state->current++;
		}
		state->eof_reached = true;
		return -1;
	}
	if (state->current <= 0)
		return -1;
	/* past the end: the last tuple; else the one before the last returned */
	if (state->eof_reached)
		state->eof_reached = false;
	else
	{
		state->current--;
		if (state->current <= 0)
			return -1;
	}
	return state->current - 1;
}

/*
 * The first of the first win_max_keys keys on which the row from the
 * tuplesort (sorted_slot) differs from the row before it, which it then
 * replaces in win_prev.
 */
static int
window_diff_from_tuplesort(SortNodeState *state)
{
	TupleTableSlot *row = state->sorted_slot;
	TupleTableSlot *prev = state->win_prev;
	int			d = 0;

	if (!TupIsNull(prev))
	{
		for (; d < state->win_max_keys; d++)
		{
			SortKeyInfo *key = &state->keys[d];
			bool		null1;
			bool		null2;
			Datum		v1 = slot_getattr(prev, key->column, &null1);
			Datum		v2 = slot_getattr(row, key->column, &null2);

			if (ApplySortComparator(v1, null1, v2, null2, &key->full) != 0)
				break;
		}
	}
	ExecCopySlot(prev, row);
	return d;
}

/*
 * How many rows after the current one (sorted position pos in memory, or
 * the tuplesort's last, whose copy win_prev holds) are equal to it on the
 * first level keys: the rest of its partition or of its peers.  From a
 * tuplesort, the rows are read ahead and then gone back over, as many
 * calls backwards as were made forwards (the one that found the end
 * included), which leaves the tuplesort where it was.
 */
static int64
rows_ahead(SortNodeState *state, int64 pos, int level)
{
	int64		count = 0;

	if (pos >= 0)
	{
		while (pos + 1 + count < state->ntuples && state->win_diff[pos + 1 + count] >= level)
			count++;
	}
	else
	{
		int64		calls = 0;

		for (;;)
		{
			bool		same = true;

			calls++;
			if (!tuplesort_gettupleslot(state->tuplesort, true, false, state->win_ahead, NULL))
				break;
			for (int k = 0; k < level && same; k++)
			{
				SortKeyInfo *key = &state->keys[k];
				bool		null1;
				bool		null2;
				Datum		v1 = slot_getattr(state->win_prev, key->column, &null1);
				Datum		v2 = slot_getattr(state->win_ahead, key->column, &null2);

				same = ApplySortComparator(v1, null1, v2, null2, &key->full) == 0;
			}
			if (!same)
				break;
			count++;
			if ((count & 0xFFFF) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		ExecClearTuple(state->win_ahead);
		while (calls-- > 0)
			(void) tuplesort_gettupleslot(state->tuplesort, false, false, state->win_ahead, NULL);
		ExecClearTuple(state->win_ahead);
	}
	return count;
}

/*
 * ntile(buckets)'s value for the row_number-th row of a partition of total
 * rows: the first total % buckets buckets hold one row more than the
 * others, as nodeWindowAgg's window_ntile deals them.
 */
static int32
ntile_of(int64 row_number, int64 total, int64 buckets)
{
	int64		size = total / buckets;
	int64		larger = total % buckets;

	if (size == 0)
		return (int32) row_number;
	if (row_number <= larger * (size + 1))
		return (int32) ((row_number - 1) / (size + 1) + 1);
	return (int32) (larger + (row_number - larger * (size + 1) - 1) / size + 1);
}

/*
 * The top WindowAgg's row over the sorted row in slot (empty at the end),
 * at sorted position pos in memory (-1 from a tuplesort), which differs from
 * the row before on key diff first: the row's columns and its ranking
 * functions' values in the scan slot, through the target list.  A row that
 * differs within a window's partition keys begins a partition of it, within
 * its partition and ordering keys a peer group.
 */
static TupleTableSlot *
window_row(SortNodeState *state, TupleTableSlot *slot, int diff, int64 pos)
{
	TupleTableSlot *scan = state->css.ss.ss_ScanTupleSlot;
	ProjectionInfo *projection = state->css.ss.ps.ps_ProjInfo;

	if (TupIsNull(slot))
		return NULL;
	for (int w = 0; w < state->nwin; w++)
	{
		int			kind = state->win_kinds[w];
		Datum		value;

		if (!state->win_started || diff < state->win_part[w])
		{
			state->win_row[w] = 0;
			state->win_dense[w] = 0;
			if (kind >= WINDOW_PERCENT_RANK)
				state->win_total[w] = 1 + rows_ahead(state, pos, state->win_part[w]);
		}
		state->win_row[w]++;
		if (!state->win_started || diff < state->win_keys[w])
		{
			state->win_rank[w] = state->win_row[w];
			state->win_dense[w]++;
			if (kind == WINDOW_CUME_DIST)
				state->win_peer_end[w] = state->win_row[w] + rows_ahead(state, pos, state->win_keys[w]);
		}
		switch (kind)
		{
			case WINDOW_ROW_NUMBER:
				value = Int64GetDatum(state->win_row[w]);
				break;
			case WINDOW_RANK:
				value = Int64GetDatum(state->win_rank[w]);
				break;
			case WINDOW_DENSE_RANK:
				value = Int64GetDatum(state->win_dense[w]);
				break;
			case WINDOW_PERCENT_RANK:
				value = Float8GetDatum(state->win_total[w] <= 1 ? 0.0 :
									   (float8) (state->win_rank[w] - 1) / (float8) (state->win_total[w] - 1));
				break;
			case WINDOW_CUME_DIST:
				value = Float8GetDatum((float8) state->win_peer_end[w] / (float8) state->win_total[w]);
				break;
			default:
				value = Int32GetDatum(ntile_of(state->win_row[w], state->win_total[w], state->win_arg[w]));
				break;
		}
		scan->tts_values[state->ncols + w] = value;
	}
	state->win_started = true;

	/* after the functions: reading ahead may move the tuplesort's slots, not slot's copy */
	slot_getallattrs(slot);
	ExecClearTuple(scan);
	memcpy(scan->tts_values, slot->tts_values, sizeof(Datum) * state->ncols);
	memcpy(scan->tts_isnull, slot->tts_isnull, sizeof(bool) * state->ncols);
	memset(scan->tts_isnull + state->ncols, 0, sizeof(bool) * state->nwin);
	ExecStoreVirtualTuple(scan);
	if (projection == NULL)
		return scan;
	ResetExprContext(state->css.ss.ps.ps_ExprContext);
	state->css.ss.ps.ps_ExprContext->ecxt_scantuple = scan;
	return ExecProject(projection);
}

static TupleTableSlot *
exec_sort(CustomScanState *node)
{
	SortNodeState *state = (SortNodeState *) node;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
	TupleTableSlot *slot = state->out_slot;
	bool		timing = (node->ss.ps.instrument != NULL);
	int			diff = 0;
	int64		pos = -1;
	instr_time	start;

	CHECK_FOR_INTERRUPTS();
	if (!state->sort_done)
		do_sort(state);

	if (timing)
		INSTR_TIME_SET_CURRENT(start);
	if (state->tuplesort)
	{
		/* a copy where reading ahead moves the tuplesort past the row */
		if (!tuplesort_gettupleslot(state->tuplesort, forward, state->win_lookahead, state->sorted_slot, NULL))
			ExecClearTuple(slot);
		else
		{
			if (state->nwin > 0)
				diff = window_diff_from_tuplesort(state);
			if (slot != state->sorted_slot)
				ExecCopySlot(slot, state->sorted_slot);
		}
	}
	else
	{
		int64		row = next_row(state, forward);

		if (row < 0)
			ExecClearTuple(slot);
		else
		{
			if (state->columnar)
				store_columns(state, row, slot);
			else
				ExecStoreMinimalTuple(state->tuples[row], slot, false);
			if (state->nwin > 0)
			{
				diff = state->win_diff[row];
				pos = row;
			}
		}
	}
	if (state->nwin > 0)
		slot = window_row(state, slot, diff, pos);
	if (timing)
	{
		instr_time	now;

		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		state->emit_ms += INSTR_TIME_GET_MILLISEC(now);
	}

	return slot;
}

static void
end_sort(CustomScanState *node)
{
	SortNodeState *state = (SortNodeState *) node;

	reset_sort(state);
	MemoryContextDelete(state->tuple_context);
	/* the shared memory may go before the node's shutdown (a cursor's plan) */
	state->shared = NULL;
	ExecEndNode(outerPlanState(node));
}

static void
rescan_sort(CustomScanState *node)
{
	SortNodeState *state = (SortNodeState *) node;
	PlanState  *child = outerPlanState(node);

	if (!state->sort_done)
		return;
	ExecClearTuple(state->sorted_slot);
	ExecClearTuple(state->out_slot);
	if (state->win_prev)
		ExecClearTuple(state->win_prev);
	state->win_started = false;

	/*
	 * As Sort does: the sorted rows stay only when the node was begun for
	 * rewinding (random access) and the child's parameters did not change.
	 * Otherwise the child is read again, since its rows may differ from one
	 * scan to the next (nextval(), random()) even without a parameter.
	 */
	if (child->chgParam != NULL || !state->random_access || state->together ||
		((state->count_expr != NULL || state->bound_peers) && current_bound(state) != state->bound))
	{
		reset_sort(state);
		if (child->chgParam == NULL)
			ExecReScan(child);
	}
	else if (state->tuplesort)
		tuplesort_rescan(state->tuplesort);
	else
	{
		state->current = 0;
		state->eof_reached = false;
	}
}

/* Marks the current position (restore false), or goes back to the mark. */
static void
mark_or_restore(CustomScanState *node, bool restore)
{
	SortNodeState *state = (SortNodeState *) node;

	if (!state->sort_done)
		return;
	if (state->tuplesort && restore)
		tuplesort_restorepos(state->tuplesort);
	else if (state->tuplesort)
		tuplesort_markpos(state->tuplesort);
	else if (restore)
	{
		state->current = state->mark_current;
		state->eof_reached = state->mark_eof;
	}
	else
	{
		state->mark_current = state->current;
		state->mark_eof = state->eof_reached;
	}
}

static void
mark_sort(CustomScanState *node)
{
	mark_or_restore(node, false);
}

static void
restore_sort(CustomScanState *node)
{
	mark_or_restore(node, true);
}

/* ----------------------------------------------------------------
 * Parallel workers' figures
 *
 * Under a Gather Merge each worker sorts its share.  As Sort does, each
 * writes its figures into the parallel query's shared memory when its sort
 * is done (and again at its end, for the time spent returning rows), and
 * the leader copies them out at its own shutdown, before the Gather Merge
 * releases that memory.  A Gather Merge that has read every worker's rows to
 * the end has seen each worker end, so its figures are complete by then.
 * ---------------------------------------------------------------- */

/* The figures of the sort the node holds. */
static void
get_figures(SortNodeState *state, SortNodeFigures *f)
{
	memset(f, 0, sizeof(*f));
	f->done = state->sort_done;
	f->tuplesort = (state->tuplesort != NULL);
	f->tuplesort_ties = state->tuplesort_ties;
	if (state->tuplesort)
		tuplesort_get_stats(state->tuplesort, &f->tuplesort_stats);
	f->device = state->device;
	f->key_bits = state->key_bits;
	f->key_threads = state->key_threads;
	f->rows = state->rows_in;
	f->bound = state->bound;
	f->bound_peers = state->bound_peers;
	f->per_partition = state->part_keys > 0;
	f->prefix_bound = state->prune_prefix;
	f->handed = state->handed;
	f->from_workers = state->from_workers;
	f->kept = state->prune_prefix ? state->rows_held : state->ntuples;
	f->memory = Max(state->mem_used, state->mem_peak);
	f->extract_ms = state->extract_ms;
	f->sort_ms = state->sort_ms;
	f->emit_ms = state->emit_ms;
}

static Size
shared_size(int nworkers, int nhanded)
{
	return add_size(figures_size(nworkers), mul_size(nhanded, sizeof(dsa_pointer)));
}

/* A worker's figures into its entry of the shared memory, once its sort is done. */
static void
publish_figures(SortNodeState *state)
{
	SortNodeFigures *entry;
	SortNodeFigures f;

	if (state->shared == NULL || !state->sort_done ||
		ParallelWorkerNumber < 0 || ParallelWorkerNumber >= state->shared->nworkers)
		return;
	entry = &state->shared->workers[ParallelWorkerNumber];
	get_figures(state, &f);
	f.done = entry->done;
	*entry = f;
	/* the figures before the flag that says they are there */
	pg_write_barrier();
	entry->done = true;
}

/*
 * Whether the leader sorts every participant's rows (read_together): the
 * setting on, the leader among the participants (it is the one that
 * returns the rows), a query DSA area, a sort with no bound and no window
 * functions, and every key's bits exact, so that the leader's sort is one
 * sort of words and no participant's comparisons are left to it.
 */
static bool
sorts_together(SortNodeState *state)
{
	if (!gpusort_enable_leader_sort || !parallel_leader_participation ||
		state->css.ss.ps.state->es_query_dsa == NULL ||
		state->count_expr != NULL || state->bound_peers || state->nwin > 0)
		return false;
	if (!state->keys_prepared)
		prepare_keys(state);
	if (state->nvalued < state->nkeys)
		return false;
	for (int k = 0; k < state->nkeys; k++)
		if (!state->keys[k].bits.exact || state->keys[k].bits.kind == SORT_KEY_STRXFRM)
			return false;
	return true;
}

/* Room for each planned worker's figures, where EXPLAIN ANALYZE runs, and handed rows. */
static Size
estimate_dsm_sort(CustomScanState *node, ParallelContext *pcxt)
{
	return shared_size(node->ss.ps.instrument ? pcxt->nworkers : 0, pcxt->nworkers);
}

static void
init_dsm_sort(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	SortNodeState *state = (SortNodeState *) node;
	SortNodeShared *shared = (SortNodeShared *) coordinate;
	int			nworkers = node->ss.ps.instrument ? pcxt->nworkers : 0;

	memset(shared, 0, shared_size(nworkers, pcxt->nworkers));
	shared->nworkers = nworkers;
	shared->nhanded = pcxt->nworkers;
	for (int w = 0; w < shared->nhanded; w++)
		handed_slots(shared)[w] = InvalidDsaPointer;
	BarrierInit(&shared->reading, 0);
	pg_atomic_init_u32(&shared->workers_read, 0);
	pg_atomic_init_u64(&shared->handing, 0);
	state->together = shared->together = sorts_together(state);
	state->area = node->ss.ps.state->es_query_dsa;
	state->shared = shared;
}

/*
 * A rescan of the Gather Merge: new workers, figures to come, and the rows
 * handed before freed (the leader's rescan dropped what pointed to them).
 */
static void
reinit_dsm_sort(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	SortNodeState *state = (SortNodeState *) node;
	SortNodeShared *shared = (SortNodeShared *) coordinate;
	dsa_area   *area = node->ss.ps.state->es_query_dsa;

	memset(shared->workers, 0, sizeof(SortNodeFigures) * shared->nworkers);
	for (int w = 0; w < shared->nhanded; w++)
	{
		if (DsaPointerIsValid(handed_slots(shared)[w]) && area != NULL)
			dsa_free(area, handed_slots(shared)[w]);
		handed_slots(shared)[w] = InvalidDsaPointer;
	}
	BarrierInit(&shared->reading, 0);
	pg_atomic_write_u32(&shared->workers_read, 0);
	pg_atomic_write_u64(&shared->handing, 0);
	state->together = shared->together = sorts_together(state);
	state->area = area;
	state->shared = shared;
}

static void
init_worker_sort(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	SortNodeState *state = (SortNodeState *) node;

	state->shared = (SortNodeShared *) coordinate;
	state->am_worker = true;
	state->together = state->shared->together;
}

/* A worker publishes its final figures; the leader copies every worker's out. */
static void
shutdown_sort(CustomScanState *node)
{
	SortNodeState *state = (SortNodeState *) node;
	Size		size;

	if (state->am_worker)
	{
		publish_figures(state);
		return;
	}
	if (state->shared == NULL)
		return;
	size = figures_size(state->shared->nworkers);
	pg_read_barrier();
	state->worker_figures = MemoryContextAlloc(node->ss.ps.state->es_query_cxt, size);
	memcpy(state->worker_figures, state->shared, size);
	state->shared = NULL;
}

/* ----------------------------------------------------------------
 * EXPLAIN
 * ---------------------------------------------------------------- */

static const char *
device_name(const SortNodeFigures *f, char *buf, size_t len)
{
	if (f->handed)
		return "leader";
	if (f->tuplesort && f->tuplesort_ties)
		return "tuplesort (ties of the leading key bits)";
	if (f->tuplesort)
		return "tuplesort (past work_mem)";
	if (f->device < 0)
		return "cpu";
	snprintf(buf, len, "gpu %d", f->device);
	return buf;
}

/* A sort's figures as properties: the leader's, or a worker's in a structured format. */
static void
explain_figures(const SortNodeFigures *f, ExplainState *es)
{
	char		device[32];

	ExplainPropertyText("Sort Device", device_name(f, device, sizeof(device)), es);
	if (f->tuplesort)
	{
		ExplainPropertyText("Sort Method", tuplesort_method_name(f->tuplesort_stats.sortMethod), es);
		ExplainPropertyInteger("Sort Space Used", "kB", f->tuplesort_stats.spaceUsed, es);
		ExplainPropertyText("Sort Space Type", tuplesort_space_type_name(f->tuplesort_stats.spaceType), es);
		/* the leader past work_mem put its workers' rows into its tuplesort */
		if (f->from_workers > 0)
			ExplainPropertyInteger("Sort Rows From Workers", NULL, f->from_workers, es);
	}
	else
	{
		ExplainPropertyInteger("Sort Rows", NULL, f->rows, es);
		if (f->from_workers > 0)
			ExplainPropertyInteger("Sort Rows From Workers", NULL, f->from_workers, es);
		if (f->bound >= 0 && f->bound_peers && es->format == EXPLAIN_FORMAT_TEXT)
			ExplainPropertyText("Sort Bound",
								psprintf(INT64_FORMAT "%s with ties and the next peer group: " INT64_FORMAT " rows",
										 f->bound, f->per_partition ? " per partition" : "", f->kept), es);
		else if (f->bound >= 0 && f->prefix_bound && es->format == EXPLAIN_FORMAT_TEXT)
			ExplainPropertyText("Sort Bound",
								psprintf(INT64_FORMAT " with ties of the leading key bits: " INT64_FORMAT " rows",
										 f->bound, f->kept), es);
		else if (f->bound >= 0)
			ExplainPropertyInteger("Sort Bound", NULL, f->bound, es);
		if (f->bound >= 0 && f->bound_peers && es->format != EXPLAIN_FORMAT_TEXT)
		{
			ExplainPropertyBool("Sort Bound Peers", true, es);
			ExplainPropertyBool("Sort Bound Per Partition", f->per_partition, es);
			ExplainPropertyInteger("Sort Rows Kept", NULL, f->kept, es);
		}
		else if (f->bound >= 0 && f->prefix_bound && es->format != EXPLAIN_FORMAT_TEXT)
		{
			ExplainPropertyBool("Sort Bound Leading Bits", true, es);
			ExplainPropertyInteger("Sort Rows Kept", NULL, f->kept, es);
		}
		/* a worker that handed its rows to the leader packed no key */
		if (!f->handed)
			ExplainPropertyInteger("Sort Key Bits", NULL, f->key_bits, es);
		/* the strings' keys made on threads of the backend (gpusort.key_threads) */
		if (f->key_threads > 1)
			ExplainPropertyInteger("Sort Key Threads", NULL, f->key_threads, es);
		ExplainPropertyInteger("Sort Memory", "kB", (f->memory + 1023) / 1024, es);
	}
	if (es->timing)
	{
		ExplainPropertyFloat("Extract Time", "ms", f->extract_ms, 3, es);
		ExplainPropertyFloat("Sort Time", "ms", f->sort_ms, 3, es);
		ExplainPropertyFloat("Emit Time", "ms", f->emit_ms, 3, es);
	}
}

/* A worker's figures on one line, as Sort shows a worker's in text format. */
static void
explain_worker_line(const SortNodeFigures *f, int n, ExplainState *es)
{
	char		device[32];

	appendStringInfoSpaces(es->str, es->indent * 2);
	appendStringInfo(es->str, "Worker %d:  Sort Device: %s", n, device_name(f, device, sizeof(device)));
	if (f->tuplesort)
		appendStringInfo(es->str, "  Sort Method: %s  %s: " INT64_FORMAT "kB",
						 tuplesort_method_name(f->tuplesort_stats.sortMethod),
						 tuplesort_space_type_name(f->tuplesort_stats.spaceType),
						 f->tuplesort_stats.spaceUsed);
	else if (f->handed)
		appendStringInfo(es->str, "  Sort Rows: " INT64_FORMAT "  Sort Memory: " INT64_FORMAT " kB",
						 f->rows, (f->memory + 1023) / 1024);
	else
		appendStringInfo(es->str, "  Sort Rows: " INT64_FORMAT "  Sort Key Bits: %d  Sort Memory: " INT64_FORMAT " kB",
						 f->rows, f->key_bits, (f->memory + 1023) / 1024);
	if (!f->tuplesort && f->bound >= 0)
	{
		appendStringInfo(es->str, "  Sort Bound: " INT64_FORMAT, f->bound);
		if (f->bound_peers)
			appendStringInfo(es->str, "%s with ties and the next peer group: " INT64_FORMAT " rows",
							 f->per_partition ? " per partition" : "", f->kept);
		else if (f->prefix_bound)
			appendStringInfo(es->str, " with ties of the leading key bits: " INT64_FORMAT " rows",
							 f->kept);
	}
	if (es->timing)
		appendStringInfo(es->str, "  Extract Time: %.3f ms  Sort Time: %.3f ms  Emit Time: %.3f ms",
						 f->extract_ms, f->sort_ms, f->emit_ms);
	appendStringInfoChar(es->str, '\n');
}

/* Each parallel worker's figures, for the workers that sorted. */
static void
explain_workers(SortNodeState *state, ExplainState *es)
{
	SortNodeShared *shared = state->worker_figures ? state->worker_figures : state->shared;
	bool		opened = false;

	if (shared == NULL)
		return;
	pg_read_barrier();
	for (int n = 0; n < shared->nworkers; n++)
	{
		const SortNodeFigures *f = &shared->workers[n];

		if (!f->done)
			continue;
		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			explain_worker_line(f, n, es);
			continue;
		}
		if (!opened)
			ExplainOpenGroup("Sort Workers", "Sort Workers", false, es);
		opened = true;
		ExplainOpenGroup("Sort Worker", NULL, true, es);
		ExplainPropertyInteger("Worker Number", NULL, n, es);
		explain_figures(f, es);
		ExplainCloseGroup("Sort Worker", NULL, true, es);
	}
	if (opened)
		ExplainCloseGroup("Sort Workers", "Sort Workers", false, es);
}

/*
 * A key's COLLATE, DESC or USING, and NULLS FIRST or LAST, where they are not
 * the defaults, as EXPLAIN shows a Sort's keys.
 */
static void
explain_key_options(StringInfo buf, SortKeyInfo *key, Oid type)
{
	TypeCacheEntry *typentry = lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	bool		reverse = false;

	if (OidIsValid(key->collation) && key->collation != get_typcollation(type))
	{
		char	   *name = get_collation_name(key->collation);

		if (name == NULL)
			elog(ERROR, "cache lookup failed for collation %u", key->collation);
		appendStringInfo(buf, " COLLATE %s", quote_identifier(name));
	}
	if (key->sortop == typentry->gt_opr)
	{
		appendStringInfoString(buf, " DESC");
		reverse = true;
	}
	else if (key->sortop != typentry->lt_opr)
	{
		char	   *name = get_opname(key->sortop);

		if (name == NULL)
			elog(ERROR, "cache lookup failed for operator %u", key->sortop);
		appendStringInfo(buf, " USING %s", name);
		reverse = key->descending;
	}
	if (key->nulls_first && !reverse)
		appendStringInfoString(buf, " NULLS FIRST");
	else if (!key->nulls_first && reverse)
		appendStringInfoString(buf, " NULLS LAST");
}

/*
 * How each key orders the rows, for EXPLAIN VERBOSE: by an exact packing of
 * its value ("exact 51 bits"), by a prefix of its order whose ties its
 * comparator breaks ("prefix 64 bits"), or by its comparator alone
 * ("comparator"), as every key past a prefix is.
 */
static List *
key_packings(SortNodeState *state)
{
	List	   *result = NIL;
	bool		compared = false;

	for (int k = 0; k < state->nkeys; k++)
	{
		SortKeyInfo *key = &state->keys[k];
		SortKeyBits bits;

		if (!compared)
		{
			sort_key_bits(key->sortop, key->collation, key->nulls_first, &bits, NULL);
			key_typmod_packing(state, key, &bits);
			compared = (bits.kind == SORT_KEY_NONE);
		}
		if (compared)
			result = lappend(result, "comparator");
		else
			result = lappend(result, psprintf("%s %d bits", bits.exact ? "exact" : "prefix", bits.width));
		if (!bits.exact)
			compared = true;
	}
	return result;
}

/*
 * "Sort Key: x, f DESC", each key named by its input column; then with
 * ANALYZE where and how it sorted, the node's own sort (the leader's under a
 * Gather Merge, where it took part) and each parallel worker's.
 */
static void
explain_sort(CustomScanState *node, List *ancestors, ExplainState *es)
{
	SortNodeState *state = (SortNodeState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
#if PG_VERSION_NUM >= 180000
	/* the range table counts a grouping step's RTE_GROUP too, rtable_size not */
	bool		useprefix = es->rtable_size > 1 || es->verbose;
#else
	bool		useprefix = list_length(es->rtable) > 1 || es->verbose;
#endif
	List	   *result = NIL;
	List	   *names = NIL;

	context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	for (int k = 0; k < state->nkeys; k++)
	{
		SortKeyInfo *key = &state->keys[k];
		TargetEntry *tle = get_tle_by_resno(cscan->custom_scan_tlist, key->column);
		Var		   *column;
		StringInfoData buf;

		if (tle == NULL)
			elog(ERROR, "no input column for sort key %d", key->column);
		/* the node's input column, which deparsing takes from custom_scan_tlist */
		column = makeVar(INDEX_VAR, key->column, exprType((Node *) tle->expr),
						 exprTypmod((Node *) tle->expr), exprCollation((Node *) tle->expr), 0);
		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression((Node *) column, context, useprefix, true));
		names = lappend(names, pstrdup(buf.data));
		explain_key_options(&buf, key, exprType((Node *) tle->expr));
		result = lappend(result, buf.data);
	}
	ExplainPropertyList("Sort Key", result, es);
	if (state->nwin > 0)
	{
		/* each as "rank() OVER (PARTITION BY g ORDER BY x DESC)" */
		List	   *funcs = NIL;

		for (int w = 0; w < state->nwin; w++)
		{
			static const char *const names_of[] = {
				NULL, "row_number()", "rank()", "dense_rank()", "percent_rank()", "cume_dist()", "ntile"
			};
			StringInfoData buf;

			initStringInfo(&buf);
			appendStringInfoString(&buf, names_of[state->win_kinds[w]]);
			if (state->win_kinds[w] == WINDOW_NTILE)
				appendStringInfo(&buf, "(%d)", state->win_arg[w]);
			appendStringInfoString(&buf, " OVER (");
			for (int k = 0; k < state->win_keys[w]; k++)
			{
				if (k == 0)
					appendStringInfoString(&buf, state->win_part[w] > 0 ? "PARTITION BY " : "ORDER BY ");
				else
					appendStringInfoString(&buf, k == state->win_part[w] ? " ORDER BY " : ", ");
				appendStringInfoString(&buf, k < state->win_part[w] ? (char *) list_nth(names, k) :
									   (char *) list_nth(result, k));
			}
			appendStringInfoChar(&buf, ')');
			funcs = lappend(funcs, buf.data);
		}
		ExplainPropertyList("Window Functions", funcs, es);
	}
	if (es->verbose)
		ExplainPropertyList("Sort Key Packing", key_packings(state), es);
	if (state->bound_peers)
	{
		/* the run condition's bounds, as "<= 1000", "< $1" or "<= 3 per partition" */
		List	   *bounds = NIL;
		ListCell   *lc;
		int			i = 0;

		foreach(lc, cscan->custom_exprs)
		{
			bounds = lappend(bounds, psprintf("%s %s%s", state->rank_adjust[i] < 0 ? "<" : "<=",
											  deparse_expression((Node *) lfirst(lc), context,
																 useprefix, false),
											  state->part_keys > 0 ? " per partition" : ""));
			i++;
		}
		ExplainPropertyList("Rank Bound", bounds, es);
	}

	if (!es->analyze)
		return;
	if (state->sort_done)
	{
		SortNodeFigures f;

		get_figures(state, &f);
		explain_figures(&f, es);
	}
	explain_workers(state, es);
}

