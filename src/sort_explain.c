/*
 * sort_explain.c: EXPLAIN VERBOSE says why gpusort's sort node did not take
 * a Sort whose first key gives it no leading bits to order by (sort_keys.c),
 * e.g. text under a libc collation other than C:
 *   gpusort: key t COLLATE "en_US.utf8" not supported (it has no abbreviated
 *   key under its collation)
 *
 * PostgreSQL 18 lets an extension add a property to any plan node
 * (explain_per_node_hook): the line is the Sort's own, in every format.
 * Before 18 no hook reaches a node that is not the extension's own; there
 * the node's ExplainOneQuery_hook plans and explains the query as
 * PostgreSQL does and, in the text format, adds one line a declined Sort
 * after the plan, naming the Sort by its keys.
 */
#include "postgres.h"

#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"

#include "sort_node.h"

/*
 * Why the node cannot take sort, as "key ... not supported (...)", or NULL
 * when its first key gives leading bits (the node then takes it or leaves it
 * for its size, not its keys).  The key is deparsed in context, as Sort's
 * own keys are.
 */
static char *
declined_key(Sort *sort, List *context, bool useprefix)
{
	SortKeyBits bits;
	TargetEntry *tle;
	StringInfoData buf;
	Oid			collation;

	if (sort->numCols < 1)
		return NULL;
	sort_key_bits(sort->sortOperators[0], sort->collations[0], sort->nullsFirst[0], &bits, NULL);
	if (bits.kind != SORT_KEY_NONE)
		return NULL;
	tle = get_tle_by_resno(sort->plan.targetlist, sort->sortColIdx[0]);
	if (tle == NULL)
		return NULL;
	initStringInfo(&buf);
	appendStringInfo(&buf, "key %s", deparse_expression((Node *) tle->expr, context, useprefix, true));
	collation = sort->collations[0];
	if (OidIsValid(collation) && collation != get_typcollation(exprType((Node *) tle->expr)))
		appendStringInfo(&buf, " COLLATE %s", quote_identifier(get_collation_name(collation)));
	appendStringInfo(&buf, " not supported (%s)", bits.reason ? bits.reason : "no leading bits");
	return buf.data;
}

#if PG_VERSION_NUM >= 180000

static explain_per_node_hook_type prev_explain_per_node_hook = NULL;

static void
explain_sort_node(PlanState *planstate, List *ancestors, const char *relationship,
				  const char *plan_name, ExplainState *es)
{
	char	   *why;

	if (prev_explain_per_node_hook)
		prev_explain_per_node_hook(planstate, ancestors, relationship, plan_name, es);
	if (!es->verbose || !gpusort_enable_sort || !IsA(planstate->plan, Sort))
		return;
	why = declined_key((Sort *) planstate->plan,
					   set_deparse_context_plan(es->deparse_cxt, planstate->plan, ancestors),
					   true);
	if (why != NULL)
		ExplainPropertyText("gpusort", why, es);
}

void
gpusort_sort_explain_init(void)
{
	prev_explain_per_node_hook = explain_per_node_hook;
	explain_per_node_hook = explain_sort_node;
}

#else

static ExplainOneQuery_hook_type prev_explain_one_query_hook = NULL;

static void declined_sorts(Plan *plan, ExplainState *es);

static void
declined_sorts_list(List *plans, ExplainState *es)
{
	ListCell   *lc;

	foreach(lc, plans)
		declined_sorts((Plan *) lfirst(lc), es);
}

/* A line for each Sort of plan that the node declined for its keys. */
static void
declined_sorts(Plan *plan, ExplainState *es)
{
	if (plan == NULL)
		return;
	if (IsA(plan, Sort))
	{
		char	   *why = declined_key((Sort *) plan,
									   set_deparse_context_plan(es->deparse_cxt, plan, NIL), true);

		if (why != NULL)
			appendStringInfo(es->str, "gpusort: %s\n", why);
	}
	declined_sorts(plan->lefttree, es);
	declined_sorts(plan->righttree, es);
	switch (nodeTag(plan))
	{
		case T_Append:
			declined_sorts_list(((Append *) plan)->appendplans, es);
			break;
		case T_MergeAppend:
			declined_sorts_list(((MergeAppend *) plan)->mergeplans, es);
			break;
		case T_SubqueryScan:
			declined_sorts(((SubqueryScan *) plan)->subplan, es);
			break;
		case T_CustomScan:
			declined_sorts_list(((CustomScan *) plan)->custom_plans, es);
			break;
		default:
			break;
	}
}

/*
 * ExplainOneQuery's own planning and explaining (commands/explain.c), then
 * the declined Sorts of the plan and its subplans, in the text format of
 * EXPLAIN VERBOSE.
 */
static void
explain_one_query(Query *query, int cursorOptions, IntoClause *into, ExplainState *es,
				  const char *queryString, ParamListInfo params, QueryEnvironment *queryEnv)
{
	PlannedStmt *plan;
	instr_time	planstart;
	instr_time	planduration;
	BufferUsage bufusage_start;
	BufferUsage bufusage;
	ListCell   *lc;
#if PG_VERSION_NUM >= 170000
	MemoryContextCounters mem_counters;
	MemoryContext planner_ctx = NULL;
	MemoryContext saved_ctx = NULL;
#endif

	if (prev_explain_one_query_hook)
	{
		prev_explain_one_query_hook(query, cursorOptions, into, es, queryString, params, queryEnv);
		return;
	}
#if PG_VERSION_NUM >= 170000
	if (es->memory)
	{
		planner_ctx = AllocSetContextCreate(CurrentMemoryContext, "explain analyze planner context",
											ALLOCSET_DEFAULT_SIZES);
		saved_ctx = MemoryContextSwitchTo(planner_ctx);
	}
#endif
	if (es->buffers)
		bufusage_start = pgBufferUsage;
	INSTR_TIME_SET_CURRENT(planstart);
	plan = pg_plan_query(query, queryString, cursorOptions, params);
	INSTR_TIME_SET_CURRENT(planduration);
	INSTR_TIME_SUBTRACT(planduration, planstart);
#if PG_VERSION_NUM >= 170000
	if (es->memory)
	{
		MemoryContextSwitchTo(saved_ctx);
		MemoryContextMemConsumed(planner_ctx, &mem_counters);
	}
#endif
	if (es->buffers)
	{
		memset(&bufusage, 0, sizeof(BufferUsage));
		BufferUsageAccumDiff(&bufusage, &pgBufferUsage, &bufusage_start);
	}
	ExplainOnePlan(plan, into, es, queryString, params, queryEnv, &planduration,
				   es->buffers ? &bufusage : NULL
#if PG_VERSION_NUM >= 170000
				   , es->memory ? &mem_counters : NULL
#endif
		);

	if (!es->verbose || es->format != EXPLAIN_FORMAT_TEXT || !gpusort_enable_sort ||
		es->deparse_cxt == NIL)
		return;
	declined_sorts(plan->planTree, es);
	foreach(lc, plan->subplans)
		declined_sorts((Plan *) lfirst(lc), es);
}

void
gpusort_sort_explain_init(void)
{
	prev_explain_one_query_hook = ExplainOneQuery_hook;
	ExplainOneQuery_hook = explain_one_query;
}

#endif
