/*
 * sort_keys.c: which leading bits of a sort key the node orders by, and how
 * a key's value becomes them.
 *
 * As tuplesort's abbreviated keys do, the node sorts by a prefix of the
 * order: each key gives the leading bits that can be made order-preserving,
 * and rows whose bits are equal are put in order by the key's own
 * comparator afterwards (sort_exec.c's tie pass).  A key gives
 *   - an exact packing, where the type's default btree order is that of an
 *     integer or float of at most 64 bits (equal bits: equal keys), or where
 *     a numeric's typmod bounds it to 18 digits (its value as an integer of
 *     its scale's units, read from the stored digits);
 *   - an inexact prefix of its own: interval (its span as interval_cmp
 *     compares it, in units of 2048 microseconds to fit 64 bits) and timetz
 *     (its time in UTC, before the zone that breaks ties);
 *   - or the abbreviated key that the type's SortSupport offers for the
 *     operator and collation (text, varchar, bpchar and name under C and ICU
 *     collations, numeric, uuid, inet, macaddr), read as unsigned bits by
 *     the comparator it installs.
 *   - name under C (which PostgreSQL does not abbreviate): its first bytes;
 *   - for text, varchar, bpchar and name under a libc collation other than
 *     C, where PostgreSQL offers no abbreviated key because it does not
 *     trust strxfrm to agree with strcoll: strxfrm's first 8 bytes, whose
 *     order the executor checks in one pass over the sorted rows with the
 *     real comparator (sort_exec.c sorts by that comparator alone on any
 *     inversion).
 * A string's first bytes (its own, strxfrm's, or its ICU abbreviated key's)
 * begin a byte string that sort_key_xfrm_bytes gives whole: the tie pass
 * orders rows whose first bytes are equal by the bytes that follow.
 * A key with none of these (enums, arrays, records) gives no bits.
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "access/nbtree.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "datatype/timestamp.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/pg_locale.h"
#include "utils/sortsupport.h"
#include "utils/timestamp.h"
#ifdef USE_ICU
#include <unicode/uiter.h>
#include <unicode/ustring.h>
#endif

#include "keys.h"
#include "sort_node.h"

/*
 * The exact or type-specific packing of opcintype's default btree order, or
 * false for none.
 */
static bool
own_packing(Oid opcintype, SortKeyBits *bits)
{
	bits->exact = true;
	switch (opcintype)
	{
		case BOOLOID:
			bits->kind = SORT_KEY_UNSIGNED;
			bits->width = 1;
			return true;
		case CHAROID:
			bits->kind = SORT_KEY_UNSIGNED;
			bits->width = 8;
			return true;
		case INT2OID:
			bits->kind = SORT_KEY_SIGNED;
			bits->width = 16;
			return true;
		case INT4OID:
		case DATEOID:
			bits->kind = SORT_KEY_SIGNED;
			bits->width = 32;
			return true;
		case OIDOID:
			bits->kind = SORT_KEY_UNSIGNED;
			bits->width = 32;
			return true;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case TIMEOID:
		case CASHOID:
			bits->kind = SORT_KEY_SIGNED;
			bits->width = 64;
			return true;
		case FLOAT4OID:
			bits->kind = SORT_KEY_FLOAT4;
			bits->width = 32;
			return true;
		case FLOAT8OID:
			bits->kind = SORT_KEY_FLOAT8;
			bits->width = 64;
			return true;
		case INTERVALOID:
			bits->kind = SORT_KEY_INTERVAL;
			bits->width = 64;
			bits->exact = false;
			return true;
		case TIMETZOID:
			bits->kind = SORT_KEY_TIMETZ;
			bits->width = 64;
			bits->exact = false;
			return true;
		default:
			bits->exact = false;
			return false;
	}
}

/*
 * The prefix of a string type's order under collation where its SortSupport
 * offers no abbreviated key (name always; text, varchar and bpchar under
 * libc collations other than C): its first bytes under C, strxfrm's under
 * libc, none under another provider.
 */
static SortKeyKind
string_prefix(Oid collation)
{
	pg_locale_t locale = pg_newlocale_from_collation(collation);

#if PG_VERSION_NUM >= 180000
	if (locale->collate_is_c)
		return SORT_KEY_BYTES;
#else
	if (lc_collate_is_c(collation))
		return SORT_KEY_BYTES;
#endif
	/* before 18 the database's default libc collation has no locale object */
	if (locale == NULL || locale->provider == COLLPROVIDER_LIBC)
		return SORT_KEY_STRXFRM;
	return SORT_KEY_NONE;
}

/* Whether collation is an ICU collation. */
static bool
string_provider_is_icu(Oid collation)
{
	pg_locale_t locale = pg_newlocale_from_collation(collation);

	return locale != NULL && locale->provider == COLLPROVIDER_ICU;
}

/*
 * What leading bits the key ordered by sortop under collation gives
 * (sort_node.h).  For an abbreviated key, *abbrev (zeroed by the caller,
 * with ssup_cxt set) is left prepared for its conversions when not NULL;
 * otherwise the preparation happens in a context of its own, deleted here.
 */
