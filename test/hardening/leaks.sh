#!/bin/bash
# test/hardening/leaks.sh: 10,000 mixed calls in one backend, with errors in between,
# and its memory afterwards.
#
#   test/hardening/leaks.sh [--device cpu|gpu|auto] [--quick] [--calls N] [--seed S] [--plant-leak]
#
# One psql session (one backend, autocommit, ON_ERROR_STOP off) runs a warm-up that
# makes every call below once for every type and stored array, then N random calls
# (default 10,000; --quick 2,000) over all five types and arrays of 0 .. 10^5
# elements (NULLs included, and a NULL array):
#   gpu_sort / gpu_argsort (random descending, nulls_first), gpu_sort_rows consumed
#   whole or cut short by LIMIT or a cursor that is rolled back, gpu_sort_agg;
#   and errors: after a sort (a cast of its result fails), in the middle of
#   gpu_sort_rows and of gpu_sort_agg (division by zero), bad input (a
#   two-dimensional array), and in a plpgsql block that catches its error
#   (a subtransaction rolled back after sorting).
# Asserts: every call meant to fail failed and no other did; the total of
# pg_backend_memory_contexts after the N calls is within 64 KiB of its value after
# the warm-up (why 64 KiB: see TOLERANCE below); the backend's resident set grew
# by less than 16 MiB (memory outside the contexts, e.g. the sort's own buffers);
# under --device gpu, the device memory in use did not grow after the warm-up.
#
# --plant-leak: a check of the test itself: every measured call also leaves a prepared
# statement behind (a few hundred bytes that live as long as the backend), which the
# context check must report as not ok.
#
# TAP on stdout.  Own throwaway cluster on GS_PGPORT (default 55503) unless
# GS_HARDENING_REUSE_CLUSTER=1.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib.sh"

device=cpu
quick=0
calls=
seed=42
plant=0
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--calls) calls=$2; shift 2 ;;
		--seed) seed=$2; shift 2 ;;
		--plant-leak) plant=1; shift ;;
		*) echo "usage: $0 [--device cpu|gpu|auto] [--quick] [--calls N] [--seed S] [--plant-leak]" >&2; exit 2 ;;
	esac
done
if [ "$quick" = 1 ]; then calls=${calls:-2000}; else calls=${calls:-10000}; fi

# TOLERANCE (bytes) for the memory contexts: the smallest leak, one palloc per
# call, costs at least 24 bytes (16-byte chunk header plus 8) in a context, so
# 10,000 calls leak >= 240 KB and 2,000 calls >= 48 KB; the allowance is for
# caches that may still take a block (8 KiB) or two on a first use after the
# warm-up.  The measured drift is printed as a figure.
TOLERANCE=$((64 * 1024))
[ "$calls" -lt 5000 ] && TOLERANCE=$((24 * 1024))
RSS_TOLERANCE_KB=$((16 * 1024))
DEVICE_TOLERANCE_MB=2

source "$here/tap.bash"

echo "# leaks: device=$device calls=$calls seed=$seed"
work=$(mktemp -d /tmp/gpusort-leaks.XXXXXX)
if [ "${GS_HARDENING_REUSE_CLUSTER:-0}" != 1 ]; then
	gs_ensure_postgres >/dev/null 2>&1 || { ok 1 "postgres found"; finish; }
	[ -f "$(pg_config --pkglibdir)/gpusort.so" ] || gs_build_install >&2
	GS_PGPORT=${GS_PGPORT:-55503} gs_start_cluster >&2
	rc=$?
	ok $rc "throwaway cluster started"
	[ $rc = 0 ] || finish
	trap 'gs_stop_cluster; rm -rf "$work"' EXIT
else
	trap 'q -c "DROP TABLE IF EXISTS leak_int2, leak_int4, leak_int8, leak_float4, leak_float8" >/dev/null 2>&1; rm -rf "$work"' EXIT
fi

# stored arrays: id 1..7 = 0, 1, 10, 1000, 10^4 (2% NULLs), 10^5 elements, and a NULL array
PGOPTIONS="-c gpusort.device=cpu" q >"$work/setup.out" 2>&1 <<'EOF'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
SELECT setseed(0.7);
DO $$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['int2', 'int4', 'int8', 'float4', 'float8'] LOOP
		EXECUTE format('CREATE TABLE %I (id int PRIMARY KEY, a %s[])', 'leak_' || t, t);
		EXECUTE format($q$INSERT INTO %I
			SELECT id, CASE WHEN id = 7 THEN NULL ELSE array(
				SELECT CASE WHEN id = 5 AND random() < 0.02 THEN NULL ELSE (floor(random() * 60000) - 30000)::%s END
				FROM generate_series(1, (ARRAY[0, 1, 10, 1000, 10000, 100000, 0])[id])) END
			FROM generate_series(1, 7) id$q$, 'leak_' || t, t);
	END LOOP;
END
$$;
EOF
rc=$?
ok $rc "setup: arrays of 0 .. 10^5 elements and a NULL array for the five types"
[ $rc = 0 ] || { sed 's/^/# /' "$work/setup.out"; finish; }

