/*
 * sort_plan.c: where the planner puts gpusort's sort node (sort_exec.c runs
 * it) in place of PostgreSQL's Sort: on keys with btree ordering operators,
 * ASC or DESC, NULLS FIRST or LAST, any number of them, whose first key
 * gives leading bits to order by (sort_keys.c); the executor orders the rest
 * with PostgreSQL's comparators.
 *
 * Two ways in:
 * - For ORDER BY, the create_upper_paths hook offers the node at
 *   UPPERREL_ORDERED over the cheapest input path (and over the cheapest
 *   partial path under a Gather Merge), costed against Sort, so that the
 *   planner weighs the cheaper sort.  Its rows are its input's, column for
 *   column: it never projects, and its keys are input columns by position,
 *   found as Sort's are (a volatile key by its sortgroupref).
 * - Every other Sort of the finished plan (under a WindowAgg, a
 *   GroupAggregate, a Unique, a SetOp, either side of a Merge Join, in the
 *   workers under a Gather Merge, under a Limit, in subplans) is swapped by
 *   the planner hook for the node with the same keys, input and estimates,
 *   where its keys pack and its rows are expected to number at least
 *   gpusort.sort_node_min_rows and to fit in work_mem.  Under a Limit the
 *   node takes the Limit's count and offset and keeps only that many rows,
 *   as Sort's bounded sort does.  Under a WindowAgg whose run condition
 *   (row_number() or rank() <= k) ends its rows, the node keeps the rows
 *   that the WindowAgg reads up to there (rank_bound), in each partition
 *   where it has a PARTITION BY.
 */
#include "postgres.h"

#include <math.h>

#include "access/nbtree.h"
#include "access/parallel.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_statistic.h"
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
#include "portability/instr_time.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
#include "utils/tuplesort.h"


#include "gpusort_pg.h"
#include "sort_node.h"

#include "keys.h"

/*
 * A pathkey's direction as a btree strategy; PostgreSQL 18 keeps it as a
 * CompareType (COMPARE_LT, COMPARE_GT) instead.
 */
#if PG_VERSION_NUM >= 180000
#define PATHKEY_STRATEGY(pk) \
	((pk)->pk_cmptype == COMPARE_LT ? BTLessStrategyNumber : \
	 (pk)->pk_cmptype == COMPARE_GT ? BTGreaterStrategyNumber : InvalidStrategy)
#else
#define PATHKEY_STRATEGY(pk) ((pk)->pk_strategy)
#endif

bool		gpusort_enable_sort = true;
bool		gpusort_enable_window_functions = true;
bool		gpusort_enable_leader_sort = true;
bool		gpusort_enable_topk_groups = true;
int			gpusort_sort_node_min_rows = 1000;

static create_upper_paths_hook_type prev_create_upper_paths_hook = NULL;

/*
 * Under a Limit whose constant count + offset is below this, Sort's top-N
 * heap, which compares most rows once against its top and drops them, keeps
 * the sort unless the node prunes as it reads (keys that pack exactly into
 * 128 bits with a NULL bit each): without pruning the node reads every row
 * into its arrays and selects at the end, slower there.  With it, a row past
 * the bound's last word costs one comparison of words and no copy, where
 * the heap copies each row before it compares.
 */
#define SORT_NODE_MIN_BOUND 10000
static planner_hook_type prev_planner_hook = NULL;

static Plan *plan_sort_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods sort_path_methods = {
	.CustomName = SORT_NODE_NAME,
	.PlanCustomPath = plan_sort_path,
};

/* ----------------------------------------------------------------
 * Paths for ORDER BY
 * ---------------------------------------------------------------- */

/*
 * The column of target (1-based) that pathkey pk sorts by, as Sort's
 * prepare_sort_from_pathkeys finds it, or 0 for none.  A volatile key is the
 * column of its ORDER BY clause, found by its sortgroupref: two equal
 * volatile expressions are different values, so equal() cannot tell which.
 * Any other key is the first column that matches a member of its
 * equivalence class (all of whose members sort alike), child members of
 * relids included.
 */
static int
key_column(PathKey *pk, PathTarget *target, Relids relids, Oid *datatype)
{
	EquivalenceClass *ec = pk->pk_eclass;
	int			i = 0;
	ListCell   *lc;

	foreach(lc, target->exprs)
	{
		Expr	   *expr = (Expr *) lfirst(lc);
		EquivalenceMember *em;

		i++;
		if (ec->ec_has_volatile)
		{
			if (ec->ec_sortref != 0 && list_length(ec->ec_members) == 1 &&
				get_pathtarget_sortgroupref(target, i - 1) == ec->ec_sortref)
			{
				*datatype = ((EquivalenceMember *) linitial(ec->ec_members))->em_datatype;
				return i;
			}
		}
		else if ((em = find_ec_member_matching_expr(ec, expr, relids)) != NULL)
		{
			*datatype = em->em_datatype;
			return i;
		}
	}
	return 0;
}

/*
 * Whether the node can sort by keys ordered by operators (with collations
 * and flags): the first key gives leading bits to order by (sort_keys.c);
 * the tie pass orders the others by their comparators, whatever they are.
 */
static bool
keys_sortable(List *operators, List *collations, List *flags)
{
	SortKeyBits first;

	if (operators == NIL)
		return false;
	sort_key_bits(linitial_oid(operators), linitial_oid(collations),
				  (linitial_int(flags) & KEY_NULLS_FIRST) != 0, &first, NULL);
	return first.kind != SORT_KEY_NONE;
}

/*
 * The sort keys as columns of input's target (key_column), each with the
 * btree ordering operator that Sort would use (as prepare_sort_from_pathkeys
 * finds it).  Returns false when one is not found, or the node cannot sort
 * by them (keys_sortable).
 */
static bool
match_sort_keys(List *pathkeys, Path *input, List **private)
{
	PathTarget *target = input->pathtarget;
	List	   *columns = NIL;
	List	   *types = NIL;
	List	   *operators = NIL;
	List	   *collations = NIL;
	List	   *flags = NIL;
	ListCell   *lc;

	foreach(lc, pathkeys)
	{
		PathKey    *pk = (PathKey *) lfirst(lc);
		EquivalenceClass *ec = pk->pk_eclass;
		Oid			datatype = InvalidOid;
		int			column = key_column(pk, target, input->parent->relids, &datatype);
		Oid			type;
		Oid			sortop;

		if (column == 0)
			return false;
		if (PATHKEY_STRATEGY(pk) != BTLessStrategyNumber && PATHKEY_STRATEGY(pk) != BTGreaterStrategyNumber)
			return false;

		type = exprType((Node *) list_nth(target->exprs, column - 1));
		sortop = get_opfamily_member(pk->pk_opfamily, datatype, datatype, PATHKEY_STRATEGY(pk));
		if (!OidIsValid(sortop))
			return false;

		columns = lappend_int(columns, column);
		types = lappend_oid(types, type);
		operators = lappend_oid(operators, sortop);
		collations = lappend_oid(collations, ec->ec_collation);
		flags = lappend_int(flags,
							(PATHKEY_STRATEGY(pk) == BTGreaterStrategyNumber ? KEY_DESC : 0) |
							(pk->pk_nulls_first ? KEY_NULLS_FIRST : 0));
	}
	if (!keys_sortable(operators, collations, flags))
		return false;
	*private = list_make5(columns, types, operators, collations, flags);
	return true;
}

/*
 * Cost of sorting rows by nkeys keys in the node, against Sort's
 * 2 * cpu_operator_cost * log2(rows) a row.  Measured on the CPU path (2 cores,
 * bench/sql_order_by_bench.sh's machine): one key of up to 32 bits breaks
 * even with Sort at about 700 rows; 64-bit words cost a little more; 128-bit
 * words (two argsort passes) break even at about 1,500 rows.  The constants
 * put the crossovers there.
 */
#define SORT_NODE_ROW_COST			0.025	/* a row, words of up to 32 bits */
#define SORT_NODE_ROW_COST_64		0.005	/* more a row for a 64-bit word */
#define SORT_NODE_ROW_COST_128		0.025	/* more a row for a 128-bit word */
#define SORT_NODE_STARTUP_COST		10.0
/* more a row for keys past their leading bits: the conversion and the tie pass */
#define SORT_NODE_ROW_COST_PREFIX	0.025