void
sort_key_bits(Oid sortop, Oid collation, bool nulls_first, SortKeyBits *bits,
			  SortSupport abbrev)
{
	Oid			opfamily;
	Oid			opcintype;
	Oid			opclass;
	MemoryContext cxt = NULL;
	MemoryContext old = NULL;
	SortSupportData local;
	SortSupport ssup = abbrev;
#if PG_VERSION_NUM >= 180000
	CompareType cmptype;
#else
	int16		strategy;
#endif

	memset(bits, 0, sizeof(*bits));
	bits->kind = SORT_KEY_NONE;
#if PG_VERSION_NUM >= 180000
	if (!get_ordering_op_properties(sortop, &opfamily, &opcintype, &cmptype))
#else
	if (!get_ordering_op_properties(sortop, &opfamily, &opcintype, &strategy))
#endif
	{
		bits->reason = "its operator is not a btree ordering operator";
		return;
	}
	bits->type = opcintype;

	opclass = GetDefaultOpClass(opcintype, BTREE_AM_OID);
	if (OidIsValid(opclass) && get_opclass_family(opclass) == opfamily &&
		own_packing(opcintype, bits))
		return;

	/*
	 * A string under C: its own first bytes, which is what the abbreviated
	 * key holds too, without its conversion's copying and hashing.
	 */
	if (OidIsValid(collation) &&
		(opcintype == TEXTOID || opcintype == BPCHAROID || opcintype == NAMEOID) &&
		OidIsValid(opclass) && get_opclass_family(opclass) == opfamily &&
		string_prefix(collation) == SORT_KEY_BYTES)
	{
		bits->kind = SORT_KEY_BYTES;
		bits->width = 64;
		bits->byte_string = true;
		return;
	}

	/*
	 * The abbreviated key of the type's SortSupport.  A collatable key
	 * without a collation, or an operator family without a comparison
	 * function, is Sort's, which reports that when it sorts.
	 */
	if (!OidIsValid(collation) && type_is_collatable(opcintype))
	{
		bits->reason = "it has no collation";
		return;
	}
	if (!OidIsValid(get_opfamily_proc(opfamily, opcintype, opcintype, BTSORTSUPPORT_PROC)) &&
		!OidIsValid(get_opfamily_proc(opfamily, opcintype, opcintype, BTORDER_PROC)))
	{
		bits->reason = "its operator family has no comparison function";
		return;
	}
	if (ssup == NULL)
	{
		cxt = AllocSetContextCreate(CurrentMemoryContext, "gpusort key bits",
									ALLOCSET_SMALL_SIZES);
		old = MemoryContextSwitchTo(cxt);
		ssup = &local;
		memset(ssup, 0, sizeof(*ssup));
		ssup->ssup_cxt = cxt;
	}
	ssup->ssup_collation = collation;
	ssup->ssup_nulls_first = nulls_first;
	ssup->abbreviate = true;
	PrepareSortSupportFromOrderingOp(sortop, ssup);
	if (ssup->abbrev_converter == NULL &&
		(opcintype == TEXTOID || opcintype == BPCHAROID || opcintype == NAMEOID) &&
		OidIsValid(opclass) && get_opclass_family(opclass) == opfamily)
	{
		bits->kind = string_prefix(collation);
		bits->byte_string = (bits->kind != SORT_KEY_NONE);
		if (bits->kind == SORT_KEY_NONE)
			bits->reason = "no abbreviated key or string prefix for its collation";
	}
	else if (ssup->abbrev_converter == NULL)
		bits->reason = "no order-preserving packing of its type, no abbreviated key for its operator and collation";
	else if (ssup->comparator == ssup_datum_unsigned_cmp)
	{
		bits->kind = SORT_KEY_ABBREV_UNSIGNED;
		/* a string's under ICU: the first bytes of its sort key */
		bits->byte_string = (opcintype == TEXTOID || opcintype == BPCHAROID || opcintype == NAMEOID) &&
			OidIsValid(opclass) && get_opclass_family(opclass) == opfamily &&
			string_provider_is_icu(collation);
	}
	else if (ssup->comparator == ssup_datum_signed_cmp)
		bits->kind = SORT_KEY_ABBREV_SIGNED;
	else if (ssup->comparator == ssup_datum_int32_cmp)
		bits->kind = SORT_KEY_ABBREV_INT32;
	else if (opcintype == NUMERICOID && opfamily == get_opclass_family(opclass))
		bits->kind = SORT_KEY_ABBREV_NUMERIC;	/* numeric_cmp_abbrev: signed, reversed */
	else
		bits->reason = "its abbreviated key's comparator is not one gpusort knows";
	if (bits->kind != SORT_KEY_NONE)
		bits->width = bits->kind == SORT_KEY_ABBREV_INT32 ? 32 : 64;
	if (cxt != NULL)
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
	}
}

/*
 * numeric's stored format (utils/adt/numeric.c, on disk since 8.x; the
 * infinities since 14): after the varlena header a 16-bit header, then in
 * the long format a 16-bit weight, then base-10000 digits, most significant
 * first, the first at weight (units of 10000^weight).
 */
#define NUMERIC_SIGN_MASK		0xC000
#define NUMERIC_NEG				0x4000
#define NUMERIC_SHORT			0x8000
#define NUMERIC_SPECIAL			0xC000
#define NUMERIC_EXT_SIGN_MASK	0xF000
#define NUMERIC_NAN				0xC000
#define NUMERIC_PINF			0xD000
#define NUMERIC_NINF			0xF000
#define NUMERIC_SHORT_SIGN_MASK			0x2000
#define NUMERIC_SHORT_WEIGHT_SIGN_MASK	0x0040
#define NUMERIC_SHORT_WEIGHT_MASK		0x003F
#define NUMERIC_SHORT_DSCALE_MASK		0x1F80
#define NUMERIC_SHORT_DSCALE_SHIFT		7
#define NUMERIC_DSCALE_MASK				0x3FFF
#define NUMERIC_NBASE_DIGITS	4

/*
 * The most digits of precision the packing takes: 10^18 and the three
 * special values fit 61 signed bits.
 */
#define NUMERIC_PACKED_MAX_PRECISION 18

static const int64 powers_of_ten[19] = {
	INT64CONST(1), INT64CONST(10), INT64CONST(100), INT64CONST(1000), INT64CONST(10000),
	INT64CONST(100000), INT64CONST(1000000), INT64CONST(10000000), INT64CONST(100000000),
	INT64CONST(1000000000), INT64CONST(10000000000), INT64CONST(100000000000),
	INT64CONST(1000000000000), INT64CONST(10000000000000), INT64CONST(100000000000000),
	INT64CONST(1000000000000000), INT64CONST(10000000000000000),
	INT64CONST(100000000000000000), INT64CONST(1000000000000000000)
};

