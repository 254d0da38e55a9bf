/*
 * agg_state.c: gpusort_state, the transition type of the plain aggregates
 * (gpu_sort_agg, gpu_median, gpu_percentile_cont_agg, gpu_percentile_disc_agg,
 * gpu_mode_agg, gpu_topk_agg).
 *
 * In an aggregate the state is an expanded object (aggregate.h): the
 * transition functions change it in place, at no cost per row beyond
 * finding it.  It is flattened only when it leaves its process, as the
 * partial state of a parallel worker or a Citus worker, and it is sorted
 * (or, limited, cut to its best k) just before (gpusort_agg_prepare_to_leave).
 * A type of its own, rather than internal, is what lets Citus push the
 * aggregates down to its workers: Citus moves a partial state between nodes
 * as text, through the type's output and input functions.
 *
 * The flat form: a SortAggFlat header, the constant argument (the fraction
 * or k) padded to MAXALIGN, then the values, packed in the machine's byte
 * order.  The text form is that content, readable and exact (values and
 * constant as hexadecimal bytes, so floats round-trip bit for bit):
 *
 *   gpusort_state 1 le int4 asc sorted unlimited nulls=3 param=- n=4 values=01000000...
 *
 * "le" or "be" is the byte order of the bytes, and a state is read only on
 * a machine of the same order.  Input is checked as strictly as a partial
 * state from another process: the element type, the counts against the
 * bytes, the constant argument of a limited state, and the order of values
 * that say they are sorted.  The binary form (COPY BINARY, the binary
 * protocol) is a byte-order byte followed by the flat content.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "fmgr.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "gpusort_pg.h"
#include "aggregate.h"

PG_FUNCTION_INFO_V1(gpusort_state_in);
PG_FUNCTION_INFO_V1(gpusort_state_out);
PG_FUNCTION_INFO_V1(gpusort_state_recv);
PG_FUNCTION_INFO_V1(gpusort_state_send);

#define FLAT_MAGIC		0x31535347	/* "GSS1" in little-endian bytes */
#define FLAT_DESCENDING	0x0001
#define FLAT_SORTED		0x0002
#define FLAT_LIMITED	0x0004
#define FLAT_FLAGS		(FLAT_DESCENDING | FLAT_SORTED | FLAT_LIMITED)

#define TEXT_VERSION	1

#ifdef WORDS_BIGENDIAN
#define BYTE_ORDER_NAME "be"
#else
#define BYTE_ORDER_NAME "le"
#endif

typedef struct SortAggFlat
{
	int32		vl_len_;		/* varlena header (do not touch directly) */
	int32		magic;
	Oid			elemtype;
	uint16		flags;
	uint16		unused;
	int32		param_len;		/* -1: no constant argument */
	int32		unused2;
	int64		nvalues;
	int64		nnulls;
	/* param_len bytes, padded to MAXALIGN, then nvalues values */
} SortAggFlat;

/* The element types, by the names of the text form. */
static const struct
{
	Oid			oid;
	const char *name;
}			state_types[] =
{
	{INT2OID, "int2"},
	{INT4OID, "int4"},
	{INT8OID, "int8"},
	{FLOAT4OID, "float4"},
	{FLOAT8OID, "float8"},
	{DATEOID, "date"},
	{TIMESTAMPOID, "timestamp"},
	{TIMESTAMPTZOID, "timestamptz"},
};

static const char *
type_name(Oid elemtype)
{
	for (int i = 0; i < lengthof(state_types); i++)
		if (state_types[i].oid == elemtype)
			return state_types[i].name;
	return NULL;
}

/* The error of a malformed gpusort_state; the arguments are errdetail's. */
#define invalid_state(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION), \
			 errmsg("invalid gpusort_state"), \
			 errdetail(__VA_ARGS__)))

/* Where the values of a flat state with a constant argument of param_len bytes start. */
static Size
values_offset(int32 param_len)
{
	return sizeof(SortAggFlat) + MAXALIGN(Max(param_len, 0));
}

/* ------------------------------------------------------------------------
 * Views
 * ------------------------------------------------------------------------ */

