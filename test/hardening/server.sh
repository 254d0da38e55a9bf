#!/bin/bash
# test/hardening/server.sh: the GPU server (server mode) when things go wrong.
#
#   test/hardening/server.sh [--device cpu|gpu|auto] [--quick]
#
# In a throwaway cluster with shared_preload_libraries = 'gpusort':
#  1. the server is running and gpusort_info() says server mode; on a machine without a
#     GPU it reports why, and sorts run on the CPU (the rest is then skipped);
#  2. cancel of a running job: statement_timeout during a sort of 5*10^7 int4 gives
#     57014 within the limit below, and the next sort is right;
#  3. cancel of a queued job: with gpusort.server_memory just above one job's need, two
#     sessions sorting in a loop take turns and one waits in the queue; pg_cancel_backend
#     ends the one that was queued then, within the limit; the other's sorts are right, and
#     the queue is empty afterwards;
#  4. the server process stopped (SIGTERM) while a session sorts: the job in flight fails
#     (device = gpu: 58000) or, withdrawn by the stopping server, is submitted again and
#     waits for the next server; the postmaster starts the server again and a GPU sort is
#     right again, with the time it took;
#  5. the server process killed (SIGKILL): PostgreSQL restarts every session (as for any
#     crashed process attached to shared memory); a new session's GPU sort is right, with
#     the time until it was;
#  6. one GPU process whatever the sessions: 32 sessions sort at once and nvidia-smi lists
#     one process.
# TAP on stdout; "# figure:" lines carry the times.
set -uo pipefail
device=gpu
quick=0
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		*) echo "usage: $0 [--device cpu|gpu|auto] [--quick]" >&2; exit 2 ;;
	esac
done
limit_ms=50
[ "$quick" = 1 ] && limit_ms=1000		# a loaded 2-core machine with no GPU

HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib.sh"
cd "$GS_ROOT"
source "$HERE/tap.bash"
export GS_SERVER_MODE=1
own_cluster 55580 -c shared_buffers=512MB -c max_connections=100
trap 'gs_stop_cluster' EXIT

now_ms() { date +%s%3N; }
server_pid() { q -c "SELECT pid FROM gpusort_server() LIMIT 1"; }