/*
 * A numeric key of numeric(p,s) with p <= 18 (its typmod, or its domain's)
 * packs exactly: every value is an integer number of 10^-s units below 10^p
 * in magnitude, as a signed integer of width bits, the smallest width that
 * holds +-(10^p - 1) and three codes more: -Infinity below every value,
 * then +Infinity and NaN above (numeric_cmp's order; NaN equals NaN).
 */
void
sort_key_numeric_typmod(Oid type, int32 typmod, SortKeyBits *bits)
{
	int			precision;
	int			width;

	if (bits->kind != SORT_KEY_ABBREV_NUMERIC)
		return;
	type = getBaseTypeAndTypmod(type, &typmod);
	if (type != NUMERICOID || typmod < (int32) VARHDRSZ)
		return;
	precision = ((typmod - VARHDRSZ) >> 16) & 0xFFFF;
	if (precision < 1 || precision > NUMERIC_PACKED_MAX_PRECISION)
		return;
	/* 2^(width - 1) >= 10^p + 2: the values, -Infinity, +Infinity and NaN */
	for (width = 2; ((uint64) 1 << (width - 1)) < (uint64) powers_of_ten[precision] + 2; width++)
		;
	bits->kind = SORT_KEY_NUMERIC;
	bits->width = width;
	bits->exact = true;
	/* the scale as numeric's typmod holds it, 11 bits with a sign (15: negative ones) */
	bits->scale = (((typmod - VARHDRSZ) & 0x7FF) ^ 1024) - 1024;
}

/*
 * The value times 10^scale, from its stored digits: false where that is not
 * an integer of magnitude at most limit.
 */
static bool
numeric_scaled(const char *data, Size len, int scale, int64 limit, int64 *scaled)
{
	uint16		header;
	int			weight;
	bool		negative;
	const char *digits;			/* int16s, unaligned after a short header */
	int			ndigits;
	int64		sum = 0;

	memcpy(&header, data, sizeof(header));
	if ((header & NUMERIC_SIGN_MASK) == NUMERIC_SHORT)
	{
		negative = (header & NUMERIC_SHORT_SIGN_MASK) != 0;
		weight = (header & NUMERIC_SHORT_WEIGHT_SIGN_MASK ? ~NUMERIC_SHORT_WEIGHT_MASK : 0) |
			(header & NUMERIC_SHORT_WEIGHT_MASK);
		digits = data + sizeof(uint16);
		ndigits = (int) ((len - sizeof(uint16)) / sizeof(int16));
	}
	else
	{
		int16		w;

		negative = (header & NUMERIC_SIGN_MASK) == NUMERIC_NEG;
		memcpy(&w, data + sizeof(uint16), sizeof(w));
		weight = w;
		digits = data + 2 * sizeof(uint16);
		ndigits = (int) ((len - 2 * sizeof(uint16)) / sizeof(int16));
	}
	if (scale >= 0 && scale <= NUMERIC_PACKED_MAX_PRECISION)
	{
		/*
		 * The digits read as one integer in units of 10000^-groups, the
		 * scale's fraction rounded up to whole digits (10000^top the first
		 * digit's unit), then divided down to the scale's units.  From
		 * top 7 on, the value times 10^scale is at least 10^25 where the
		 * first digit is not 0 (make_result strips leading zeros; a value
		 * stored otherwise is refused here, and goes Sort's way), past every
		 * limit; below it, the integer stays under 10^28.
		 */
		int			groups = (scale + NUMERIC_NBASE_DIGITS - 1) / NUMERIC_NBASE_DIGITS;
		int			top = weight + groups;
		int64		divisor = powers_of_ten[NUMERIC_NBASE_DIGITS * groups - scale];
		uint128		total = 0;

		if (ndigits > 0 && top > 6)
			return false;
		for (int i = 0; i < ndigits; i++)
		{
			int16		d;

			memcpy(&d, digits + i * sizeof(int16), sizeof(d));
			if (top - i >= 0)
				total = total * 10000 + (uint16) d;
			else if (d != 0)
				return false;	/* a fraction past the scale */
		}
		for (int e = top - ndigits + 1; e > 0; e--)
			total *= 10000;
		if ((total >> 64) == 0)
		{
			uint64		t = (uint64) total;

			if (t % divisor != 0 || t / divisor > (uint64) limit)
				return false;
			sum = (int64) (t / divisor);
		}
		else
		{
			if (total % divisor != 0 || total / divisor > (uint128) limit)
				return false;
			sum = (int64) (total / divisor);
		}
		*scaled = negative ? -sum : sum;
		return true;
	}
	for (int i = 0; i < ndigits; i++)
	{
		/* digit i is in units of 10^(4 * (weight - i)), 10^exponent of the scale's */
		int			exponent = NUMERIC_NBASE_DIGITS * (weight - i) + scale;
		int16		d;
		int64		digit;
		int64		term;

		memcpy(&d, digits + i * sizeof(int16), sizeof(d));
		digit = d;
		if (digit == 0)
			continue;
		if (exponent >= 0)
		{
			/* 10^18 and more exceed every limit (below 2^60) */
			if (exponent > 18 || digit > limit / powers_of_ten[exponent])
				return false;
			term = digit * powers_of_ten[exponent];
		}
		else
		{
			/* a fraction of the unit: digits are below 10^4 */
			if (exponent < -(NUMERIC_NBASE_DIGITS - 1) || digit % powers_of_ten[-exponent] != 0)
				return false;
			term = digit / powers_of_ten[-exponent];
		}
		/* digits only add: past the limit, too large */
		if (term > limit - sum)
			return false;
		sum += term;
	}
	*scaled = negative ? -sum : sum;
	return true;
}

/*
 * A value's SORT_KEY_NUMERIC bits: its value times 10^scale, offset by
 * 2^(width - 1) into width unsigned bits; -Infinity 0, +Infinity and NaN the
 * two highest.  Read in place, a short varlena header included; only a
 * compressed or external value is copied, and freed.  False for a value
 * that is not an integer number of the scale's units within the width, and
 * with at_scale, for a number whose display scale is not the typmod's (the
 * bits then order it, but do not give it back: sort_key_numeric_datum).
 */
