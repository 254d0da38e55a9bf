#!/bin/bash
# test/hardening/concurrency-small.sh: many clients sorting small arrays at once
# in server mode, every size, type and algorithm, each answer checked against
# PostgreSQL's own sort.
#
#   test/hardening/concurrency-small.sh [--device gpu|cpu|auto] [--quick]
#       [--clients LIST] [--seconds S] [--max-size N]
#
# A throwaway cluster in server mode (shared_preload_libraries = gpusort) with
# gpusort.gpu_min_elements = 0 and gpusort.device as given (default gpu).  For
# each client count of LIST (default 16,64,300; --quick: 4,16) pgbench runs
# that many clients for S seconds (default 10, a rehearsal; 60 for the real
# run; --quick: 5).  Every transaction takes the next case of one shared
# sequence: an array of 1 .. N elements (default 4096) of one of the eight
# types, sorted ascending or descending or argsorted with one of the five
# gpusort.algorithm settings, and compared with ORDER BY's answer on the same
# array (concurrency-small-setup.sql says how the cases are dealt out: 40 * N
# consecutive cases cover every size, type and algorithm).  Passes: pgbench
# exits 0 with no error and no failed transaction at each client count, every
# client ran, the server ran jobs and gpusort_server() shows no failed job
# (under --device gpu), and no backend crashed.  Each pgbench run is bounded
# (-T S, and a timeout of S + 120 s), so the script stops by itself.
#
# TAP on stdout.  Own cluster on GS_PGPORT (default 55502).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib.sh"

device=gpu
quick=0
clients=
seconds=
max_n=4096
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--clients) clients=$2; shift 2 ;;
		--seconds) seconds=$2; shift 2 ;;
		--max-size) max_n=$2; shift 2 ;;
		*) echo "usage: $0 [--device gpu|cpu|auto] [--quick] [--clients LIST] [--seconds S] [--max-size N]" >&2
		   exit 2 ;;
	esac
done
if [ "$quick" = 1 ]; then
	clients=${clients:-4,16} seconds=${seconds:-5}
else
	clients=${clients:-16,64,300} seconds=${seconds:-10}
fi
IFS=, read -r -a client_list <<<"$clients"
most=0
for c in "${client_list[@]}"; do [ "$c" -gt "$most" ] && most=$c; done

source "$here/tap.bash"
echo "# concurrency-small: device=$device clients=$clients seconds=$seconds max_size=$max_n"
work=$(mktemp -d /tmp/gpusort-conc-small.XXXXXX)
chmod 755 "$work"

gs_ensure_postgres >/dev/null 2>&1 || { fail "postgres found"; finish; }
[ -f "$(pg_config --pkglibdir)/gpusort.so" ] || gs_build_install >&2
export GS_SERVER_MODE=1
GS_PGPORT=${GS_PGPORT:-55502} gs_start_cluster -c max_connections=$((most + 20)) -c shared_buffers=256MB >&2
rc=$?
ok $rc "throwaway cluster started in server mode (max_connections $((most + 20)))"
[ $rc = 0 ] || finish
trap 'gs_stop_cluster; rm -rf "$work"' EXIT
server_log=$GS_PGDIR/server.log

Q_LIMIT=120 q -f "$here/concurrency-small-setup.sql" >"$work/setup.out" 2>&1
ok $? "setup: the checking function"
grep -q ready "$work/setup.out" || { sed 's/^/# /' "$work/setup.out"; finish; }

# the check can fail: a rotated expected answer must raise (on the CPU, so that
# it does not depend on a GPU)
PGOPTIONS="-c gpusort.device=cpu" q -c "SELECT conc_small_check(4096 * 8 + 1, 4096, true)" >"$work/selftest.out" 2>&1
grep -q 'wrong answer' "$work/selftest.out"
ok $? "the check raises on a wrong answer"
PGOPTIONS="-c gpusort.device=cpu" q -c "SELECT sum(conc_small_check(i, 64)) FROM generate_series(0, 64 * 40 - 1) i" \
	>"$work/cpu.out" 2>&1
