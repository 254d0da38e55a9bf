#!/bin/bash
# test/hardening/limits.sh: PostgreSQL's size limits and gpusort.max_device_memory.
#
#   test/hardening/limits.sh [--device cpu|gpu|auto] [--quick] [--large [--types "int4 float8 agg"]]
#
# Always (CI included):
#  - the limits themselves, from PostgreSQL 15's own definitions: MaxAllocSize
#    = 2^30 - 1 bytes and MaxArraySize = MaxAllocSize / sizeof(Datum) =
#    134217727 elements (ArrayGetNItems refuses more, whatever the element
#    size).  So the largest 1-D array without NULLs is
#      int2, int4, float4: 134217727 elements (the element bound binds first;
#        the byte bound alone would allow 268435449 int4)
#      int8, float8: 134217724 elements (24 header bytes + 8 n <= 2^30 - 1)
#    and an array one element larger cannot be built (SQLSTATE 54000);
#  - gpu_sort_agg whose result would pass those bounds errors with 54000
#    (program_limit_exceeded) and leaves the backend usable, its memory
#    contexts where they were: 134217728 NULLs (the element bound) and
#    134217725 bigint values (the 1 GB byte bound: 24 + 8 * 134217725 >
#    2^30 - 1).  About 15 s each on a 2-core box, 2 GB for the second.
# GPU only (a TAP SKIP where gpusort_devices() is empty):
#  - gpusort.max_device_memory smaller than the sort needs: auto sorts on the
#    CPU with the right result (gpusort_last_run says cpu), gpu errors 54000,
#    and the next call without the limit runs on the GPU.
# --large (about 6-10 GB of RAM, minutes; --types picks among int4, float8
#    and agg to split the run): the largest arrays sort right:
#    int4 x 134217727 (stored in a table) and float8 x 134217724 (a 1 GB
#    value, which no table row can hold: built in the query), ascending,
#    descending and gpu_argsort; bigint gpu_sort_agg of
#    134217724 rows (a result of 1073741816 bytes) succeeds.  The inputs are
#    permutations of 1..n ((i * K) mod n + 1, K prime to n), so the sorted
#    result must equal 1..n and the argsort the inverse permutation, both
#    built by PostgreSQL alone and compared with =.
# Own throwaway cluster on GS_PGPORT (default 55560), unless
# GS_HARDENING_REUSE_CLUSTER=1.
set -uo pipefail

device=cpu
quick=0
large=0
types="int4 float8 agg"
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--large) large=1; shift ;;
		--types) types=$2; shift 2 ;;
		-h|--help) sed -n '2,32p' "$0"; exit 0 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done

HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib.sh"
cd "$GS_ROOT"

source "$HERE/tap.bash"
if [ "${GS_HARDENING_REUSE_CLUSTER:-0}" != 1 ]; then
	own_cluster 55560 -c shared_buffers=256MB
fi
export PGOPTIONS="${PGOPTIONS:-} -c gpusort.device=$device"

# its own q: no ON_ERROR_STOP (some checks want a query to fail and go on), and
# --large spends minutes on one statement
q() { timeout 1200 psql -X -At -q "$@"; }
WORK=$(mktemp -d /tmp/gs-limits.XXXXXX)
chmod 755 "$WORK"
trap 'rm -rf "$WORK"; gs_stop_cluster' EXIT
now() { date +%s.%N; }
secs() { echo "scale=1; ($2 - $1) / 1" | bc; }

echo "# limits.sh: device=$device quick=$quick large=$large; load $(cut -d' ' -f1-3 /proc/loadavg)"
q -c "CREATE EXTENSION IF NOT EXISTS gpusort" >/dev/null || { echo "Bail out! no extension"; exit 1; }