static bool
numeric_word(const SortKeyBits *bits, Datum value, uint64 *word, bool at_scale)
{
	struct varlena *stored = (struct varlena *) DatumGetPointer(value);
	struct varlena *num = stored;
	uint64		half = (uint64) 1 << (bits->width - 1);
	uint16		header;
	int64		scaled;
	bool		fits = true;

	if (VARATT_IS_EXTERNAL(stored) || VARATT_IS_COMPRESSED(stored))
		num = pg_detoast_datum_packed(stored);
	memcpy(&header, VARDATA_ANY(num), sizeof(header));
	if ((header & NUMERIC_SIGN_MASK) == NUMERIC_SPECIAL)
	{
		switch (header & NUMERIC_EXT_SIGN_MASK)
		{
			case NUMERIC_NINF:
				*word = 0;
				break;
			case NUMERIC_PINF:
				*word = 2 * half - 2;
				break;
			default:			/* NaN */
				*word = 2 * half - 1;
				break;
		}
	}
	else if (at_scale &&
			 ((header & NUMERIC_SIGN_MASK) == NUMERIC_SHORT ?
			  (header & NUMERIC_SHORT_DSCALE_MASK) >> NUMERIC_SHORT_DSCALE_SHIFT :
			  header & NUMERIC_DSCALE_MASK) != bits->scale)
		fits = false;
	else if ((fits = numeric_scaled(VARDATA_ANY(num), VARSIZE_ANY_EXHDR(num), bits->scale,
									(int64) half - 3, &scaled)))
		*word = (uint64) (scaled + (int64) half);
	if (num != stored)
		pfree(num);
	return fits;
}

bool
sort_key_numeric(const SortKeyBits *bits, Datum value, uint64 *word)
{
	return numeric_word(bits, value, word, false);
}

/*
 * A numeric(p,s) key whose column the sort node may keep as the key's bits
 * alone: a scale of 0 to 18, each value rebuilt from its bits with that
 * display scale (sort_key_numeric_datum).
 */
bool
sort_key_numeric_rebuilds(const SortKeyBits *bits)
{
	return bits->kind == SORT_KEY_NUMERIC && bits->scale >= 0 &&
		bits->scale <= NUMERIC_PACKED_MAX_PRECISION;
}

/* sort_key_numeric's bits of a value that sort_key_numeric_datum gives back as it is */
bool
sort_key_numeric_column(const SortKeyBits *bits, Datum value, uint64 *word)
{
	return numeric_word(bits, value, word, true);
}

/*
 * The numeric of bits's key whose SORT_KEY_NUMERIC bits are word, as
 * numeric.c's make_result stores it (base-10000 digits without leading or
 * trailing zeros, the short format, the typmod's display scale), written
 * to buf (SORT_KEY_NUMERIC_DATUM_MAX bytes) with a 1-byte varlena header,
 * as a tuple holds it; where sort_key_numeric_rebuilds.
 */
/* at most 5 digits before the point and 5 after (18 decimal digits, scale <= 18) */
StaticAssertDecl(VARHDRSZ_SHORT + sizeof(uint16) * (1 + 10) <= SORT_KEY_NUMERIC_DATUM_MAX,
				 "SORT_KEY_NUMERIC_DATUM_MAX holds no rebuilt numeric");

void
sort_key_numeric_datum(const SortKeyBits *bits, uint64 word, char *buf)
{
	uint64		half = (uint64) 1 << (bits->width - 1);
	int			scale = bits->scale;
	uint16		header;
	int16		digits[12];
	int			first;			/* digits[first..last): the number's */
	int			last;
	int			weight;
	bool		negative;
	uint64		magnitude;
	uint64		whole;
	uint64		fraction;

	Assert(sort_key_numeric_rebuilds(bits));
	if (word >= 2 * half - 2 || word == 0)
	{
		header = word == 0 ? NUMERIC_NINF : word == 2 * half - 2 ? NUMERIC_PINF : NUMERIC_NAN;
		SET_VARSIZE_SHORT(buf, VARHDRSZ_SHORT + sizeof(uint16));
		memcpy(buf + VARHDRSZ_SHORT, &header, sizeof(header));
		return;
	}
	negative = word < half;
	magnitude = negative ? half - word : word - half;
	whole = magnitude / (uint64) powers_of_ten[scale];
	fraction = magnitude % (uint64) powers_of_ten[scale];

	/*
	 * The fraction's digits from the right: the last holds the scale's
	 * digits past a multiple of 4, the rest 4 each; then the whole part's
	 * to the left of the point.  Digit 6 is the first after the point.
	 */
	last = 6 + (scale + NUMERIC_NBASE_DIGITS - 1) / NUMERIC_NBASE_DIGITS;
	first = last;
	if (scale % NUMERIC_NBASE_DIGITS != 0)
	{
		int			m = scale % NUMERIC_NBASE_DIGITS;

		digits[--first] = (int16) ((fraction % (uint64) powers_of_ten[m]) *
								   (uint64) powers_of_ten[NUMERIC_NBASE_DIGITS - m]);
		fraction /= (uint64) powers_of_ten[m];
	}
	while (first > 6)
	{
		digits[--first] = (int16) (fraction % 10000);
		fraction /= 10000;
	}
	for (; whole > 0; whole /= 10000)
		digits[--first] = (int16) (whole % 10000);
	weight = 5 - first;
	while (first < last && digits[first] == 0)
	{
		first++;
		weight--;
	}
	while (last > first && digits[last - 1] == 0)
		last--;
	if (first == last)
	{
		weight = 0;
		negative = false;
	}
	header = NUMERIC_SHORT | (negative ? NUMERIC_SHORT_SIGN_MASK : 0) |
		(scale << NUMERIC_SHORT_DSCALE_SHIFT) |
		(weight < 0 ? NUMERIC_SHORT_WEIGHT_SIGN_MASK : 0) | (weight & NUMERIC_SHORT_WEIGHT_MASK);
	SET_VARSIZE_SHORT(buf, VARHDRSZ_SHORT + sizeof(uint16) * (1 + last - first));
	memcpy(buf + VARHDRSZ_SHORT, &header, sizeof(header));
	memcpy(buf + VARHDRSZ_SHORT + sizeof(uint16), digits + first, sizeof(int16) * (last - first));
}

