#!/bin/bash
# test/hardening/lifecycle.sh: the GPU server's jobs when their backends withdraw and
# the server ends, at every stage of a job.
#
#   test/hardening/lifecycle.sh [--device cpu|gpu|auto] [--quick] [--rounds R] [--elements N]
#
# Needs a test build (make INJECTION_POINTS=1): its injection points hold the
# server's jobs at one stage (gpusort_server_inject and gpusort_server_held, which
# this test creates; a release build has neither, and the test is then skipped).
# With --device cpu the CPU stands in for a GPU in the server's worker threads
# (gpusort.server_cpu_device), so that jobs pass through the same stages on a
# machine without one; gpu and auto sort on the real GPU.
#
# In a throwaway cluster in server mode, each round takes every stage in turn
# (queued, copy-in, running, copy-out):
#  1. the stage is armed and two sessions, A and B, sort a stored int4 array of N
#     elements (default 9*10^6: more than the transfer ring holds, so that copy-in
#     waits for the ring; --quick 2.5*10^6) with gpusort.device = gpu; both jobs are
#     held at the stage;
#  2. A withdraws: pg_cancel_backend (57014) or pg_terminate_backend;
#  3. B's backend is stopped (SIGSTOP), so that it collects its job only once the
#     next server has started;
#  4. the server ends (SIGTERM), or its GPU process does (its error exit, as when a
#     CUDA error breaks a context); over two rounds each stage sees both ways to
#     withdraw and to end;
#  5. once a new GPU process is ready, B goes on (SIGCONT): its statement is right
#     (the job sent again) or fails naming the stopped server or GPU process;
#  6. gpusort_server() shows no job running or queued, no transfer area and no
#     device memory in use.
# Then a new sort is right, and a fast shutdown stops the server at LOG level, as each
# SIGTERM of the rounds did: no FATAL of it in the server log.  20 rounds; --quick: 1
# (every way to withdraw and end once).
# TAP on stdout.  Own throwaway cluster on GS_PGPORT (default 55590).
set -uo pipefail
device=gpu
quick=0
rounds=
elements=
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--rounds) rounds=$2; shift 2 ;;
		--elements) elements=$2; shift 2 ;;
		*) echo "usage: $0 [--device cpu|gpu|auto] [--quick] [--rounds R] [--elements N]" >&2; exit 2 ;;
	esac
done
if [ "$quick" = 1 ]; then
	rounds=${rounds:-1} elements=${elements:-2500000}
else
	rounds=${rounds:-20} elements=${elements:-9000000}
fi

HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib.sh"
cd "$GS_ROOT"
source "$HERE/tap.bash"
export GS_SERVER_MODE=1
stand_in=()
[ "$device" = cpu ] && stand_in=(-c gpusort.server_cpu_device=on)
own_cluster 55590 -c shared_buffers=256MB "${stand_in[@]}"
work=$(mktemp -d /tmp/gpusort-lifecycle.XXXXXX)
chmod 755 "$work"
bg=()
cleanup() {
	local p
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "${b_pid:-}" ] && kill -CONT "$b_pid" 2>/dev/null
	gs_stop_cluster
	rm -rf "$work"
}
trap cleanup EXIT

echo "# lifecycle: device=$device rounds=$rounds elements=$elements"
q -c "CREATE EXTENSION IF NOT EXISTS gpusort" >/dev/null
if ! q -c "CREATE FUNCTION gpusort_server_inject(text) RETURNS void AS '\$libdir/gpusort' LANGUAGE C STRICT" \
	-c "CREATE FUNCTION gpusort_server_held() RETURNS int AS '\$libdir/gpusort' LANGUAGE C" \
	-c "REVOKE EXECUTE ON FUNCTION gpusort_server_inject(text), gpusort_server_held() FROM PUBLIC" >"$work/create.out" 2>&1; then
	sed 's/^/# /' "$work/create.out"
	skip "the server's injection points: not a test build (make INJECTION_POINTS=1)"
	finish
fi

server_row() { q -c "SELECT $1 FROM gpusort_server() LIMIT 1"; }
state=$(server_row state)
if [ "$state" != ready ]; then
	skip "the server has no device ($(server_row reason)); --device cpu lets the CPU stand in"
	finish
fi
pass "the server is ready on $(server_row name)"

Q_LIMIT=600 PGOPTIONS="-c gpusort.enable_sort=off" q >"$work/setup.out" 2>&1 <<-SQL
	CREATE UNLOGGED TABLE lc (a int4[], s int4[]);
	ALTER TABLE lc ALTER COLUMN a SET STORAGE EXTERNAL, ALTER COLUMN s SET STORAGE EXTERNAL;
	INSERT INTO lc(a) SELECT array_agg(((i::int8 * 2654435761) % 4294967291 - 2147483645)::int4)
		FROM generate_series(1, $elements) i;
	UPDATE lc SET s = (SELECT array_agg(v ORDER BY v) FROM unnest(a) v);
SQL
rc=$?
ok $rc "setup: an int4 array of $elements elements and PostgreSQL's ORDER BY of it"
[ $rc = 0 ] || { sed 's/^/# /' "$work/setup.out"; finish; }

sort_sql="SELECT gpu_sort(a) = s FROM lc"

