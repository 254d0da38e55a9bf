#!/bin/bash
# bench/server_fairness.sh: whether one session can stall or fail another's sorts in
# server mode, on a GPU host.
#
#   bash bench/server_fairness.sh [--seconds 30] [--small-clients 64] [--big-clients 4]
#                                 [--device gpu] [--small-device auto] [--only alone,fairness,storm]
#                                 [--out FILE]
#
# 0. alone: the same small clients with nothing beside them under gpusort.device = cpu,
#    the latency the machine's cores give them under that load (the yardstick of 1).
# 1. fairness: --small-clients sort and check a stored 10^5-element int4 array under
#    gpusort.device = auto while --big-clients sort a stored 3*10^7-element float8 array;
#    the report gives the small sorts' p50 and p99 latency (pgbench's per-transaction
#    log) beside the same array's CPU sort (gpusort.device = cpu, median of 21, whole
#    statement), and where the small sorts ran (gpusort_server()'s jobs against the
#    transactions).  --small-device gpu runs the small clients under gpusort.device = gpu
#    instead, so that every small sort waits for the GPU however long its queue.
# 2. timeout storm: gpusort.server_job_timeout = 1s; one client's sorts all run past it
#    (the test build's 'slow-self' injection holds each of its jobs until it is cancelled)
#    while --small-clients sort as in 1 under gpusort.device = gpu: the small clients'
#    failed statements (want 0), the GPU process's restarts (want 0), and the jobs
#    cancelled for the timeout.  Needs a test build (INJECTION_POINTS=1), which this
#    script makes.
# Throughput at 1, 16, 64 and 300 clients is bench/server_bench.sh --modes server, run
# against the previous build in the same session.
# Own cluster (max_connections 400); results as Markdown to --out (default
# bench/results/server-fairness-HOST-DATE.md).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$GS_ROOT"

seconds=30
small_clients=64
big_clients=4
device=gpu
only=alone,fairness,storm
small_device=auto
out=
while [ $# -gt 0 ]; do
	case "$1" in
		--seconds) seconds=$2; shift 2 ;;
		--small-clients) small_clients=$2; shift 2 ;;
		--big-clients) big_clients=$2; shift 2 ;;
		--device) device=$2; shift 2 ;;
		--small-device) small_device=$2; shift 2 ;;
		--only) only=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		*) echo "usage: $0 [--seconds S] [--small-clients N] [--big-clients N] [--device gpu|cpu] [--small-device auto|gpu] [--only alone,fairness,storm] [--out FILE]" >&2; exit 2 ;;
	esac
done
out=${out:-$GS_ROOT/bench/results/server-fairness-$(hostname)-$(date -u +%Y-%m-%d).md}
wanted() { [[ ",$only," == *",$1,"* ]]; }

export INJECTION_POINTS=1 GS_SERVER_MODE=1
gs_ensure_postgres
gs_build_install
stand_in=()
[ "$device" = cpu ] && stand_in=(-c gpusort.server_cpu_device=on)
gs_start_cluster -c max_connections=400 -c shared_buffers=4GB "${stand_in[@]}"
work=$(mktemp -d /tmp/gpusort-fairness-bench.XXXXXX)
chmod 777 "$work"
trap 'gs_stop_cluster; rm -rf "$work"' EXIT
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@"; }

q -c "CREATE EXTENSION IF NOT EXISTS gpusort"
if wanted storm; then
	q -c "CREATE FUNCTION gpusort_server_inject(text) RETURNS void AS '\$libdir/gpusort' LANGUAGE C STRICT"
	q -c "REVOKE EXECUTE ON FUNCTION gpusort_server_inject(text) FROM PUBLIC"
fi
q -c "CREATE TABLE small AS SELECT a, (SELECT array_agg(x ORDER BY x) FROM unnest(a) x) AS s
	FROM (SELECT array_agg((random() * 2e9 - 1e9)::int4) AS a FROM generate_series(1, 100000)) t"
q -c "CREATE TABLE big AS SELECT array_agg(random()) AS a FROM generate_series(1, 30000000)"
q -c "ALTER TABLE big ALTER COLUMN a SET STORAGE EXTERNAL"
echo "SELECT 1 / (gpu_sort(a) = s)::int FROM small;" >"$work/small.sql"
echo "SELECT cardinality(gpu_sort(a)) FROM big;" >"$work/big.sql"
# under gpu each of its sorts fails with 58000 (under auto it would pay by sorting on the CPU)
printf '%s\n' "SELECT gpusort_server_inject('slow-self');" \
	"DO \$\$ BEGIN PERFORM cardinality(gpu_sort(a)) FROM big; EXCEPTION WHEN system_error THEN NULL; END \$\$;" >"$work/storm.sql"