/* What interval_cmp compares: the span in microseconds, a month as 30 days. */
static inline int64
interval_prefix(const Interval *interval)
{
	int64		days = interval->month * INT64CONST(30) + interval->day;
	int128		span = (int128) interval->time + (int128) days * USECS_PER_DAY;

	/* |span| < 2^74: its leading bits in 64, rounded down (order kept) */
	return (int64) (span >> 11);
}

/*
 * The unsigned ordered bits of a non-NULL key value (ascending; the caller
 * inverts them for DESC), in the low bits->width bits.  abbrev is the key's
 * prepared SortSupport for the abbreviated kinds.
 */
uint64
sort_key_value(const SortKeyBits *bits, Datum value, SortSupport abbrev)
{
	switch (bits->kind)
	{
		case SORT_KEY_SIGNED:
			switch (bits->width)
			{
				case 16:
					return gs_int2_to_key((uint16) DatumGetInt16(value));
				case 32:
					return gs_int4_to_key((uint32) DatumGetInt32(value));
				default:
					return gs_int8_to_key((uint64) DatumGetInt64(value));
			}
		case SORT_KEY_UNSIGNED:
			switch (bits->width)
			{
				case 1:
					return DatumGetBool(value) ? 1 : 0;
				case 8:
					return (uint8) DatumGetChar(value);
				case 32:
					return DatumGetObjectId(value);
				default:
					return (uint64) DatumGetInt64(value);
			}
		case SORT_KEY_FLOAT4:
			{
				float4		f = DatumGetFloat4(value);
				uint32		u;

				/* PostgreSQL's float order: -0 = 0, every NaN equal and last */
				if (isnan(f))
					f = get_float4_nan();
				else if (f == 0)
					f = 0;
				memcpy(&u, &f, sizeof(u));
				return gs_float4_to_key(u);
			}
		case SORT_KEY_FLOAT8:
			{
				float8		f = DatumGetFloat8(value);
				uint64		u;

				if (isnan(f))
					f = get_float8_nan();
				else if (f == 0)
					f = 0;
				memcpy(&u, &f, sizeof(u));
				return gs_float8_to_key(u);
			}
		case SORT_KEY_INTERVAL:
			return gs_int8_to_key((uint64) interval_prefix(DatumGetIntervalP(value)));
		case SORT_KEY_TIMETZ:
			{
				TimeTzADT  *t = DatumGetTimeTzADTP(value);

				/* timetz_cmp: the time in UTC, then the zone */
				return gs_int8_to_key((uint64) (t->time + t->zone * USECS_PER_SEC));
			}
		case SORT_KEY_ABBREV_UNSIGNED:
			return (uint64) abbrev->abbrev_converter(value, abbrev);
		case SORT_KEY_ABBREV_SIGNED:
			return gs_int8_to_key((uint64) abbrev->abbrev_converter(value, abbrev));
		case SORT_KEY_ABBREV_INT32:
			return gs_int4_to_key((uint32) DatumGetInt32(abbrev->abbrev_converter(value, abbrev)));
		case SORT_KEY_ABBREV_NUMERIC:
			/* the abbreviation is negated: a smaller one is a larger number */
			return ~gs_int8_to_key((uint64) abbrev->abbrev_converter(value, abbrev));
		case SORT_KEY_BYTES:	/* sort_key_xfrm's */
		case SORT_KEY_STRXFRM:
		case SORT_KEY_NUMERIC:	/* sort_key_numeric's */
		case SORT_KEY_NONE:
			break;
	}
	return 0;
}

/*
 * strxfrm of a libc collation, or an ICU collation's sort keys: the
 * collation's locale (none for the database's default libc collation before
 * PostgreSQL 16, which strxfrm's global locale is), a NUL-terminated copy of
 * the string, and the transformed string.
 */
struct SortKeyXfrm
{
	bool		transform;		/* strxfrm, else the bytes themselves */
	pg_locale_t locale;
	Oid			type;
	char	   *src;
	size_t		src_size;
	char	   *dst;
	size_t		dst_size;
};

SortKeyXfrm *
sort_key_xfrm_begin(Oid collation, Oid type, bool transform)
{
	SortKeyXfrm *x = palloc0(sizeof(SortKeyXfrm));

	x->transform = transform;
	x->locale = transform ? pg_newlocale_from_collation(collation) : NULL;
	x->type = type;
	x->src_size = 256;
	x->src = palloc(x->src_size);
	x->dst_size = 1024;
	x->dst = palloc(x->dst_size);
	return x;
}

/* The string of a value: name's to its NUL, bpchar's without its trailing spaces. */
static const char *
string_of(SortKeyXfrm *x, Datum value, size_t *len)
{
	const char *p;

	if (x->type == NAMEOID)
	{
		p = NameStr(*DatumGetName(value));
		*len = strlen(p);
	}
	else
	{
		text	   *t = DatumGetTextPP(value);

		p = VARDATA_ANY(t);
		*len = VARSIZE_ANY_EXHDR(t);
		/* bpchar compares without its trailing spaces */
		if (x->type == BPCHAROID)
			*len = bpchartruelen((char *) p, (int) *len);
	}
	return p;
}

/*
 * The string's transformation into x->dst (strxfrm, or under ICU the
 * collator's sort key without its terminating NUL): its length.
 */
