#!/bin/bash
# test/hardening/cancel.sh: cancel and statement_timeout during every long
# phase of a large sort: the backend must return within 200 ms,
# stay usable, and hold no more memory than before the query.
#
#   test/hardening/cancel.sh [--device cpu|gpu|auto] [--quick] [--elements N]
#                            [--limit-ms MS] [--delays "F F ..."] [--cases a,b]
#
# Each case runs one query on a stored array (uncompressed, TOASTed: the SQL
# path of real tables) in a "victim" session.  A second session waits for the
# victim's query to start, sleeps a fraction of the query's uncancelled time
# (so that fetch, key transform, passes, result build and, on a GPU, copy-in,
# sort and copy-out are all hit at some delay) and calls pg_cancel_backend().
# The latency is from that call (server clock, taken just before it) to the
# start of the victim's next statement (server clock too), so it includes the
# error reaching the client and the client's next request.  statement_timeout
# runs are measured as (next statement start - query start - timeout).
#
# After each cancel the victim session checks, in the same backend: the
# error is SQLSTATE 57014; pg_backend_memory_contexts totals what they did
# before the query; a small sort is right; under --device gpu the device's
# free memory is back where it was (the library holds no pool after an abort).
#
# Output: TAP; latencies as "# figure:" lines.  The bound asserted is 200 ms,
# or 1000 ms with --quick (CI on a loaded 2-core box); --limit-ms overrides.
# Own throwaway cluster on GS_PGPORT (default 55550), unless
# GS_HARDENING_REUSE_CLUSTER=1 (PGHOST/PGPORT name a running cluster).
set -uo pipefail

device=cpu
quick=0
elements=
limit_ms=
delays=
cases=
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--elements) elements=$2; shift 2 ;;
		--limit-ms) limit_ms=$2; shift 2 ;;
		--delays) delays=$2; shift 2 ;;
		--cases) cases=$2; shift 2 ;;
		-h|--help) sed -n '2,30p' "$0"; exit 0 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done
if [ "$quick" = 1 ]; then
	: "${elements:=50000000}"
	: "${limit_ms:=1000}"
	: "${delays:=0.15 0.5 0.8}"
else
	: "${elements:=100000000}"
	: "${limit_ms:=200}"
	: "${delays:=0.05 0.15 0.25 0.35 0.45 0.55 0.65 0.75 0.85 0.95}"
fi

HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib.sh"
cd "$GS_ROOT"

source "$HERE/tap.bash"
if [ "${GS_HARDENING_REUSE_CLUSTER:-0}" != 1 ]; then
	own_cluster 55550 -c shared_buffers=256MB
fi
export PGOPTIONS="${PGOPTIONS:-} -c gpusort.device=$device"

# its own q: making the data takes minutes on 2 cores, past tap.bash's limit
q() { timeout 600 psql -X -At -q -v ON_ERROR_STOP=1 "$@"; }

VICTIM=gs_cancel_victim
WORK=$(mktemp -d /tmp/gs-cancel.XXXXXX)
chmod 755 "$WORK"
cleanup_work() { rm -rf "$WORK"; }
trap 'cleanup_work; gs_stop_cluster' EXIT