/*
 * The leading bits the plan's keys give, with one NULL bit each when
 * null_bits, at most SORT_NODE_MAX_BITS: each key's up to the first that is
 * not exact.  *exact: they are the whole order (no tie pass).  exprs are the
 * node's input columns, whose typmods may make a key exact (numeric(p,s)).
 */
static int
key_bits(List *private, List *exprs, bool null_bits, bool *exact)
{
	List	   *operators = (List *) list_nth(private, PRIV_OPERATORS);
	int			bits = 0;

	*exact = true;
	for (int k = 0; k < list_length(operators); k++)
	{
		SortKeyBits kb;
		int			flags = list_nth_int((List *) list_nth(private, PRIV_FLAGS), k);
		int			width;
		int			column;

		sort_key_bits(list_nth_oid(operators, k),
					  list_nth_oid((List *) list_nth(private, PRIV_COLLATIONS), k),
					  (flags & KEY_NULLS_FIRST) != 0, &kb, NULL);
		column = list_nth_int((List *) list_nth(private, PRIV_COLUMNS), k);
		if (column >= 1 && column <= list_length(exprs))
		{
			Node	   *expr = (Node *) list_nth(exprs, column - 1);

			sort_key_numeric_typmod(exprType(expr), exprTypmod(expr), &kb);
		}
		width = kb.width + (null_bits ? 1 : 0);
		if (kb.kind == SORT_KEY_NONE || bits + width > SORT_NODE_MAX_BITS)
		{
			if (kb.kind != SORT_KEY_NONE)
				bits = SORT_NODE_MAX_BITS;
			*exact = false;
			break;
		}
		bits += width;
		if (!kb.exact)
		{
			*exact = false;
			break;
		}
	}
	return bits;
}

static void
cost_sort_node(CustomPath *cpath, Path *subpath, List *private)
{
	double		rows = Max(subpath->rows, 1.0);
	List	   *types = (List *) list_nth(private, PRIV_TYPES);
	bool		exact;
	int			bits = key_bits(private, subpath->pathtarget->exprs, false, &exact);
	double		per_row;

	per_row = SORT_NODE_ROW_COST + cpu_operator_cost * list_length(types);
	if (bits > 32)
		per_row += SORT_NODE_ROW_COST_64;
	if (bits > 64)
		per_row += SORT_NODE_ROW_COST_128;
	if (!exact)
		per_row += SORT_NODE_ROW_COST_PREFIX;

	cpath->path.rows = subpath->rows;
	cpath->path.startup_cost = subpath->total_cost + SORT_NODE_STARTUP_COST + per_row * rows;
	cpath->path.total_cost = cpath->path.startup_cost + cpu_operator_cost * rows;
}

/*
 * The fewest rows the node is planned for: gpusort.sort_node_min_rows, and
 * under gpusort.device = gpu (every sort on the GPU, however small) at least
 * gpusort.gpu_min_elements, below which a GPU's round trip costs more than
 * Sort's whole sort.  0 (the setting at 0): every sort.
 */
static double
node_min_rows(void)
{
	if (gpusort_sort_node_min_rows == 0)
		return 0;
	if (gpusort_device == GPUSORT_DEVICE_GPU)
		return Max(gpusort_sort_node_min_rows, gpusort_gpu_min_elements);
	return gpusort_sort_node_min_rows;
}

/*
 * The node's path over subpath.  Its target is subpath's: the node never
 * projects (no CUSTOMPATH_SUPPORT_PROJECTION), so the planner puts any
 * projection above it.  In each worker under a Gather Merge (partial) it is
 * parallel aware, only so that the executor calls its shared-memory
 * callbacks, through which the workers' figures reach EXPLAIN ANALYZE.
 */
static CustomPath *
make_sort_path(PlannerInfo *root, RelOptInfo *rel, Path *subpath, List *pathkeys,
			   List *private, bool partial)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = subpath->pathtarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = partial;
	cpath->path.parallel_safe = subpath->parallel_safe;
	cpath->path.parallel_workers = subpath->parallel_workers;
#if PG_VERSION_NUM >= 180000
	cpath->path.disabled_nodes = subpath->disabled_nodes;
#endif
	cpath->path.pathkeys = pathkeys;
	cpath->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cpath->custom_paths = list_make1(subpath);
	cpath->custom_private = private;
	cpath->methods = &sort_path_methods;
	cost_sort_node(cpath, subpath, private);
	return cpath;
}

/*
 * Whether rows of width bytes fit in work_mem in the node (a tuple and its
 * pointer, the keys, the packed key and the permutation a row).  Where they
 * do not, Sort's external merge is what runs either way: the node is not
 * offered, and an underestimate is handled at run time.
 */
static bool
fits_in_work_mem(double rows, int width, int nkeys)
{
	double		row_bytes = MAXALIGN(width) + MAXALIGN(SizeofMinimalTupleHeader) +
		sizeof(MinimalTuple) + sizeof(uint64) * nkeys + 16 + sizeof(uint32);

	return rows * row_bytes <= (double) work_mem * 1024;
}
/*
 * Whether the node can sort input's rows by pathkeys: the input is not
 * ordered so already, its rows are expected to fit in work_mem, its target
 * holds no window function, and the keys are columns the node sorts by
 * (match_sort_keys, which fills *private).
 *
 * EXPLAIN shows the node's columns and keys through custom_scan_tlist, whose
 * entries are deparsed in the node's own namespace.  A window function
 * there cannot be shown: PostgreSQL 18 names its window from the WindowAgg
 * it is deparsed in, and fails ("could not find window clause") anywhere
 * else.  Sort shows such a column through its input plan's target list, so
 * it keeps this case.
 */
static bool
can_sort_input(List *pathkeys, Path *input, List **private)
{
	return !pathkeys_contained_in(pathkeys, input->pathkeys) &&
		fits_in_work_mem(input->rows, input->pathtarget->width, list_length(pathkeys)) &&
		!contain_window_function((Node *) input->pathtarget->exprs) &&
		match_sort_keys(pathkeys, input, private);
}

static void
sort_node_upper_paths(PlannerInfo *root, UpperRelationKind stage,
					  RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	List	   *pathkeys = root->sort_pathkeys;
	PathTarget *target = root->upper_targets[UPPERREL_ORDERED];
	Path	   *input_path;
	List	   *private;

	if (prev_create_upper_paths_hook)
		prev_create_upper_paths_hook(root, stage, input_rel, output_rel, extra);

	if (stage != UPPERREL_ORDERED || !gpusort_enable_sort || pathkeys == NIL)
		return;

	/*
	 * Above a set operation (UNION ... ORDER BY) the planner sets neither the
	 * ordered target nor root->limit_tuples, and the set operation's output
	 * columns are Vars of no range table entry, which this node's scan tlist
	 * cannot show: Sort keeps that case.
	 */
	if (root->parse->setOperations != NULL || target == NULL)
		return;

	/*
	 * A small LIMIT (with OFFSET) is PostgreSQL's bounded heap sort's case: it
	 * keeps k rows, where this node would sort them all.
	 */
	if (root->limit_tuples >= 0 &&
		root->limit_tuples < input_rel->cheapest_total_path->rows / 4)
		return;

	input_path = input_rel->cheapest_total_path;
	if (can_sort_input(pathkeys, input_path, &private))
	{
		Path	   *path = (Path *) make_sort_path(root, output_rel, input_path, pathkeys, private, false);

		if (path->pathtarget != target)
			path = apply_projection_to_path(root, output_rel, path, target);
		add_path(output_rel, path);
	}

	/* each worker sorts its share, a Gather Merge merges them */
	if (input_rel->partial_pathlist != NIL && output_rel->consider_parallel)
	{
		Path	   *partial = (Path *) linitial(input_rel->partial_pathlist);
		double		total_groups;
		Path	   *path;

		if (!can_sort_input(pathkeys, partial, &private))
			return;
		path = (Path *) make_sort_path(root, output_rel, partial, pathkeys, private, true);
		total_groups = partial->rows * partial->parallel_workers;
		path = (Path *) create_gather_merge_path(root, output_rel, path, path->pathtarget,
												 pathkeys, NULL, &total_groups);
		if (path->pathtarget != target)
			path = apply_projection_to_path(root, output_rel, path, target);
		add_path(output_rel, path);
	}
}