static size_t
transform_string(SortKeyXfrm *x, const char *p, size_t len)
{
	size_t		need;

	if (len + 1 > x->src_size)
	{
		x->src_size = Max(len + 1, x->src_size * 2);
		x->src = repalloc(x->src, x->src_size);
	}
	memcpy(x->src, p, len);
	x->src[len] = '\0';
	for (;;)
	{
#if PG_VERSION_NUM >= 160000
		need = pg_strxfrm(x->dst, x->src, x->dst_size, x->locale);
#else
#ifdef USE_ICU
		if (x->locale && x->locale->provider == COLLPROVIDER_ICU)
		{
			UChar	   *uchar;
			int32_t		ulen = icu_to_uchar(&uchar, x->src, len);

			/* the length counts the terminating NUL, which is left out */
			need = ucol_getSortKey(x->locale->info.icu.ucol, uchar, ulen,
								   (uint8_t *) x->dst, (int32_t) Min(x->dst_size, PG_INT32_MAX)) - 1;
			pfree(uchar);
		}
		else
#endif
		if (x->locale)
			need = strxfrm_l(x->dst, x->src, x->dst_size, x->locale->info.lt);
		else
			need = strxfrm(x->dst, x->src, x->dst_size);
#endif
		/* past the buffer, its contents are undefined: a larger one */
		if (need < x->dst_size)
			break;
		x->dst_size = Max(need + 1, x->dst_size * 2);
		x->dst = repalloc(x->dst, x->dst_size);
	}
	return need;
}

/*
 * The string's strxfrm (or the string itself), its first 8 bytes as a
 * big-endian word, zero padded: a shorter string is a prefix, and first.
 * *whole: the string is shorter than 8 bytes (no string holds a NUL byte,
 * so no longer one has the same word).
 */
uint64
sort_key_xfrm(SortKeyXfrm *x, Datum value, bool *whole)
{
	size_t		len;
	const char *p = string_of(x, value, &len);
	uint64		word = 0;

	/* 8 bytes or more may continue past the bits; fewer are the whole string */
	*whole = (len < 8);
	if (x->transform)
	{
		len = transform_string(x, p, len);
		p = x->dst;
	}
	for (int i = 0; i < 8; i++)
		word = (word << 8) | (i < (int) len ? (uint8) p[i] : 0);
	return word;
}

/*
 * The whole byte string of a value whose first bytes sort_key_xfrm packs
 * (the string itself, or its transformation), *len bytes with no NUL among
 * them: memcmp's order of two is the key's, up to the strings' equality
 * where the transformation is strxfrm's or ICU's.  Valid until the next call.
 * NULL where a transformation is wanted and the string has more than max
 * bytes, since the transformation would not take less.
 */
const char *
sort_key_xfrm_bytes(SortKeyXfrm *x, Datum value, size_t *len, size_t max)
{
	const char *p = string_of(x, value, len);

	if (!x->transform)
		return p;
	/* the transformation is as long as the string or longer: past max, none */
	if (*len > max)
		return NULL;
	*len = transform_string(x, p, *len);
	return x->dst;
}

/*
 * The string of a value as the transformations read it (name's to its NUL,
 * bpchar's without its trailing spaces): valid while the value is and the
 * current memory context, where it may be detoasted, lives.
 */
const char *
sort_key_xfrm_string(SortKeyXfrm *x, Datum value, size_t *len)
{
	return string_of(x, value, len);
}

/* ----------------------------------------------------------------
 * Strings' transformations on several threads
 *
 * A collation's transformation of a string (an ICU sort key, strxfrm) costs
 * from a few hundred nanoseconds to some microseconds, most of what a sort
 * of strings under ICU or a libc collation other than C costs the node.
 * The node makes them in batches: the backend copies the strings into one
 * buffer, and up to gpusort.key_threads threads (never more than the CPUs
 * online), the backend's own among them, transform a share each.  The other
 * threads call ICU or the C library and nothing else, with the collator or
 * locale_t copied into their share: every buffer they read or write is
 * allocated before they start, nothing is reported until they have been
 * joined, and they
 * start with every signal blocked, so that the backend's signal handlers
 * run on its own thread only.  A string whose transformation does not fit
 * its room is done again afterwards by the backend, as a single thread
 * would.  An ICU collation's strings go to threads only in a UTF-8 database,
 * where ICU reads them without PostgreSQL's converter; a libc collation's
 * use strxfrm_l with the collation's locale_t, or strxfrm with the
 * process's own locale where the collation has none (the database's
 * default before PostgreSQL 18).
 * ---------------------------------------------------------------- */

/* gpusort.key_threads (sort_plan.c registers it) */
int			gpusort_key_threads = 4;

/* Fewer strings or bytes than these a thread are not worth one. */
#define XFRM_THREAD_MIN_STRINGS 2048
#define XFRM_THREAD_MIN_BYTES ((uint64) 256 * 1024)

/*
 * Strings, and bytes of strings, between two checks for interrupts: a
 * slice ends at whichever comes first (or after its first string).
 */
#define XFRM_SLICE ((int64) 1 << 18)
#define XFRM_SLICE_BYTES ((uint64) 16 * 1024 * 1024)

/*
 * A thread's buffer: strxfrm's output for a word, or a string in UTF-16 for
 * ICU's whole sort key.  A string whose transformation or UTF-16 form does
 * not fit is done again by the backend.
 */
#define XFRM_BUFFER 65536

typedef struct XfrmShare
{
	/* what the thread calls, copied from the key's SortKeyXfrm */
	bool		icu;
#ifdef USE_ICU
	UCollator  *ucol;
#endif
	locale_t	lt;				/* (locale_t) 0: strxfrm's process-wide locale */
	const char *data;			/* the strings, each followed by a NUL */
	const uint64 *offset;
	const uint32 *len;
	int64		lo;				/* this share: strings [lo, hi) */
	int64		hi;
	uint64	   *words;			/* words: the first 8 bytes, big-endian */
	char	   *arena;			/* else whole: into arena[base, base + room) */
	uint64		base;
	uint64		room;
	uint64	   *out_offset;
	uint64	   *out_len;
	char	   *buf;			/* XFRM_BUFFER bytes, where the work needs them */
	bool	   *redo;			/* strings the backend does again */
	int			status;			/* ICU's UErrorCode where it failed, else 0 */
	pthread_t	thread;
} XfrmShare;

