/*
 * sort_node.h: what the sort node's planner side (sort_plan.c) and executor
 * side (sort_exec.c) share: the plan's private layout and the key types.
 */
#ifndef GPUSORT_SORT_NODE_H
#define GPUSORT_SORT_NODE_H

#include "catalog/pg_type.h"
#include "nodes/extensible.h"

#define SORT_NODE_NAME "gpusort"

/*
 * The node orders rows by at most this many leading bits of their keys (a
 * NULL bit each where a key has NULLs); the tie pass orders the rest.
 */
#define SORT_NODE_MAX_BITS 128

/*
 * The plan's keys, kept in custom_private as five lists (one entry per key):
 * the column in the node's tuples (1-based), the type, the sort operator,
 * the collation, and the flags (bit 0 DESC, bit 1 NULLS FIRST).
 *
 * custom_exprs is empty, or holds the LIMIT count and OFFSET (NULL for none)
 * of the Limit above the node: the node then keeps only the first
 * count + offset rows, as Sort's bounded sort does.
 *
 * Under a WindowAgg whose run condition stops it (sort_plan.c's
 * rank_bound), a sixth list (PRIV_RANK_BOUND) holds one integer per entry
 * of custom_exprs, each then a run condition's k (an int2, int4 or int8
 * expression): 0 for row_number() or rank() <= k, -1 for < k.  The node
 * keeps the rows of rank at most c, the least k plus its integer (at least
 * 0), that is the first c rows and their peers, and the peer group after
 * them: the WindowAgg still reads the first row past its condition, and
 * that row's peers where its frame reaches them.  A seventh list
 * (PRIV_PART_KEYS) holds one integer: how many of the leading keys are the
 * WindowAgg's PARTITION BY columns (0 for none).  With some, the bound holds
 * in each partition: the WindowAgg passes over a partition's rows past its
 * condition, and the node keeps each partition's rows of rank at most c,
 * its next peer group and the row after that group (sort_exec.c's
 * partition_cut).
 *
 * Where the node computes WindowAggs' ranking functions in their place
 * (sort_plan.c's fuse_window), the sixth list is empty, the seventh holds
 * 0, and an eighth (PRIV_WINDOW) holds four integers per function: its
 * WINDOW_*, its window's partition keys (the first of the node's keys),
 * its window's partition and ordering keys together (the keys that tell
 * peers), and ntile's argument (0 for the others).  The node's scan tuples
 * are then its input's columns followed by those functions' values, and its
 * target list is the top WindowAgg's over them.
 */
enum
{
	PRIV_COLUMNS,
	PRIV_TYPES,
	PRIV_OPERATORS,
	PRIV_COLLATIONS,
	PRIV_FLAGS,
	PRIV_RANK_BOUND,
	PRIV_PART_KEYS,
	PRIV_WINDOW
};

/* the ranking functions the node computes (PRIV_WINDOW) */
#define WINDOW_ROW_NUMBER	1
#define WINDOW_RANK			2
#define WINDOW_DENSE_RANK	3
#define WINDOW_PERCENT_RANK	4
#define WINDOW_CUME_DIST	5
#define WINDOW_NTILE		6

#define KEY_DESC			1
#define KEY_NULLS_FIRST		2

/*
 * A bounded sort of words of up to 64 bits keeps at most twice its bound
 * rows, and never fewer than this, between prunings to the bound.
 */
#define SORT_NODE_PRUNE_MIN 4096

/* sort_plan.c: defines gpusort.enable_sort and the rest, and registers the node; from _PG_init */
extern void gpusort_sort_node_init(void);

/* sort_explain.c: EXPLAIN VERBOSE's word on a Sort the node declined; from gpusort_sort_node_init */
extern void gpusort_sort_explain_init(void);

extern bool gpusort_enable_sort;
extern bool gpusort_enable_window_functions;
extern bool gpusort_enable_leader_sort;
extern bool gpusort_enable_topk_groups;
extern int	gpusort_sort_node_min_rows;

extern const CustomScanMethods gpusort_sort_scan_methods;

/*
 * The leading bits of a key that the node orders by (sort_keys.c): how a
 * value becomes them, how many (1 to 64), and whether they are the whole
 * key (equal bits, equal keys) or a prefix of its order.
 */