chmod 644 "$work"/*.sql

# percentile P of the latencies (microseconds, field 3) in pgbench logs, in ms
pct() {
	local p=$1
	shift
	cat "$@" 2>/dev/null | awk '{print $3}' | sort -n | awk -v p="$p" '
		{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } i = int(NR * p / 100); if (i < 1) i = 1; printf "%.2f", v[i] / 1000 }'
}
field() { grep -oE "$1: [0-9]+" "$2" | grep -oE "[0-9]+$" | head -1; }
jobs() { q -F ' ' -c "SELECT sum(jobs_done), sum(jobs_failed) FROM gpusort_server()"; }

# the CPU sort of the small array, whole statement, median of 21
for _ in $(seq 1 21); do
	PGOPTIONS="-c gpusort.device=cpu" psql -X -At -c "\\timing on" -c "SELECT 1 / (gpu_sort(a) = s)::int FROM small" |
		grep -oE "Time: [0-9.]+" | grep -oE "[0-9.]+"
done | sort -n | sed -n 11p >"$work/cpu_ms"

touch "$work/small1.out" "$work/big1.out" "$work/small0.out" "$work/small2.out" "$work/storm.out"

# 0. the small clients alone on the CPU
if wanted alone; then
	(cd "$work" && PGOPTIONS="-c gpusort.device=cpu" pgbench -n -c "$small_clients" -j 8 -T $((seconds - 4)) \
		-l --log-prefix=alone -f small.sql >small0.out 2>&1 || true)
fi

# 1. fairness
if wanted fairness; then
	before=$(jobs)
	(cd "$work" && PGOPTIONS="-c gpusort.device=auto" pgbench -n -c "$big_clients" -j "$big_clients" -T "$seconds" \
		-f big.sql >big1.out 2>&1 || true) &
	big=$!
	sleep 2
	(cd "$work" && PGOPTIONS="-c gpusort.device=$small_device" pgbench -n -c "$small_clients" -j 8 -T $((seconds - 4)) \
		-l --log-prefix=fair -f small.sql >small1.out 2>&1 || true)
	wait "$big"
	after=$(jobs)
fi

# 2. timeout storm
if wanted storm; then
	q -c "ALTER SYSTEM SET gpusort.server_job_timeout = '1s'" -c "SELECT pg_reload_conf()" >/dev/null
	restarts=$(q -c "SELECT restarts FROM gpusort_gpu_process()")
	(cd "$work" && PGOPTIONS="-c gpusort.device=gpu" pgbench -n -c 1 -T "$seconds" -f storm.sql >storm.out 2>&1 || true) &
	storm=$!
	(cd "$work" && PGOPTIONS="-c gpusort.device=gpu" pgbench -n -c "$small_clients" -j 8 -T $((seconds - 2)) \
		-f small.sql >small2.out 2>&1 || true)
	wait "$storm"
	figures=$(q -F ' ' -c "SELECT restarts - $restarts, jobs_timed_out FROM gpusort_gpu_process()")
fi

{
	echo "# GPU server fairness: $(hostname), $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo "-")"
	echo
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /' || true
	echo
	echo "CPU sort of the small array alone, one client, whole statement: $(cat "$work/cpu_ms") ms (median of 21)"
	echo
	if wanted alone || wanted fairness; then
		echo "## 1. $small_clients clients sort and check 10^5 int4: alone on the CPU, and under auto beside $big_clients sorting 3*10^7 float8"
		echo
		echo "| shape | small sorts | p50 ms | p99 ms | failed | jobs done, failed on the server (before -> after) |"
		echo "| --- | --- | --- | --- | --- | --- |"
		wanted alone &&
			echo "| alone, gpusort.device = cpu | $(field "number of transactions actually processed" "$work/small0.out") | $(pct 50 "$work"/alone*) | $(pct 99 "$work"/alone*) | $(field "number of failed transactions" "$work/small0.out") | - |"
		wanted fairness &&
			echo "| beside the big sorts, $small_device | $(field "number of transactions actually processed" "$work/small1.out") | $(pct 50 "$work"/fair*) | $(pct 99 "$work"/fair*) | $(field "number of failed transactions" "$work/small1.out") | $before -> $after |"
		echo
		wanted fairness && echo "big clients: $(grep -E "processed|tps" "$work/big1.out" | tr '\n' ' ')" && echo
	fi
	if wanted storm; then
		echo "## 2. timeout storm: one client's sorts all past a 1 s timeout, $small_clients clients under gpu"
		echo
		echo "| small transactions | failed | aborted clients | GPU process restarts | jobs timed out |"
		echo "| --- | --- | --- | --- | --- |"
		echo "| $(field "number of transactions actually processed" "$work/small2.out") | $(field "number of failed transactions" "$work/small2.out") | $(grep -c "aborted" "$work/small2.out" || true) | ${figures% *} | ${figures#* } |"
		echo
		echo "storm client: $(grep -E "processed|failed" "$work/storm.out" | tr '\n' ' ')"
	fi
	# a client that pgbench aborted, with its error
	for f in small0 small1 big1 storm small2; do
		if grep -qE "aborted|ERROR" "$work/$f.out"; then
			echo
			echo "$f: pgbench's errors (first 5):"
			echo
			grep -E "aborted|ERROR|FATAL" "$work/$f.out" | head -n 5 | sed 's/^/    /'
		fi
	done
} | tee "$out"