[ "$(cat "$work/cpu.out")" = $((64 * 40)) ]
ok $? "the check passes every size, type and algorithm on the CPU (sizes 1..64: $(head -c 200 "$work/cpu.out"))"

server_jobs() {	# "done failed" summed over the server's devices
	q -c "SELECT coalesce(sum(jobs_done), 0) || ' ' || coalesce(sum(jobs_failed), 0) FROM gpusort_server()" 2>/dev/null
}
server_state() {
	q -c "SELECT string_agg(coalesce(state, '?') || ' ' || coalesce(name, '') || coalesce(' (' || nullif(reason, '') || ')', ''), '; ') FROM gpusort_server()" 2>/dev/null
}
echo "# server: $(server_state)"

export PGOPTIONS="-c gpusort.device=$device -c gpusort.gpu_min_elements=0 -c statement_timeout=60s"
threads=$(nproc 2>/dev/null || echo 2)
for c in "${client_list[@]}"; do
	read -r done_before failed_before <<<"$(server_jobs)"
	j=$threads
	[ "$j" -gt "$c" ] && j=$c
	rm -rf "$work/log"
	mkdir -p "$work/log"
	timeout -k 10 $((seconds + 120)) pgbench -n -f "$here/concurrency-small.pgbench" -D max_n="$max_n" \
		-c "$c" -j "$j" -T "$seconds" -l --log-prefix="$work/log/tx" \
		>"$work/pgbench.out" 2>"$work/pgbench.err"
	rc=$?
	read -r done_after failed_after <<<"$(server_jobs)"
	cases=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/pgbench.out")
	cases=${cases:-0}
	sed -n 's/^\(tps = .*\|number of failed transactions.*\|number of transactions actually processed.*\)/# pgbench: \1/p' \
		"$work/pgbench.out"
	grep -v '^$' "$work/pgbench.err" | head -10 | sed 's/^/# pgbench stderr: /'
	aborted=$(grep -c 'aborted' "$work/pgbench.err")
	errors=$(grep -cE 'ERROR|FATAL|wrong answer' "$work/pgbench.err")
	failed_tx=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/pgbench.out")
	clients_seen=$(cat "$work"/log/tx* 2>/dev/null | awk '{print $1}' | sort -u | wc -l)
	ok $([ "$rc" = 0 ] && [ "$aborted" = 0 ] && [ "$errors" = 0 ] && [ "${failed_tx:-0}" = 0 ] &&
		[ "$clients_seen" = "$c" ]; echo $?) \
		"$c clients for $seconds s: $cases cases checked ($(awk -v c="$cases" -v n="$max_n" 'BEGIN {printf "%.2f", c / (40 * n)}') passes over every size, type and algorithm), pgbench rc $rc, $aborted clients aborted, $errors error lines, ${failed_tx:-?} failed transactions, $clients_seen of $c clients ran"
	if [ "$device" = gpu ]; then
		jobs=$((done_after + failed_after - done_before - failed_before))
		ok $([ "$jobs" -gt 0 ] && [ "$failed_after" = "$failed_before" ]; echo $?) \
			"$c clients: the server ran $jobs jobs, $((failed_after - failed_before)) failed"
	fi
	figure "small_tps_${c}_clients" "$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$work/pgbench.out" | head -1)" tx/s
done

read -r done_all failed_all <<<"$(server_jobs)"
echo "# server at the end: $(server_state); $done_all jobs done, $failed_all failed"
if [ "$device" = gpu ]; then
	ok $([ "${done_all:-0}" -gt 0 ] && [ "$failed_all" = 0 ]; echo $?) \
		"gpusort_server(): $done_all jobs done, $failed_all failed"
fi
grep -E 'terminated by signal|PANIC|server process .* exited|gpusort server' "$server_log" | head -5 | sed 's/^/# server log: /'
! grep -qE 'terminated by signal|PANIC|server process .* exited with exit code [^0]' "$server_log"
ok $? "no backend crashed (server log)"
finish