/*
 * The child's plan becomes the node's outer plan.  The node's tuples are the
 * child's, column for column: custom_scan_tlist is the child's target list,
 * the node's target list (that of its path, which is the child's) says the
 * same, and the sort keys are columns by position.
 *
 * The executor returns the tuples as they are (begin_sort), not through the
 * target list: set_customscan_references maps the target list onto
 * custom_scan_tlist by equal(), which would send every copy of a volatile
 * expression that appears twice to the first copy's column.
 */
static Plan *
plan_sort_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *child = (Plan *) linitial(custom_plans);
	ListCell   *lt;
	ListCell   *lc;

	Assert(clauses == NIL);
	if (list_length(tlist) != list_length(child->targetlist))
		elog(ERROR, "gpusort sort node: %d output columns for %d input columns",
			 list_length(tlist), list_length(child->targetlist));
	forboth(lt, tlist, lc, child->targetlist)
	{
		if (exprType((Node *) ((TargetEntry *) lfirst(lt))->expr) !=
			exprType((Node *) ((TargetEntry *) lfirst(lc))->expr))
			elog(ERROR, "gpusort sort node: an output column's type is not its input column's");
	}
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.plan.lefttree = child;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	cscan->custom_private = best_path->custom_private;
	cscan->custom_scan_tlist = copyObject(child->targetlist);
	cscan->custom_relids = NULL;
	cscan->methods = &gpusort_sort_scan_methods;
	return (Plan *) cscan;
}

/* ----------------------------------------------------------------
 * The finished plan's Sorts
 * ---------------------------------------------------------------- */

/*
 * The keys of sort as the node's private lists (match_sort_keys's layout),
 * or NIL when the node cannot sort by them (keys_sortable).
 */
static List *
sort_plan_keys(Sort *sort)
{
	Plan	   *child = outerPlan(sort);
	List	   *columns = NIL;
	List	   *types = NIL;
	List	   *operators = NIL;
	List	   *collations = NIL;
	List	   *flags = NIL;

	for (int i = 0; i < sort->numCols; i++)
	{
		TargetEntry *tle = get_tle_by_resno(child->targetlist, sort->sortColIdx[i]);
		Oid			opfamily;
		Oid			opcintype;
		Oid			type;
		bool		descending;
#if PG_VERSION_NUM >= 180000
		CompareType cmptype;
#else
		int16		strategy;
#endif

		if (tle == NULL)
			return NIL;
		type = exprType((Node *) tle->expr);
#if PG_VERSION_NUM >= 180000
		if (!get_ordering_op_properties(sort->sortOperators[i], &opfamily, &opcintype, &cmptype))
			return NIL;
		descending = (cmptype == COMPARE_GT);
#else
		if (!get_ordering_op_properties(sort->sortOperators[i], &opfamily, &opcintype, &strategy))
			return NIL;
		descending = (strategy == BTGreaterStrategyNumber);
#endif

		columns = lappend_int(columns, sort->sortColIdx[i]);
		types = lappend_oid(types, type);
		operators = lappend_oid(operators, sort->sortOperators[i]);
		collations = lappend_oid(collations, sort->collations[i]);
		flags = lappend_int(flags, (descending ? KEY_DESC : 0) |
							(sort->nullsFirst[i] ? KEY_NULLS_FIRST : 0));
	}
	if (!keys_sortable(operators, collations, flags))
		return NIL;
	return list_make5(columns, types, operators, collations, flags);
}

/*
 * Whether a small LIMIT's rows are worth pruning by the first key's leading
 * bits (sort_exec.c's prefix_layout): bits whose order is trusted, a row of
 * lower bits sorting first (strxfrm's are only checked after the sort, which
 * cannot check a row passed over), and cheap to compute.  An ICU sort key
 * costs more for each row than the heap's comparisons, most of which end at
 * the strings' first characters: 0.45x Sort's heap at LIMIT 100 over 10^6
 * names on the VM, against 1.6x for numeric and for text under C.
 */
static bool
leading_bits_prune(List *private)
{
	SortKeyBits kb;

	sort_key_bits(linitial_oid((List *) list_nth(private, PRIV_OPERATORS)),
				  linitial_oid((List *) list_nth(private, PRIV_COLLATIONS)),
				  (linitial_int((List *) list_nth(private, PRIV_FLAGS)) & KEY_NULLS_FIRST) != 0,
				  &kb, NULL);
	if (kb.kind == SORT_KEY_ABBREV_UNSIGNED && kb.byte_string)
		return false;
	return kb.kind != SORT_KEY_NONE && kb.kind != SORT_KEY_STRXFRM;
}

/* The range table of the plan that swap_sorts walks (first_key_group). */
static List *plan_rtable = NIL;

/*
 * The table column that sort's key k is, where it is one of a table that
 * sort's input scans: its range table entry, and its attribute number in
 * *attno; else NULL.
 */
static RangeTblEntry *
sort_key_table_column(Sort *sort, int k, AttrNumber *attno)
{
	TargetEntry *tle = get_tle_by_resno(outerPlan(sort)->targetlist, sort->sortColIdx[k]);
	Var		   *var;
	RangeTblEntry *rte;

	if (tle == NULL || !IsA(tle->expr, Var))
		return NULL;
	var = (Var *) tle->expr;
	/* an input that is not a scan names its columns by OUTER_VAR and the like */
	if (IS_SPECIAL_VARNO(var->varno) || var->varno < 1 || var->varno > list_length(plan_rtable) ||
		var->varattno <= 0)
		return NULL;
	rte = rt_fetch(var->varno, plan_rtable);
	if (rte->rtekind != RTE_RELATION)
		return NULL;
	*attno = var->varattno;
	return rte;
}

/*
 * How many of sort's rows have each value of its first key, on average, by
 * the column's statistics (pg_statistic's stadistinct, its NULLs left out),
 * where that key is a column of a table that sort's input scans; else -1.
 */
static double
first_key_group(Sort *sort)
{
	AttrNumber	attno;
	RangeTblEntry *rte = sort_key_table_column(sort, 0, &attno);
	HeapTuple	tuple;
	double		rows = sort->plan.plan_rows;
	double		distinct;
	double		nullfrac;

	if (rte == NULL)
		return -1;
	tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(rte->relid), Int16GetDatum(attno),
							BoolGetDatum(rte->inh));
	if (!HeapTupleIsValid(tuple))
		return -1;
	distinct = ((Form_pg_statistic) GETSTRUCT(tuple))->stadistinct;
	nullfrac = ((Form_pg_statistic) GETSTRUCT(tuple))->stanullfrac;
	ReleaseSysCache(tuple);
	rows *= 1.0 - nullfrac;
	/* 0: unknown; below 0: minus the fraction of the rows that are distinct */
	if (distinct == 0)
		return -1;
	distinct = distinct > 0 ? distinct : -distinct * rows;
	return rows / Max(distinct, 1.0);
}

/*
 * Whether each of sort's keys is a column of a table that sort's input scans
 * and holds no NULL: declared NOT NULL, or none in its statistics
 * (pg_statistic's stanullfrac).  The node then prunes a bound's rows by
 * words without NULL bits (a NULL read after all, as under PostgreSQL 18's
 * NOT NULL NOT VALID or in rows added since the statistics, stops that
 * pruning, never the answer).  Keys that reach the sort through a join, an
 * Append or an expression are not known here.
 */
static bool
keys_without_nulls(Sort *sort)
{
	for (int k = 0; k < sort->numCols; k++)
	{
		AttrNumber	attno;
		RangeTblEntry *rte = sort_key_table_column(sort, k, &attno);
		HeapTuple	tuple;
		bool		no_nulls;

		if (rte == NULL)
			return false;
		tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(rte->relid), Int16GetDatum(attno));
		if (!HeapTupleIsValid(tuple))
			return false;
		no_nulls = ((Form_pg_attribute) GETSTRUCT(tuple))->attnotnull;
		ReleaseSysCache(tuple);
		if (no_nulls)
			continue;
		tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(rte->relid), Int16GetDatum(attno),
								BoolGetDatum(rte->inh));
		if (!HeapTupleIsValid(tuple))
			return false;
		no_nulls = ((Form_pg_statistic) GETSTRUCT(tuple))->stanullfrac == 0;
		ReleaseSysCache(tuple);
		if (!no_nulls)
			return false;
	}
	return true;
}