# waits (up to 60 s) until COMMAND prints WANT; false if it never does
wait_for() {
	local want=$1 got=
	shift
	for _ in $(seq 1 1200); do
		got=$("$@" 2>/dev/null)
		[ "$got" = "$want" ] && return 0
		sleep 0.05
	done
	return 1
}
held() { q -c "SELECT gpusort_server_held()"; }
server_restarted() {	# prints t once a GPU process other than $1 is ready
	q -c "SELECT gpu_pid <> $1 AND state = 'ready' FROM gpusort_gpu_process()"
}
in_use() {	# jobs running and queued, device memory and transfer area in use (MB)
	q -F ' ' -c "SELECT sum(jobs_running), max(jobs_queued), round(sum(memory_reserved_mb)::numeric, 1),
		round(max(transfer_used_mb)::numeric, 1) FROM gpusort_server()"
}

# one_stage ROUND STAGE INDEX: one pass of steps 1-6 at STAGE; false when something is
# wrong.  Over two rounds each stage sees both ways to withdraw and both ways to end.
one_stage() {
	local r=$1 stage=$2 i=$3 how=cancel ends=sigterm old old_gpu a b a_pid used problems=
	[ $(((r + i) % 2)) = 0 ] && how=terminate
	[ $(((r + i / 2) % 2)) = 0 ] && ends=error-exit
	old=$(server_row pid)
	old_gpu=$(q -c "SELECT gpu_pid FROM gpusort_gpu_process()")

	q -c "SELECT gpusort_server_inject('$stage')" >/dev/null || return 1
	PGAPPNAME=lc_a PGOPTIONS="-c gpusort.device=gpu" timeout 300 psql -X -At -c "$sort_sql" >"$work/a.out" 2>&1 &
	a=$!
	PGAPPNAME=lc_b PGOPTIONS="-c gpusort.device=gpu" timeout 300 psql -X -At -c "$sort_sql" >"$work/b.out" 2>&1 &
	b=$!
	bg=("$a" "$b")
	wait_for 2 held || problems="$problems only $(held) of 2 jobs reached the stage;"
	read -r a_pid b_pid < <(q -F ' ' -c "SELECT (SELECT pid FROM pg_stat_activity WHERE application_name = 'lc_a' AND state = 'active' ORDER BY backend_start DESC LIMIT 1),
		(SELECT pid FROM pg_stat_activity WHERE application_name = 'lc_b' AND state = 'active' ORDER BY backend_start DESC LIMIT 1)")

	q -c "SELECT pg_${how}_backend($a_pid)" >/dev/null
	wait "$a"
	grep -qE "canceling statement due to user request|terminating connection due to administrator command" "$work/a.out" ||
		problems="$problems A was not withdrawn ($(head -c 200 "$work/a.out" | tr '\n' ' '));"
	kill -STOP "$b_pid"

	if [ "$ends" = sigterm ]; then
		kill -TERM "$old"
	else
		q -c "SELECT gpusort_server_inject('error-exit')" >/dev/null
	fi
	wait_for t server_restarted "$old_gpu" || problems="$problems no new GPU process after $ends;"
	kill -CONT "$b_pid"
	b_pid=
	wait "$b"
	bg=()
	[ "$(cat "$work/b.out")" = t ] || grep -qE "the GPU server stopped while sorting|the GPU process ended while sorting" "$work/b.out" ||
		problems="$problems B neither right nor failed naming the server ($(head -c 200 "$work/b.out" | tr '\n' ' '));"
	used=$(in_use)
	[ "$used" = "0 0 0.0 0.0" ] ||
		problems="$problems in use afterwards (jobs running, queued, memory MB, area MB): $used;"

	if [ -n "$problems" ]; then
		fail "round $r, $stage: A withdrawn ($how), server ended ($ends):$problems"
		return 1
	fi
	echo "# round $r, $stage: A withdrawn ($how), server ended ($ends), B's answer $(head -c 80 "$work/b.out" | tr '\n' ' ')"
	return 0
}

stages=(queued copy-in running copy-out)
bad=0
for r in $(seq 1 "$rounds"); do
	for i in "${!stages[@]}"; do
		one_stage "$r" "${stages[$i]}" "$i" || { bad=1; break 2; }
	done
done
[ "$bad" = 0 ] && pass "$rounds rounds: a job withdrawn at each stage, then the server ended; nothing left in use"

got=$(in_use)
[ "$got" = "0 0 0.0 0.0" ]
ok $? "gpusort_server() at the end: jobs running, queued, memory MB, area MB: $got"
got=$(PGOPTIONS="-c gpusort.device=gpu" Q_LIMIT=120 q -c "$sort_sql" -c "SELECT device FROM gpusort_last_run()" 2>&1 | tr '\n' ' ')
[ "$got" = "t gpu:0 " ]
ok $? "a new sort on the server is right (right, device: $got)"

# A server that ends on SIGTERM (the rounds' and the fast shutdown's) logs it at LOG,
# never FATAL "terminating background worker".
pid=$(server_row pid)
"${GS_RUN[@]}" pg_ctl -D "$GS_PGDIR/data" -m fast -w stop >/dev/null 2>&1
ok $? "pg_ctl stop -m fast"
grep -qE "\[$pid\] LOG: +gpusort GPU server shutting down" "$GS_PGDIR/server.log"
ok $? "the server (pid $pid) logged its stop at LOG"
got=$(grep -m1 -E 'FATAL: .*gpusort GPU server' "$GS_PGDIR/server.log" | cut -c1-160)
[ -z "$got" ]
ok $? "no FATAL of the GPU server in the server log${got:+: $got}"
finish
