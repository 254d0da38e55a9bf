/*
 * sort_agg_rewrite.c: gpu_sort(array_agg(x) [, descending]) planned as
 * gpu_sort_agg(x [, descending]).
 *
 * Both give the same array: the values of the group's rows (FILTER applied),
 * sorted by gpusort's order, NULLs last ascending and first descending, and
 * NULL for a group without rows.  gpu_sort_agg gathers and sorts in one
 * aggregate that has partial states, so the planner may run it in parallel
 * workers, where array_agg over the rows and gpu_sort over the whole array
 * would gather every row in one process first.  An ORDER BY inside array_agg
 * cannot change what the sort returns, so it is dropped.
 *
 * gpu_sort_support asks for this rewrite (SupportRequestSimplify) while the
 * planner simplifies the query's expressions, which is before it collects
 * the query's aggregates (preprocess_aggrefs fills in the new Aggref's
 * transition type and numbers).  A view or a prepared statement keeps its
 * text and its query tree: the rewrite is in each plan only.
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
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
 * The aggregated argument of array_agg(x [ORDER BY ...]) [FILTER (...)] over
 * elements of a type gpusort sorts, at this query level; NULL for any other
 * aggregate or form: array_agg over arrays, DISTINCT (it drops duplicates),
 * an outer query's aggregate, or ORDER BY keys with volatile functions (their
 * calls would be dropped with them).
 */
static Expr *
array_agg_element(const Aggref *aggref)
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

		if (!key->resjunk || contain_volatile_functions((Node *) key->expr))
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
match_sort_of_array_agg(const FuncExpr *fcall, SortOfArrayAgg *match)
{
	/* gpu_sort(a, descending, nulls_first): the planner has filled in the defaults */
	if (list_length(fcall->args) != 3 || !IsA(linitial(fcall->args), Aggref) ||
		!is_gpu_sort(fcall))
		return false;
	match->array_agg = linitial_node(Aggref, fcall->args);
	match->element = array_agg_element(match->array_agg);
	match->descending = constant_direction(fcall);
	return match->element != NULL && match->descending != NULL;
}

/* Whether every role may execute the function of pg_proc's tuple: its ACL grants EXECUTE to PUBLIC. */
static bool
public_may_execute(HeapTuple tuple)
{
	bool		isnull;
	Datum		datum = SysCacheGetAttr(PROCOID, tuple, Anum_pg_proc_proacl, &isnull);
	Acl		   *acl;
	AclItem    *items;

	if (isnull)
		return true;			/* the default: PUBLIC may execute functions */
	acl = DatumGetAclP(datum);
	items = ACL_DAT(acl);
	for (int i = 0; i < ACL_NUM(acl); i++)
	{
		if (items[i].ai_grantee == ACL_ID_PUBLIC && (ACLITEM_GET_PRIVS(items[i]) & ACL_EXECUTE))
			return true;
	}
	return false;
}

/*
 * gpu_sort_agg(T) for ascending, gpu_sort_agg(T, bool) for descending, from
 * gpu_sort's own schema, returning the type gpu_sort returns, with its
 * EXECUTE granted to PUBLIC (as by default); InvalidOid when there is none.  A plan is cached across roles, and the executor checks the right to
 * execute the aggregate as the role that runs it: where that right was
 * changed, the rewrite could fail for a role that may call gpu_sort.  Looked
 * up in the catalog rather than by name resolution, which would need the
 * right to use the schema: a view's caller may call gpu_sort without it.
 */
static Oid
lookup_sort_agg(const FuncExpr *fcall, Oid elemtype, bool descending)
{
	Oid			argtypes[2] = {elemtype, BOOLOID};
	Oid			aggfnoid;
	HeapTuple	tuple;
	bool		public_may;

	aggfnoid = GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid,
							   CStringGetDatum("gpu_sort_agg"),
							   PointerGetDatum(buildoidvector(argtypes, descending ? 2 : 1)),
							   ObjectIdGetDatum(get_func_namespace(fcall->funcid)));
	if (!OidIsValid(aggfnoid) || get_func_prokind(aggfnoid) != PROKIND_AGGREGATE ||
		get_func_rettype(aggfnoid) != fcall->funcresulttype)
		return InvalidOid;
	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(aggfnoid));
	if (!HeapTupleIsValid(tuple))
		return InvalidOid;
	public_may = public_may_execute(tuple);
	ReleaseSysCache(tuple);
	return public_may ? aggfnoid : InvalidOid;
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
gpusort_rewrite_sort_of_array_agg(const FuncExpr *fcall)
{
	SortOfArrayAgg match;
	Oid			aggfnoid;

	if (!match_sort_of_array_agg(fcall, &match))
		return NULL;
	aggfnoid = lookup_sort_agg(fcall, exprType((Node *) match.element),
							   DatumGetBool(match.descending->constvalue));
	if (!OidIsValid(aggfnoid))
		return NULL;
	return (Node *) make_sort_agg(aggfnoid, fcall, &match);
}