# call KIND TYPE ID DESC NULLS_FIRST: one statement; kinds 6..11 end in an error
# (stderr gets one ERROR line each; 10 catches its own, 11 fails only where the array has
# elements)
call() {
	local k=$1 t=$2 i=$3 d=$4 nf=$5
	case $k in
		0) echo "SELECT cardinality(gpu_sort(a, $d, $nf)) FROM leak_$t WHERE id = $i;" ;;
		1) echo "SELECT cardinality(gpu_argsort(a, $d, $nf)) FROM leak_$t WHERE id = $i;" ;;
		2) echo "SELECT count(*) FROM leak_$t, gpu_sort_rows(a, $d, $nf) WHERE id = $i;" ;;
		3) echo "SELECT x FROM leak_$t, gpu_sort_rows(a, $d) x WHERE id = $i LIMIT 2;" ;;
		4) echo "SELECT cardinality(gpu_sort_agg(x, $d)) FROM leak_$t, unnest(a) x WHERE id = $i;" ;;
		5) echo "BEGIN; DECLARE c CURSOR FOR SELECT x FROM leak_$t, gpu_sort_rows(a, $d) x WHERE id = $i; FETCH 2 FROM c; ROLLBACK;" ;;
		6) echo "SELECT gpu_sort(a, $d)::text::int FROM (SELECT coalesce(a, '{}') a FROM leak_$t WHERE id = $i) s;" ;;
		7) echo "SELECT gpu_sort('{{1,2},{3,4}}'::$t[]);" ;;
		8) echo "DO \$\$ DECLARE n int; BEGIN SELECT count(*) INTO n FROM leak_$t, gpu_sort_rows(a, $d) WHERE id = $i; PERFORM gpu_argsort(a) FROM leak_$t WHERE id = $i; RAISE EXCEPTION 'leaks: caught'; EXCEPTION WHEN raise_exception THEN NULL; END \$\$;" ;;
		9) echo "SELECT 1 / (x - x) FROM (SELECT x FROM leak_$t, gpu_sort_rows(coalesce(a, '{1}') || '{1}'::$t[]) x WHERE id = $i) s;" ;;
		10) echo "SELECT gpu_sort_agg(CASE WHEN o > n / 2 THEN x / 0 ELSE x END) FROM (SELECT x, o, count(*) OVER () n FROM leak_$t, unnest(coalesce(a, '{1}') || '{1}'::$t[]) WITH ORDINALITY u(x, o) WHERE id = $i) s;" ;;
	esac
}
# kinds 6, 7, 9 and 10 always fail at the top level; 8 fails inside its block and catches it
fails() { case $1 in 6|7|9|10) return 0 ;; *) return 1 ;; esac; }
measure() {
	# the same state at every sample: an aborted subtransaction gives the device pool and
	# pinned buffers back (src/gpusort.c), then the largest sort takes what it needs
	echo "DO \$\$ BEGIN RAISE EXCEPTION 'leaks: reset'; EXCEPTION WHEN raise_exception THEN NULL; END \$\$;"
	echo "SELECT cardinality(gpu_argsort(a)) FROM leak_int8 WHERE id = 6;"
	echo "SELECT 'mem|' || sum(total_bytes) || '|' || sum(used_bytes) FROM pg_backend_memory_contexts;"
	echo "SELECT 'rss|' || substring(pg_read_file('/proc/self/status') from 'VmRSS:\s+(\d+) kB');"
	echo "SELECT 'dev|' || coalesce(sum(memory_total_mb - memory_free_mb), -1) FROM gpusort_devices();"
}
snapshot() {	# per context name, for a diff when the totals differ
	echo "SELECT 'ctx$1|' || name || '|' || sum(total_bytes) FROM pg_backend_memory_contexts GROUP BY name;"
}

types=(int2 int4 int8 float4 float8)
bools=(false true)
nulls_first=(NULL false true)
expected_errors=0
{
	echo "SET statement_timeout = '120s';"
	# warm-up: every kind, type and array once, twice the measurement
	for k in $(seq 0 10); do
		for t in "${types[@]}"; do
			for i in 1 2 3 4 5 6 7; do
				call "$k" "$t" "$i" false NULL
				fails "$k" && expected_errors=$((expected_errors + 1))
			done
		done
	done
	measure; snapshot 0; measure; snapshot 0
	echo "SELECT 'phase|measured';"
	measure
	snapshot 0
	# the measured calls: random kind, type, array, direction, nulls_first
	RANDOM=$seed
	chunk=$((calls / 10))
	for n in $(seq "$calls"); do
		k=$((RANDOM % 11))
		t=${types[$((RANDOM % 5))]}
		# sizes: mostly small, 10^5 one call in ten
		r=$((RANDOM % 20))
		if [ $r -lt 1 ]; then i=1; elif [ $r -lt 2 ]; then i=7; elif [ $r -lt 4 ]; then i=2
		elif [ $r -lt 8 ]; then i=3; elif [ $r -lt 13 ]; then i=4; elif [ $r -lt 18 ]; then i=5; else i=6; fi
		call "$k" "$t" "$i" "${bools[$((RANDOM % 2))]}" "${nulls_first[$((RANDOM % 3))]}"
		fails "$k" && expected_errors=$((expected_errors + 1))
		[ "$plant" = 1 ] && echo "PREPARE leaks_planted_$n AS SELECT $n;"
		[ $((n % chunk)) = 0 ] && measure
	done
	snapshot 1
	echo "SELECT 'phase|done';"
	echo "$expected_errors" >"$work/expected_errors"
} >"$work/calls.sql"