echo "# cancel.sh: device=$device elements=$elements limit=${limit_ms} ms delays (fractions of the uncancelled time): $delays"
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------- data
# Rows of gs_cancel(id, a): 0 a small array (warm-up, same plan and TOAST
# relations), 1 elements int4 without NULLs (sorted in place), 2 the same with
# a NULL (compacted into a new array), 3 elements/2 float8, 4 elements/10
# int4 for the aggregate.  Unlogged and STORAGE EXTERNAL: stored uncompressed
# out of line, like any large array whose values do not compress.
block=10000000
[ "$elements" -lt "$block" ] && block=$elements
reps=$(( (elements + block - 1) / block ))
freps=$(( (elements / 2 + block - 1) / block ))
acat=a; for ((i = 1; i < reps; i++)); do acat="$acat || a"; done
fcat=f; for ((i = 1; i < freps; i++)); do fcat="$fcat || f"; done
gen_start=$(date +%s.%N)
q -c "CREATE EXTENSION IF NOT EXISTS gpusort" \
  -c "DROP TABLE IF EXISTS gs_cancel" \
  -c "CREATE UNLOGGED TABLE gs_cancel (id int PRIMARY KEY, a int4[], f float8[])" \
  -c "ALTER TABLE gs_cancel ALTER COLUMN a SET STORAGE EXTERNAL, ALTER COLUMN f SET STORAGE EXTERNAL" \
  -c "INSERT INTO gs_cancel SELECT 0, array(SELECT (random() * 4e9 - 2e9)::int4 FROM generate_series(1, 100000)),
        array(SELECT random() - 0.5 FROM generate_series(1, 100000))" \
  -c "INSERT INTO gs_cancel SELECT 9, array(SELECT (random() * 4e9 - 2e9)::int4 FROM generate_series(1, $block)),
        array(SELECT random() * 2e6 - 1e6 FROM generate_series(1, $block))" \
  -c "INSERT INTO gs_cancel(id, a) SELECT 1, ($acat)[1:$elements] FROM gs_cancel WHERE id = 9" \
  -c "INSERT INTO gs_cancel(id, a) SELECT 2, array_append(a, NULL) FROM gs_cancel WHERE id = 1" \
  -c "INSERT INTO gs_cancel(id, f) SELECT 3, ($fcat)[1:$elements / 2] FROM gs_cancel WHERE id = 9" \
  -c "INSERT INTO gs_cancel(id, a) SELECT 4, a[1:$elements / 10] FROM gs_cancel WHERE id = 1" \
  -c "DELETE FROM gs_cancel WHERE id = 9" -c "VACUUM ANALYZE gs_cancel" \
  >/dev/null 2>"$WORK/gen.err" || { sed 's/^/# /' "$WORK/gen.err"; echo "Bail out! could not make the data"; exit 1; }
echo "# data made in $(echo "$(date +%s.%N) - $gen_start" | bc) s"

# ---------------------------------------------------------------- cases
# name|query on the big row (marked /*gs_long*/)|the same on the warm-up row
CASES=(
	"sort_inplace|SELECT /*gs_long*/ cardinality(gpu_sort(a)) FROM gs_cancel WHERE id = 1|SELECT cardinality(gpu_sort(a)) FROM gs_cancel WHERE id = 0"
	"sort_nulls|SELECT /*gs_long*/ cardinality(gpu_sort(a, true)) FROM gs_cancel WHERE id = 2|SELECT cardinality(gpu_sort(a, true)) FROM gs_cancel WHERE id = 0"
	"argsort_float8|SELECT /*gs_long*/ cardinality(gpu_argsort(f)) FROM gs_cancel WHERE id = 3|SELECT cardinality(gpu_argsort(f)) FROM gs_cancel WHERE id = 0"
	"argsort_nulls|SELECT /*gs_long*/ cardinality(gpu_argsort(a)) FROM gs_cancel WHERE id = 2|SELECT cardinality(gpu_argsort(a)) FROM gs_cancel WHERE id = 0"
	"agg|SELECT /*gs_long*/ cardinality(gpu_sort_agg(x)) FROM gs_cancel, unnest(a) x WHERE id = 4|SELECT cardinality(gpu_sort_agg(x)) FROM gs_cancel, unnest(a) x WHERE id = 0"
)
[ "$quick" = 1 ] && [ -z "$cases" ] && cases=sort_inplace,sort_nulls,argsort_nulls
if [ -n "$cases" ]; then
	sel=()
	for c in "${CASES[@]}"; do [[ ",$cases," == *",${c%%|*},"* ]] && sel+=("$c"); done
	CASES=("${sel[@]}")
fi

