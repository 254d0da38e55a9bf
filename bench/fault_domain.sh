#!/bin/bash
# bench/fault_domain.sh: pgbench sorting through the GPU server while the GPU process
# is killed and hung, in server mode.
#
#   bash bench/fault_domain.sh [--device auto|gpu] [--clients 64] [--seconds 60]
#                              [--timeout-ms 1000] [--stand-in] [--out FILE]
#
# --stand-in: the CPU stands in for a GPU in the GPU process (a test build's
# gpusort.server_cpu_device), so that the process exists, sorts and dies the
# same way on a machine without one.
#
# Each transaction sorts a stored 10^5-element int4 array and checks it against
# intarray's sort.  Under auto the statement is the check itself (a wrong answer is a
# division by zero, which aborts the client); under gpu a PL/pgSQL wrapper records each
# error's SQLSTATE in a table and goes on, so that the failures can be counted.
# Twelve events, spread over the run: SIGKILL five times, SIGSEGV three, SIGABRT two
# (of the GPU process), and two hung jobs (the test build's 'hang' injection: a kernel
# that never returns, ended by gpusort.server_job_timeout).  After each, the time until
# a new GPU process is ready and a GPU sort succeeds (from the kill; for a hang, from the
# server's kill, when the restart count moves).
# Reports: transactions, tps, aborted clients, wrong answers, errors by SQLSTATE, the
# PostgreSQL processes terminated by a signal (the postmaster's log), the GPU process
# exits the server logged (one line each, tallied by reason), and each event's recovery
# time and whether pgbench still ran when it began (recoveries longer than the gap
# between events move the later ones past the load's end: at 300 clients on an H200,
# with recoveries of 3-7 s under load, 60 s holds about seven events; give 120).
# Needs a test build (INJECTION_POINTS=1) for the hangs; builds and installs like
# scripts/test.sh (GS_PREBUILT=1: prebuilt files).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$GS_ROOT"

device=auto
clients=64
seconds=60
timeout_ms=1000
out=
stand_in=()
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--clients) clients=$2; shift 2 ;;
		--seconds) seconds=$2; shift 2 ;;
		--timeout-ms) timeout_ms=$2; shift 2 ;;
		--stand-in) stand_in=(-c gpusort.server_cpu_device=on); shift ;;
		--out) out=$2; shift 2 ;;
		*) echo "usage: $0 [--device auto|gpu] [--clients N] [--seconds S] [--timeout-ms MS] [--stand-in] [--out FILE]" >&2; exit 2 ;;
	esac
done
out=${out:-/dev/stdout}

gs_ensure_postgres
INJECTION_POINTS=1 gs_build_install
export GS_SERVER_MODE=1
gs_start_cluster -c max_connections=400 -c shared_buffers=1GB -c gpusort.server_job_timeout=${timeout_ms}ms "${stand_in[@]}"
trap gs_stop_cluster EXIT
work=$(mktemp -d /tmp/gpusort-fault-domain.XXXXXX)
chmod 777 "$work"
log=$GS_PGDIR/server.log
now_ms() { date +%s%3N; }
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 "$@"; }

q <<'SQL'
CREATE EXTENSION IF NOT EXISTS gpusort;
CREATE EXTENSION IF NOT EXISTS intarray;
CREATE FUNCTION gpusort_server_inject(text) RETURNS void AS '$libdir/gpusort' LANGUAGE C STRICT;
REVOKE EXECUTE ON FUNCTION gpusort_server_inject(text) FROM PUBLIC;
SELECT setseed(0.25);
CREATE TABLE arr5 AS SELECT array_agg((random() * 2e9 - 1e9)::int4) AS a FROM generate_series(1, 100000);
CREATE TABLE fd_errors (at timestamptz, sqlstate text, message text);
GRANT INSERT ON fd_errors TO PUBLIC;
CREATE FUNCTION fd_check() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 / (gpu_sort(a) = sort(a))::int FROM arr5;
	RETURN 1;
EXCEPTION WHEN others THEN
	INSERT INTO fd_errors VALUES (clock_timestamp(), SQLSTATE, SQLERRM);
	RETURN 0;
END $$;
SQL
if [ "$device" = auto ]; then
	echo "SELECT 1 / (gpu_sort(a) = sort(a))::int FROM arr5;" >"$work/tx.sql"
else
	echo "SELECT fd_check();" >"$work/tx.sql"
fi
chmod 644 "$work/tx.sql"

state() { q -c "SELECT state || ' ' || coalesce(gpu_pid, 0) || ' ' || restarts FROM gpusort_gpu_process()"; }
gpu_sorts() { [ "$(PGOPTIONS='-c gpusort.device=gpu' q -c "SELECT gpu_sort(a) = sort(a) FROM arr5" 2>/dev/null)" = t ]; }

# recovery OLD_PID T0: waits until a GPU process other than OLD_PID is ready and a GPU
# sort succeeds; prints the ms since T0
recovery() {
	local old=$1 t0=$2 s
	for _ in $(seq 1 1000); do
		s=$(state 2>/dev/null) || s=
		set -- $s
		if [ "${1:-}" = ready ] && [ "${2:-0}" != "$old" ] && [ "${2:-0}" != 0 ] && gpu_sorts; then
			echo $(($(now_ms) - t0))
			return 0
		fi
		sleep 0.01
	done
	echo never
}