SortAggView
gpusort_agg_view(const SortAggState *state)
{
	SortAggView view;

	view.elemtype = state->elemtype;
	view.collation = state->generic ? state->collation : InvalidOid;
	view.descending = state->descending;
	view.sorted = state->sorted || state->nvalues <= 1;
	view.limited = state->limit >= 0;
	view.nvalues = state->nvalues;
	view.nnulls = state->nnulls;
	view.param = state->param;
	view.param_len = state->param != NULL ? state->param_len : -1;
	view.values = state->values;
	view.nruns = state->nruns;
	view.run_starts = state->run_starts;
	return view;
}

/*
 * The view of a flat state of len bytes (varlena header included), its
 * header checked against its length with divisions, never a product or sum
 * that could wrap.  The values' order is checked only on input.
 */
static SortAggView
view_of_flat(const SortAggFlat *flat, Size len)
{
	SortAggFlat header;
	SortAggView view;
	int16		typlen;
	Size		rest;

	if (len < sizeof(header))
		invalid_state("It has %zu bytes, fewer than its %zu-byte header.", len, sizeof(header));
	memcpy(&header, flat, sizeof(header));
	if (header.magic != FLAT_MAGIC)
		invalid_state("Its header does not start with the gpusort_state mark.");
	if (type_name(header.elemtype) == NULL)
		invalid_state("Its element type %u is not one that gpusort sorts.", header.elemtype);
	if ((header.flags & ~FLAT_FLAGS) != 0 ||
		(header.flags & (FLAT_SORTED | FLAT_LIMITED)) == (FLAT_SORTED | FLAT_LIMITED))
		invalid_state("Its flags are 0x%x.", header.flags);
	if (header.nvalues < 0 || header.nnulls < 0 || header.nnulls > PG_INT64_MAX - header.nvalues)
		invalid_state("It counts %lld values and %lld NULLs.",
					  (long long) header.nvalues, (long long) header.nnulls);
	if (header.param_len < -1 || header.param_len == 0 || values_offset(header.param_len) > len)
		invalid_state("Its constant argument of %d bytes does not fit in its %zu bytes.",
					  header.param_len, len);
	if ((header.flags & FLAT_LIMITED) != 0)
	{
		int32		limit;

		if (header.param_len != sizeof(limit))
			invalid_state("It is limited, but its limit has %d bytes.", header.param_len);
		memcpy(&limit, (const char *) flat + sizeof(header), sizeof(limit));
		if (limit < 0)
			invalid_state("It is limited to %d values.", limit);
	}
	typlen = (int16) gs_type_size(gpusort_type_from_oid(header.elemtype));
	rest = len - values_offset(header.param_len);
	if (rest % typlen != 0 || rest / typlen != (uint64) header.nvalues)
		invalid_state("It has %zu bytes of values for %lld values of %d bytes.",
					  rest, (long long) header.nvalues, typlen);

	view.elemtype = header.elemtype;
	view.collation = InvalidOid;
	view.descending = (header.flags & FLAT_DESCENDING) != 0;
	view.limited = (header.flags & FLAT_LIMITED) != 0;
	view.sorted = !view.limited && ((header.flags & FLAT_SORTED) != 0 || header.nvalues <= 1);
	view.nvalues = header.nvalues;
	view.nnulls = header.nnulls;
	view.param = header.param_len >= 0 ? (const char *) flat + sizeof(header) : NULL;
	view.param_len = header.param_len;
	view.values = (const char *) flat + values_offset(header.param_len);
	view.nruns = 0;
	view.run_starts = NULL;
	return view;
}

/* The flat state a gpusort_state datum holds, detoasted and aligned for its values. */
static const SortAggFlat *
flat_of_datum(Datum datum)
{
	struct varlena *v = PG_DETOAST_DATUM(datum);

	if ((uintptr_t) v % MAXIMUM_ALIGNOF != 0)
	{
		struct varlena *copy = palloc(VARSIZE(v));

		memcpy(copy, v, VARSIZE(v));
		v = copy;
	}
	return (const SortAggFlat *) v;
}

