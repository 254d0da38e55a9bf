#!/bin/bash
# test/hardening/fairness.sh: one session cannot fail or stall another's sorts in server mode.
#
#   test/hardening/fairness.sh [--device cpu|gpu] [--quick]
#
# Needs a test build (make INJECTION_POINTS=1): its injection points hold a job at a
# stage (the test is skipped in a release build).  With --device cpu the CPU stands in
# for a GPU in the GPU process (gpusort.server_cpu_device).
#
# In a throwaway cluster in server mode with gpusort.server_job_timeout = 3s (the bystanders'
# sorts take a tenth of that on a busy 2-core machine):
#  1. a job, not the process: an unprivileged session's job held on the GPU past the
#     timeout (a long sort that stops at its next pass when cancelled) is cancelled on
#     its own while two other sessions sort 2*10^6 int4 under gpusort.device = gpu in
#     a loop: under auto its answer is right (the CPU sorts, with a WARNING naming the
#     timeout), under gpu it fails with 58000 naming the timeout; the other sessions'
#     answers are all right, the GPU process is the same one and restarted nothing; no
#     job, memory or transfer area stays in use; under auto the offender's next sort of
#     that size in the same session runs on the CPU (it pays for its timeout), and a new
#     session's, of any role, on the GPU server.
#  2. never wait for a start: the next GPU process's start hangs (an injection point),
#     and the current one is killed: while the new one starts, a sort under auto is right
#     on the CPU and gpusort_server() answers 'starting', each within a statement_timeout
#     of 10 s (they took milliseconds; before, each waited 30 s for the start); a sort
#     under gpu waits for the start, which the server ends after its bound (30 s, with the
#     job timeout at 3 s): it fails naming the bound (the failed start counts toward the
#     back-off, during which gpu's sorts fail); last_exit says why; the next GPU process
#     is ready and sorts right.
#  3. see every death: every descriptor of the GPU process past stderr is close-on-exec;
#     with another process holding the write end of its message pipe (as a helper that
#     CUDA or NVML execs would, were it not close-on-exec), the GPU process is killed:
#     the server sees the death all the same, a new GPU process is ready, a sort under
#     gpu is right, and last_exit names the signal; 10 restarts of the GPU process leave
#     the server's TopMemoryContext no larger (pg_log_backend_memory_contexts).
#  4. small jobs pass a blocked head: with gpusort.server_memory set so that one job of
#     2*10^6 int4 fits beside a small one but not beside another of its size, one such
#     job is held on the GPU (the 'slow' injection) and a second queues for memory; a
#     small sort under gpu then passes it and is right while both wait.  Once the second
#     has waited over a second, nothing passes it: another small sort under gpu stays
#     queued, and one under auto leaves the queue for the CPU (it waited longer than its
#     CPU sort takes) and is right.  When the held job is cancelled, the rest run, right.
#  4b. a worker kept for small jobs: with all but one of the workers held by large jobs
#     (over 32 MB of input or of output) and another large job queued for over a second (an
#     argsort of 32 MB of int2, large by its 64 MB of positions), a small sort under gpu takes the last worker and is right; so does another once the budget
#     (gpusort.server_memory) leaves too little for the queued large job beside the held
#     ones (a job that needs a large one to end passes no aging rule, whatever else it
#     lacks); the queued large job is admitted when a held one ends.  (Before, the queued
#     large job took the last worker, and a small sort under gpu waited behind it; short of
#     memory, it stopped the queue after its second.)
#  5. honest figures: after all of the above gpusort_server() counts no failed job (the
#     jobs cancelled for the timeout and those withdrawn by their backends have counters
#     of their own in gpusort_gpu_process()); a SIGTERM of the GPU server keeps the
#     restart count and last_exit (shared memory outlives the server).
#  6. the back-off counts against the session whose job was in flight: with one session's
#     job held on the GPU the GPU process is killed; that session's sort under auto is
#     right on the CPU, and its next sort, under gpu, is answered at once with the pause
#     named (it does not wait for the new GPU process); another session's sort under gpu
#     is right on the new GPU process, which the server started at once (no back-off).
#  6b. and against the job that ended it, where the GPU process can name one: with one
#     session's job held on the GPU, another session's job kills its worker with SIGSEGV
#     (the 'crash-self' injection, a fault in that job); each one's sort under auto is
#     right on the CPU; then the faulting session's sort under gpu is answered with the
#     pause, and the other's is right on the new GPU process.
#  6c. a fatal signal sent from outside names no job, whichever thread it is sent to: with
#     one session's job held on the GPU, another process sends SIGSEGV to the very worker
#     thread that holds it (tgkill); the sort under auto is right on the CPU, and the
#     server blames every job in flight, naming no fault of a job.
#  6d. a CUDA error that broke the context (the 'break-self' injection: a job fails as with
#     one, finished, and the GPU process exits as for one) beside a held job: both sessions are
#     paused, the one whose job failed with it (it had finished) and the one in flight.
# TAP on stdout.  Own cluster on GS_PGPORT (default 55620).
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
own_cluster 55620 -c shared_buffers=256MB -c max_connections=100 "${stand_in[@]}"
work=$(mktemp -d /tmp/gpusort-fairness.XXXXXX)
chmod 777 "$work"
bg=()
cleanup() {
	local p
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	gs_stop_cluster
	rm -rf "$work"
}
trap cleanup EXIT
row() { q -c "SELECT $1 FROM gpusort_gpu_process()"; }