export PGOPTIONS="${PGOPTIONS:-} -c gpusort.device=$device"
start=$SECONDS
timeout -k 10 $((calls / 10 + 600)) psql -X -A -t -q -v ON_ERROR_STOP=0 -f "$work/calls.sql" \
	>"$work/out" 2>"$work/err"
rc=$?
elapsed=$((SECONDS - start))
expected_errors=$(cat "$work/expected_errors")
errors=$(grep -c 'ERROR:' "$work/err")
grep -q '^phase|done' "$work/out"
ok $? "$calls calls (and $((11 * 5 * 7)) in the warm-up) ran to the end in one backend in ${elapsed}s (psql rc $rc)"
figure leaks_calls "$calls" calls
figure leaks_seconds "$elapsed" s
unexpected=$(grep 'ERROR:' "$work/err" | grep -vcE 'division by zero|invalid input syntax for type integer|multidimensional|one-dimensional|dimension')
grep 'ERROR:' "$work/err" | grep -vE 'division by zero|invalid input syntax for type integer|multidimensional|one-dimensional|dimension' |
	sort | uniq -c | sort -rn | head -5 | sed 's/^/# unexpected: /'
ok $([ "$errors" = "$expected_errors" ] && [ "$unexpected" = 0 ]; echo $?) \
	"every call meant to fail failed and no other ($errors errors, $expected_errors expected, $unexpected of other kinds)"

# memory: the samples after the warm-up (first measured one = start) and at the end
mem=($(sed -n 's/^mem|\([0-9]*\)|.*/\1/p' "$work/out"))
rss=($(sed -n 's/^rss|//p' "$work/out"))
dev=($(sed -n 's/^dev|//p' "$work/out"))
if [ "${#mem[@]}" -lt 4 ]; then
	ok 1 "memory samples taken (${#mem[@]})"
	sed 's/^/# /' "$work/err" | head -20
	finish
fi
# samples: 0, 1 in the warm-up; 2 = start of the measured calls; 3.. after each tenth
m0=${mem[2]} m1=${mem[${#mem[@]} - 1]}
echo "# memory contexts, total bytes: warm-up ${mem[0]} ${mem[1]}, measured ${mem[*]:2}"
echo "# resident set, kB: ${rss[*]}"
figure leaks_context_bytes_start "$m0" bytes
figure leaks_context_bytes_end "$m1" bytes
figure leaks_context_bytes_drift "$((m1 - m0))" bytes
ok $([ $((m1 - m0)) -le "$TOLERANCE" ]; echo $?) \
	"backend memory contexts end where they started: $m0 -> $m1 bytes (drift $((m1 - m0)), tolerance $TOLERANCE)"
if [ $((m1 - m0)) -ne 0 ]; then
	# which contexts moved
	join -t'|' -a1 -a2 -e0 -o0,1.2,2.2 \
		<(sed -n 's/^ctx0|//p' "$work/out" | sort -t'|' -k1,1 | awk -F'|' '{s[$1] = $2} END {for (k in s) print k "|" s[k]}' | sort -t'|' -k1,1) \
		<(sed -n 's/^ctx1|//p' "$work/out" | sort -t'|' -k1,1) |
		awk -F'|' '$2 != $3 {print "# context " $1 ": " $2 " -> " $3}' | head -10
fi
r0=${rss[2]} r1=${rss[${#rss[@]} - 1]}
figure leaks_rss_kb_start "$r0" kB
figure leaks_rss_kb_end "$r1" kB
ok $([ $((r1 - r0)) -le "$RSS_TOLERANCE_KB" ]; echo $?) \
	"resident set of the backend: $r0 -> $r1 kB (tolerance $RSS_TOLERANCE_KB kB)"
if [ "$device" != cpu ]; then
	d0=${dev[2]} d1=${dev[${#dev[@]} - 1]}
	echo "# device memory in use, MiB: ${dev[*]}"
	if [ "$d0" = -1 ]; then
		ok 1 "device memory: gpusort_devices() shows no device"
	else
		figure leaks_device_mb_start "$d0" MiB
		figure leaks_device_mb_end "$d1" MiB
		ok $([ $((d1 - d0)) -le "$DEVICE_TOLERANCE_MB" ]; echo $?) \
			"device memory in use after the warm-up does not grow: $d0 -> $d1 MiB (tolerance $DEVICE_TOLERANCE_MB MiB)"
	fi
fi
finish