# The victim's script: warm-up, baseline, the long query (cancelled or
# timed out), then the checks, all in one backend.  $1 query, $2 warm-up,
# $3 statement_timeout in ms (0: none).
victim_script() {
	local epilogue
	epilogue="SELECT 'T1', extract(epoch FROM clock_timestamp());
RESET statement_timeout;
SELECT 'DEV', device FROM gpusort_last_run();
SELECT 'MEM1', sum(total_bytes) FROM pg_backend_memory_contexts;
SELECT 'MC1', name, ident, level, total_bytes FROM pg_backend_memory_contexts;
SELECT 'GPU1', coalesce(sum(memory_free_mb), -1) FROM gpusort_devices();
SELECT 'CHECK', gpu_sort(array[3, 1, 2, NULL]::int4[]) IS NOT DISTINCT FROM array[1, 2, 3, NULL]::int4[]
              AND gpu_argsort(array[2.5, -1, 0]::float8[]) = array[2, 3, 1];"
	# the warm-up runs every statement once, twice (catalog caches, plans)
	cat <<EOF
\\set VERBOSITY verbose
\\o /dev/null
SET statement_timeout = 0;
$2;
$epilogue
SET statement_timeout = 0;
$2;
$epilogue
\\o
SELECT 'MEM0', sum(total_bytes) FROM pg_backend_memory_contexts;
SELECT 'MC0', name, ident, level, total_bytes FROM pg_backend_memory_contexts;
SELECT 'GPU0', coalesce(sum(memory_free_mb), -1) FROM gpusort_devices();
SELECT 'PID', pg_backend_pid();
SET statement_timeout = $3;
SELECT 'T0', extract(epoch FROM clock_timestamp());
$1;
$epilogue
EOF
}

# The canceller: waits (server side) for the victim's query, sleeps until
# delay_ms after its start, cancels it, and says when.  $1 delay in ms.
canceller_sql() {
	cat <<EOF
DO \$\$
DECLARE
	p int;
	qs timestamptz;
	give_up timestamptz := clock_timestamp() + interval '60 s';
BEGIN
	LOOP
		PERFORM pg_stat_clear_snapshot();
		SELECT pid, query_start INTO p, qs FROM pg_stat_activity
		 WHERE application_name = '$VICTIM' AND state = 'active'
		   AND query LIKE '%/*gs_long*/%' AND pid <> pg_backend_pid();
		EXIT WHEN p IS NOT NULL OR clock_timestamp() > give_up;
		PERFORM pg_sleep(0.001);
	END LOOP;
	IF p IS NULL THEN
		RAISE NOTICE 'CANCEL none';
		RETURN;
	END IF;
	PERFORM pg_sleep(least(60, greatest(0, extract(epoch FROM qs + interval '$1 ms' - clock_timestamp()))));
	RAISE NOTICE 'CANCEL % %', extract(epoch FROM clock_timestamp()), pg_cancel_backend(p);
END
\$\$;
EOF
}

field() { grep "^$1|" "$2" | tail -1 | cut -d'|' -f2; }
ms() { echo "scale=1; ($1) * 1000 / 1" | bc; }

# One trial.  $1 name, $2 query, $3 warm-up, $4 mode (cancel|timeout), $5 ms.
# Sets LAT (ms, empty when the query finished first) and returns nonzero on a
# failed check (reported here).
trial() {
	local name=$1 query=$2 warm=$3 mode=$4 at=$5
	local out=$WORK/victim.out cout=$WORK/canceller.out vpid t0 t1 tc m0 m1 g0 g1 timeout_ms=0
	LAT=
	[ "$mode" = timeout ] && timeout_ms=$at
	victim_script "$query" "$warm" "$timeout_ms" >"$WORK/victim.sql"
	PGAPPNAME=$VICTIM timeout 300 psql -X -At -f "$WORK/victim.sql" >"$out" 2>&1 &
	vpid=$!
	if [ "$mode" = cancel ]; then
		canceller_sql "$at" | timeout 120 psql -X -At >"$cout" 2>&1
	fi
	wait "$vpid"
	t0=$(field T0 "$out"); t1=$(field T1 "$out")
	m0=$(field MEM0 "$out"); m1=$(field MEM1 "$out")
	g0=$(field GPU0 "$out"); g1=$(field GPU1 "$out")
	if ! grep -q '57014' "$out"; then
		# the query ended first (or failed otherwise): no latency
		if grep -q 'ERROR' "$out"; then
			fail "$name $mode at $at ms: unexpected error"
			grep ERROR "$out" | head -3 | sed 's/^/#   /'
			return 1
		fi
		echo "# $name $mode at $at ms: the query finished first"
		return 0
	fi
	if [ "$mode" = cancel ]; then
		tc=$(grep -o 'CANCEL [0-9.]* t' "$cout" | awk '{print $2}')
		[ -n "$tc" ] || { fail "$name cancel at $at ms: canceller did not run"; sed 's/^/#   /' "$cout"; return 1; }
		LAT=$(ms "$t1 - $tc")
	else
		LAT=$(ms "$t1 - $t0 - $at / 1000")
	fi
	local problems=
	[ -n "$t1" ] || problems="$problems no next statement;"
	[ "$(field CHECK "$out")" = t ] || problems="$problems small sort after the cancel wrong;"
	[ -n "$m0" ] && [ -n "$m1" ] && [ "$m1" -le "$m0" ] || problems="$problems memory contexts $m0 -> $m1 bytes;"
	if [ "$device" = gpu ] && [ "${g0:--1}" != -1 ]; then
		# the abort released the pool: at least as much free device memory (16 MB slack for the driver)
		[ "$g1" -ge $((g0 - 16)) ] || problems="$problems device free memory $g0 -> $g1 MB;"
	fi
	echo "# $name $mode at $at ms: latency $LAT ms, memory contexts $m0 -> $m1 bytes${g0:+, device free $g0 -> $g1 MB}"
	if [ -n "$problems" ]; then
		fail "$name $mode at $at ms:$problems"
		grep -v '^MC[01]|' "$out" | sed 's/^/#   /' | head -30
		echo "#   memory contexts that changed (before, after):"
		diff <(grep '^MC0|' "$out" | cut -d'|' -f2- | sort) <(grep '^MC1|' "$out" | cut -d'|' -f2- | sort) | grep '^[<>]' | sed 's/^/#     /'
		return 1
	fi
	return 0
}