q -c "CREATE EXTENSION IF NOT EXISTS gpusort" || { echo "Bail out! CREATE EXTENSION failed"; exit 1; }
# in postgresql.auto.conf, not on the command line, so that a section can change it
q -c "ALTER SYSTEM SET gpusort.server_job_timeout = '3s'" -c "SELECT pg_reload_conf()" >/dev/null
if ! q -c "CREATE FUNCTION gpusort_server_inject(text) RETURNS void AS '\$libdir/gpusort' LANGUAGE C STRICT;
	CREATE FUNCTION gpusort_server_held() RETURNS int AS '\$libdir/gpusort' LANGUAGE C;
	REVOKE EXECUTE ON FUNCTION gpusort_server_inject(text), gpusort_server_held() FROM PUBLIC" 2>/dev/null; then
	skip "a release build: no injection points (make INJECTION_POINTS=1)"
	finish
fi
for _ in $(seq 1 600); do [ "$(row state)" != starting ] && break; sleep 0.05; done
if [ "$(row state)" != ready ]; then
	skip "the server has no device ($(row reason)); --device cpu lets the CPU stand in (test builds)"
	finish
fi

# 2*10^6 int4 for the bystanders, 2*10^5 for the offender, each with its sorted copy by ORDER BY
q -c "CREATE TABLE fa AS SELECT n, a, (SELECT array_agg(x ORDER BY x) FROM unnest(a) x) AS s
	FROM (SELECT n, array_agg((random() * 2e9 - 1e9)::int4) AS a
		FROM (VALUES (2000000), (200000)) v(n), LATERAL generate_series(1, n) GROUP BY n) t;
	CREATE ROLE fa_user LOGIN; GRANT SELECT ON fa TO fa_user" >/dev/null || { echo "Bail out! setup failed"; exit 1; }
big="SELECT gpu_sort(a) = s FROM fa WHERE n = 2000000"
small="SELECT gpu_sort(a) = s FROM fa WHERE n = 200000"

held() { q -c "SELECT gpusort_server_held()"; }
wait_held() {
	for _ in $(seq 1 600); do [ "$(held)" = "$1" ] && return 0; sleep 0.05; done
	return 1
}
in_use() { q -F ' ' -c "SELECT sum(jobs_running), max(jobs_queued), round(sum(memory_reserved_mb)::numeric, 1) FROM gpusort_server()"; }

# bystander NAME: sorts the big array under gpu, checked, until $work/stop exists, then once more
bystander() {
	local i=0
	while :; do
		PGOPTIONS="-c gpusort.device=gpu" psql -X -At -c "$big" >"$work/$1.$i" 2>&1
		i=$((i + 1))
		[ -e "$work/stop" ] && [ "$i" -gt 1 ] && break
	done
}

