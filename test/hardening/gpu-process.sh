#!/bin/bash
# test/hardening/gpu-process.sh: the GPU process's death is not PostgreSQL's.
#
#   test/hardening/gpu-process.sh [--device cpu|gpu] [--quick]
#
# Needs a test build (make INJECTION_POINTS=1): its injection points hold a job at a
# stage, hang one, or fail the GPU process as a broken context (the test is skipped in
# a release build).  With --device cpu the CPU stands in for a GPU in the GPU process
# (gpusort.server_cpu_device), so that the process exists and dies the same way on a
# machine without one; gpu sorts on the real GPU.
#
# In a throwaway cluster in server mode with gpusort.server_job_timeout = 2s, and a
# bystander session that never sorts:
#  1. the GPU process is a child of the GPU server, shows its own ps title, and
#     gpusort_gpu_process() names it; the server has a pg_stat_activity row, and
#     pg_cancel_backend of it changes nothing;
#  2. SIGKILL, SIGSEGV and SIGABRT of the GPU process while a job is in flight (held
#     at the running stage): under gpusort.device = auto the statement's answer is
#     right (the CPU sorts), under gpu it fails with SQLSTATE 58000 naming the signal;
#     a new GPU process sorts within 2 s; gpusort_gpu_process() counts the restart and
#     names the exit; no memory stays reserved;
#  3. a hung job (a kernel that never returns): the server cancels it after the
#     timeout and, as it does not stop, ends the GPU process 5 s later; auto's answer is
#     right, gpu's error names the timeout;
#  4. a broken context (the GPU process exits as after a CUDA error that leaves a
#     context unusable): the same;
#  4b. SIGFPE (which PostgreSQL's processes turn into an ERROR): the GPU process dies
#     of it, no PostgreSQL code runs in it; a stopped GPU process (SIGSTOP) that holds
#     a job it never started: the job timeout ends it, auto's answer is right; exit() called in it (gdb):
#     PostgreSQL's exit callbacks do not run there, the server keeps its state;
#  5. a GPU process that dies as soon as it is ready: the server backs off, shows
#     'restarting' and why, auto sorts right meanwhile, gpu fails with the reason; it
#     is ready again once left alone;
#  6. load: 16 sessions (--quick 8) sort and check for 15 s (--quick 8 s) under auto
#     while the GPU process is killed every 1.5 s: no session ends, no answer is wrong;
#  7. PostgreSQL saw none of it: the bystander's backend is the same process, and the
#     log has no "terminated by signal" for any PostgreSQL process;
#  8. SIGTERM of the GPU server: its GPU process ends with it, and the postmaster's new
#     server starts a new one; the bystander lives on;
#  9. SIGKILL of a backend mid-transfer: PostgreSQL restarts every session, as for any
#     backend; afterwards exactly one GPU process runs, the old one is gone, sorts are
#     right.
# Without a device (--device gpu on a host without one) it checks only that the
# server idles, and skips the rest.
# TAP on stdout; "# figure:" lines carry the times.  Own cluster on GS_PGPORT (default 55610).
set -uo pipefail
device=cpu
quick=0
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		*) echo "usage: $0 [--device cpu|gpu] [--quick]" >&2; exit 2 ;;
	esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib.sh"
cd "$GS_ROOT"
source "$HERE/tap.bash"
export GS_SERVER_MODE=1
stand_in=()
[ "$device" = cpu ] && stand_in=(-c gpusort.server_cpu_device=on)
own_cluster 55610 -c shared_buffers=256MB -c max_connections=100 -c gpusort.server_job_timeout=2s "${stand_in[@]}"
work=$(mktemp -d /tmp/gpusort-gpu-process.XXXXXX)
chmod 777 "$work"
bg=()
cleanup() {
	local p
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	gs_stop_cluster
	rm -rf "$work"
}
trap cleanup EXIT
now_ms() { date +%s%3N; }
row() { q -c "SELECT $1 FROM gpusort_gpu_process()"; }