/* Whether x's transformation may run on other threads than the backend's. */
bool
sort_key_xfrm_threaded(const SortKeyXfrm *x)
{
	if (!x->transform || gpusort_key_threads < 2)
		return false;
#ifdef USE_ICU
	if (x->locale && x->locale->provider == COLLPROVIDER_ICU)
		return GetDatabaseEncoding() == PG_UTF8;
#endif
	return x->locale == NULL || x->locale->provider == COLLPROVIDER_LIBC;
}

/*
 * String i's transformation into dst (size bytes): its length, which is
 * size or more where it did not fit (dst's contents then undefined).  No
 * PostgreSQL function: this runs on the share's thread.
 */
static size_t
xfrm_one(XfrmShare *s, int64 i, char *dst, size_t size)
{
	const char *src = s->data + s->offset[i];

#ifdef USE_ICU
	if (s->icu)
	{
		UErrorCode	status = U_ZERO_ERROR;
		int32_t		ulen;
		int32_t		need;

		/* UTF-16 takes at most one unit per UTF-8 byte, and a NUL */
		if (((Size) s->len[i] + 1) * sizeof(UChar) > XFRM_BUFFER)
			return size;
		u_strFromUTF8((UChar *) s->buf, XFRM_BUFFER / sizeof(UChar), &ulen,
					  src, (int32_t) s->len[i], &status);
		if (U_FAILURE(status))
		{
			s->status = (int) status;
			return 0;
		}
		/* the length counts the terminating NUL, which is left out */
		need = ucol_getSortKey(s->ucol, (const UChar *) s->buf, ulen,
							   (uint8_t *) dst, (int32_t) Min(size, PG_INT32_MAX));
		return need > 0 ? (size_t) need - 1 : size;
	}
#endif
	if (s->lt)
		return strxfrm_l(dst, src, size, s->lt);
	return strxfrm(dst, src, size);
}

static void *
xfrm_share_main(void *arg)
{
	XfrmShare  *s = (XfrmShare *) arg;
	uint64		used = 0;

	for (int64 i = s->lo; i < s->hi && s->status == 0; i++)
	{
		if (s->words)
		{
			unsigned char bytes[8];
			size_t		n;
			uint64		word = 0;

#ifdef USE_ICU
			if (s->icu)
			{
				UCharIterator iter;
				uint32_t	state[2] = {0, 0};
				UErrorCode	status = U_ZERO_ERROR;

				uiter_setUTF8(&iter, s->data + s->offset[i], (int32_t) s->len[i]);
				n = (size_t) ucol_nextSortKeyPart(s->ucol, &iter, state,
												  bytes, (int32_t) sizeof(bytes), &status);
				if (U_FAILURE(status))
				{
					s->status = (int) status;
					break;
				}
			}
			else
#endif
			{
				n = xfrm_one(s, i, s->buf, XFRM_BUFFER);
				if (n >= XFRM_BUFFER)
				{
					s->redo[i] = true;
					continue;
				}
				memcpy(bytes, s->buf, Min(n, sizeof(bytes)));
			}
			for (size_t b = 0; b < sizeof(bytes); b++)
				word = (word << 8) | (b < n ? bytes[b] : 0);
			s->words[i] = word;
		}
		else
		{
			size_t		n = xfrm_one(s, i, s->arena + s->base + used, s->room - used);

			if (s->status != 0)
				break;
			if (n >= s->room - used)
				s->redo[i] = true;
			else
			{
				s->out_offset[i] = s->base + used;
				s->out_len[i] = n;
				used += n;
			}
		}
	}
	return NULL;
}

/*
 * Runs shares[0..n) to their ends: shares 1 on, on threads of their own,
 * share 0 (and any whose thread would not start) on the backend's.
 */
static void
run_xfrm_shares(XfrmShare *shares, int n)
{
	sigset_t	all;
	sigset_t	old;
	bool	   *started = palloc0(sizeof(bool) * n);

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int t = 1; t < n; t++)
		started[t] = pthread_create(&shares[t].thread, NULL, xfrm_share_main, &shares[t]) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	xfrm_share_main(&shares[0]);
	for (int t = 1; t < n; t++)
	{
		if (started[t])
			pthread_join(shares[t].thread, NULL);
		else
			xfrm_share_main(&shares[t]);
	}
	pfree(started);
	for (int t = 0; t < n; t++)
	{
#ifdef USE_ICU
		if (shares[t].status != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("sort key generation failed: %s",
							u_errorName((UErrorCode) shares[t].status))));
#endif
		Assert(shares[t].status == 0);
	}
}

/* Where the slice of strings that begins at lo ends (XFRM_SLICE). */
static int64
xfrm_slice_end(const uint32 *len, int64 lo, int64 n)
{
	int64		hi = lo;
	uint64		bytes = 0;

	while (hi < n && hi - lo < XFRM_SLICE && (hi == lo || bytes < XFRM_SLICE_BYTES))
		bytes += len[hi++];
	return hi;
}

/* The CPUs online, which a sort's threads never outnumber. */
static int
online_cpus(void)
{
	static int	cpus = 0;

	if (cpus == 0)
	{
		long		n = sysconf(_SC_NPROCESSORS_ONLN);

		cpus = n > 0 ? (int) Min(n, INT_MAX) : 1;
	}
	return cpus;
}

/* The threads a sort's CPU work may take: gpusort.key_threads, at most the CPUs online. */
int
sort_key_thread_limit(void)
{
	return Min(gpusort_key_threads, online_cpus());
}

/*
 * The shares of strings [lo, hi), each with what its thread calls and, for
 * words under strxfrm or whole keys under ICU, a buffer: as many shares as
 * gpusort.key_threads, the CPUs online and the strings (their number or
 * their bytes) allow, split so that each has about as many bytes.
 */