# 1. a job past the timeout is cancelled on its own
one_timeout() {
	local dev=$1 gpu restarts problems= out b1 b2 bad n
	rm -f "$work/stop" "$work"/by*.*
	gpu=$(row gpu_pid)
	restarts=$(row restarts)
	q -c "SELECT gpusort_server_inject('slow')" >/dev/null
	PGOPTIONS="-c gpusort.device=$dev" psql -X -At -U fa_user -v VERBOSITY=verbose -c "$small" \
		-c "SELECT device FROM gpusort_last_run()" -c "$small" -c "SELECT device FROM gpusort_last_run()" >"$work/offender.out" 2>&1 &
	s=$!
	bg+=($s)
	wait_held 1 || problems="$problems the offender's job was never held;"
	bystander by1 &
	b1=$!
	bystander by2 &
	b2=$!
	bg+=($b1 $b2)
	wait "$s"
	touch "$work/stop"
	wait "$b1" "$b2"
	out=$(tr '\n' ' ' <"$work/offender.out")
	if [ "$dev" = auto ]; then
		[ "$(grep -vE "WARNING|DETAIL|HINT|LOCATION" "$work/offender.out" | tr '\n' ' ')" = "t cpu t cpu " ] &&
			grep -q "WARNING:  58000: GPU sort failed" "$work/offender.out" && grep -q "server_job_timeout" "$work/offender.out" ||
			problems="$problems the offender's answers not right on the CPU with a warning, then on the CPU again ($out);"
	else
		grep -q "ERROR:  58000: the GPU sort ran longer than gpusort.server_job_timeout" "$work/offender.out" ||
			problems="$problems the offender's error not 58000 naming the timeout ($out);"
	fi
	n=$(cat "$work"/by*.* | wc -l)
	bad=$(cat "$work"/by*.* | grep -vx t | sort | uniq -c | head -3 | tr '\n' ' ')
	[ -z "$bad" ] && [ "$n" -gt 2 ] || problems="$problems the bystanders' $n answers not all right ($bad);"
	[ "$(row gpu_pid)" = "$gpu" ] && [ "$(row restarts)" = "$restarts" ] ||
		problems="$problems the GPU process $gpu became $(row gpu_pid), restarts $restarts -> $(row restarts) (last exit: $(row last_exit));"
	[ "$(in_use)" = "0 0 0.0" ] || problems="$problems in use afterwards (jobs running, queued, MB): $(in_use);"
	if [ -n "$problems" ]; then
		fail "a job past the timeout under $dev:$problems"
	else
		pass "a job past the timeout under $dev is cancelled alone: $( [ "$dev" = auto ] && echo "its answer right on the CPU" || echo "58000"), $n bystander sorts right, the same GPU process ($gpu), 0 restarts"
	fi
}
one_timeout auto
one_timeout gpu

# a new session of the offender's, and another role's, sort on the GPU server again
mine=$(q -U fa_user -c "SET gpusort.device = auto" -c "$small" -c "SELECT device FROM gpusort_last_run()" 2>&1 | tr '\n' ' ')
other=$(q -c "SET gpusort.device = auto" -c "$small" -c "SELECT device FROM gpusort_last_run()" 2>&1 | tr '\n' ' ')
[ "$mine" = "t gpu:0 " ] && [ "$other" = "t gpu:0 " ]
ok $? "afterwards a new session of the offender's sorts on the GPU server ($mine), and another role's ($other)"

# 2. never wait for a start
gpu=$(row gpu_pid)
q -c "SELECT gpusort_server_inject('start-hang')" >/dev/null
kill -KILL "$gpu"
for _ in $(seq 1 200); do
	[ "$(q -c "SELECT state = 'starting' AND gpu_pid <> $gpu FROM gpusort_gpu_process()")" = t ] && break
	sleep 0.05