/*
 * Whether the node should take sort's place: its keys pack, and it expects
 * at least node_min_rows() rows that fit in work_mem (gpusort.sort_node_min_rows
 * at 0 takes every Sort whose keys pack, whatever its estimates).  A sort
 * bounded by a constant LIMIT (bound >= 0, by_limit) under
 * SORT_NODE_MIN_BOUND stays Sort's top-N heap unless the node prunes; a run
 * condition's bound has no heap to lose to, Sort sorts every row there.  Of
 * keys that pack into 128 bits with a NULL bit each (64 under a run
 * condition), or without them where they hold no NULL (keys_without_nulls),
 * or under a LIMIT a first key of trusted leading bits that are
 * cheap to compute (the rows that tie on those are kept as well;
 * leading_bits_prune), a bounded sort keeps about twice its
 * bound in memory; under a small LIMIT the node needs such keys, and twice
 * the rows it prunes at
 * (below that it reads every row and selects at the end, where the heap was
 * measured faster: 0.80-0.86x at 1,000-3,000 rows of a float8 key).
 */
static bool
worth_swapping(Sort *sort, List *private, double bound, bool by_limit)
{
	double		rows = sort->plan.plan_rows;
	bool		exact;
	bool		exact_prune;
	bool		prunes;
	List	   *exprs = NIL;
	ListCell   *lc;

	if (gpusort_sort_node_min_rows == 0)
		return true;
	if (rows < node_min_rows())
		return false;
	foreach(lc, outerPlan(sort)->targetlist)
		exprs = lappend(exprs, ((TargetEntry *) lfirst(lc))->expr);
	exact_prune = bound >= 0 && key_bits(private, exprs, true, &exact) <= (by_limit ? 128 : 64) && exact;
	/* keys that fill the words without their NULL bits, where they have none */
	if (!exact_prune && bound >= 0 && key_bits(private, exprs, false, &exact) <= (by_limit ? 128 : 64) &&
		exact && keys_without_nulls(sort))
		exact_prune = true;
	prunes = exact_prune || (bound >= 0 && by_limit && leading_bits_prune(private));

	/*
	 * Pruning by the first key's leading bits keeps every row that ties with
	 * the bound's last on them; where each of its values has more rows than
	 * the bound, the node would find those ties at its first pruning and give
	 * its rows to a tuplesort's bounded heap, which is Sort's own plan.
	 */
	if (prunes && !exact_prune && first_key_group(sort) > bound)
		return false;
	/*
	 * A small bound: where the node prunes, has rows enough to prune often,
	 * and Sort's heap pays for each row: a copy of more than a word, or
	 * numeric comparisons.  Over rows of one int4 or float8 the two ran level
	 * (0.93-1.00x on the VM and the H200).
	 */
	if (by_limit && bound >= 0 && bound < SORT_NODE_MIN_BOUND &&
		(!prunes || rows < 2 * (2 * bound + SORT_NODE_PRUNE_MIN) ||
		 (sort->plan.plan_width <= 8 && !list_member_oid((List *) list_nth(private, PRIV_TYPES), NUMERICOID))))
		return false;
	if (prunes)
		rows = Min(rows, 2 * bound + SORT_NODE_PRUNE_MIN);
	return fits_in_work_mem(rows, sort->plan.plan_width, sort->numCols);
}

/* A constant count + offset of limit's, or -1 when it has none or they are not constants. */
static double
const_bound(Limit *limit)
{
	Const	   *count = (Const *) limit->limitCount;
	Const	   *offset = (Const *) limit->limitOffset;
	double		bound;

	if (count == NULL || !IsA(count, Const) || count->constisnull)
		return -1;
	bound = (double) DatumGetInt64(count->constvalue);
	if (offset != NULL)
	{
		if (!IsA(offset, Const))
			return -1;
		if (!offset->constisnull)
			bound += (double) DatumGetInt64(offset->constvalue);
	}
	return bound;
}

/*
 * The parameters that the initplans of the plan nodes swap_sorts has entered
 * set: an initplan runs when its parameter is first evaluated, and may fail.
 */
static Bitmapset *initplan_params = NULL;

/*
 * Whether a window function of a WindowAgg whose rows end at its run
 * condition is computed from the rows up to the current one and its peers
 * only: row_number, rank and dense_rank (which look back at most to the
 * previous row, whatever the frame), and an aggregate whose frame ends at
 * the current row (its peers included) or before it.
 */
static bool
looks_back_only(WindowFunc *wfunc, int frame_options)
{
	if (wfunc->winfnoid == F_ROW_NUMBER || wfunc->winfnoid == F_RANK_ ||
		wfunc->winfnoid == F_DENSE_RANK_)
		return true;
	return wfunc->winagg &&
		(frame_options & (FRAMEOPTION_END_UNBOUNDED_FOLLOWING | FRAMEOPTION_END_OFFSET_FOLLOWING)) == 0;
}

typedef struct WindowFuncsCheck
{
	int			frame_options;
	bool		ok;
} WindowFuncsCheck;

static bool
window_funcs_walker(Node *node, WindowFuncsCheck *check)
{
	if (node == NULL)
		return false;
	if (IsA(node, WindowFunc))
	{
		if (!looks_back_only((WindowFunc *) node, check->frame_options))
			check->ok = false;
		/* its arguments may hold no window function of this WindowAgg */
		return !check->ok;
	}
	return expression_tree_walker(node, window_funcs_walker, (void *) check);
}

static AttrNumber scan_column(CustomScan *node, AttrNumber resno);

/*
 * Whether a WindowAgg's PARTITION BY and then ORDER BY columns are the
 * node's leading keys (private): the same columns (the WindowAgg's column
 * numbers are those of the node's output; where node is given, they map to
 * its scan columns), under the same collations, and with the equality
 * operators of the keys' orderings, so that the WindowAgg's partitions and
 * peers are runs of equal keys in the node's order.
 */
static bool
window_keys_match(WindowAgg *wagg, List *private, CustomScan *node)
{
	List	   *columns = (List *) list_nth(private, PRIV_COLUMNS);
	List	   *operators = (List *) list_nth(private, PRIV_OPERATORS);
	List	   *collations = (List *) list_nth(private, PRIV_COLLATIONS);
	int			np = wagg->partNumCols;

	if (np + wagg->ordNumCols > list_length(columns))
		return false;
	for (int i = 0; i < np + wagg->ordNumCols; i++)
	{
		AttrNumber	column = i < np ? wagg->partColIdx[i] : wagg->ordColIdx[i - np];
		Oid			collation = i < np ? wagg->partCollations[i] : wagg->ordCollations[i - np];
		Oid			eqop = i < np ? wagg->partOperators[i] : wagg->ordOperators[i - np];

		if (node != NULL)
			column = scan_column(node, column);
		if (column != list_nth_int(columns, i) ||
			collation != list_nth_oid(collations, i) ||
			eqop != get_equality_op_for_ordering_op(list_nth_oid(operators, i), NULL))
			return false;
	}
	return true;
}

/*
 * The bounds of a WindowAgg's run condition over the node's keys (private),
 * as PRIV_RANK_BOUND has them: each k of row_number() or rank() <= k or < k
 * (k >= rank() and k > rank() alike) into *exprs, and 0 or -1 into
 * *adjust.  False for none.
 *
 * Once its run condition is false the WindowAgg returns no more rows where
 * it is the top one and has no PARTITION BY (nodeWindowAgg.c's
 * WINDOWAGG_DONE); the rows it reads until then are the first c of rank
 * at most c, then the first row past the condition, whose target list and
 * window functions it still computes, and that row's peers where a frame
 * reaches them.  With a PARTITION BY, the top WindowAgg reads the rest of
 * the partition without computing anything (WINDOWAGG_PASSTHROUGH_STRICT)
 * and starts again at the next: the same rows, in each partition, are all
 * it uses, with the row after that peer group, which it reads to end the
 * group's frame and whose target list it then computes in passing
 * (*npart is then the number of partition columns).  The node keeps
 * those rows (sort_exec.c) when:
 * - the WindowAgg's partitions and peers are the node's: its partition
 *   columns and then its ordering columns are the node's keys, with their
 *   collations;
 * - every window function of the WindowAgg is computed from the rows up to
 *   the current row's peers (looks_back_only): ntile, percent_rank,
 *   cume_dist, lead or a frame reaching FOLLOWING rows need every row;
 * - k is evaluated in the node as in the WindowAgg: an integer Const or
 *   Param, not one an initplan sets.  The node evaluates k before it reads
 *   a row, the WindowAgg only at its first row: an expression (10 / $1,
 *   $1 + 1) or an initplan could fail in the node where the WindowAgg, over
 *   no rows, never evaluates it.  A Const
 *   only with consts_only, for the workers under a Gather Merge, which
 *   cannot evaluate the leader's parameters.  Each worker then keeps its own rows of rank at most c and
 *   its next peer group: their union holds the rows of rank at most c of
 *   all and the next peer group of all, in the Gather Merge's order.
 * dense_rank() <= k bounds no count of rows: that condition gives no bound.
 */