q -c "CREATE EXTENSION IF NOT EXISTS gpusort" || { echo "Bail out! CREATE EXTENSION failed"; exit 1; }
if ! q -c "CREATE FUNCTION gpusort_server_inject(text) RETURNS void AS '\$libdir/gpusort' LANGUAGE C STRICT;
	CREATE FUNCTION gpusort_server_held() RETURNS int AS '\$libdir/gpusort' LANGUAGE C;
	REVOKE EXECUTE ON FUNCTION gpusort_server_inject(text), gpusort_server_held() FROM PUBLIC" 2>/dev/null; then
	skip "a release build: no injection points (make INJECTION_POINTS=1)"
	finish
fi
# the GPU process's first start (its CUDA contexts) takes a second or so
for _ in $(seq 1 600); do [ "$(row state)" != starting ] && break; sleep 0.05; done
state=$(row state)
if [ "$state" != ready ]; then
	# no GPU: the server waits for its latch, it does not poll (100 CPU ticks a second is a spin)
	server=$(row server_pid)
	ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
	sleep 1
	t0=$(ticks)
	sleep 3
	t1=$(ticks)
	[ $((t1 - t0)) -lt 15 ]
	ok $? "with no GPU the server idles ($((t1 - t0)) CPU ticks in 3 s)"
	skip "the server has no device ($(row reason)); --device cpu lets the CPU stand in (test builds)"
	finish
fi
log=$GS_PGDIR/server.log

# a stored int4 array of 2*10^6 elements and its sorted copy, by ORDER BY
q -c "CREATE TABLE gp AS SELECT a, (SELECT array_agg(x ORDER BY x) FROM unnest(a) x) AS s
	FROM (SELECT array_agg((random() * 2e9 - 1e9)::int4) AS a FROM generate_series(1, 2000000)) t" || {
	echo "Bail out! setup failed"
	exit 1
}
sort_sql="SELECT gpu_sort(a) = s FROM gp"

# the bystander: a session that never sorts, alive from start to end
psql -X -At -c "SELECT pg_backend_pid()" -c "SELECT pg_sleep(3600)" >"$work/bystander.out" 2>&1 &
bg+=($!)
for _ in $(seq 1 100); do [ -s "$work/bystander.out" ] && break; sleep 0.05; done
bystander=$(head -1 "$work/bystander.out")

# waits (up to 10 s) until a GPU process other than $1 is ready; prints the ms it took
wait_new_gpu() {
	local old=$1 t0
	t0=$(now_ms)
	for _ in $(seq 1 500); do
		[ "$(q -c "SELECT gpu_pid <> $old AND state = 'ready' FROM gpusort_gpu_process()" 2>/dev/null)" = t ] &&
			{ echo $(($(now_ms) - t0)); return 0; }
		sleep 0.02
	done
	return 1
}
held() { q -c "SELECT gpusort_server_held()"; }
wait_held() {
	for _ in $(seq 1 600); do [ "$(held)" = "$1" ] && return 0; sleep 0.05; done
	return 1
}
in_use() { q -F ' ' -c "SELECT sum(jobs_running), round(sum(memory_reserved_mb)::numeric, 1) FROM gpusort_server()"; }

# 1. who is who
server=$(row server_pid)
gpu=$(row gpu_pid)
[ -n "$gpu" ] && [ "$(ps -o ppid= -p "$gpu" | tr -d ' ')" = "$server" ]
ok $? "the GPU process ($gpu) is a child of the GPU server ($server), not of the postmaster"
ps -o args= -p "$gpu" | grep -q "gpusort GPU process"
ok $? "its ps title: $(ps -o args= -p "$gpu")"
[ "$(q -c "SELECT backend_type FROM pg_stat_activity WHERE pid = $server")" = "gpusort GPU server" ]
ok $? "the GPU server has a pg_stat_activity row ($(q -c "SELECT backend_type || ': ' || coalesce(query, '') FROM pg_stat_activity WHERE pid = $server"))"

# the server has a pg_stat_activity row: a cancel (as a script that cancels
# long-running queries might send) means nothing to it and does not end it
q -c "SELECT pg_cancel_backend($server)" >/dev/null
sleep 0.5
[ "$(row server_pid)" = "$server" ] && [ "$(row gpu_pid)" = "$gpu" ]
ok $? "pg_cancel_backend of the GPU server: the same server ($(row server_pid)) and GPU process ($(row gpu_pid)) go on"