done
hung=$(row gpu_pid)
PGOPTIONS="-c gpusort.device=gpu" psql -X -At -c "$small" >"$work/gpu-start.out" 2>&1 &
s=$!
bg+=($s)
auto=$(PGOPTIONS="-c gpusort.device=auto -c statement_timeout=10s" q -c "$small" -c "SELECT device FROM gpusort_last_run()" 2>&1 | tr '\n' ' ')
state=$(PGOPTIONS="-c statement_timeout=10s" q -c "SELECT state FROM gpusort_server()" 2>&1 | tr '\n' ' ')
still=$(row "state || ' ' || gpu_pid")
[ "$auto" = "t cpu " ] && [ "$state" = "starting " ] && [ "$still" = "starting $hung" ]
ok $? "while the GPU process ($hung) starts: auto sorts on the CPU at once ($auto), gpusort_server() answers at once ($state); still $still"
wait "$s"
last=$(row last_exit)
for _ in $(seq 1 200); do [ "$(row state)" = ready ] && break; sleep 0.05; done
grep -q "had not found its GPUs after 30000 ms" "$work/gpu-start.out" && [[ "$last" == *"had not found its GPUs after 30000 ms"* ]] &&
	[ "$(PGOPTIONS="-c gpusort.device=gpu" q -c "$small")" = t ]
ok $? "a start that hangs is ended after its bound: gpu's sort that waited names it ($(grep -o "ERROR.*" "$work/gpu-start.out")), last exit: $last; the next GPU process sorts right"