SortAggView
gpusort_agg_view_arg(FunctionCallInfo fcinfo, int argno)
{
	SortAggState *state = gpusort_agg_in_memory(DatumGetPointer(PG_GETARG_DATUM(argno)), false);
	const SortAggFlat *flat;

	Assert(!PG_ARGISNULL(argno));
	if (state != NULL)
		return gpusort_agg_view(state);
	flat = flat_of_datum(PG_GETARG_DATUM(argno));
	return view_of_flat(flat, VARSIZE(flat));
}

SortAggState *
gpusort_agg_state_from_view(MemoryContext parent, const SortAggView *view)
{
	SortAggState *state = gpusort_agg_new_state(parent, view->elemtype, view->collation, view->descending);

	gpusort_agg_append_view(state, view);
	return state;
}

SortAggState *
gpusort_agg_arg(FunctionCallInfo fcinfo, int argno)
{
	SortAggState *state;
	SortAggView view;

	if (PG_ARGISNULL(argno))
		return NULL;
	state = gpusort_agg_in_memory(DatumGetPointer(PG_GETARG_DATUM(argno)), false);
	if (state != NULL)
		return state;
	view = gpusort_agg_view_arg(fcinfo, argno);
	return gpusort_agg_state_from_view(CurrentMemoryContext, &view);
}

/* ------------------------------------------------------------------------
 * The expanded object's methods: the flat form
 * ------------------------------------------------------------------------ */

static Size
flat_size(const SortAggState *state)
{
	int32		param_len = state->param != NULL ? state->param_len : -1;
	uint64		size = values_offset(param_len) + (uint64) state->nvalues * state->typlen;

	if (size > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpusort aggregate partial state is too large to leave its process"),
				 errdetail("It holds %lld values of %s, more than 1 GB.",
						   (long long) state->nvalues, format_type_be(state->elemtype)),
				 errhint("Run the query without parallel workers (SET max_parallel_workers_per_gather = 0), or spread the rows over more Citus shards.")));
	return (Size) size;
}

static Size
state_get_flat_size(ExpandedObjectHeader *eohptr)
{
	SortAggState *state = (SortAggState *) eohptr;
	MemoryContext oldcontext;

	/*
	 * In the states' context: the caller's may be one without pfree
	 * (tuplesort's bump context forms the tuples of a Sort above a partial
	 * aggregate), and the sort allocates and frees scratch.
	 */
	oldcontext = MemoryContextSwitchTo(state->hdr.eoh_context);
	gpusort_agg_prepare_to_leave(state);
	MemoryContextSwitchTo(oldcontext);
	return flat_size(state);
}

static void
state_flatten_into(ExpandedObjectHeader *eohptr, void *result, Size allocated_size)
{
	SortAggState *state = (SortAggState *) eohptr;
	SortAggFlat *flat = (SortAggFlat *) result;
	int32		param_len = state->param != NULL ? state->param_len : -1;

	Assert(allocated_size == flat_size(state));
	memset(flat, 0, values_offset(param_len));
	SET_VARSIZE(flat, allocated_size);
	flat->magic = FLAT_MAGIC;
	flat->elemtype = state->elemtype;
	flat->flags = (state->descending ? FLAT_DESCENDING : 0) |
		(state->limit >= 0 ? FLAT_LIMITED : 0) |
		(state->limit < 0 && (state->sorted || state->nvalues <= 1) ? FLAT_SORTED : 0);
	flat->param_len = param_len;
	flat->nvalues = state->nvalues;
	flat->nnulls = state->nnulls;
	if (param_len > 0)
		memcpy((char *) flat + sizeof(SortAggFlat), state->param, param_len);
	if (state->nvalues > 0)
		gpusort_copy_large((char *) flat + values_offset(param_len), state->values,
						   (Size) state->nvalues * state->typlen);
}

const ExpandedObjectMethods gpusort_agg_methods = {
	state_get_flat_size,
	state_flatten_into
};

/*
 * The flat form of argument 0 of an I/O function: a state in memory is
 * readied to leave first (sorted, or cut to its limit).
 */