static bool
rank_bound(WindowAgg *wagg, List *private, bool consts_only, List **exprs, List **adjust,
		   int *npart)
{
	int			np = wagg->partNumCols;
	WindowFuncsCheck check;
	ListCell   *lc;

	*exprs = NIL;
	*adjust = NIL;
	*npart = np;
	if (!wagg->topWindow || wagg->runConditionOrig == NIL ||
		np + wagg->ordNumCols != list_length((List *) list_nth(private, PRIV_COLUMNS)) ||
		!window_keys_match(wagg, private, NULL))
		return false;
	check.frame_options = wagg->frameOptions;
	check.ok = true;
	window_funcs_walker((Node *) wagg->plan.targetlist, &check);
	window_funcs_walker((Node *) wagg->plan.qual, &check);
	if (!check.ok)
		return false;

	foreach(lc, wagg->runConditionOrig)
	{
		OpExpr	   *op = (OpExpr *) lfirst(lc);
		WindowFunc *wfunc;
		Node	   *k;
		bool		wfunc_left;
		int			strategy;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2)
			continue;
		wfunc_left = IsA(linitial(op->args), WindowFunc);
		wfunc = (WindowFunc *) (wfunc_left ? linitial(op->args) : lsecond(op->args));
		k = (Node *) (wfunc_left ? lsecond(op->args) : linitial(op->args));
		if (!IsA(wfunc, WindowFunc) || wfunc->winref != wagg->winref ||
			(wfunc->winfnoid != F_ROW_NUMBER && wfunc->winfnoid != F_RANK_))
			continue;
		if ((exprType(k) != INT2OID && exprType(k) != INT4OID && exprType(k) != INT8OID) ||
			!(IsA(k, Const) || IsA(k, Param)) || (consts_only && !IsA(k, Const)))
			continue;
		if (IsA(k, Param) && ((Param *) k)->paramkind == PARAM_EXEC &&
			bms_is_member(((Param *) k)->paramid, initplan_params))
			continue;
		strategy = get_op_opfamily_strategy(op->opno, INTEGER_BTREE_FAM_OID);
		if (strategy == (wfunc_left ? BTLessEqualStrategyNumber : BTGreaterEqualStrategyNumber))
			*adjust = lappend_int(*adjust, 0);
		else if (strategy == (wfunc_left ? BTLessStrategyNumber : BTGreaterStrategyNumber))
			*adjust = lappend_int(*adjust, -1);
		else
			continue;
		*exprs = lappend(*exprs, copyObject(k));
	}
	return *exprs != NIL;
}

/*
 * private with the run condition's bounds (rank_bound) as its sixth list and
 * the number of partition keys as its seventh
 */
static List *
with_rank_bound(List *private, List *adjust, int npart)
{
	List	   *result = list_copy(private);

	Assert(list_length(private) == PRIV_RANK_BOUND);
	result = lappend(result, adjust);
	return lappend(result, list_make1_int(npart));
}

/*
 * The rows a run condition's bounds keep, for the estimates: the least of
 * the constant ones, one peer group past it counted as a row; -1 where none
 * is constant.
 */
static double
const_rank_bound(List *exprs, List *adjust)
{
	double		bound = -1;
	ListCell   *le;
	ListCell   *la;

	forboth(le, exprs, la, adjust)
	{
		Const	   *k = (Const *) lfirst(le);
		double		c;

		if (!IsA(k, Const))
			continue;
		if (k->constisnull)
			c = 0;
		else if (k->consttype == INT2OID)
			c = DatumGetInt16(k->constvalue);
		else if (k->consttype == INT4OID)
			c = DatumGetInt32(k->constvalue);
		else
			c = (double) DatumGetInt64(k->constvalue);
		c = Max(c + lfirst_int(la), 0) + 1;
		if (bound < 0 || c < bound)
			bound = c;
	}
	return bound;
}

/*
 * The node in sort's place: the same input, estimates and plan node id; its
 * scan tuples are sort's (custom_scan_tlist is sort's target list, whose
 * entries name the child's columns as OUTER_VAR), and its target list hands
 * them on unchanged.  limit, when not NULL, is the Limit whose count and
 * offset bound it; else rank_exprs, when not NIL, are the bounds of the
 * WindowAgg's run condition above it (private's PRIV_RANK_BOUND says how).
 * parallel_aware under a Gather Merge, for the workers' figures
 * (make_sort_path says why).
 */
static Plan *
swap_sort(Sort *sort, List *private, Limit *limit, List *rank_exprs, bool parallel_aware)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *tlist = NIL;
	ListCell   *lc;

	memcpy(&cscan->scan.plan, &sort->plan, sizeof(Plan));
	cscan->scan.plan.type = T_CustomScan;
#if PG_VERSION_NUM >= 180000
	/* the node is not disabled where Sort was (enable_sort = off): its input's count */
	cscan->scan.plan.disabled_nodes = outerPlan(sort)->disabled_nodes;
#endif
	foreach(lc, sort->plan.targetlist)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);
		TargetEntry *out = makeTargetEntry((Expr *) makeVarFromTargetEntry(INDEX_VAR, tle),
										   tle->resno, tle->resname, tle->resjunk);

		out->ressortgroupref = tle->ressortgroupref;
		tlist = lappend(tlist, out);
	}
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.plan.righttree = NULL;
	cscan->scan.plan.parallel_aware = parallel_aware;
	cscan->scan.scanrelid = 0;
	cscan->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = rank_exprs;
	if (limit != NULL)
		cscan->custom_exprs = list_make2(copyObject(limit->limitCount),
										 copyObject(limit->limitOffset));
	cscan->custom_private = private;
	cscan->custom_scan_tlist = sort->plan.targetlist;
	cscan->custom_relids = NULL;
	cscan->methods = &gpusort_sort_scan_methods;
	return (Plan *) cscan;
}

/*
 * The ranking functions of a WindowAgg over the node, for fuse_window: each
 * distinct WindowFunc of its target list once, in funcs, with its
 * WINDOW_* in kinds and ntile's argument (0 for the others) in args; ok
 * false where any is another function, or ntile of other than a positive
 * constant (the WindowAgg evaluates it, and may fail, at each partition).
 */
typedef struct WindowFuncsFound
{
	Index		winref;
	List	   *funcs;
	List	   *kinds;
	List	   *args;
	bool		ok;
} WindowFuncsFound;

static bool
ranking_funcs_walker(Node *node, WindowFuncsFound *found)
{
	if (node == NULL)
		return false;
	if (IsA(node, WindowFunc))
	{
		WindowFunc *wfunc = (WindowFunc *) node;
		int			kind = 0;
		int			arg = 0;
		Oid			type = INT8OID;

		switch (wfunc->winfnoid)
		{
			case F_ROW_NUMBER:
				kind = WINDOW_ROW_NUMBER;
				break;
			case F_RANK_:
				kind = WINDOW_RANK;
				break;
			case F_DENSE_RANK_:
				kind = WINDOW_DENSE_RANK;
				break;
			case F_PERCENT_RANK_:
				kind = WINDOW_PERCENT_RANK;
				type = FLOAT8OID;
				break;
			case F_CUME_DIST_:
				kind = WINDOW_CUME_DIST;
				type = FLOAT8OID;
				break;
			case F_NTILE:
				{
					Const	   *c = list_length(wfunc->args) == 1 ? (Const *) linitial(wfunc->args) : NULL;

					type = INT4OID;
					if (c != NULL && IsA(c, Const) && c->consttype == INT4OID && !c->constisnull &&
						DatumGetInt32(c->constvalue) > 0)
					{
						kind = WINDOW_NTILE;
						arg = DatumGetInt32(c->constvalue);
					}
					break;
				}
			default:
				break;
		}
		if (kind == 0 || wfunc->winref != found->winref || wfunc->aggfilter != NULL ||
			wfunc->wintype != type || (kind != WINDOW_NTILE && wfunc->args != NIL))
			found->ok = false;
		else if (!list_member(found->funcs, wfunc))
		{
			found->funcs = lappend(found->funcs, wfunc);
			found->kinds = lappend_int(found->kinds, kind);
			found->args = lappend_int(found->args, arg);
		}
		return !found->ok;
	}
	return expression_tree_walker(node, ranking_funcs_walker, (void *) found);
}