# 3. see every death
wait_new_gpu() {	# wait_new_gpu OLD: until a GPU process other than OLD is ready (10 s at most)
	for _ in $(seq 1 500); do
		[ "$(q -c "SELECT gpu_pid <> $1 AND state = 'ready' FROM gpusort_gpu_process()" 2>/dev/null)" = t ] && return 0
		sleep 0.02
	done
	return 1
}
gpu=$(row gpu_pid)
open=
wfd=
for f in /proc/"$gpu"/fdinfo/*; do
	fd=${f##*/}
	[ "$fd" -le 2 ] && continue
	flags=$(awk '/^flags:/ {print $2}' "$f" 2>/dev/null) || continue
	[ -n "$flags" ] || continue
	(( (8#$flags & 8#2000000) == 0 )) && open="$open $fd($(readlink "/proc/$gpu/fd/$fd"))"
	# the message pipe: written here, read by the server
	link=$(readlink "/proc/$gpu/fd/$fd")
	[[ "$link" == pipe:* ]] && (( (8#$flags & 3) == 1 )) &&
		ls -l "/proc/$(row server_pid)/fd" 2>/dev/null | grep -qF "$link" && wfd=$fd
done
[ -z "$open" ]
ok $? "every descriptor of the GPU process ($gpu) past stderr is close-on-exec (not:${open:- none})"
if [ -n "$wfd" ]; then
	exec 7>"/proc/$gpu/fd/$wfd"	# this shell holds the write end from now
	kill -KILL "$gpu"
	wait_new_gpu "$gpu"
	new=$?
	got=$(PGOPTIONS="-c gpusort.device=gpu -c statement_timeout=20s" q -c "$small" 2>&1 | tr '\n' ' ')
	last=$(row last_exit)
	exec 7>&-
	[ "$new" = 0 ] && [ "$got" = "t " ] && [[ "$last" == *"signal 9"* ]]
	ok $? "the GPU process killed while another process holds its message pipe open: a new one is ready ($(row gpu_pid)), gpu sorts right ($got), last exit: $last"
else
	fail "the GPU process ($gpu) has no write end of a pipe to hold"
fi

# the server's TopMemoryContext after one restart and after ten more
log=$GS_PGDIR/server.log
top_used() {	# the server's TopMemoryContext bytes in use, from pg_log_backend_memory_contexts
	local server n
	server=$(row server_pid)
	n=$(grep -c "TopMemoryContext:" "$log")
	q -c "SELECT pg_log_backend_memory_contexts($server)" >/dev/null
	for _ in $(seq 1 100); do [ "$(grep -c "TopMemoryContext:" "$log")" -gt "$n" ] && break; sleep 0.05; done
	grep "TopMemoryContext:" "$log" | tail -1 | grep -oE "[0-9]+ used" | grep -oE "[0-9]+"
}
restart() {	# kills the GPU process once it has been ready for over a second (no back-off)
	local g
	sleep 1.2
	g=$(row gpu_pid)
	kill -KILL "$g"
	wait_new_gpu "$g"
}
restart
before=$(top_used)
for _ in $(seq 1 10); do restart; done
after=$(top_used)
[ -n "$before" ] && [ -n "$after" ] && [ "$after" -le "$before" ]
ok $? "10 restarts of the GPU process: the server's TopMemoryContext uses ${before:-?} bytes before, ${after:-?} after"

# 4. admission: small jobs pass a blocked head, for a while
q -c "ALTER SYSTEM SET gpusort.server_job_timeout = '120s'" -c "SELECT pg_reload_conf()" >/dev/null
q -c "SELECT gpusort_server_inject('slow')" >/dev/null
PGAPPNAME=fa_held PGOPTIONS="-c gpusort.device=gpu" psql -X -At -c "$big" >"$work/held.out" 2>&1 &
held_pid=$!
bg+=($held_pid)
wait_held 1
need=$(q -c "SELECT ceil(sum(memory_reserved_mb)) FROM gpusort_server()")
q -c "ALTER SYSTEM SET gpusort.server_memory = '$((need * 3 / 2))MB'" -c "SELECT pg_reload_conf()" >/dev/null
sleep 0.5
PGOPTIONS="-c gpusort.device=gpu" psql -X -At -c "$big" >"$work/head.out" 2>&1 &
head_pid=$!
bg+=($head_pid)
for _ in $(seq 1 100); do [ "$(q -c "SELECT sum(jobs_queued) FROM gpusort_server()")" = 1 ] && break; sleep 0.05; done
passed=$(PGOPTIONS="-c gpusort.device=gpu -c statement_timeout=20s" q -c "$small" -c "SELECT device FROM gpusort_last_run()" 2>&1 | tr '\n' ' ')
queued=$(q -c "SELECT sum(jobs_queued) FROM gpusort_server()")
[ "$passed" = "t gpu:0 " ] && [ "$queued" = 1 ] && [ "$(held)" = 1 ]
ok $? "a small sort under gpu passes a job queued for memory (${need} MB each, budget $((need * 3 / 2)) MB): $passed; still queued: $queued, held: $(held)"
sleep 1.5
PGOPTIONS="-c gpusort.device=gpu" psql -X -At -c "$small" >"$work/behind.out" 2>&1 &
behind_pid=$!
bg+=($behind_pid)
auto=$(PGOPTIONS="-c gpusort.device=auto -c statement_timeout=20s" q -c "$small" -c "SELECT device FROM gpusort_last_run()" 2>&1 | tr '\n' ' ')
queued=$(q -c "SELECT sum(jobs_queued) FROM gpusort_server()")
[ "$auto" = "t cpu " ] && [ "$queued" = 2 ]
ok $? "once the queued job has waited over a second nothing passes it: a small sort under gpu stays queued ($queued queued), one under auto leaves for the CPU ($auto)"
q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'fa_held'" >/dev/null
wait "$held_pid" "$head_pid" "$behind_pid"
[ "$(cat "$work/head.out")" = t ] && [ "$(cat "$work/behind.out")" = t ] && grep -q "57014\|canceling" "$work/held.out" &&
	[ "$(in_use)" = "0 0 0.0" ]
ok $? "the held job cancelled, the queued ones run right ($(tr '\n' ' ' <"$work/head.out"), $(tr '\n' ' ' <"$work/behind.out")); in use afterwards: $(in_use)"
q -c "ALTER SYSTEM RESET gpusort.server_memory" -c "ALTER SYSTEM SET gpusort.server_job_timeout = '3s'" -c "SELECT pg_reload_conf()" >/dev/null

# 4b. a worker kept for small jobs: large jobs (over 32 MB in or out) hold at most all but one worker
streams=$(q -c "SHOW gpusort.server_streams")
q -c "ALTER SYSTEM SET gpusort.server_job_timeout = '120s'" -c "SELECT pg_reload_conf()" >/dev/null
q -c "CREATE TABLE fl AS SELECT array_agg((random() * 2e9 - 1e9)::int4) AS a FROM generate_series(1, 10000000)" \
	-c "CREATE TABLE fl2 AS SELECT array_agg((random() * 60000 - 30000)::int2) AS a FROM generate_series(1, 16777216)" >/dev/null
large="SELECT cardinality(gpu_sort(a)) FROM fl"
large_pids=()
for k in $(seq 1 $((streams - 1))); do
	q -c "SELECT gpusort_server_inject('slow')" >/dev/null
	PGAPPNAME=fa_large PGOPTIONS="-c gpusort.device=gpu" psql -X -At -c "$large" >"$work/large.$k" 2>&1 &
	large_pids+=($!)
	bg+=($!)
	wait_held "$k"
done
# one more, large by its output: an argsort of 2^24 int2, 32 MB in and 64 MB of positions out
# (given the last worker, held there, it would keep it)
PGAPPNAME=fa_last PGOPTIONS="-c gpusort.device=gpu" psql -X -At -c "SELECT gpusort_server_inject('slow-self')" \
	-c "SELECT cardinality(gpu_argsort(a)) FROM fl2" >"$work/large.last" 2>&1 &
large_pids+=($!)
bg+=($!)
for _ in $(seq 1 200); do
	[ "$(q -c "SELECT sum(jobs_queued) + $(held) FROM gpusort_server()")" = "$streams" ] && break
	sleep 0.05
done
sleep 1.5
passed=$(PGOPTIONS="-c gpusort.device=gpu -c statement_timeout=20s" q -c "$small" -c "SELECT device FROM gpusort_last_run()" 2>&1 | tr '\n' ' ')
queued=$(q -c "SELECT sum(jobs_queued) FROM gpusort_server()")
[ "$passed" = "t gpu:0 " ] && [ "$queued" = 1 ] && [ "$(held)" = $((streams - 1)) ]
ok $? "with $((streams - 1)) large jobs held on $streams workers and another queued for over a second, a small sort under gpu takes the worker kept back: $passed; queued: $queued, held: $(held)"
# the same with too little memory left for the queued large job: it waits for a large job to
# end all the same, and the small sort still takes the worker kept back
reserved=$(q -c "SELECT ceil(sum(memory_reserved_mb)) FROM gpusort_server()")
q -c "ALTER SYSTEM SET gpusort.server_memory = '$((reserved + reserved / (2 * (streams - 1))))MB'" -c "SELECT pg_reload_conf()" >/dev/null
sleep 0.5
passed=$(PGOPTIONS="-c gpusort.device=gpu -c statement_timeout=20s" q -c "$small" -c "SELECT device FROM gpusort_last_run()" 2>&1 | tr '\n' ' ')
queued=$(q -c "SELECT sum(jobs_queued) FROM gpusort_server()")
[ "$passed" = "t gpu:0 " ] && [ "$queued" = 1 ] && [ "$(held)" = $((streams - 1)) ]
ok $? "the same with the queued large job short of memory ($reserved MB held, budget $((reserved + reserved / (2 * (streams - 1)))) MB): $passed; queued: $queued, held: $(held)"
q -c "ALTER SYSTEM RESET gpusort.server_memory" -c "SELECT pg_reload_conf()" >/dev/null
q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'fa_large'" >/dev/null
# the queued one is admitted once a held one ends, and held in turn by its own injection
admitted=1
for _ in $(seq 1 200); do
	[ "$(held)" = 1 ] && [ "$(q -c "SELECT sum(jobs_queued) FROM gpusort_server()")" = 0 ] && admitted=0 && break
	sleep 0.05
done
q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'fa_last'" >/dev/null
wait "${large_pids[@]}"
cancelled=$(cat "$work"/large.* | grep -c "canceling statement")
# the last one's worker lets go of it at its next pass
for _ in $(seq 1 200); do [ "$(in_use)" = "0 0 0.0" ] && break; sleep 0.05; done
[ "$admitted" = 0 ] && [ "$cancelled" = "$streams" ] && [ "$(in_use)" = "0 0 0.0" ]
ok $? "the large jobs cancelled ($cancelled of $streams), the last after it was admitted (admitted: $([ "$admitted" = 0 ] && echo yes || echo no)); in use afterwards: $(in_use)"
q -c "DROP TABLE fl, fl2" -c "ALTER SYSTEM SET gpusort.server_job_timeout = '3s'" -c "SELECT pg_reload_conf()" >/dev/null

# 5. honest figures
figures=$(q -F ' ' -c "SELECT (SELECT sum(jobs_failed) FROM gpusort_server()), jobs_timed_out, jobs_withdrawn > 0 FROM gpusort_gpu_process()")
[ "$figures" = "0 2 t" ]
ok $? "jobs failed, timed out, withdrawn (any): $figures (of jobs that all ended as meant)"
before=$(row "restarts || ' ' || last_exit")
server=$(row server_pid)
kill -TERM "$server"
for _ in $(seq 1 300); do
	[ "$(q -c "SELECT server_pid <> $server AND state = 'ready' FROM gpusort_gpu_process()" 2>/dev/null)" = t ] && break
	sleep 0.05
done
after=$(row "restarts || ' ' || last_exit")
[ -n "$before" ] && [ "$after" = "$before" ] && [ "$(row server_pid)" != "$server" ]
ok $? "a new GPU server ($(row server_pid)) keeps the restart count and last exit: $after"

# held_session INJECTION OUT [psql args]: with INJECTION set, a session in the background sorts the small
# array under auto (its job held there) and then under gpu, writing to $work/OUT; waits until the job is held
held_session() {
	local inject=$1 out=$2
	shift 2
	q -c "SELECT gpusort_server_inject('$inject')" >/dev/null
	PGOPTIONS="-c gpusort.device=auto" psql -X -At -c "$small" -c "SELECT device FROM gpusort_last_run()" \
		-c "SET gpusort.device = gpu" -c "$small" "$@" >"$work/$out" 2>&1 &
	s=$!
	bg+=($s)
	wait_held 1
}

# 6. the back-off counts against the session whose job was in flight
gpu=$(row gpu_pid)
held_session running blamed.out
kill -KILL "$gpu"
wait "$s"
wait_new_gpu "$gpu"
other=$(PGOPTIONS="-c gpusort.device=gpu" q -c "$small" -c "SELECT device FROM gpusort_last_run()" 2>&1 | tr '\n' ' ')
mine=$(grep -vE "^(WARNING|DETAIL|HINT)" "$work/blamed.out" | head -2 | tr '\n' ' ')
[ "$mine" = "t cpu " ] && grep -q "ERROR:  no GPU is usable" "$work/blamed.out" &&
	grep -q "a GPU process died while it ran a job of this session" "$work/blamed.out" &&
	[ "$other" = "t gpu:0 " ] && grep -q "(PID $gpu) ended on signal 9: Killed; starting another now" "$GS_PGDIR/server.log"
ok $? "a death with one session's job in flight pauses that session ($(tr '\n' ' ' <"$work/blamed.out" | cut -c1-300)), not another ($other)"

# 6b. a job whose fault ends the GPU process: its session alone is paused, not one whose job ran beside it
gpu=$(row gpu_pid)
in_flight=$(grep -c "died with a job in flight of" "$GS_PGDIR/server.log")
held_session slow beside.out -c "SELECT device FROM gpusort_last_run()"
PGOPTIONS="-c gpusort.device=auto" psql -X -At -c "SELECT gpusort_server_inject('crash-self')" -c "$small" \
	-c "SELECT device FROM gpusort_last_run()" -c "SET gpusort.device = gpu" -c "$small" >"$work/culprit.out" 2>&1
wait "$s"
beside=$(grep -vE "^(WARNING|DETAIL|HINT)" "$work/beside.out" | tr '\n' ' ')
culprit=$(grep -vE "^(WARNING|DETAIL|HINT)" "$work/culprit.out" | head -4 | tr '\n' ' ')
[ "$beside" = "t cpu SET t gpu:0 " ] && [ "$culprit" = " t cpu SET " ] &&
	grep -q "a GPU process died while it ran a job of this session" "$work/culprit.out" &&
	grep -q "(PID $gpu) ended on signal 11" "$GS_PGDIR/server.log" &&
	grep -q "died of a fault in a job of backend" "$GS_PGDIR/server.log" &&
	[ "$(grep -c "died with a job in flight of" "$GS_PGDIR/server.log")" = "$in_flight" ]
ok $? "a fault in one session's job ends the GPU process: that session is paused ($(tr '\n' ' ' <"$work/culprit.out" | cut -c1-240)), not the one whose job ran beside it ($beside)"

# 6c. SIGSEGV from another process at the worker thread of a held job: it names no job
gpu=$(row gpu_pid)
faults=$(grep -c "died of a fault in a job of" "$GS_PGDIR/server.log")
in_flight=$(grep -c "died with a job in flight of" "$GS_PGDIR/server.log")
q -c "SELECT gpusort_server_inject('slow')" >/dev/null
PGOPTIONS="-c gpusort.device=auto" psql -X -At -c "$small" -c "SELECT device FROM gpusort_last_run()" >"$work/outside.out" 2>&1 &
s=$!
bg+=($s)
wait_held 1
# the held worker polls its cancel flag in nanosleep (clock_nanosleep: syscall 230 on x86_64, 115 on aarch64);
# the others wait on their condition variables
tid=
for _ in $(seq 1 200); do
	for t in /proc/"$gpu"/task/*; do
		case "$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)" in
			230 | 115) [ "${t##*/}" != "$gpu" ] && tid=${t##*/} ;;
		esac
	done
	[ -n "$tid" ] && break
	sleep 0.01
done
[ -n "$tid" ] && perl -e 'require "syscall.ph"; syscall(&SYS_tgkill, $ARGV[0] + 0, $ARGV[1] + 0, 11) == 0 or die "tgkill: $!"' "$gpu" "$tid"
wait "$s"
outside=$(grep -vE "^(WARNING|DETAIL|HINT)" "$work/outside.out" | tr '\n' ' ')
[ -n "$tid" ] && [ "$outside" = "t cpu " ] &&
	grep -q "(PID $gpu) ended on signal 11" "$GS_PGDIR/server.log" &&
	[ "$(grep -c "died of a fault in a job of" "$GS_PGDIR/server.log")" = "$faults" ] &&
	[ "$(grep -c "died with a job in flight of" "$GS_PGDIR/server.log")" = "$((in_flight + 1))" ]
ok $? "SIGSEGV sent from outside to the worker thread (${tid:-none found}) of a held job names no job: every job in flight is blamed ($outside)"

# 6d. a CUDA error that broke the context: the first job to fail with it (finished) and every job in flight
wait_new_gpu "$gpu"
gpu=$(row gpu_pid)
in_flight=$(grep -c "died with a job in flight of" "$GS_PGDIR/server.log")
held_session slow flight.out
PGOPTIONS="-c gpusort.device=auto" psql -X -At -c "SELECT gpusort_server_inject('break-self')" -c "$small" \
	-c "SELECT device FROM gpusort_last_run()" -c "SELECT pg_sleep(0.3)" -c "SET gpusort.device = gpu" -c "$small" \
	>"$work/first.out" 2>&1
wait "$s"
flight=$(grep -vE "^(WARNING|DETAIL|HINT|ERROR)" "$work/flight.out" | tr '\n' ' ')
first=$(grep -vE "^(WARNING|DETAIL|HINT|ERROR)" "$work/first.out" | tr '\n' ' ')
[ "$flight" = "t cpu SET " ] && [ "$first" = " t cpu  SET " ] &&
	grep -q "a GPU process died while it ran a job of this session" "$work/flight.out" &&
	grep -q "a GPU process died while it ran a job of this session" "$work/first.out" &&
	grep -q "broke its context, first seen by a job of backend" "$GS_PGDIR/server.log" &&
	[ "$(grep -c "died with a job in flight of" "$GS_PGDIR/server.log")" = "$((in_flight + 1))" ]
ok $? "a CUDA error that broke the context (injected): the job that failed with it and the job in flight are both paused ($(tr '\n' ' ' <"$work/first.out" | cut -c1-200); $(tr '\n' ' ' <"$work/flight.out" | cut -c1-200))"

finish