# the statement in flight when the GPU process ends: right under auto, 58000 under gpu
# one_death HOW DEVICE: HOW is a signal name, hang or broken
one_death() {
	local how=$1 dev=$2 old s t0 ms restarts out want problems=
	old=$(row gpu_pid)
	restarts=$(row restarts)
	case $how in
		hang) q -c "SELECT gpusort_server_inject('hang')" >/dev/null ;;
		*) q -c "SELECT gpusort_server_inject('running')" >/dev/null ;;
	esac
	PGOPTIONS="-c gpusort.device=$dev" psql -X -At -v VERBOSITY=verbose -c "$sort_sql" >"$work/job.out" 2>&1 &
	s=$!
	bg+=($s)
	wait_held 1 || problems="$problems the job never reached the stage;"
	t0=$(now_ms)
	case $how in
		hang) ;;
		broken) q -c "SELECT gpusort_server_inject('error-exit')" >/dev/null ;;
		*) kill -"$how" "$old" ;;
	esac
	wait "$s"
	ms=$(wait_new_gpu "$old") || problems="$problems no new GPU process;"
	out=$(tr '\n' ' ' <"$work/job.out")
	if [ "$dev" = auto ]; then
		grep -qx t "$work/job.out" || problems="$problems auto's answer not right ($out);"
	else
		case $how in
			hang) want="server_job_timeout" ;;
			broken) want="CUDA error" ;;
			*) want="signal" ;;
		esac
		grep -q "ERROR:  58000: the GPU process ended while sorting" "$work/job.out" && grep -q "$want" "$work/job.out" ||
			problems="$problems gpu's error not 58000 naming '$want' ($out);"
	fi
	[ "$(row restarts)" = $((restarts + 1)) ] || problems="$problems restarts $(row restarts), not $((restarts + 1));"
	[ "$(in_use)" = "0 0.0" ] || problems="$problems in use afterwards (jobs, MB): $(in_use);"
	q -c "SELECT gpusort_server_inject('none')" >/dev/null
	[ "$(PGOPTIONS="-c gpusort.device=gpu" q -c "$sort_sql")" = t ] || problems="$problems the next GPU sort not right;"
	if [ -n "$problems" ]; then
		fail "$how under $dev:$problems"
	else
		pass "$how of the GPU process under $dev: $( [ "$dev" = auto ] && echo "answer right" || echo "58000"), new GPU process ready after ${ms} ms; last exit: $(row last_exit)"
		figure "gpu_process_${how}_${dev}_ready_ms" "$ms" ms
	fi
}

# 2-4. deaths with a job in flight
for how in KILL SEGV ABRT hang broken; do
	for dev in auto gpu; do
		one_death "$how" "$dev"
	done
done

# a signal PostgreSQL's processes handle (SIGFPE raises an ERROR there) takes its
# default action in the GPU process: it dies of it, and nothing of PostgreSQL runs
gpu=$(row gpu_pid)
kill -FPE "$gpu"
ms=$(wait_new_gpu "$gpu")
last=$(row last_exit)
[[ "$last" == *"signal 8"* ]] && ! grep -qE "PANIC|floating-point exception" "$log"
ok $? "SIGFPE of the GPU process: it dies of the signal, PostgreSQL's handler does not run (${ms:-?} ms; last exit: $last; log: $(grep -E "PANIC|floating-point exception" "$log" | head -2 | tr '\n' ' '))"

# exit() in the GPU process (as a library might call it): PostgreSQL's exit callbacks,
# inherited from the server, must not run there (the server's PGPROC and latch)
if command -v gdb >/dev/null; then
	gpu=$(row gpu_pid)
	server=$(row server_pid)
	# gdb may dump core when its inferior exits inside the call: not in the tree
	(cd "$work" && ulimit -c 0 && timeout 60 gdb -p "$gpu" -batch -ex 'call (void) exit(0)') >"$work/gdb.out" 2>&1
	ms=$(wait_new_gpu "$gpu")
	last=$(row last_exit)
	[[ "$last" == *"called exit()"* ]] && [ "$(row server_pid)" = "$server" ] && ! grep -q "PANIC" "$log" &&
		[ "$(PGOPTIONS="-c gpusort.device=gpu -c statement_timeout=20s" q -c "$sort_sql" 2>&1)" = t ]
	ok $? "exit() in the GPU process: the server keeps its state and sorts (${ms:-?} ms; last exit: $last; server $(row server_pid); log: $(grep PANIC "$log" | head -1))"