/*
 * The WindowAgg's target list over the fused node's scan tuples: its
 * input's columns (OUTER_VAR) are the node's target list's (tlist, plain
 * Vars of its scan tuple), and its ranking functions the scan tuple's
 * columns from first_func on.
 */
typedef struct FusedTlist
{
	List	   *funcs;
	int			first_func;
	List	   *tlist;
} FusedTlist;

static Node *
fused_tlist_mutator(Node *node, FusedTlist *fused)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, WindowFunc))
	{
		int			i = 0;
		ListCell   *lc;

		foreach(lc, fused->funcs)
		{
			if (equal(lfirst(lc), node))
				return (Node *) makeVar(INDEX_VAR, fused->first_func + i, ((WindowFunc *) node)->wintype,
										-1, InvalidOid, 0);
			i++;
		}
		elog(ERROR, "window function not found among the node's");
	}
	if (IsA(node, Var) && ((Var *) node)->varno == OUTER_VAR)
	{
		TargetEntry *tle = get_tle_by_resno(fused->tlist, ((Var *) node)->varattno);

		if (tle == NULL)
			elog(ERROR, "no column %d in the node's target list", ((Var *) node)->varattno);
		return (Node *) copyObject(tle->expr);
	}
	return expression_tree_mutator(node, fused_tlist_mutator, (void *) fused);
}

/*
 * The scan column that the node's output column resno is (its target list
 * holds only Vars of its scan tuple, fuse_window checks), or 0.
 */
static AttrNumber
scan_column(CustomScan *node, AttrNumber resno)
{
	TargetEntry *tle = get_tle_by_resno(node->scan.plan.targetlist, resno);

	return tle != NULL ? ((Var *) tle->expr)->varattno : 0;
}

/* The most keys of a window the node computes functions of (its runs' marks are bytes). */
#define FUSE_MAX_KEYS 200

/*
 * The node in place of a WindowAgg over it (wagg, over node), where the
 * WindowAgg computes only ranking functions (row_number, rank, dense_rank,
 * percent_rank, cume_dist, ntile of a constant) of its window, whose
 * partitions and peers are runs of the node's leading
 * keys: the node then counts them as it returns its rows (sort_exec.c), in
 * one pass where the WindowAgg kept each partition in a tuplestore.  NULL
 * where it cannot: another window function (an aggregate, lag...),
 * a run condition (the node's rank bound takes it) or a filter, a frame
 * with an offset (which the WindowAgg evaluates and checks, and may fail
 * on, though the functions do not use the frame), or keys other than the
 * node's.  A node that computes a lower WindowAgg's
 * functions takes the next one's too, where its own target list is its
 * scan tuple's columns only (nothing of it is computed once it goes).
 *
 * The node's scan tuples become its input's columns and then one value per
 * function, named in custom_scan_tlist by the function as a plain call
 * (EXPLAIN VERBOSE shows "row_number()"; a WindowFunc could not be deparsed
 * outside its WindowAgg); its target list is the WindowAgg's over them.
 * The WindowAgg could not scan backwards or mark, nor can the node now.
 */
static Plan *
fuse_window(WindowAgg *wagg, CustomScan *node)
{
	List	   *private = node->custom_private;
	bool		stacked = list_length(private) > PRIV_WINDOW;
	int			np = wagg->partNumCols;
	int			nkeys = np + wagg->ordNumCols;
	WindowFuncsFound found;
	FusedTlist	fused;
	CustomScan *cscan;
	List	   *scan_tlist;
	List	   *window;
	ListCell   *lc;

	if (!gpusort_enable_window_functions || node->custom_exprs != NIL ||
		(!stacked && list_length(private) != PRIV_RANK_BOUND) ||
		wagg->runConditionOrig != NIL || wagg->plan.qual != NIL || wagg->plan.initPlan != NIL ||
		wagg->startOffset != NULL || wagg->endOffset != NULL ||
		nkeys == 0 || nkeys > FUSE_MAX_KEYS)
		return NULL;
	foreach(lc, node->scan.plan.targetlist)
		if (!IsA(((TargetEntry *) lfirst(lc))->expr, Var) ||
			((Var *) ((TargetEntry *) lfirst(lc))->expr)->varno != INDEX_VAR)
			return NULL;
	/* the WindowAgg's columns are the node's outputs: the scan columns they are */
	if (!window_keys_match(wagg, private, node))
		return NULL;

	found.winref = wagg->winref;
	found.funcs = NIL;
	found.kinds = NIL;
	found.args = NIL;
	found.ok = true;
	ranking_funcs_walker((Node *) wagg->plan.targetlist, &found);
	if (!found.ok || found.funcs == NIL)
		return NULL;

	scan_tlist = list_copy(node->custom_scan_tlist);
	fused.funcs = found.funcs;
	fused.first_func = list_length(scan_tlist) + 1;
	fused.tlist = node->scan.plan.targetlist;
	window = stacked ? list_copy((List *) list_nth(private, PRIV_WINDOW)) : NIL;
	foreach(lc, found.funcs)
	{
		WindowFunc *wfunc = (WindowFunc *) lfirst(lc);
		FuncExpr   *call = makeFuncExpr(wfunc->winfnoid, wfunc->wintype, copyObject(wfunc->args),
										InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);

		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) call, list_length(scan_tlist) + 1,
														 NULL, false));
		window = lappend_int(window, list_nth_int(found.kinds, foreach_current_index(lc)));
		window = lappend_int(window, np);
		window = lappend_int(window, nkeys);
		window = lappend_int(window, list_nth_int(found.args, foreach_current_index(lc)));
	}

	cscan = makeNode(CustomScan);
	memcpy(&cscan->scan.plan, &wagg->plan, sizeof(Plan));
	cscan->scan.plan.type = T_CustomScan;
#if PG_VERSION_NUM >= 180000
	cscan->scan.plan.disabled_nodes = node->scan.plan.disabled_nodes;
#endif
	cscan->scan.plan.targetlist = (List *) fused_tlist_mutator((Node *) wagg->plan.targetlist, &fused);
	cscan->scan.plan.lefttree = node->scan.plan.lefttree;
	cscan->scan.plan.righttree = NULL;
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	if (stacked)
		cscan->custom_private = list_truncate(list_copy(private), PRIV_WINDOW);
	else
		cscan->custom_private = lappend(lappend(list_copy(private), NIL), list_make1_int(0));
	cscan->custom_private = lappend(cscan->custom_private, window);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = NULL;
	cscan->methods = &gpusort_sort_scan_methods;
	return (Plan *) cscan;
}

static Plan *swap_sorts(Plan *plan, Plan *parent, Limit *limit, WindowAgg *ranked);

static List *
swap_sorts_list(List *plans, Plan *parent)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = swap_sorts((Plan *) lfirst(lc), parent, NULL, NULL);
	return plans;
}

/* ----------------------------------------------------------------
 * gpu_topk_agg ... GROUP BY over the node
 * ---------------------------------------------------------------- */

/* The highest plan node id of the plan walked, and the nodes made here (ids given after the walk). */
static int	max_plan_node_id = 0;
static List *made_plans = NIL;

/* topk.c's transition function of gpu_topk_agg, of an internal state and of a gpusort_state, and its final function */
extern Datum gpu_topk_agg_transfn(PG_FUNCTION_ARGS);
extern Datum gpu_topk_agg_transfn_state(PG_FUNCTION_ARGS);
extern Datum gpu_topk_agg_final(PG_FUNCTION_ARGS);

/* Every Aggref of an Agg's target list and HAVING: whether all are one call (first). */
static bool
one_aggref_walker(Node *node, Aggref **first)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		if (*first == NULL)
			*first = (Aggref *) node;
		else if (!equal(*first, node))
			return true;
		return false;
	}
	return expression_tree_walker(node, one_aggref_walker, (void *) first);
}

/*
 * Whether aggref is gpu_topk_agg(value, k [, descending]) of this extension
 * over an element type whose order the aggregate takes from its packed bits
 * (not its numeric or polymorphic overloads), with a constant k of at least
 * 1 and a constant direction: into *value (an input column), *k and
 * *descending.
 */
