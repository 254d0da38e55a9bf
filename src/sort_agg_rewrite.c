/*
 * sort_agg_rewrite.c: gpu_sort(array_agg(x) [, descending]) planned as
 * gpu_sort_agg(x [, descending]).
 *
 * Both give the same array: the values of the group's rows (FILTER applied),
 * sorted by gpusort's order, NULLs last ascending and first descending, and
 * NULL for a group without rows.  gpu_sort_agg gathers and sorts in one
 * aggregate that has partial states, so the planner may run it in parallel
 * workers, where array_agg over the rows and gpu_sort over the whole array
 * would gather every row in one process first.
 *
 * The rewritten query must raise every error and make every check that the
 * query as written does, so the rewrite is made only where the calls it
 * removes cannot raise one:
 *
 * - An ORDER BY inside array_agg cannot change what the sort returns, and is
 *   dropped with its keys' evaluation and comparisons.  So each key must be
 *   a column or a constant (under a RelabelType: a binary-compatible type or
 *   a COLLATE), of a built-in scalar type or an enum, with a collation where
 *   its type has one, sorted by a built-in operator.  A function, operator,
 *   cast or subquery as a key (`ORDER BY y::int`, `ORDER BY 1/(x-1)`,
 *   `ORDER BY (SELECT 1/0)`) could fail or be refused to the role; a record,
 *   array or range key compares its parts with their types' own functions,
 *   which may be user-defined; a user-defined ordering operator may fail;
 *   text without a collation fails to compare.  The aggregated argument and
 *   FILTER are kept, and gpu_sort's other arguments are constants.  What
 *   only the resources of the dropped sort could raise (temp_file_limit,
 *   memory) is not kept: the sort that gpu_sort_agg makes has its own.
 *
 * - The executor checks EXECUTE on gpu_sort and on array_agg as the role
 *   that runs the plan, and a plan is cached across roles: the rewrite is
 *   made only where PUBLIC may execute both (that gpu_sort, and
 *   array_agg(anynonarray)) and gpu_sort_agg, as by default; then every role
 *   may.  The plan depends on those functions' catalog rows (PlanInvalItems,
 *   which PostgreSQL's own dependencies skip for built-in functions such as
 *   array_agg), so that a GRANT, REVOKE or ALTER FUNCTION on one of them
 *   replans a cached plan, which is then rewritten or not by the rights and
 *   options of that time.
 *
 * - gpu_sort must run as called: not SECURITY DEFINER, no SET options, no
 *   plugin hooking its entry (needs_fmgr_hook), which would have run it in
 *   another role or with other settings; what inline_function asks of a SQL
 *   function before it inlines one.  As there, an object access hook is told
 *   of the functions that the plan calls (gpu_sort_agg's), not of those the
 *   planner removed.
 *
 * gpu_sort_support asks for this rewrite (SupportRequestSimplify) while the
 * planner simplifies the query's expressions, which is before it collects
 * the query's aggregates (preprocess_aggrefs fills in the new Aggref's
 * transition type and numbers) and before it plans sublinks.  A view or a
 * prepared statement keeps its text and its query tree: the rewrite is in
 * each plan only.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "gpusort_pg.h"

/*
 * What gpu_sort_agg needs from a gpu_sort(array_agg(x), descending,
 * nulls_first) call that it can replace.
 */
typedef struct SortOfArrayAgg
{
	Aggref	   *array_agg;		/* the argument of gpu_sort */
	Expr	   *element;		/* x */
	Const	   *descending;		/* a constant, not NULL */
} SortOfArrayAgg;

/* Whether the call is gpu_sort itself (the support function serves others too). */
static bool
is_gpu_sort(const FuncExpr *fcall)
{
	char	   *name = get_func_name(fcall->funcid);

	return !fcall->funcretset && name != NULL && strcmp(name, "gpu_sort") == 0;
}

/*
 * Whether an ORDER BY key inside array_agg can be dropped without dropping
 * an error: its evaluation cannot fail (a column of a table or a constant,
 * under RelabelTypes) and neither can its comparisons (a built-in scalar type or
 * an enum, a domain over one, with a collation where the type has one).
 * The key's sort operator is checked by the caller.
 */
static bool
droppable_order_key(PlannerInfo *root, Expr *key)
{
	Expr	   *inner = key;
	Oid			type;
	char		typtype;

	while (IsA(inner, RelabelType))
		inner = ((RelabelType *) inner)->arg;
	if (!IsA(inner, Var) && !IsA(inner, Const))
		return false;
	if (IsA(inner, Var))
	{
		/*
		 * Only a column of a table read here: a column of a subquery that is
		 * not pulled up (OFFSET, LIMIT, UNION ALL, LATERAL) is an expression
		 * there, which the planner replaces by NULL once nothing reads the
		 * column, and a foreign scan converts only the columns it returns
		 */
		Var		   *var = (Var *) inner;
		RangeTblEntry *rte;

		if (var->varlevelsup != 0 || var->varno <= 0 || var->varno > list_length(root->parse->rtable))
			return false;
		rte = rt_fetch(var->varno, root->parse->rtable);
		if (rte->rtekind != RTE_RELATION || rte->relkind == RELKIND_FOREIGN_TABLE)
			return false;
	}

	type = getBaseType(exprType((Node *) key));
	typtype = get_typtype(type);
	if (!(typtype == TYPTYPE_ENUM || (typtype == TYPTYPE_BASE && type < FirstNormalObjectId)) ||
		type_is_array(type))
		return false;
	/* text whose collation is indeterminate fails to compare */
	return !type_is_collatable(type) || OidIsValid(exprCollation((Node *) key));
}