static const SortAggFlat *
flat_arg(FunctionCallInfo fcinfo)
{
	Pointer		p = DatumGetPointer(PG_GETARG_DATUM(0));

	if (VARATT_IS_EXTERNAL_EXPANDED(p))
	{
		ExpandedObjectHeader *eoh = DatumGetEOHP(PointerGetDatum(p));
		Size		size = EOH_get_flat_size(eoh);
		void	   *flat = gpusort_alloc_large(size);

		EOH_flatten_into(eoh, flat, size);
		return (const SortAggFlat *) flat;
	}
	return flat_of_datum(PG_GETARG_DATUM(0));
}

/* Checks what view_of_flat does not: that values said to be sorted are. */
static void
check_input(const SortAggView *view)
{
	gs_type		type = gpusort_type_from_oid(view->elemtype);

	if (view->sorted && !gs_cpu_is_sorted(type, view->values, (size_t) view->nvalues))
		invalid_state("Its values are said to be sorted but are not in ascending order.");
}

/* ------------------------------------------------------------------------
 * Text I/O
 * ------------------------------------------------------------------------ */

/* The next space-separated word at *p, which must be expected; advances past it. */
static void
expect_word(const char **p, const char *expected)
{
	size_t		len = strlen(expected);

	if (strncmp(*p, expected, len) != 0 || ((*p)[len] != ' ' && (*p)[len] != '\0'))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: expected \"%s\" at \"%.20s\"",
						"gpusort_state", expected, *p)));
	*p += len;
	if (**p == ' ')
		(*p)++;
}

/* The next word at *p as a length and a start; advances past it. */
static const char *
next_word(const char **p, size_t *len)
{
	const char *start = *p;
	const char *end = strchr(start, ' ');

	*len = end != NULL ? (size_t) (end - start) : strlen(start);
	*p = start + *len + (end != NULL ? 1 : 0);
	return start;
}

/* The word at *p that is one of two; returns whether it is the first. */
static bool
choose_word(const char **p, const char *first, const char *second)
{
	size_t		len;
	const char *word = next_word(p, &len);

	if (len == strlen(first) && strncmp(word, first, len) == 0)
		return true;
	if (len == strlen(second) && strncmp(word, second, len) == 0)
		return false;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type %s: expected \"%s\" or \"%s\" at \"%.20s\"",
					"gpusort_state", first, second, word)));
	pg_unreachable();
}

/* The value of "key=value" at *p as an int64. */
static int64
key_int64(const char **p, const char *key)
{
	size_t		len;
	const char *word = next_word(p, &len);
	size_t		keylen = strlen(key);
	char		buf[32];
	char	   *end;
	int64		value;

	if (len <= keylen + 1 || len - keylen - 1 >= sizeof(buf) ||
		strncmp(word, key, keylen) != 0 || word[keylen] != '=')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: expected \"%s=\" at \"%.20s\"",
						"gpusort_state", key, word)));
	memcpy(buf, word + keylen + 1, len - keylen - 1);
	buf[len - keylen - 1] = '\0';
	errno = 0;
	value = strtoll(buf, &end, 10);
	/* only what the output function writes: digits, no sign, no leading zero */
	if (errno != 0 || *end != '\0' || end == buf || strspn(buf, "0123456789") != strlen(buf) ||
		(buf[0] == '0' && buf[1] != '\0'))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\" is not a count",
						"gpusort_state", buf)));
	return value;
}

/* The hex digits of "key=HEX" (or "key=-": *len set to -1) at *p. */
static const char *
key_hex(const char **p, const char *key, int64 *len)
{
	size_t		wordlen;
	const char *word = next_word(p, &wordlen);
	size_t		keylen = strlen(key);

	if (wordlen <= keylen || strncmp(word, key, keylen) != 0 || word[keylen] != '=')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: expected \"%s=\" at \"%.20s\"",
						"gpusort_state", key, word)));
	word += keylen + 1;
	wordlen -= keylen + 1;
	if (wordlen == 1 && word[0] == '-')
	{
		*len = -1;
		return NULL;
	}
	if (wordlen % 2 != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: an odd number of hexadecimal digits after \"%s=\"",
						"gpusort_state", key)));
	/* lower-case digits alone, as the output function writes them (hex_decode would skip white space) */
	if (strspn(word, "0123456789abcdef") < wordlen)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%.*s\" is not lower-case hexadecimal digits after \"%s=\"",
						"gpusort_state", (int) Min(wordlen, 20), word, key)));
	*len = (int64) (wordlen / 2);
	return word;
}