q -c "CREATE EXTENSION IF NOT EXISTS gpusort; ALTER EXTENSION gpusort UPDATE" >/dev/null 2>&1
mode=$(q -c "SELECT mode FROM gpusort_info()")
[ "$mode" = server ]
ok $? "gpusort_info() says server mode ($mode)"
state=$(q -c "SELECT state FROM gpusort_server() LIMIT 1")
usable=$(q -c "SELECT gpu_usable FROM gpusort_info()")
pid=$(server_pid)
[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
ok $? "the server process runs (pid $pid, state $state)"

q <<-'SQL' >/dev/null
	CREATE TABLE IF NOT EXISTS srv (n text PRIMARY KEY, a int4[]);
	INSERT INTO srv SELECT 'big', array_agg(((i::int8 * 2654435761) % 4294967291 - 2147483645)::int4)
		FROM generate_series(1, 50000000) i ON CONFLICT DO NOTHING;
	INSERT INTO srv SELECT 'mid', array_agg(((i::int8 * 48271) % 2147483647)::int4)
		FROM generate_series(1, 1000000) i ON CONFLICT DO NOTHING;
	ALTER TABLE srv ALTER COLUMN a SET STORAGE EXTERNAL;
SQL
right() {	# right NAME [PGOPTIONS]: the GPU's (or CPU's) answer equals ORDER BY's on srv.NAME
	PGOPTIONS="${2:--c gpusort.device=$device}" q -c "SELECT gpu_sort(a) = (SELECT array_agg(v ORDER BY v) FROM unnest(a) v) FROM srv WHERE n = '$1'"
}

if [ "$usable" != t ]; then
	reason=$(q -c "SELECT reason FROM gpusort_server() LIMIT 1")
	[ "$state" = "no gpu" ] && [ -n "$reason" ]
	ok $? "no GPU: the server says why ($reason)"
	[ "$(right mid '-c gpusort.device=auto')" = t ]
	ok $? "no GPU: auto sorts on the CPU, right"
	PGOPTIONS="-c gpusort.device=gpu" q -c "SELECT gpu_sort(a) FROM srv WHERE n = 'mid'" >/dev/null 2>&1
	[ $? -ne 0 ]
	ok $? "no GPU: device = gpu is an error"
	for t in "cancel of a running job" "cancel of a queued job" "server stopped" "server killed" "one GPU process"; do
		skip "$t: no GPU"
	done
	finish
fi

# 2. cancel of a running job
[ "$(right big)" = t ]
ok $? "a sort of 5*10^7 int4 on the GPU is right"
ms=$(PGOPTIONS="-c gpusort.device=$device" q -c "SELECT cardinality(gpu_sort(a)) FROM srv WHERE n = 'big'" -c "SELECT round(total_ms::numeric, 2) FROM gpusort_last_run()" | tail -1)
figure "sort of 5*10^7 int4 in the function" "$ms" ms
out=$(PGOPTIONS="-c gpusort.device=$device -c statement_timeout=$(awk -v m="$ms" 'BEGIN {printf "%d", m / 2 + 1}')" \
	psql -X -At -c "\\timing on" -c "SELECT cardinality(gpu_sort(a)) FROM srv WHERE n = 'big'" 2>&1)
took=$(echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
echo "$out" | grep -q "canceling statement due to statement timeout"
ok $? "statement_timeout during the sort: 57014"
figure "statement_timeout at half the sort: statement time" "$took" ms
[ "$(right mid)" = t ]
ok $? "the next sort is right"

# 3. cancel of a queued job: a budget that holds one big job at a time
need=$(PGOPTIONS="-c gpusort.device=$device" q -c "SELECT cardinality(gpu_sort(a)) FROM srv WHERE n = 'big'" -c "SELECT ceil(device_memory_mb * 1.5)::int FROM gpusort_last_run()" | tail -1)
q -c "ALTER SYSTEM SET gpusort.server_memory = '${need}MB'" -c "SELECT pg_reload_conf()" >/dev/null
sleep 1
budget=$(q -c "SELECT round(memory_budget_mb)::int FROM gpusort_server() LIMIT 1")
[ "$budget" = "$need" ]
ok $? "gpusort.server_memory reloaded: budget $budget MB"
( PGAPPNAME=srv_first PGOPTIONS="-c gpusort.device=$device" q -c \
	"SELECT sum(cardinality(gpu_sort(a))) FROM srv, generate_series(1, 20) WHERE n = 'big'" >"$GS_PGDIR/first.out" 2>&1 ) &
first=$!
for _ in $(seq 1 500); do
	[ "$(q -c "SELECT jobs_running FROM gpusort_server() LIMIT 1")" = 1 ] && break
	sleep 0.005
done
( PGAPPNAME=srv_queued PGOPTIONS="-c gpusort.device=$device" psql -X -At -c "\\timing on" \
	-c "SELECT sum(cardinality(gpu_sort(a))) FROM srv, generate_series(1, 20) WHERE n = 'big'" >"$GS_PGDIR/queued.out" 2>&1 ) &
queued=$!
# the budget holds one job: whenever both sessions have one, one of them waits.
# On a fast GPU a job holds the budget for a few ms of each ~100 ms loop (the
# rest is reading the array), so one session watches gpusort_server() every
# millisecond rather than a new psql every few
qd=$(q -c "CREATE FUNCTION pg_temp.srv_wait_queued(ms int) RETURNS int LANGUAGE plpgsql AS \$\$
DECLARE
	n int := 0;
	t0 timestamptz := clock_timestamp();
BEGIN
	WHILE n < 1 AND clock_timestamp() < t0 + ms * interval '1 ms' LOOP
		SELECT jobs_queued INTO n FROM gpusort_server() LIMIT 1;
		IF n < 1 THEN
			PERFORM pg_sleep(0.0005);
		END IF;
	END LOOP;
	RETURN n;
END \$\$" -c "SELECT pg_temp.srv_wait_queued(10000)" | tail -1)
[ "${qd:-0}" -ge 1 ]
ok $? "with a budget for one job, a second session's job waits in the queue ($qd queued)"
t0=$(now_ms)
q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'srv_queued'" >/dev/null
wait "$queued"
t1=$(now_ms)
grep -q "canceling statement due to user request" "$GS_PGDIR/queued.out"
ok $? "pg_cancel_backend of the second session: 57014"
figure "cancel of a queued job" "$((t1 - t0))" ms
[ $((t1 - t0)) -le $((limit_ms + 100)) ]
ok $? "cancelled within $((limit_ms + 100)) ms of pg_cancel_backend, psql's exit included ($((t1 - t0)) ms)"
wait "$first"
[ "$(cat "$GS_PGDIR/first.out")" = 1000000000 ]
ok $? "the other session's 20 sorts complete ($(head -c 80 "$GS_PGDIR/first.out"))"
sleep 0.2
[ "$(q -c "SELECT jobs_queued + jobs_running FROM gpusort_server() LIMIT 1")" = 0 ]
ok $? "nothing left queued or running"
q -c "ALTER SYSTEM RESET gpusort.server_memory" -c "SELECT pg_reload_conf()" >/dev/null

# 4. the server stopped with SIGTERM mid-sort
pid=$(server_pid)
( PGOPTIONS="-c gpusort.device=gpu" q -c "SELECT sum(cardinality(gpu_sort(a))) FROM srv, generate_series(1, 30) WHERE n = 'big'" >"$GS_PGDIR/term.out" 2>&1 ) &
victim=$!
sleep 0.5
kill -TERM "$pid"
t0=$(now_ms)
wait "$victim"
# the job in flight fails (58000) or, withdrawn by the stopping server, waits for the next one
grep -qE "the GPU sort failed|the GPU process ended while sorting" "$GS_PGDIR/term.out" || [ "$(cat "$GS_PGDIR/term.out")" = 1500000000 ]
ok $? "sorts when the server stops: an error naming it, or the statement's 30 sorts right after the restart ($(head -c 160 "$GS_PGDIR/term.out" | tr '\n' ' '))"
back=
for _ in $(seq 1 300); do
	if [ "$(q -c "SELECT state FROM gpusort_server() LIMIT 1")" = ready ] && [ "$(server_pid)" != "$pid" ]; then
		back=$(( $(now_ms) - t0 )); break
	fi
	sleep 0.05
done
[ -n "$back" ]
ok $? "the postmaster started the server again (after ${back:-?} ms)"
figure "server restarted after SIGTERM" "${back:-0}" ms
[ "$(right mid)" = t ]
ok $? "a GPU sort after the restart is right"
[ "$(right mid '-c gpusort.device=auto')" = t ]
ok $? "auto after the restart is right"

# 5. the server killed with SIGKILL: every session restarts
pid=$(server_pid)
kill -KILL "$pid"
t0=$(now_ms)
back=
for _ in $(seq 1 600); do
	if [ "$(PGOPTIONS="-c gpusort.device=gpu" q -c "SELECT gpu_sort('{3,1,2}'::int4[]) = '{1,2,3}' AND (SELECT state FROM gpusort_server() LIMIT 1) = 'ready'" 2>/dev/null)" = t ]; then
		back=$(( $(now_ms) - t0 )); break
	fi
	sleep 0.05
done
[ -n "$back" ]
ok $? "after SIGKILL of the server, a new session sorts on the GPU (after ${back:-?} ms)"
figure "GPU sorting again after SIGKILL of the server" "${back:-0}" ms
[ "$(right mid)" = t ]
ok $? "and its sort is right"

# 6. one GPU process for many sessions
if command -v nvidia-smi >/dev/null 2>&1; then
	for i in $(seq 1 32); do
		PGOPTIONS="-c gpusort.device=gpu" q -c "SELECT count(*) FROM generate_series(1, 20), LATERAL (SELECT cardinality(gpu_sort(a)) FROM srv WHERE n = 'mid') s" >/dev/null 2>&1 &
	done
	sleep 1
	procs=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)
	wait
	[ "$procs" = 1 ]
	ok $? "32 sessions sorting at once: $procs GPU process(es)"
else
	skip "one GPU process: no nvidia-smi"
fi
finish
