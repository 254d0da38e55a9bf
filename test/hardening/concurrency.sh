#!/bin/bash
# test/hardening/concurrency.sh: many backends sorting at once.
#
#   test/hardening/concurrency.sh [--device cpu|gpu|auto] [--quick] [--clients N] [--seconds S]
#                                 [--max-size N]
#
# pgbench runs N clients for S seconds (defaults 8 and 60; --quick: 4 and 10)
# over stored arrays of all five types, 10^2 .. 10^6 elements (--quick: to
# 10^5), random values with NULLs and float specials, and arrays of ties.  Each
# transaction calls one of gpu_sort (asc, desc), gpu_argsort, gpu_sort_rows,
# gpu_sort_agg (asc, desc) and compares the answer with ORDER BY's, raising on
# a difference (concurrency-setup.sql); any error fails the run.  Figures:
# transactions, tps, latency p50/p99/max from pgbench's per-transaction log,
# and under --device gpu the device memory the backends hold (gpusort_devices()
# sampled each second; nvidia-smi per process where it can see them).
#
# TAP on stdout.  Own throwaway cluster on GS_PGPORT (default 55501) unless
# GS_HARDENING_REUSE_CLUSTER=1 (PGHOST/PGPORT point at a running one).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib.sh"

device=cpu
quick=0
clients=
seconds=
max_n=
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--clients) clients=$2; shift 2 ;;
		--seconds) seconds=$2; shift 2 ;;
		--max-size) max_n=$2; shift 2 ;;
		*) echo "usage: $0 [--device cpu|gpu|auto] [--quick] [--clients N] [--seconds S] [--max-size N]" >&2; exit 2 ;;
	esac
done
if [ "$quick" = 1 ]; then
	clients=${clients:-4} seconds=${seconds:-10} max_n=${max_n:-100000}
else
	clients=${clients:-8} seconds=${seconds:-60} max_n=${max_n:-1000000}
fi

source "$here/tap.bash"

echo "# concurrency: device=$device clients=$clients seconds=$seconds max_size=$max_n"
work=$(mktemp -d /tmp/gpusort-conc.XXXXXX)
if [ "${GS_HARDENING_REUSE_CLUSTER:-0}" != 1 ]; then
	gs_ensure_postgres >/dev/null 2>&1 || { ok 1 "postgres found"; finish; }
	[ -f "$(pg_config --pkglibdir)/gpusort.so" ] || gs_build_install >&2
	GS_PGPORT=${GS_PGPORT:-55501} gs_start_cluster -c max_connections=$((clients + 20)) \
		-c shared_buffers=256MB >&2
	rc=$?
	ok $rc "throwaway cluster started"
	[ $rc = 0 ] || finish
	trap 'gs_stop_cluster; rm -rf "$work"' EXIT
else
	trap 'q -c "DROP TABLE IF EXISTS conc_cases, conc_int2, conc_int4, conc_int8, conc_float4, conc_float8 CASCADE; DROP FUNCTION IF EXISTS conc_check, conc_rotate" >/dev/null 2>&1; rm -rf "$work"' EXIT
fi
server_log=${GS_PGDIR:+$GS_PGDIR/server.log}

# setup runs on the CPU whatever --device says: it computes the expected answers
start=$SECONDS
Q_LIMIT=900 PGOPTIONS="-c gpusort.device=cpu" q -v max_n="$max_n" -f "$here/concurrency-setup.sql" >"$work/setup.out" 2>&1
rc=$?
ok $rc "setup: stored cases and their ORDER BY answers ($(tail -1 "$work/setup.out" | tr '|' ' ' | awk '{print $1 " cases, " $2 " elements"}'), $((SECONDS - start)) s)"
[ $rc = 0 ] || { sed 's/^/# /' "$work/setup.out"; finish; }
ncases=$(q -c "SELECT count(*) FROM conc_cases")

export PGOPTIONS="${PGOPTIONS:-} -c gpusort.device=$device -c statement_timeout=300s"

# the check can fail: a rotated expected answer must raise (on the CPU, so
# that it does not depend on a GPU being there)
big=$(q -c "SELECT id FROM conc_cases WHERE shape = 'random' AND typ = 'int4' ORDER BY n DESC LIMIT 1")
PGOPTIONS="-c gpusort.device=cpu" q -c "SELECT conc_check($big, 0, true)" >"$work/selftest.out" 2>&1
grep -q 'wrong answer' "$work/selftest.out"
ok $? "the check raises on a wrong answer"

# device memory in use (MiB, all devices, every process) now; empty when no GPU
device_used() {
	PGOPTIONS="-c gpusort.device=cpu" q -c "SELECT sum(memory_total_mb - memory_free_mb) FROM gpusort_devices()" 2>/dev/null
}
sampler() {	# every second while pgbench runs: device memory in use, and per process
	while kill -0 "$1" 2>/dev/null; do
		device_used >>"$work/used.samples"
		if command -v nvidia-smi >/dev/null 2>&1; then
			nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits \
				>>"$work/perpid.samples" 2>/dev/null
		fi
		sleep 1
	done
}
used_before=
if [ "$device" != cpu ]; then
	used_before=$(device_used)