static XfrmShare *
plan_xfrm_shares(const SortKeyXfrm *x, bool words, const char *data, const uint64 *offset,
				 const uint32 *len, int64 lo, int64 hi, bool *redo, int *nshares)
{
	int64		n = hi - lo;
	uint64		bytes = 0;
	uint64		weight = 0;
	int64		at = lo;
	int			threads;
	XfrmShare  *shares;
	bool		icu = false;

#ifdef USE_ICU
	icu = (x->locale && x->locale->provider == COLLPROVIDER_ICU);
#endif
	for (int64 i = lo; i < hi; i++)
		bytes += len[i];
	threads = (int) Min((int64) sort_key_thread_limit(), Max(n, 1));
	threads = (int) Min((int64) threads,
						Max(Max(n / XFRM_THREAD_MIN_STRINGS,
								(int64) (bytes / XFRM_THREAD_MIN_BYTES)), 1));
	shares = palloc0(sizeof(XfrmShare) * threads);

	for (int t = 0; t < threads; t++)
	{
		XfrmShare  *s = &shares[t];
		/* a string weighs its bytes and a call's worth more */
		uint64		end = (bytes + (uint64) n * 16) * (t + 1) / threads;

		s->icu = icu;
#ifdef USE_ICU
		if (icu)
			s->ucol = x->locale->info.icu.ucol;
#endif
		s->lt = (!icu && x->locale) ? x->locale->info.lt : (locale_t) 0;
		s->data = data;
		s->offset = offset;
		s->len = len;
		s->redo = redo;
		s->lo = at;
		while (at < hi && (t == threads - 1 || weight < end))
			weight += (uint64) len[at++] + 16;
		s->hi = at;
		if (words != icu)
			s->buf = palloc(XFRM_BUFFER);
	}
	*nshares = threads;
	return shares;
}

static void
free_xfrm_shares(XfrmShare *shares, int n)
{
	for (int t = 0; t < n; t++)
		if (shares[t].buf)
			pfree(shares[t].buf);
	pfree(shares);
}

/*
 * words[i]: the first 8 bytes of the transformation of string i of n (at
 * data + offset[i], len[i] bytes, a NUL after them), big-endian and zero
 * padded, as sort_key_xfrm's, or under ICU as its abbreviated key's.
 * Returns the most threads that took part.
 */
int
sort_key_xfrm_words(SortKeyXfrm *x, const char *data, const uint64 *offset,
					const uint32 *len, int64 n, uint64 *words)
{
	bool	   *redo = palloc0(sizeof(bool) * Max(n, 1));
	int			most = 0;

	for (int64 lo = 0, hi; lo < n; lo = hi)
	{
		int			nshares;
		XfrmShare  *shares;

		hi = xfrm_slice_end(len, lo, n);
		shares = plan_xfrm_shares(x, true, data, offset, len, lo, hi, redo, &nshares);

		for (int t = 0; t < nshares; t++)
			shares[t].words = words;
		most = Max(most, nshares);
		run_xfrm_shares(shares, nshares);
		free_xfrm_shares(shares, nshares);
		CHECK_FOR_INTERRUPTS();
	}
	for (int64 i = 0; i < n; i++)
	{
		size_t		m;
		uint64		word = 0;

		if (!redo[i])
			continue;
		m = transform_string(x, data + offset[i], len[i]);
		for (int b = 0; b < 8; b++)
			word = (word << 8) | (b < (int) m ? (uint8) x->dst[b] : 0);
		words[i] = word;
	}
	pfree(redo);
	return most;
}

/*
 * The whole transformations of strings [0, n) (as sort_key_xfrm_words's),
 * in one arena: string i's at out_offset[i], out_len[i] bytes.  *size: the
 * arena's bytes; *threads: the most threads that took part, if more than it
 * was.  NULL where the arena would take more than limit bytes.
 */
char *
sort_key_xfrm_strings(SortKeyXfrm *x, const char *data, const uint64 *offset,
					  const uint32 *len, int64 n, uint64 *out_offset, uint64 *out_len,
					  Size limit, Size *size, int *threads)
{
	bool	   *redo;
	Size		total = 0;
	Size		room;
	char	   *arena;
	bool		icu = false;

#ifdef USE_ICU
	icu = (x->locale && x->locale->provider == COLLPROVIDER_ICU);
#endif
	/* a string's room: twice its bytes under ICU, four times under strxfrm */
	for (int64 i = 0; i < n; i++)
		total += (Size) len[i] * (icu ? 2 : 4) + 16;
	if (total > limit)
		return NULL;
	arena = MemoryContextAllocHuge(CurrentMemoryContext, Max(total, 1));
	redo = palloc0(sizeof(bool) * Max(n, 1));
	total = 0;
	for (int64 lo = 0, hi; lo < n; lo = hi)
	{
		int			nshares;
		XfrmShare  *shares;

		hi = xfrm_slice_end(len, lo, n);
		shares = plan_xfrm_shares(x, false, data, offset, len, lo, hi, redo, &nshares);

		for (int t = 0; t < nshares; t++)
		{
			XfrmShare  *s = &shares[t];

			s->arena = arena;
			s->out_offset = out_offset;
			s->out_len = out_len;
			s->base = total;
			for (int64 i = s->lo; i < s->hi; i++)
				s->room += (uint64) len[i] * (icu ? 2 : 4) + 16;
			total += s->room;
		}
		*threads = Max(*threads, nshares);
		run_xfrm_shares(shares, nshares);
		free_xfrm_shares(shares, nshares);
		CHECK_FOR_INTERRUPTS();
	}
	/* the strings that did not fit their share's room, after the rooms */
	room = Max(total, 1);
	for (int64 i = 0; i < n; i++)
	{
		size_t		m;

		if (!redo[i])
			continue;
		m = transform_string(x, data + offset[i], len[i]);
		if (total + m > limit)
		{
			pfree(arena);
			pfree(redo);
			return NULL;
		}
		if (total + m > room)
		{
			room = Min(Max(room * 2, total + m), limit);
			arena = repalloc_huge(arena, room);
		}
		memcpy(arena + total, x->dst, m);
		out_offset[i] = total;
		out_len[i] = m;
		total += m;
	}
	pfree(redo);
	*size = total;
	return arena;
}