static bool
topk_aggref(Aggref *aggref, Var **value, int32 *k, bool *descending)
{
	TargetEntry *arg;
	Const	   *kc;
	Oid			argtype;
	Oid		   *argtypes;
	int			nargs;
	HeapTuple	tuple;
	Oid			transfn;
	Oid			finalfn;
	bool		initnull;
	FmgrInfo	flinfo;

	if (aggref->aggfilter != NULL || aggref->aggorder != NIL || aggref->aggdistinct != NIL ||
		aggref->aggstar || aggref->aggvariadic || aggref->aggkind != AGGKIND_NORMAL ||
		aggref->agglevelsup != 0 || aggref->aggsplit != AGGSPLIT_SIMPLE ||
		list_length(aggref->args) < 2 || list_length(aggref->args) > 3 ||
		list_length(aggref->aggargtypes) != list_length(aggref->args))
		return false;
	arg = (TargetEntry *) linitial(aggref->args);
	argtype = linitial_oid(aggref->aggargtypes);
	if (!IsA(arg->expr, Var) || ((Var *) arg->expr)->varno != OUTER_VAR ||
		exprType((Node *) arg->expr) != argtype)
		return false;
	switch (argtype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case FLOAT4OID:
		case FLOAT8OID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			break;
		default:
			return false;
	}
	kc = (Const *) ((TargetEntry *) lsecond(aggref->args))->expr;
	if (!IsA(kc, Const) || kc->consttype != INT4OID || kc->constisnull || DatumGetInt32(kc->constvalue) < 1)
		return false;
	*descending = false;
	if (list_length(aggref->args) == 3)
	{
		Const	   *dc = (Const *) ((TargetEntry *) lthird(aggref->args))->expr;

		if (!IsA(dc, Const) || dc->consttype != BOOLOID || dc->constisnull)
			return false;
		*descending = DatumGetBool(dc->constvalue);
	}
	/* the overload of the element type itself, not anyelement's */
	get_func_signature(aggref->aggfnoid, &argtypes, &nargs);
	if (nargs != list_length(aggref->args) || argtypes[0] != argtype)
		return false;
	/*
	 * this library's gpu_topk_agg: its transition and final functions are
	 * topk.c's and it has no initial state.  An aggregate of the transition
	 * function with another final function, or none, sees the state, which
	 * counts every NULL (nulls=), and an initial state may hold any.
	 */
	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggref->aggfnoid));
	if (!HeapTupleIsValid(tuple))
		return false;
	transfn = ((Form_pg_aggregate) GETSTRUCT(tuple))->aggtransfn;
	finalfn = ((Form_pg_aggregate) GETSTRUCT(tuple))->aggfinalfn;
	(void) SysCacheGetAttr(AGGFNOID, tuple, Anum_pg_aggregate_agginitval, &initnull);
	ReleaseSysCache(tuple);
	if (!initnull || !OidIsValid(finalfn))
		return false;
	fmgr_info(transfn, &flinfo);
	if (flinfo.fn_addr != gpu_topk_agg_transfn && flinfo.fn_addr != gpu_topk_agg_transfn_state)
		return false;
	fmgr_info(finalfn, &flinfo);
	if (flinfo.fn_addr != gpu_topk_agg_final)
		return false;
	*value = (Var *) arg->expr;
	*k = DatumGetInt32(kc->constvalue);
	return true;
}

/*
 * A hashed aggregation whose only aggregate is gpu_topk_agg(value, k
 * [, descending]) (every Aggref of its target list and HAVING that one
 * call) as a sorted one over the node: the node sorts the input by the
 * grouping columns and then value (descending NULLS FIRST or ascending NULLS
 * LAST, the aggregate's order), and keeps in each group only the rows of
 * rank at most k there, with the next peer group (rank_bound's bound of
 * rank() <= k OVER (PARTITION BY the grouping columns ORDER BY value)).
 * Every group keeps its first row, and its best k values with every value
 * that ties with the k-th: the aggregate's result over those rows is its
 * result over all of them, and it reads about k rows a group in place of
 * every row.  The groups come out in the grouping columns' order.  Where
 * the groups are many the hash table's misses cost more than the node's
 * sort: 1.7-1.9x over 10^5 rows of 5*10^4 groups on the VM, where k keeps
 * every row.  NULL where agg is anything else, or the node's keys do not
 * pack, or the rows are expected to number under
 * gpusort.sort_node_min_rows or not to fit in work_mem.
 */
static Plan *
topk_agg_over_node(Agg *agg)
{
	Plan	   *child = outerPlan(agg);
	Aggref	   *aggref = NULL;
	Var		   *value;
	int32		k;
	bool		descending;
	Sort	   *sort;
	List	   *private;
	List	   *tlist = NIL;
	ListCell   *lc;
	TypeCacheEntry *typentry;
	Plan	   *node;

	if (agg->aggstrategy != AGG_HASHED || agg->aggsplit != AGGSPLIT_SIMPLE || agg->numCols < 1 ||
		agg->groupingSets != NIL || agg->chain != NIL || child == NULL ||
		one_aggref_walker((Node *) agg->plan.targetlist, &aggref) ||
		one_aggref_walker((Node *) agg->plan.qual, &aggref) ||
		aggref == NULL || !topk_aggref(aggref, &value, &k, &descending))
		return NULL;
	if (gpusort_sort_node_min_rows != 0 &&
		(child->plan_rows < node_min_rows() ||
		 !fits_in_work_mem(child->plan_rows, child->plan_width, agg->numCols + 1)))
		return NULL;
	typentry = lookup_type_cache(value->vartype, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	if (!OidIsValid(descending ? typentry->gt_opr : typentry->lt_opr))
		return NULL;

	sort = makeNode(Sort);
	sort->plan.startup_cost = child->total_cost;
	sort->plan.total_cost = child->total_cost;
	sort->plan.plan_rows = child->plan_rows;
	sort->plan.plan_width = child->plan_width;
	sort->plan.parallel_safe = child->parallel_safe;
#if PG_VERSION_NUM >= 180000
	sort->plan.disabled_nodes = child->disabled_nodes;
#endif
	sort->plan.plan_node_id = -1;
	sort->plan.extParam = bms_copy(child->extParam);
	sort->plan.allParam = bms_copy(child->allParam);
	sort->plan.lefttree = child;
	foreach(lc, child->targetlist)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);

		tlist = lappend(tlist, makeTargetEntry((Expr *) makeVarFromTargetEntry(OUTER_VAR, tle),
											   tle->resno, tle->resname, tle->resjunk));
	}
	sort->plan.targetlist = tlist;
	sort->numCols = agg->numCols + 1;
	sort->sortColIdx = palloc(sizeof(AttrNumber) * sort->numCols);
	sort->sortOperators = palloc(sizeof(Oid) * sort->numCols);
	sort->collations = palloc(sizeof(Oid) * sort->numCols);
	sort->nullsFirst = palloc(sizeof(bool) * sort->numCols);
	for (int i = 0; i < agg->numCols; i++)
	{
		sort->sortColIdx[i] = agg->grpColIdx[i];
		sort->sortOperators[i] = get_ordering_op_for_equality_op(agg->grpOperators[i], false);
		sort->collations[i] = agg->grpCollations[i];
		sort->nullsFirst[i] = false;
		if (!OidIsValid(sort->sortOperators[i]))
			return NULL;
	}
	sort->sortColIdx[agg->numCols] = value->varattno;
	sort->sortOperators[agg->numCols] = descending ? typentry->gt_opr : typentry->lt_opr;
	sort->collations[agg->numCols] = InvalidOid;
	sort->nullsFirst[agg->numCols] = descending;
	if ((private = sort_plan_keys(sort)) == NIL)
		return NULL;

	node = swap_sort(sort, with_rank_bound(private, list_make1_int(0), agg->numCols), NULL,
					 list_make1(makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
										  Int64GetDatum(k), false, FLOAT8PASSBYVAL)),
					 false);
	made_plans = lappend(made_plans, node);
	agg->aggstrategy = AGG_SORTED;
	agg->plan.lefttree = node;
	return (Plan *) agg;
}

/*
 * plan with every Sort below it that the node should take (worth_swapping)
 * swapped for the node.  limit is the Limit right above plan (or above the
 * Gather Merge right above it), whose count and offset bound a Sort there:
 * any expression directly above, constants only across a Gather Merge, whose
 * workers cannot evaluate the leader's parameters.  ranked is the WindowAgg
 * right above plan (or above the Gather Merge right above it), whose run
 * condition may bound a Sort there (rank_bound), with the same rule.
 */