typedef enum SortKeyKind
{
	SORT_KEY_NONE,				/* no bits: compared by the tie pass only */
	SORT_KEY_SIGNED,			/* a signed integer of width bits */
	SORT_KEY_UNSIGNED,			/* an unsigned integer of width bits */
	SORT_KEY_FLOAT4,
	SORT_KEY_FLOAT8,
	SORT_KEY_INTERVAL,			/* the span's leading bits */
	SORT_KEY_TIMETZ,			/* the time in UTC */
	SORT_KEY_ABBREV_UNSIGNED,	/* SortSupport's abbreviated key, unsigned */
	SORT_KEY_ABBREV_SIGNED,		/* ... signed */
	SORT_KEY_ABBREV_INT32,		/* ... a signed 32-bit integer */
	SORT_KEY_ABBREV_NUMERIC,	/* numeric's (signed, larger first) */
	SORT_KEY_NUMERIC,			/* numeric(p,s), p <= 18: its value times
								 * 10^s, exact (sort_key_numeric) */
	SORT_KEY_BYTES,				/* a string's first bytes (name under C) */
	SORT_KEY_STRXFRM			/* strxfrm's first bytes, libc collations:
								 * not trusted, the final order is checked */
} SortKeyKind;

typedef struct SortKeyBits
{
	SortKeyKind kind;
	int			width;
	bool		exact;
	bool		byte_string;	/* the bits are the first bytes of a byte
								 * string ordered as the key is, which
								 * sort_key_xfrm_bytes gives whole: BYTES,
								 * STRXFRM and ICU's abbreviated strings */
	int			scale;			/* SORT_KEY_NUMERIC's s */
	Oid			type;			/* the operator's input type (its opclass's),
								 * which a byte string's value is read as:
								 * the key's column may be of another type
								 * binary coercible to it (text under
								 * bpchar's operator) */
	const char *reason;			/* why SORT_KEY_NONE */
} SortKeyBits;

struct SortSupportData;

extern void sort_key_bits(Oid sortop, Oid collation, bool nulls_first, SortKeyBits *bits,
						  struct SortSupportData *abbrev);
extern uint64 sort_key_value(const SortKeyBits *bits, Datum value, struct SortSupportData *abbrev);

/*
 * numeric's exact packing where the key's type and typmod (a domain's
 * included) bound its precision to 18 digits: bits, as sort_key_bits left
 * them, become SORT_KEY_NUMERIC.  sort_key_numeric gives a value's bits, or
 * false for a value they cannot hold (which the typmod rules out).
 */
extern void sort_key_numeric_typmod(Oid type, int32 typmod, SortKeyBits *bits);
extern bool sort_key_numeric(const SortKeyBits *bits, Datum value, uint64 *word);

/*
 * A numeric(p,s) key column kept as its bits alone (the sort node's
 * columnar rows): whether the key's bits give its values back, a value's
 * bits where they do (false: not at the typmod's display scale), and the
 * value again from its bits.
 */
#define SORT_KEY_NUMERIC_DATUM_MAX 32
extern bool sort_key_numeric_rebuilds(const SortKeyBits *bits);
extern bool sort_key_numeric_column(const SortKeyBits *bits, Datum value, uint64 *word);
extern void sort_key_numeric_datum(const SortKeyBits *bits, uint64 word, char *buf);

/* SORT_KEY_STRXFRM's conversion: its locale and buffers */
typedef struct SortKeyXfrm SortKeyXfrm;
extern SortKeyXfrm *sort_key_xfrm_begin(Oid collation, Oid type, bool transform);
extern uint64 sort_key_xfrm(SortKeyXfrm *xfrm, Datum value, bool *whole);
extern const char *sort_key_xfrm_bytes(SortKeyXfrm *xfrm, Datum value, size_t *len, size_t max);
extern const char *sort_key_xfrm_string(SortKeyXfrm *xfrm, Datum value, size_t *len);

/*
 * The same transformations of many strings at once, on up to
 * gpusort.key_threads threads (sort_keys.c): the strings at data +
 * offset[i], len[i] bytes each, a NUL after each.
 */
extern int	gpusort_key_threads;
extern int	sort_key_thread_limit(void);
extern bool sort_key_xfrm_threaded(const SortKeyXfrm *xfrm);
extern int	sort_key_xfrm_words(SortKeyXfrm *xfrm, const char *data, const uint64 *offset,
								const uint32 *len, int64 n, uint64 *words);
extern char *sort_key_xfrm_strings(SortKeyXfrm *xfrm, const char *data, const uint64 *offset,
								   const uint32 *len, int64 n, uint64 *out_offset,
								   uint64 *out_len, Size limit, Size *size, int *threads);

#endif							/* GPUSORT_SORT_NODE_H */