else
	skip "exit() in the GPU process: needs gdb"
fi

# a GPU process that stops taking jobs (SIGSTOP, as one wedged outside a job): a job
# handed to it counts as busy from its admission, so the job timeout ends the process
gpu=$(row gpu_pid)
kill -STOP "$gpu"
out=$(PGOPTIONS="-c gpusort.device=auto -c statement_timeout=20s" q -c "$sort_sql" 2>"$work/stop.err")
ms=$(wait_new_gpu "$gpu")
last=$(row last_exit)
kill -CONT "$gpu" 2>/dev/null
[ "$out" = t ] && [[ "$last" == *server_job_timeout* ]]
ok $? "a stopped GPU process: auto's answer is right, the job timeout ended it (${ms:-?} ms; ${out:-$(tr "\n" " " <"$work/stop.err")}; last exit: $last)"

# 5. a GPU process that dies as soon as it starts, four times: the server backs off.
# One session watches gpusort_server() every 5 ms while the shell kills each new GPU
# process the moment it appears.
server=$(row server_pid)
q -c "DO \$\$
	DECLARE r text; t timestamptz := clock_timestamp();
	BEGIN
		WHILE clock_timestamp() < t + interval '8 s' LOOP
			SELECT reason INTO r FROM gpusort_server() WHERE state = 'restarting' LIMIT 1;
			EXIT WHEN r IS NOT NULL;
			PERFORM pg_sleep(0.005);
		END LOOP;
		RAISE NOTICE 'restarting: %', r;
	END \$\$" >"$work/watch.out" 2>&1 &
watcher=$!
bg+=($watcher)
sleep 0.3
last=
kills=0
for _ in $(seq 1 4000); do
	p=$(pgrep -P "$server" -f "gpusort GPU process" | head -1)
	if [ -n "$p" ] && [ "$p" != "$last" ]; then
		kill -KILL "$p" && kills=$((kills + 1))
		last=$p
		[ "$kills" = 4 ] && break
	fi
	sleep 0.002
done
wait "$watcher"
seen=$(grep -o "restarting: .*" "$work/watch.out")
grep -q "restarting: the GPU process" "$work/watch.out" && grep -q "starting another in [0-9]* ms" "$log"
ok $? "a GPU process killed as it starts, $kills times: the server backs off (${seen:-$(head -c 200 "$work/watch.out")}; log: $(grep -o "starting another in [0-9]* ms" "$log" | tr '\n' ',' ))"
ms=$(wait_new_gpu 0) && [ "$(PGOPTIONS="-c gpusort.device=gpu" q -c "$sort_sql")" = t ]
ok $? "left alone, it is ready again and sorts right"

# 6. load with kills: no session ends, no answer is wrong
clients=16 secs=15
[ "$quick" = 1 ] && clients=8 secs=8
q -c "CREATE TABLE gp_small AS SELECT a, (SELECT array_agg(x ORDER BY x) FROM unnest(a) x) AS s
	FROM (SELECT array_agg((random() * 2e9 - 1e9)::int4) AS a FROM generate_series(1, 100000)) t"
echo "SELECT 1 / (gpu_sort(a) = s)::int FROM gp_small;" >"$work/load.pgbench"
chmod 644 "$work/load.pgbench"
PGOPTIONS="-c gpusort.device=auto -c gpusort.gpu_min_elements=1000 -c client_min_messages=error" \
	pgbench -n -c "$clients" -j 4 -T "$secs" -f "$work/load.pgbench" >"$work/pgbench.out" 2>&1 &
pb=$!
bg+=($pb)
kills=0
end=$(($(now_ms) + secs * 1000 - 1500))
sigs=(KILL SEGV ABRT)
while [ "$(now_ms)" -lt "$end" ]; do
	sleep 1.5
	p=$(row gpu_pid)
	[ -n "$p" ] && [ "$p" != 0 ] && kill -"${sigs[$((kills % 3))]}" "$p" 2>/dev/null && kills=$((kills + 1))