# ---------------------------------------------------------------- the limits
MAX_ALLOC=$(( (1 << 30) - 1 ))
MAX_ARRAY=$(( MAX_ALLOC / 8 ))			# MaxArraySize, sizeof(Datum) = 8
HEADER=24								# ARR_OVERHEAD_NONULLS(1): 16 + dims + lbound
max_elems() {	# $1: element size
	local by_bytes=$(( (MAX_ALLOC - HEADER) / $1 ))
	[ "$by_bytes" -lt "$MAX_ARRAY" ] && echo "$by_bytes" || echo "$MAX_ARRAY"
}
for t in int2:2 int4:4 float4:4 int8:8 float8:8; do
	figure "largest_${t%%:*}_array" "$(max_elems "${t##*:}")" elements
done
N4=$(max_elems 4)
N8=$(max_elems 8)

# An error's SQLSTATE from a psql run with VERBOSITY verbose.
sqlstate() { grep -o 'ERROR:  [0-9A-Z]\{5\}' "$1" | head -1 | awk '{print $2}'; }

# One more element than MaxArraySize cannot exist (54000, checked before any allocation).
q -c "\\set VERBOSITY verbose" -c "SELECT array_fill(0::int4, ARRAY[$((MAX_ARRAY + 1))])" >"$WORK/o" 2>&1
if [ "$(sqlstate "$WORK/o")" = 54000 ] && grep -q "($MAX_ARRAY)" "$WORK/o"; then
	pass "PostgreSQL refuses an array of $((MAX_ARRAY + 1)) elements (54000, limit $MAX_ARRAY)"
else
	fail "array_fill of $((MAX_ARRAY + 1)) elements did not fail with 54000"; sed 's/^/#   /' "$WORK/o"
fi

# ---------------------------------------------------------------- aggregate over 1 GB
# $1 label, $2 the failing query.  Runs it in one session between two memory
# readings (after a warm-up of every statement), then a small sort.  The
# failed aggregate must leave nothing behind: the second reading is at most
# the first (a cache may give a block back in between).
agg_limit() {
	local label=$1 query=$2 t0 t1 m0 m1 st
	cat >"$WORK/agg.sql" <<EOF
\\set VERBOSITY verbose
\\o /dev/null
SELECT cardinality(gpu_sort_agg(x)) FROM (SELECT generate_series(1, 1000)::int8 x) s;
SELECT sum(total_bytes) FROM pg_backend_memory_contexts;
SELECT gpu_sort(array[3, 1, 2]::int4[]) = array[1, 2, 3];
SELECT cardinality(gpu_sort_agg(x)) FROM (SELECT generate_series(1, 1000)::int8 x) s;
SELECT sum(total_bytes) FROM pg_backend_memory_contexts;
SELECT gpu_sort(array[3, 1, 2]::int4[]) = array[1, 2, 3];
\\o
SELECT 'MEM0', sum(total_bytes) FROM pg_backend_memory_contexts;
$query;
SELECT 'MEM1', sum(total_bytes) FROM pg_backend_memory_contexts;
SELECT 'CHECK', gpu_sort(array[3, 1, 2]::int4[]) = array[1, 2, 3];
SELECT 'AGG', gpu_sort_agg(x) = array[1, 2, 3]::int8[] FROM (VALUES (3::int8), (1), (2)) v(x);
EOF
	t0=$(now)
	q -f "$WORK/agg.sql" >"$WORK/agg.out" 2>&1
	t1=$(now)
	figure "${label}_seconds" "$(secs "$t0" "$t1")" s
	st=$(sqlstate "$WORK/agg.out")
	m0=$(grep '^MEM0|' "$WORK/agg.out" | cut -d'|' -f2)
	m1=$(grep '^MEM1|' "$WORK/agg.out" | cut -d'|' -f2)
	if [ "$st" = 54000 ] && grep -q 'gpu_sort_agg result would exceed the maximum array size' "$WORK/agg.out" &&
		grep -q '^CHECK|t' "$WORK/agg.out" && grep -q '^AGG|t' "$WORK/agg.out" &&
		[ -n "$m0" ] && [ -n "$m1" ] && [ "$m1" -le "$m0" ]; then
		pass "$label: 54000 program_limit_exceeded, then the backend sorts again, memory contexts $m0 -> $m1 bytes"
	else
		fail "$label: want 54000 and a usable backend whose memory did not grow (got '$st', memory $m0 -> $m1)"
		sed 's/^/#   /' "$WORK/agg.out" | head -20
	fi
}

agg_limit "agg_count_bound" \
	"SELECT cardinality(gpu_sort_agg(x)) FROM (SELECT NULL::int4 x FROM generate_series(1, $((MAX_ARRAY + 1)))) s"
agg_limit "agg_byte_bound" \
	"SELECT cardinality(gpu_sort_agg(x)) FROM (SELECT generate_series(1, $((N8 + 1)))::int8 x) s"

# ---------------------------------------------------------------- max_device_memory (GPU only)
ngpu=$(q -c "SELECT count(*) FROM gpusort_devices()" 2>/dev/null || echo 0)
if [ "${ngpu:-0}" -eq 0 ]; then
	why=$(q -c "SELECT reason FROM gpusort_info()" 2>/dev/null)
	skip "max_device_memory under auto falls back to the CPU: no GPU ($why)"
	skip "max_device_memory under gpu errors 54000: no GPU"
	skip "without the limit the next sort runs on the GPU: no GPU"
else
	common="SET gpusort.gpu_min_elements = 0;
CREATE TEMP TABLE m AS SELECT array(SELECT (random() * 2e9)::int4 - 1000000000 FROM generate_series(1, 1000000)) a;
SET gpusort.max_device_memory = 1;"
	q -v ON_ERROR_STOP=1 >"$WORK/o" 2>&1 <<EOF
$common
SET gpusort.device = auto;
SELECT 'SAME', gpu_sort(a) = array(SELECT x FROM unnest(a) x ORDER BY x) FROM m;
SELECT 'DEV', device FROM gpusort_last_run();
EOF
	if grep -q '^SAME|t' "$WORK/o" && grep -q '^DEV|cpu' "$WORK/o"; then
		pass "max_device_memory = 1 MB under auto: 10^6 int4 sorted on the CPU, same as ORDER BY"
	else
		fail "max_device_memory = 1 MB under auto: want a right result from the CPU"; sed 's/^/#   /' "$WORK/o"
	fi
	q >"$WORK/o" 2>&1 <<EOF
\\set VERBOSITY verbose
$common
SET gpusort.device = gpu;
SELECT cardinality(gpu_sort(a)) FROM m;
RESET gpusort.max_device_memory;
SELECT 'SAME', gpu_sort(a) = array(SELECT x FROM unnest(a) x ORDER BY x) FROM m;
SELECT 'DEV', device FROM gpusort_last_run();
EOF
	if [ "$(sqlstate "$WORK/o")" = 54000 ] && grep -q 'max_device_memory' "$WORK/o"; then
		pass "max_device_memory = 1 MB under gpu: error 54000 ($(grep -m1 'ERROR:' "$WORK/o" | sed 's/.*ERROR: *[0-9A-Z]*: //'))"
	else
		fail "max_device_memory = 1 MB under gpu: want 54000"; sed 's/^/#   /' "$WORK/o"
	fi
	if grep -q '^SAME|t' "$WORK/o" && grep -q '^DEV|gpu' "$WORK/o"; then
		pass "without the limit the next sort in the same backend runs on the GPU and is right"
	else
		fail "without the limit the next sort did not run right on the GPU"; sed 's/^/#   /' "$WORK/o"
	fi
fi

# ---------------------------------------------------------------- the largest arrays (--large)
gcd() { local a=$1 b=$2 t; while [ "$b" -ne 0 ]; do t=$((a % b)); a=$b; b=$t; done; echo "$a"; }
# inverse of $1 modulo $2 (extended Euclid; 64-bit shell arithmetic is enough here)
inverse() {
	local a=$1 m=$2 t=0 newt=1 r=$2 newr=$1 qq tmp
	while [ "$newr" -ne 0 ]; do
		qq=$((r / newr))
		tmp=$((t - qq * newt)); t=$newt; newt=$tmp
		tmp=$((r - qq * newr)); r=$newr; newr=$tmp
	done
	[ "$t" -lt 0 ] && t=$((t + m))
	echo "$t"
}
pick_k() {	# a multiplier prime to n
	local k=1000003
	while [ "$(gcd "$k" "$1")" -ne 1 ]; do k=$((k + 2)); done
	echo "$k"
}

# SQL for an array of EXPR (in i, from 0) for i in [0, n): ARRAY(subquery) stops
# at 2^26 elements (its work space doubles past 1 GB), so || joins pieces of 2^25.
# $1 expression, $2 type, $3 n
pieces() {
	local expr=$1 type=$2 n=$3 piece=$((1 << 25)) lo=0 hi sql=
	while [ "$lo" -lt "$n" ]; do
		hi=$((lo + piece)); [ "$hi" -gt "$n" ] && hi=$n
		sql="$sql${sql:+ || }array(SELECT ($expr)::$type FROM generate_series(${lo}::int8, $((hi - 1))) i)"
		lo=$hi
	done
	echo "$sql"
}

# $1 type, $2 n: sorts a permutation of 1..n both ways (and argsorts it for
# float8) and compares with 1..n built by PostgreSQL.  An array that fits a
# table row is stored (TOASTed, the in-place path); a 1 GB one cannot be (the
# heap tuple holding it would pass 1 GB), so it is built inside the query and
# sorted from memory (the copying path).
largest() {
	local type=$1 n=$2 w=$3 k kinv t0 t1 A E ED P src
	k=$(pick_k "$n")
	kinv=$(inverse "$k" "$n")
	A=$(pieces "(i * $k) % $n + 1" "$type" "$n")
	E=$(pieces "i + 1" "$type" "$n")
	ED=$(pieces "$n - i" "$type" "$n")
	# the inverse permutation: value v sits at position ((v - 1) * kinv) mod n + 1
	P=$(pieces "(i * $kinv) % $n + 1" int4 "$n")
	if [ $((HEADER + n * w)) -lt $((MAX_ALLOC - 1024)) ]; then
		src=stored
		t0=$(now)
		q -v ON_ERROR_STOP=1 >"$WORK/gen.out" 2>&1 <<EOF
DROP TABLE IF EXISTS big_$type;
CREATE UNLOGGED TABLE big_$type (a $type[]);
ALTER TABLE big_$type ALTER COLUMN a SET STORAGE EXTERNAL;
INSERT INTO big_$type SELECT $A;
EOF
		[ "$?" = 0 ] || { fail "$type x $n: could not store the input"; sed 's/^/#   /' "$WORK/gen.out" | head; return; }
		figure "largest_${type}_input_seconds" "$(secs "$t0" "$(now)")" s
		A=a
		FROM="FROM big_$type"
	else
		src="built in the query"
		FROM=
	fi

	t0=$(now)
	q >"$WORK/s.out" 2>&1 <<EOF
SELECT 'ASC', gpu_sort($A) = $E $FROM;
SELECT 'ASCRUN', device, elements, round(total_ms) FROM gpusort_last_run();
SELECT 'DESC', gpu_sort($A, true) = $ED $FROM;
SELECT 'DESCRUN', device, elements, round(total_ms) FROM gpusort_last_run();
EOF
	t1=$(now)
	echo "# $type x $n ($src, $((HEADER + n * w)) bytes): ascending $(grep '^ASCRUN|' "$WORK/s.out"), descending $(grep '^DESCRUN|' "$WORK/s.out") (device|elements|ms)"
	if grep -q '^ASC|t' "$WORK/s.out"; then
		pass "largest $type array ($n elements, $src) sorts ascending to exactly 1..$n"
	else
		fail "largest $type array ($n elements, $src) ascending"; sed 's/^/#   /' "$WORK/s.out" | head
	fi
	if grep -q '^DESC|t' "$WORK/s.out"; then
		pass "largest $type array ($n elements, $src) sorts descending to exactly $n..1"
	else
		fail "largest $type array ($n elements, $src) descending"; sed 's/^/#   /' "$WORK/s.out" | head
	fi
	figure "largest_${type}_check_seconds" "$(secs "$t0" "$t1")" s
	q -c "SELECT 'ARG', gpu_argsort($A) = $P $FROM" -c "SELECT 'ARGRUN', device, elements, round(total_ms) FROM gpusort_last_run()" >"$WORK/a.out" 2>&1
	if grep -q '^ARG|t' "$WORK/a.out"; then
		pass "gpu_argsort of the largest $type array is exactly the inverse permutation ($(grep '^ARGRUN|' "$WORK/a.out"))"
	else
		fail "gpu_argsort of the largest $type array"; sed 's/^/#   /' "$WORK/a.out" | head
	fi
	q -c "DROP TABLE IF EXISTS big_$type" >/dev/null 2>&1
}

if [ "$large" = 1 ]; then
	[[ " $types " == *" int4 "* ]] && largest int4 "$N4" 4
	[[ " $types " == *" float8 "* ]] && largest float8 "$N8" 8
fi
if [ "$large" = 1 ] && [[ " $types " == *" agg "* ]]; then
	t0=$(now)
	q -c "SELECT 'AGG', cardinality(r) = $N8 AND r[1] = 1 AND r[$N8] = $N8 AND pg_column_size(r) = $((HEADER + 8 * N8))
	      FROM (SELECT gpu_sort_agg(x) r FROM (SELECT ($N8 + 1 - generate_series(1, $N8))::int8 x) s) t" >"$WORK/o" 2>&1
	figure "agg_largest_seconds" "$(secs "$t0" "$(now)")" s
	if grep -q '^AGG|t' "$WORK/o"; then
		pass "gpu_sort_agg of $N8 bigint rows (a result of $((HEADER + 8 * N8)) bytes, just under 1 GB) succeeds"
	else
		fail "gpu_sort_agg of $N8 bigint rows"; sed 's/^/#   /' "$WORK/o" | head
	fi
fi
[ "$large" = 1 ] || echo "# the largest arrays themselves: run with --large (6-10 GB of RAM)"

echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
finish
