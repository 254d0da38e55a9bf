/*
 * sort_node.h: what the sort node's planner side (sort_plan.c) and executor
 * side (sort_exec.c) share: the plan's private layout and the key types.
 */
#ifndef GPUSORT_SORT_NODE_H
#define GPUSORT_SORT_NODE_H

#include "catalog/pg_type.h"
#include "nodes/extensible.h"

#define SORT_NODE_NAME "gpusort"

/* every key's ordered bits plus one NULL bit each must fit in this */
#define SORT_NODE_MAX_BITS 128

/*
 * The plan's keys, kept in custom_private as five lists (one entry per key):
 * the column in the node's tuples (1-based), the type, the sort operator,
 * the collation, and the flags (bit 0 DESC, bit 1 NULLS FIRST).  A sixth
 * list, when present, says how the node was placed (SORT_PLACED_*).
 *
 * custom_exprs is empty, or holds the LIMIT count and OFFSET (NULL for none)
 * of the Limit above the node: the node then keeps only the first
 * count + offset rows, as Sort's bounded sort does.
 */
enum
{
	PRIV_COLUMNS,
	PRIV_TYPES,
	PRIV_OPERATORS,
	PRIV_COLLATIONS,
	PRIV_FLAGS
};

#define KEY_DESC			1
#define KEY_NULLS_FIRST		2

/*
 * A bounded sort of words of up to 64 bits keeps at most twice its bound
 * rows, and never fewer than this, between prunings to the bound.
 */
#define SORT_NODE_PRUNE_MIN 4096

/* sort_plan.c: defines gpusort.enable_sort and the rest, and registers the node; from _PG_init */
extern void gpusort_sort_node_init(void);

extern bool gpusort_enable_sort;
extern int	gpusort_sort_node_min_rows;

extern const CustomScanMethods gpusort_sort_scan_methods;

/* Ordered bits of a supported key type, or 0 for any other type. */
static inline int
sort_key_width(Oid type, bool *is_float)
{
	*is_float = (type == FLOAT4OID || type == FLOAT8OID);
	switch (type)
	{
		case INT2OID:
			return 16;
		case INT4OID:
		case DATEOID:
		case FLOAT4OID:
			return 32;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case FLOAT8OID:
			return 64;
		default:
			return 0;
	}
}

#endif							/* GPUSORT_SORT_NODE_H */