/*
 * The aggregated argument of array_agg(x [ORDER BY ...]) [FILTER (...)] over
 * elements of a type gpusort sorts, at this query level; NULL for any other
 * aggregate or form: array_agg over arrays, DISTINCT (it drops duplicates),
 * an outer query's aggregate, or an ORDER BY that could fail (see
 * droppable_order_key; x itself as a key is evaluated anyway, only its sort
 * operator matters).
 */
static Expr *
array_agg_element(PlannerInfo *root, const Aggref *aggref)
{
	TargetEntry *first;
	ListCell   *lc;
	gs_type		type;

	if (aggref->aggfnoid != F_ARRAY_AGG_ANYNONARRAY ||
		aggref->agglevelsup != 0 || aggref->aggkind != AGGKIND_NORMAL ||
		aggref->aggdistinct != NIL || aggref->aggdirectargs != NIL ||
		aggref->aggstar || aggref->aggsplit != AGGSPLIT_SIMPLE ||
		aggref->args == NIL)
		return NULL;

	first = linitial_node(TargetEntry, aggref->args);
	if (first->resjunk)
		return NULL;
	for_each_from(lc, aggref->args, 1)
	{
		TargetEntry *key = lfirst_node(TargetEntry, lc);

		if (!key->resjunk || !droppable_order_key(root, key->expr))
			return NULL;
	}
	foreach(lc, aggref->aggorder)
	{
		SortGroupClause *sortcl = lfirst_node(SortGroupClause, lc);

		/* a user-defined ordering operator's comparison may fail */
		if (sortcl->sortop >= FirstNormalObjectId)
			return NULL;
	}

	/* exactly a type gpusort sorts: a domain's array is another type */
	if (!gpusort_sorts_type(exprType((Node *) first->expr), &type))
		return NULL;
	return first->expr;
}

/*
 * The direction, when the call has one gpu_sort_agg can follow: descending
 * a constant true or false, and nulls_first NULL (NULLs last ascending, first
 * descending, as gpu_sort_agg places them) or a constant that says the same.
 */
static Const *
constant_direction(const FuncExpr *fcall)
{
	Node	   *descending = lsecond(fcall->args);
	Node	   *nulls_first = lthird(fcall->args);
	Const	   *direction;

	if (!IsA(descending, Const) || ((Const *) descending)->constisnull ||
		!IsA(nulls_first, Const))
		return NULL;
	direction = (Const *) descending;
	if (!((Const *) nulls_first)->constisnull &&
		DatumGetBool(((Const *) nulls_first)->constvalue) != DatumGetBool(direction->constvalue))
		return NULL;
	return direction;
}

static bool
match_sort_of_array_agg(PlannerInfo *root, const FuncExpr *fcall, SortOfArrayAgg *match)
{
	/* gpu_sort(a, descending, nulls_first): the planner has filled in the defaults */
	if (list_length(fcall->args) != 3 || !IsA(linitial(fcall->args), Aggref) ||
		!is_gpu_sort(fcall))
		return false;
	match->array_agg = linitial_node(Aggref, fcall->args);
	match->element = array_agg_element(root, match->array_agg);
	match->descending = constant_direction(fcall);
	return match->element != NULL && match->descending != NULL;
}

/*
 * Whether every role may execute the function: its ACL grants EXECUTE to
 * PUBLIC.  PostgreSQL has no negative rights, so then no role can be denied.
 */
static bool
public_may_execute(Oid funcid)
{
	HeapTuple	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	bool		isnull;
	Datum		datum;
	bool		public_may = false;

	if (!HeapTupleIsValid(tuple))
		return false;
	datum = SysCacheGetAttr(PROCOID, tuple, Anum_pg_proc_proacl, &isnull);
	if (isnull)
		public_may = true;		/* the default: PUBLIC may execute functions */
	else
	{
		Acl		   *acl = DatumGetAclP(datum);
		AclItem    *items = ACL_DAT(acl);

		for (int i = 0; i < ACL_NUM(acl) && !public_may; i++)
			public_may = items[i].ai_grantee == ACL_ID_PUBLIC &&
				(ACLITEM_GET_PRIVS(items[i]) & ACL_EXECUTE) != 0;
		if ((Pointer) acl != DatumGetPointer(datum))
			pfree(acl);
	}
	ReleaseSysCache(tuple);
	return public_may;
}

/*
 * Whether a call of the function runs in the caller's role and settings:
 * not SECURITY DEFINER, no SET options, no plugin hooking its entry.
 */