events=(KILL SEGV hang KILL ABRT SEGV KILL hang ABRT KILL SEGV KILL)
gap_ms=$((seconds * 1000 / (${#events[@]} + 1)))
PGOPTIONS="-c gpusort.device=$device -c gpusort.gpu_min_elements=1000 -c client_min_messages=error" \
	pgbench -n -c "$clients" -j "$(nproc)" -T "$seconds" -f "$work/tx.sql" >"$work/pgbench.out" 2>&1 &
pb=$!
start=$(now_ms)
rows=()
for i in "${!events[@]}"; do
	ev=${events[$i]}
	target=$((start + (i + 1) * gap_ms))
	while [ "$(now_ms)" -lt "$target" ]; do sleep 0.05; done
	set -- $(state)
	old=$2 restarts=$3
	# whether pgbench still runs: an event whose recovery outlasts the gap
	# moves the next ones later, past the load's end when --seconds is short
	if kill -0 "$pb" 2>/dev/null; then load=yes; else load=no; fi
	if [ "$ev" = hang ]; then
		t_inject=$(now_ms)
		q -c "SELECT gpusort_server_inject('hang')" >/dev/null
		# the server's kill: the restart count moves
		for _ in $(seq 1 2000); do
			set -- $(state)
			[ "$3" != "$restarts" ] && break
			sleep 0.005
		done
		t0=$(now_ms)
		ms=$(recovery "$old" "$t0")
		rows+=("| $((i + 1)) | hang (ended after $((t0 - t_inject)) ms) | $old | $load | $ms |")
	else
		t0=$(now_ms)
		kill -"$ev" "$old"
		ms=$(recovery "$old" "$t0")
		rows+=("| $((i + 1)) | SIG$ev | $old | $load | $ms |")
	fi
done
wait "$pb" || true

tx=$(grep -oE "number of transactions actually processed: [0-9]+" "$work/pgbench.out" | grep -oE "[0-9]+$" || echo 0)
failed=$(grep -oE "number of failed transactions: [0-9]+" "$work/pgbench.out" | grep -oE "[0-9]+$" || echo 0)
tps=$(grep -oE "tps = [0-9.]+" "$work/pgbench.out" | head -1 | grep -oE "[0-9.]+" || echo 0)
aborted=$(grep -cE "client [0-9]+ (script [0-9]+ )?aborted" "$work/pgbench.out" || true)
wrong=$(q -c "SELECT count(*) FROM fd_errors WHERE sqlstate = '22012'")
crashes=$(grep -c "terminated by signal" "$log" || true)
# one "starting another" line per exit of the GPU process, its reason before it
exits=$(grep -c "gpusort server: .*; starting another" "$log" || true)
reasons=$(grep -oE "gpusort server: .*; starting another" "$log" |
	sed -E 's/^gpusort server: //; s/; starting another$//; s/(PID|backend) [0-9]+/\1 N/g; s/[0-9]+ ms/N ms/g' |
	sort | uniq -c | sort -rn | awk '{n=$1; $1=""; printf "    %5d %s\n", n, substr($0, 2)}')
{
	echo "## Fault domain: $clients clients, $seconds s, gpusort.device = $device"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo ?), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU')${stand_in:+ (the CPU standing in for a GPU in the GPU process)}, PostgreSQL $(pg_config --version | awk '{print $2}'), gpusort.server_job_timeout = ${timeout_ms} ms"
	echo
	echo "| figure | value |"
	echo "|---|---|"
	echo "| transactions (each a checked sort of 10^5 int4) | $tx ($tps tps) |"
	echo "| aborted clients | $aborted |"
	echo "| failed transactions (pgbench) | $failed |"
	echo "| wrong answers | $wrong |"
	echo "| errors by SQLSTATE (gpu: recorded and gone on) | $(q -c "SELECT coalesce(string_agg(sqlstate || ': ' || n, ', '), 'none') FROM (SELECT sqlstate, count(*) n FROM fd_errors GROUP BY 1 ORDER BY 1) e") |"
	echo "| PostgreSQL processes terminated by a signal (log) | $crashes |"
	echo "| GPU process exits the server logged (restarts) | $exits |"
	echo
	echo "| event | what | GPU process | under load | ms until a new one sorts on the GPU |"
	echo "|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Exits of the GPU process by the reason the server logged:"
	echo
	echo "${reasons:-    none}"
	echo
	echo "Errors (gpu), first 5:"
	echo
	q -c "SELECT '    ' || sqlstate || ' ' || message FROM fd_errors ORDER BY at LIMIT 5"
	echo
	echo "pgbench:"
	echo
	sed 's/^/    /' "$work/pgbench.out" | grep -vE "^    (pgbench|starting|transaction type|scaling|query mode|number of threads|maximum number|duration)" | head -20
} >>"$out"
rm -rf "$work"