fi

threads=$(nproc 2>/dev/null || echo 2)
[ "$threads" -gt "$clients" ] && threads=$clients
mkdir -p "$work/log"
timeout -k 10 $((seconds + 300)) pgbench -n -f "$here/concurrency.pgbench" -D ncases="$ncases" \
	-c "$clients" -j "$threads" -T "$seconds" -l --log-prefix="$work/log/tx" \
	>"$work/pgbench.out" 2>"$work/pgbench.err" &
pgbench_pid=$!
[ "$device" != cpu ] && { sampler $pgbench_pid & sampler_pid=$!; }
wait $pgbench_pid
rc=$?
[ -n "${sampler_pid:-}" ] && wait "$sampler_pid"
sed 's/^/# pgbench: /' "$work/pgbench.out"
grep -v '^$' "$work/pgbench.err" | head -20 | sed 's/^/# pgbench stderr: /'
ok $rc "pgbench ran $clients clients for $seconds s and exited 0 (rc $rc)"

aborted=$(grep -c 'aborted' "$work/pgbench.err")
errors=$(grep -cE 'ERROR|FATAL|wrong answer' "$work/pgbench.err")
failed_tx=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/pgbench.out")
ok $([ "$aborted" = 0 ] && [ "$errors" = 0 ] && [ "${failed_tx:-0}" = 0 ]; echo $?) \
	"zero errors: $aborted clients aborted, $errors error lines, ${failed_tx:-?} failed transactions"

# per-transaction log lines: client tx_no latency_us script epoch_s epoch_us
cat "$work"/log/tx* 2>/dev/null | awk '$3 ~ /^[0-9]+$/ {print $3}' | sort -n >"$work/lat"
count=$(wc -l <"$work/lat")
clients_seen=$(cat "$work"/log/tx* 2>/dev/null | awk '{print $1}' | sort -u | wc -l)
ok $([ "$count" -gt 0 ] && [ "$clients_seen" = "$clients" ]; echo $?) \
	"every client completed transactions ($clients_seen of $clients clients, $count transactions checked)"
pct() { awk -v p="$1" '{v[NR] = $1} END {if (NR == 0) {print "nan"; exit}; i = int(NR * p + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; printf "%.1f", v[i] / 1000}' "$work/lat"; }
tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$work/pgbench.out")
figure concurrency_clients "$clients" clients
figure concurrency_seconds "$seconds" s
figure concurrency_transactions "$count" transactions
figure concurrency_tps "${tps:-0}" tx/s
figure concurrency_latency_p50 "$(pct 0.50)" ms
figure concurrency_latency_p99 "$(pct 0.99)" ms
figure concurrency_latency_max "$(pct 1.0)" ms

if [ "$device" != cpu ]; then
	if [ -n "$used_before" ] && [ -s "$work/used.samples" ]; then
		used_max=$(sort -n "$work/used.samples" | tail -1)
		[ "$used_max" = 0 ] && echo "# gpusort_devices() shows no memory in use: without NVML it reports free = total, so the figures below say nothing"
		figure device_used_before "$used_before" MiB
		figure device_used_max_during "$used_max" MiB
		figure device_held_per_backend "$(( (used_max - used_before) / clients ))" MiB
		# the backends have gone: their device memory must come back (the
		# driver frees a context at process exit; wait up to 20 s for it)
		for _ in $(seq 20); do
			used_after=$(device_used)
			[ $((used_after - used_before)) -le 64 ] && break
			sleep 1
		done
		figure device_used_after "$used_after" MiB
		ok $([ $((used_after - used_before)) -le 64 ]; echo $?) \
			"device memory back after the backends exit (before $used_before MiB, after $used_after MiB, tolerance 64 MiB)"
	else
		echo "# no device memory figures: gpusort_devices() shows no device"
	fi
	if [ -s "$work/perpid.samples" ]; then
		figure device_held_per_process_max "$(awk -F', *' '{if ($2 > m) m = $2} END {print m + 0}' "$work/perpid.samples")" MiB
		figure device_processes_max "$(awk -F', *' 'NF >= 2 {print $1}' "$work/perpid.samples" | sort -u | wc -l)" processes
	fi
fi

if [ -n "$server_log" ] && [ -f "$server_log" ]; then
	grep -E 'terminated by signal|PANIC|was terminated|server process .* exited' "$server_log" | head -5 | sed 's/^/# server: /'
	! grep -qE 'terminated by signal|PANIC|server process .* exited with exit code [^0]' "$server_log"
	ok $? "no backend crashed (server log)"
fi
finish