/*
 * gpusort_state_in(cstring) -> gpusort_state
 */
Datum
gpusort_state_in(PG_FUNCTION_ARGS)
{
	const char *p = PG_GETARG_CSTRING(0);
	size_t		len;
	const char *word;
	Oid			elemtype = InvalidOid;
	bool		descending;
	bool		sorted;
	bool		limited;
	int64		nnulls;
	int64		param_len;
	const char *param_hex;
	int64		nvalues;
	int64		values_len;
	const char *values_hex;
	int16		typlen;
	uint64		size;
	SortAggFlat *flat;
	SortAggView view;

	/* words one space apart, as the output function writes them: none at the end */
	len = strlen(p);
	if (len > 0 && p[len - 1] == ' ')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: a space at the end", "gpusort_state")));
	expect_word(&p, "gpusort_state");
	expect_word(&p, CppAsString2(TEXT_VERSION));
	if (!choose_word(&p, BYTE_ORDER_NAME, strcmp(BYTE_ORDER_NAME, "le") == 0 ? "be" : "le"))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpusort_state was written on a machine of the other byte order"),
				 errhint("Move partial states only between servers of the same architecture.")));
	word = next_word(&p, &len);
	for (int i = 0; i < lengthof(state_types); i++)
		if (strlen(state_types[i].name) == len && strncmp(word, state_types[i].name, len) == 0)
			elemtype = state_types[i].oid;
	if (!OidIsValid(elemtype))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%.*s\" is not an element type gpusort sorts",
						"gpusort_state", (int) Min(len, 64), word)));
	descending = !choose_word(&p, "asc", "desc");
	sorted = choose_word(&p, "sorted", "unsorted");
	limited = choose_word(&p, "limited", "unlimited");
	nnulls = key_int64(&p, "nulls");
	param_hex = key_hex(&p, "param", &param_len);
	nvalues = key_int64(&p, "n");
	values_hex = key_hex(&p, "values", &values_len);
	if (!sorted && !limited && nvalues <= 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"unsorted\" for %lld values",
						"gpusort_state", (long long) nvalues),
				 errhint("A state of at most one value is \"sorted\".")));
	if (param_len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: no digits after \"param=\"", "gpusort_state"),
				 errhint("A state without a constant argument has \"param=-\".")));
	if (values_len < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"values=-\"", "gpusort_state"),
				 errhint("A state without values has \"values=\" followed by nothing.")));
	if (*p != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: junk after the values",
						"gpusort_state")));

	typlen = (int16) gs_type_size(gpusort_type_from_oid(elemtype));
	if (param_len > PG_INT32_MAX / 2 || values_len < 0 || nvalues < 0 ||
		values_len / typlen != nvalues || values_len % typlen != 0)
		invalid_state("It has %lld bytes of values for %lld values of %d bytes.",
					  (long long) values_len, (long long) nvalues, typlen);
	size = values_offset((int32) param_len) + (uint64) values_len;
	if (size > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpusort_state of %llu bytes is too large", (unsigned long long) size)));

	flat = palloc0((Size) size);
	SET_VARSIZE(flat, size);
	flat->magic = FLAT_MAGIC;
	flat->elemtype = elemtype;
	flat->flags = (descending ? FLAT_DESCENDING : 0) | (sorted ? FLAT_SORTED : 0) |
		(limited ? FLAT_LIMITED : 0);
	flat->param_len = (int32) param_len;
	flat->nvalues = nvalues;
	flat->nnulls = nnulls;
	if (param_len > 0)
		hex_decode(param_hex, param_len * 2, (char *) flat + sizeof(SortAggFlat));
	if (values_len > 0)
		hex_decode(values_hex, values_len * 2, (char *) flat + values_offset((int32) param_len));

	view = view_of_flat(flat, size);
	check_input(&view);
	PG_RETURN_POINTER(flat);
}

/*
 * gpusort_state_out(gpusort_state) -> cstring
 */