done
wait "$pb"
failed=$(grep -oE "number of failed transactions: [0-9]+" "$work/pgbench.out" | grep -oE "[0-9]+$")
done_tx=$(grep -oE "number of transactions actually processed: [0-9]+" "$work/pgbench.out" | grep -oE "[0-9]+$")
! grep -qE "aborted|client [0-9]+ script [0-9]+ aborted|ERROR" "$work/pgbench.out" && [ "${failed:-0}" = 0 ] && [ "${done_tx:-0}" -gt 0 ]
ok $? "$clients sessions sorting under auto for $secs s, the GPU process killed $kills times: ${done_tx:-0} transactions, none failed or aborted ($(grep -E "tps|aborted" "$work/pgbench.out" | head -2 | tr '\n' ' '))"
figure gpu_process_load_kills "$kills" kills
figure gpu_process_load_tps "$(grep -oE "tps = [0-9.]+" "$work/pgbench.out" | head -1 | grep -oE "[0-9.]+")" tps

# 7. PostgreSQL saw none of it
[ "$(q -c "SELECT count(*) FROM pg_stat_activity WHERE pid = $bystander")" = 1 ]
ok $? "the bystander session ($bystander) is the same backend"
! grep -q "terminated by signal" "$log"
ok $? "no PostgreSQL process was terminated by a signal (log: $(grep -c "the GPU process" "$log") GPU process exits, $(grep -c "terminated by signal" "$log") crashes)"

# 8. SIGTERM of the GPU server takes its GPU process along
server=$(row server_pid)
gpu=$(row gpu_pid)
kill -TERM "$server"
gone=1
for _ in $(seq 1 100); do kill -0 "$gpu" 2>/dev/null || { gone=0; break; }; sleep 0.02; done
ok $gone "SIGTERM of the GPU server: its GPU process ($gpu) ends with it"
ms=$(wait_new_gpu "$gpu") && [ "$(row server_pid)" != "$server" ] && [ "$(PGOPTIONS="-c gpusort.device=gpu" q -c "$sort_sql")" = t ]
ok $? "a new server and GPU process sort right (${ms:-?} ms)"
[ "$(q -c "SELECT count(*) FROM pg_stat_activity WHERE pid = $bystander")" = 1 ]
ok $? "the bystander lives on"

# 9. SIGKILL of a backend mid-transfer: PostgreSQL's restart, one GPU process after it
gpu=$(row gpu_pid)
q -c "SELECT gpusort_server_inject('copy-in')" >/dev/null
PGAPPNAME=gp_victim PGOPTIONS="-c gpusort.device=gpu" psql -X -At -c "$sort_sql" >"$work/victim.out" 2>&1 &
s=$!
bg+=($s)
wait_held 1
victim=$(q -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'gp_victim'")
kill -KILL "$victim"
wait "$s"
back=1
for _ in $(seq 1 600); do
	[ "$(q -c "SELECT state = 'ready' AND gpu_pid <> $gpu FROM gpusort_gpu_process()" 2>/dev/null)" = t ] && { back=0; break; }
	sleep 0.05
done
ok $back "SIGKILL of a backend mid-transfer: PostgreSQL restarts, and a new GPU process is ready"
# gone, or a zombie its new parent has not reaped yet (it holds nothing then)
old_state=$(ps -o stat= -p "$gpu" 2>/dev/null | tr -d ' ')
[ -z "$old_state" ] || [ "${old_state#Z}" != "$old_state" ]
ok $? "the old GPU process ($gpu) is gone (${old_state:-no such process})"
# (other clusters on this host have GPU processes of their own: only this server's count)
[ "$(pgrep -f "gpusort GPU process" -P "$(row server_pid)" | while read -r p; do ps -o stat= -p "$p"; done | grep -vc Z)" = 1 ]
ok $? "exactly one GPU process runs ($(row gpu_pid)): $(pgrep -af "gpusort GPU process" -P "$(row server_pid)" | tr '\n' ';')"
[ "$(PGOPTIONS="-c gpusort.device=gpu" q -c "$sort_sql")" = t ]
ok $? "a GPU sort after the restart is right"

finish