for c in "${CASES[@]}"; do
	IFS='|' read -r name query warm <<<"$c"

	# the uncancelled time: the fastest of three runs (the first reads the table into the OS cache)
	full_ms=
	for run in 1 2 3; do
		s=$(q -c "$warm" -c "SELECT extract(epoch FROM clock_timestamp())" -c "$query" -c "SELECT extract(epoch FROM clock_timestamp())" 2>"$WORK/full.err" | tail -3)
		a=$(echo "$s" | sed -n 1p); b=$(echo "$s" | sed -n 3p)
		if [ -n "$a" ] && [ -n "$b" ]; then
			t=$(ms "$b - $a")
			if [ -z "$full_ms" ] || [ "$(echo "$t < $full_ms" | bc)" = 1 ]; then full_ms=$t; fi
		fi
	done
	if [ -z "$full_ms" ]; then
		fail "$name: the uncancelled query failed"
		sed 's/^/#   /' "$WORK/full.err" | head -5
		continue
	fi
	figure "${name}_uncancelled_ms" "$full_ms" ms

	worst=0 hits=0 bad=0 all=
	for f in $delays; do
		at=$(echo "$full_ms * $f / 1" | bc)
		trial "$name" "$query" "$warm" cancel "$at" || bad=$((bad + 1))
		if [ -n "$LAT" ]; then
			hits=$((hits + 1)); all="$all $LAT"
			[ "$(echo "$LAT > $worst" | bc)" = 1 ] && worst=$LAT
		fi
	done
	for f in 0.3 0.7; do
		[ "$quick" = 1 ] && [ "$f" = 0.3 ] && continue
		at=$(echo "$full_ms * $f / 1" | bc)
		trial "$name" "$query" "$warm" timeout "$at" || bad=$((bad + 1))
		if [ -n "$LAT" ]; then
			hits=$((hits + 1)); all="$all $LAT"
			[ "$(echo "$LAT > $worst" | bc)" = 1 ] && worst=$LAT
		fi
	done
	echo "# $name latencies (ms):$all"
	figure "${name}_cancel_latency_max_ms" "$worst" ms
	[ "$bad" -eq 0 ] && pass "$name: after every cancel the backend errors 57014, is usable and holds no extra memory"
	if [ "$hits" -eq 0 ]; then
		fail "$name: no cancel hit the running query"
	elif [ "$(echo "$worst <= $limit_ms" | bc)" = 1 ]; then
		pass "$name: $hits cancels, worst latency $worst ms <= $limit_ms ms"
	else
		fail "$name: $hits cancels, worst latency $worst ms > $limit_ms ms"
	fi
done

echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
finish