static Plan *
swap_sorts(Plan *plan, Plan *parent, Limit *limit, WindowAgg *ranked)
{
	Limit	   *bound_by = NULL;
	WindowAgg  *ranked_by = NULL;
	ListCell   *lc;

	if (plan == NULL)
		return NULL;
	max_plan_node_id = Max(max_plan_node_id, plan->plan_node_id);

	/* before the nodes under plan, which may evaluate these parameters */
	foreach(lc, plan->initPlan)
	{
		ListCell   *lp;

		foreach(lp, ((SubPlan *) lfirst(lc))->setParam)
			initplan_params = bms_add_member(initplan_params, lfirst_int(lp));
	}

	if (IsA(plan, Limit))
	{
		Limit	   *l = (Limit *) plan;

		/* evaluated once more by the node: not when that could change them */
		if (l->limitCount != NULL && l->limitOption == LIMIT_OPTION_COUNT &&
			!contain_volatile_functions(l->limitCount) &&
			!contain_volatile_functions(l->limitOffset))
			bound_by = l;
	}
	else if (IsA(plan, GatherMerge) && limit != NULL && const_bound(limit) >= 0)
		bound_by = limit;
	if (IsA(plan, WindowAgg))
		ranked_by = (WindowAgg *) plan;
	else if (IsA(plan, GatherMerge))
		ranked_by = ranked;

	plan->lefttree = swap_sorts(plan->lefttree, plan, bound_by, ranked_by);
	plan->righttree = swap_sorts(plan->righttree, plan, NULL, NULL);
	switch (nodeTag(plan))
	{
		case T_Append:
			swap_sorts_list(((Append *) plan)->appendplans, plan);
			break;
		case T_MergeAppend:
			swap_sorts_list(((MergeAppend *) plan)->mergeplans, plan);
			break;
		case T_BitmapAnd:
			swap_sorts_list(((BitmapAnd *) plan)->bitmapplans, plan);
			break;
		case T_BitmapOr:
			swap_sorts_list(((BitmapOr *) plan)->bitmapplans, plan);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan = swap_sorts(((SubqueryScan *) plan)->subplan, plan, NULL, NULL);
			break;
		case T_CustomScan:
			swap_sorts_list(((CustomScan *) plan)->custom_plans, plan);
			break;
		default:
			break;
	}

	/* a WindowAgg of ranking functions over the node: the node computes them */
	if (IsA(plan, WindowAgg) && plan->lefttree != NULL && IsA(plan->lefttree, CustomScan) &&
		((CustomScan *) plan->lefttree)->methods == &gpusort_sort_scan_methods)
	{
		Plan	   *fused = fuse_window((WindowAgg *) plan, (CustomScan *) plan->lefttree);

		if (fused != NULL)
			return fused;
	}

	/* the node the ORDER BY path put there, under a Limit or a WindowAgg it did not see */
	if (IsA(plan, CustomScan) && ((CustomScan *) plan)->methods == &gpusort_sort_scan_methods &&
		((CustomScan *) plan)->custom_exprs == NIL)
	{
		CustomScan *cscan = (CustomScan *) plan;
		List	   *rank_exprs;
		List	   *adjust;
		int			npart;

		if (limit != NULL)
			cscan->custom_exprs = list_make2(copyObject(limit->limitCount),
											 copyObject(limit->limitOffset));
		else if (ranked != NULL &&
				 rank_bound(ranked, cscan->custom_private, !IsA(parent, WindowAgg), &rank_exprs, &adjust,
							&npart))
		{
			cscan->custom_exprs = rank_exprs;
			cscan->custom_private = with_rank_bound(cscan->custom_private, adjust, npart);
		}
		return plan;
	}

	if (IsA(plan, Agg) && gpusort_enable_topk_groups)
	{
		Plan	   *sorted = topk_agg_over_node((Agg *) plan);

		if (sorted != NULL)
			return sorted;
	}

	if (nodeTag(plan) == T_Sort)
	{
		Sort	   *sort = (Sort *) plan;
		double		bound = limit ? const_bound(limit) : -1;
		List	   *private;
		List	   *rank_exprs = NIL;
		List	   *adjust = NIL;
		int			npart = 0;

		if ((private = sort_plan_keys(sort)) == NIL)
			return plan;
		/* a bound in each partition bounds no count of rows: the whole sort's estimates */
		if (limit == NULL && ranked != NULL &&
			rank_bound(ranked, private, !IsA(parent, WindowAgg), &rank_exprs, &adjust, &npart) &&
			npart == 0)
			bound = const_rank_bound(rank_exprs, adjust);
		if (!worth_swapping(sort, private, bound, limit != NULL))
			return plan;
		if (rank_exprs != NIL)
			private = with_rank_bound(private, adjust, npart);
		return swap_sort(sort, private, limit, rank_exprs,
						 parent != NULL && IsA(parent, GatherMerge));
	}
	return plan;
}

/*
 * After standard planning, the Sorts of the plan and of its subplans that
 * the node should take.
 */
static PlannedStmt *
sort_node_planner(Query *parse, const char *query_string, int cursorOptions,
				  ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	ListCell   *lc;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);

	if (!gpusort_enable_sort)
		return stmt;
	initplan_params = NULL;
	plan_rtable = stmt->rtable;
	max_plan_node_id = 0;
	made_plans = NIL;
	stmt->planTree = swap_sorts(stmt->planTree, NULL, NULL, NULL);
	foreach(lc, stmt->subplans)
		lfirst(lc) = swap_sorts((Plan *) lfirst(lc), NULL, NULL, NULL);
	/* the nodes made, not swapped for a Sort, need plan node ids of their own */
	foreach(lc, made_plans)
		((Plan *) lfirst(lc))->plan_node_id = ++max_plan_node_id;
	made_plans = NIL;
	initplan_params = NULL;
	plan_rtable = NIL;
	return stmt;
}

void
gpusort_sort_node_init(void)
{
	DefineCustomBoolVariable("gpusort.enable_sort",
							 "Enables gpusort's sort node.",
							 "The planner then offers it in place of Sort wherever the first "
							 "sort key gives it leading bits to order by.",
							 &gpusort_enable_sort,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.enable_window_functions",
							 "Lets gpusort's sort node compute the ranking window functions over its order.",
							 "Where a WindowAgg over the node computes only row_number(), rank(), "
							 "dense_rank(), percent_rank(), cume_dist() and ntile() of a window whose "
							 "partitions and order are the node's "
							 "leading keys, the node counts them as it returns its rows and the "
							 "WindowAgg goes.",
							 &gpusort_enable_window_functions,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.enable_leader_sort",
							 "Lets the leader of a parallel query sort its workers' rows with its own.",
							 "Under a Gather Merge, where every sort key packs exactly, the workers "
							 "hand the rows they read to the leader, which sorts them all at once; "
							 "off, each worker sorts its share and the Gather Merge merges them.",
							 &gpusort_enable_leader_sort,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.enable_topk_groups",
							 "Lets gpusort's sort node keep each group's best rows for gpu_topk_agg.",
							 "Where a hash aggregation's only aggregate is gpu_topk_agg(x, k) of a "
							 "constant k, the node sorts its input by the grouping columns and x and "
							 "keeps about k rows a group, and a sorted aggregation reads only those.",
							 &gpusort_enable_topk_groups,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.key_threads",
							"Sets how many threads of a backend make a sort's string keys and copy its sorted rows.",
							"The node's sorts of text under ICU collations and libc collations other "
							"than C transform each string (an ICU sort key, strxfrm), and its sorts of "
							"rows kept as tuples copy them into sorted order, on up to this many "
							"threads, the backend's own among them, and never more than the CPUs "
							"online; 1 keeps them on the backend's.",
							&gpusort_key_threads,
							4, 1, 64,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.sort_node_min_rows",
							"Sets the fewest rows for which gpusort's sort node takes a Sort's place.",
							"Where the planner expects fewer rows, Sort stays (outside ORDER BY, "
							"whose node the planner chooses by cost); 0 gives the node every Sort "
							"whose keys it can sort.",
							&gpusort_sort_node_min_rows,
							1000, 0, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	RegisterCustomScanMethods(&gpusort_sort_scan_methods);
	gpusort_sort_explain_init();
	prev_planner_hook = planner_hook;
	planner_hook = sort_node_planner;
	prev_create_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = sort_node_upper_paths;
}