Datum
gpusort_state_out(PG_FUNCTION_ARGS)
{
	const SortAggFlat *flat = flat_arg(fcinfo);
	SortAggView view = view_of_flat(flat, VARSIZE(flat));
	int16		typlen = (int16) gs_type_size(gpusort_type_from_oid(view.elemtype));
	uint64		values_bytes = (uint64) view.nvalues * typlen;
	uint64		bound = 256 + 2 * (uint64) Max(view.param_len, 0) + 2 * values_bytes;
	StringInfoData buf;
	char	   *end;

	if (bound > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpusort_state of %lld values of %s is too large for its text form",
						(long long) view.nvalues, type_name(view.elemtype)),
				 errdetail("Its text form would pass 1 GB."),
				 errhint("Spread the rows over more Citus shards, or group them more finely.")));

	initStringInfo(&buf);
	enlargeStringInfo(&buf, (int) bound);
	appendStringInfo(&buf, "gpusort_state %d %s %s %s %s %s nulls=%lld param=",
					 TEXT_VERSION, BYTE_ORDER_NAME, type_name(view.elemtype),
					 view.descending ? "desc" : "asc",
					 view.sorted && !view.limited ? "sorted" : "unsorted",
					 view.limited ? "limited" : "unlimited",
					 (long long) view.nnulls);
	if (view.param == NULL)
		appendStringInfoChar(&buf, '-');
	else
		buf.len += hex_encode(view.param, view.param_len, buf.data + buf.len);
	appendStringInfo(&buf, " n=%lld values=", (long long) view.nvalues);
	end = buf.data + buf.len;
	end += hex_encode(view.values, (size_t) values_bytes, end);
	*end = '\0';
	PG_RETURN_CSTRING(buf.data);
}

/* ------------------------------------------------------------------------
 * Binary I/O
 * ------------------------------------------------------------------------ */

/*
 * gpusort_state_recv(internal) -> gpusort_state
 */
Datum
gpusort_state_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			order = pq_getmsgbyte(buf);
	int			len = buf->len - buf->cursor;
	SortAggFlat *flat;
	SortAggView view;

	if (order != BYTE_ORDER_NAME[0])
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpusort_state was written on a machine of the other byte order"),
				 errhint("Move partial states only between servers of the same architecture.")));
	if ((Size) len + VARHDRSZ > MaxAllocSize)
		invalid_state("It has %d bytes.", len);
	flat = palloc(len + VARHDRSZ);
	SET_VARSIZE(flat, len + VARHDRSZ);
	pq_copymsgbytes(buf, (char *) flat + VARHDRSZ, len);
	view = view_of_flat(flat, len + VARHDRSZ);
	check_input(&view);
	PG_RETURN_POINTER(flat);
}

/*
 * gpusort_state_send(gpusort_state) -> bytea
 */
Datum
gpusort_state_send(PG_FUNCTION_ARGS)
{
	const SortAggFlat *flat = flat_arg(fcinfo);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbyte(&buf, BYTE_ORDER_NAME[0]);
	pq_sendbytes(&buf, (const char *) flat + VARHDRSZ, VARSIZE(flat) - VARHDRSZ);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* ------------------------------------------------------------------------
 * Declared types of a call
 * ------------------------------------------------------------------------ */

/* The pg_proc entry's argument argno (-1: the result) of the function flinfo calls. */
static Oid
declared_type(FmgrInfo *flinfo, int argno)
{
	HeapTuple	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(flinfo->fn_oid));
	Form_pg_proc proc;
	Oid			type = InvalidOid;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for function %u", flinfo->fn_oid);
	proc = (Form_pg_proc) GETSTRUCT(tuple);
	if (argno < 0)
		type = proc->prorettype;
	else if (argno < proc->pronargs)
		type = proc->proargtypes.values[argno];
	ReleaseSysCache(tuple);
	return type;
}

Oid
gpusort_fn_argtype(FmgrInfo *flinfo, int argno)
{
	Oid			type = get_fn_expr_argtype(flinfo, argno);

	return OidIsValid(type) ? type : declared_type(flinfo, argno);
}

Oid
gpusort_fn_rettype(FmgrInfo *flinfo)
{
	Oid			type = get_fn_expr_rettype(flinfo);

	return OidIsValid(type) ? type : declared_type(flinfo, -1);
}