static bool
runs_as_called(Oid funcid)
{
	HeapTuple	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	bool		as_called;

	if (!HeapTupleIsValid(tuple))
		return false;
	as_called = !((Form_pg_proc) GETSTRUCT(tuple))->prosecdef &&
		heap_attisnull(tuple, Anum_pg_proc_proconfig, NULL) && !FmgrHookIsNeeded(funcid);
	ReleaseSysCache(tuple);
	return as_called;
}

/*
 * The plan depends on the function's pg_proc row: a change to it (a GRANT,
 * a REVOKE) invalidates a cached plan, as setrefs.c records for the
 * functions that a plan calls, except that it skips built-in ones.
 */
static void
record_function_dependency(PlannerInfo *root, Oid funcid)
{
	PlanInvalItem *item = makeNode(PlanInvalItem);

	item->cacheId = PROCOID;
	item->hashValue = GetSysCacheHashValue1(PROCOID, ObjectIdGetDatum(funcid));
	root->glob->invalItems = lappend(root->glob->invalItems, item);
}

/*
 * gpu_sort_agg(T) for ascending, gpu_sort_agg(T, bool) for descending, from
 * gpu_sort's own schema, returning the type gpu_sort returns; InvalidOid
 * when there is none.  Looked up in the catalog rather than by name
 * resolution, which would need the right to use the schema: a view's caller
 * may call gpu_sort without it.
 */
static Oid
lookup_sort_agg(const FuncExpr *fcall, Oid elemtype, bool descending)
{
	Oid			argtypes[2] = {elemtype, BOOLOID};
	Oid			aggfnoid;

	aggfnoid = GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid,
							   CStringGetDatum("gpu_sort_agg"),
							   PointerGetDatum(buildoidvector(argtypes, descending ? 2 : 1)),
							   ObjectIdGetDatum(get_func_namespace(fcall->funcid)));
	if (!OidIsValid(aggfnoid) || get_func_prokind(aggfnoid) != PROKIND_AGGREGATE ||
		get_func_rettype(aggfnoid) != fcall->funcresulttype)
		return InvalidOid;
	return aggfnoid;
}

/*
 * The Aggref of gpu_sort_agg over array_agg's argument and FILTER, with every
 * field as the parser sets it: the planner fills in the transition type and
 * the numbers later.
 */
static Aggref *
make_sort_agg(Oid aggfnoid, const FuncExpr *fcall, const SortOfArrayAgg *match)
{
	Aggref	   *aggref = makeNode(Aggref);
	List	   *args = list_make1(copyObject(match->element));
	ListCell   *lc;
	AttrNumber	resno = 1;

	if (DatumGetBool(match->descending->constvalue))
		args = lappend(args, copyObject(match->descending));

	aggref->aggfnoid = aggfnoid;
	aggref->aggtype = fcall->funcresulttype;
	aggref->aggcollid = fcall->funccollid;
	aggref->inputcollid = match->array_agg->inputcollid;
	aggref->aggtranstype = InvalidOid;	/* set by the planner */
	foreach(lc, args)
	{
		aggref->aggargtypes = lappend_oid(aggref->aggargtypes, exprType(lfirst(lc)));
		aggref->args = lappend(aggref->args, makeTargetEntry(lfirst(lc), resno++, NULL, false));
	}
	aggref->aggdirectargs = NIL;
	aggref->aggorder = NIL;
	aggref->aggdistinct = NIL;
	aggref->aggfilter = copyObject(match->array_agg->aggfilter);
	aggref->aggstar = false;
	aggref->aggvariadic = false;
	aggref->aggkind = AGGKIND_NORMAL;
#if PG_VERSION_NUM >= 160000
	aggref->aggpresorted = false;
#endif
	aggref->agglevelsup = 0;
	aggref->aggsplit = AGGSPLIT_SIMPLE;
	aggref->aggno = -1;			/* set by the planner */
	aggref->aggtransno = -1;
	aggref->location = match->array_agg->location;
	return aggref;
}

Node *
gpusort_rewrite_sort_of_array_agg(PlannerInfo *root, const FuncExpr *fcall)
{
	SortOfArrayAgg match;
	Oid			aggfnoid;

	/* without a plan to record its dependencies in, no rewrite */
	if (root == NULL || root->glob == NULL || !match_sort_of_array_agg(root, fcall, &match))
		return NULL;
	aggfnoid = lookup_sort_agg(fcall, exprType((Node *) match.element),
							   DatumGetBool(match.descending->constvalue));
	if (!OidIsValid(aggfnoid))
		return NULL;

	/*
	 * Rewritten or not, the plan depends on the three functions' rights and
	 * on gpu_sort's options: after a REVOKE or an ALTER FUNCTION a cached
	 * plan is replanned without the rewrite, after a GRANT with it.
	 */
	record_function_dependency(root, fcall->funcid);
	record_function_dependency(root, match.array_agg->aggfnoid);
	record_function_dependency(root, aggfnoid);
	if (!public_may_execute(fcall->funcid) || !public_may_execute(match.array_agg->aggfnoid) ||
		!public_may_execute(aggfnoid) || !runs_as_called(fcall->funcid))
		return NULL;
	return (Node *) make_sort_agg(aggfnoid, fcall, &match);
}
