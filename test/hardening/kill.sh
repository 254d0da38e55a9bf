#!/bin/bash
# test/hardening/kill.sh: SIGKILL one backend in the middle of a sort.
#
#   test/hardening/kill.sh [--device cpu|gpu|auto] [--quick] [--backends N] [--size N] [--rounds R]
#
# N backends (default 4, --quick 3) sort large stored arrays (int4 of --size
# elements, default 4*10^6, and float8 of half that) over and over with
# gpu_sort, gpu_argsort and gpu_sort_agg in a loop that checks every answer.
# Once all are active, a random one gets SIGKILL; R rounds (default 3, --quick 1).  PostgreSQL then ends every backend and reinitialises (crash
# recovery); the test checks that it does so and accepts connections again, that
# the killed backend's siblings stopped with the crash message and never with a
# wrong answer, that N new backends sort correctly at the same time afterwards,
# and under --device gpu that the killed process holds no device memory any more.
# Figure: milliseconds from the kill to the first successful query.
#
# TAP on stdout.  Own throwaway cluster on GS_PGPORT (default 55502); with
# GS_HARDENING_REUSE_CLUSTER=1 it uses the running one (which it will crash).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib.sh"

device=cpu
quick=0
backends=
size=
rounds=
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--backends) backends=$2; shift 2 ;;
		--size) size=$2; shift 2 ;;
		--rounds) rounds=$2; shift 2 ;;
		*) echo "usage: $0 [--device cpu|gpu|auto] [--quick] [--backends N] [--size N] [--rounds R]" >&2; exit 2 ;;
	esac
done
if [ "$quick" = 1 ]; then
	backends=${backends:-3} size=${size:-1000000} rounds=${rounds:-1}
else
	backends=${backends:-4} size=${size:-4000000} rounds=${rounds:-3}
fi

source "$here/tap.bash"
now_ms() { date +%s%3N; }

echo "# kill: device=$device backends=$backends size=$size rounds=$rounds"
work=$(mktemp -d /tmp/gpusort-kill.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	[ "${GS_HARDENING_REUSE_CLUSTER:-0}" = 1 ] && q -c "DROP TABLE IF EXISTS kill_data" >/dev/null 2>&1
	gs_stop_cluster
	rm -rf "$work"
}
if [ "${GS_HARDENING_REUSE_CLUSTER:-0}" != 1 ]; then
	gs_ensure_postgres >/dev/null 2>&1 || { ok 1 "postgres found"; finish; }
	[ -f "$(pg_config --pkglibdir)/gpusort.so" ] || gs_build_install >&2
	# restart_after_crash is on by default; say so, since this test depends on it
	GS_PGPORT=${GS_PGPORT:-55502} gs_start_cluster -c restart_after_crash=on -c shared_buffers=256MB >&2
	rc=$?
	ok $rc "throwaway cluster started"
	[ $rc = 0 ] || finish
fi
trap cleanup EXIT
server_log=${GS_PGDIR:+$GS_PGDIR/server.log}

# one int4 and one float8 array (NULLs, float specials) and their ORDER BY answers
Q_LIMIT=600 PGOPTIONS="-c gpusort.device=cpu" q >"$work/setup.out" 2>&1 <<EOF
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
SELECT setseed(0.3);
CREATE TABLE kill_data (typ text PRIMARY KEY, a_int4 int4[], e_int4 int4[], a_float8 float8[], e_float8 float8[]);
INSERT INTO kill_data (typ, a_int4) SELECT 'int4', array(
	SELECT CASE WHEN random() < 0.01 THEN NULL ELSE (floor(random() * 4294967296) - 2147483648)::int4 END
	FROM generate_series(1, $size));
INSERT INTO kill_data (typ, a_float8) SELECT 'float8', array(
	SELECT CASE WHEN random() < 0.01 THEN 'NaN'::float8 WHEN random() < 0.01 THEN NULL
		   ELSE (random() - 0.5) * 1e9 END
	FROM generate_series(1, $size / 2));
UPDATE kill_data SET e_int4 = array(SELECT x FROM unnest(a_int4) x ORDER BY x) WHERE typ = 'int4';
UPDATE kill_data SET e_float8 = array(SELECT x FROM unnest(a_float8) x ORDER BY x) WHERE typ = 'float8';
CHECKPOINT;
EOF
rc=$?
ok $rc "setup: an int4 array of $size and a float8 array of $((size / 2)) elements with their ORDER BY answers"
[ $rc = 0 ] || { sed 's/^/# /' "$work/setup.out"; finish; }

export PGOPTIONS="${PGOPTIONS:-} -c gpusort.device=$device -c statement_timeout=300s"

# sorts_sql ITERATIONS: a statement that sorts both arrays ITERATIONS times with
# each function and raises on a wrong answer; chained sorts (asc, desc, asc)
# keep it inside gpusort most of the time, so that the kill lands mid-sort
sorts_sql() {
	cat <<EOF
DO \$\$
DECLARE
	a4 int4[];
	a8 float8[];
	e4 int4[];
	e8 float8[];
	s4 int4[];
	s8 float8[];
	p int4[];
BEGIN
	SELECT a_int4, e_int4 INTO a4, e4 FROM kill_data WHERE typ = 'int4';
	SELECT a_float8, e_float8 INTO a8, e8 FROM kill_data WHERE typ = 'float8';
	FOR i IN 1..$1 LOOP
		s4 := gpu_sort(gpu_sort(gpu_sort(a4), true));
		s8 := gpu_sort(gpu_sort(gpu_sort(a8), true));
		IF s4 IS DISTINCT FROM e4 OR s8 IS DISTINCT FROM e8 THEN
			RAISE EXCEPTION 'kill: wrong answer from gpu_sort (iteration %)', i;
		END IF;
		-- argsort: a permutation of 1..n (the identity is checked in concurrency.sh)
		p := gpu_argsort(a4);
		IF gpu_sort(p) IS DISTINCT FROM array(SELECT generate_series(1, cardinality(a4))) THEN
			RAISE EXCEPTION 'kill: gpu_argsort gave no permutation (iteration %)', i;
		END IF;
		IF (SELECT gpu_sort_agg(x) FROM unnest(a8) x) IS DISTINCT FROM e8 THEN
			RAISE EXCEPTION 'kill: wrong answer from gpu_sort_agg (iteration %)', i;
		END IF;
	END LOOP;
END
\$\$;
SELECT 'kill-sorts-done';
EOF
}
sorts_sql 100000 >"$work/loop.sql"

# device memory in use (MiB, all devices, every process); empty when no GPU
device_used() {
	PGOPTIONS="-c gpusort.device=cpu" q -c "SELECT sum(memory_total_mb - memory_free_mb) FROM gpusort_devices()" 2>/dev/null
}

# round R: N backends sort in a loop, one gets SIGKILL, the server recovers
round() {
	local r=$1 i p active victim still t_kill t_ready ready crashed wrong used_base=
	[ "$device" != cpu ] && used_base=$(device_used)
	pids=()
	for i in $(seq "$backends"); do
		timeout -k 5 240 psql -X -A -t -q -v ON_ERROR_STOP=1 -f "$work/loop.sql" >"$work/bg$i.out" 2>&1 &
		pids+=($!)
	done
	active=0
	for _ in $(seq 300); do
		active=$(q -c "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%gpu_sort%'
					   AND pid <> pg_backend_pid()" 2>/dev/null || echo 0)
		[ "$active" -ge "$backends" ] && break
		sleep 0.1
	done
	# let them run a while (each some way into its loop), then pick a victim at random
	sleep "$(awk -v r="$RANDOM" 'BEGIN {printf "%.2f", 1.5 + r / 32768 * 2}')"
	victim=$(q -c "SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%gpu_sort%'
				   AND pid <> pg_backend_pid() ORDER BY random() LIMIT 1" 2>/dev/null)
	still=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && still=$((still + 1)); done
	ok $([ "$active" -ge "$backends" ] && [ -n "$victim" ] && [ "$still" = "$backends" ]; echo $?) \
		"round $r: $backends backends sorting ($active active in pg_stat_activity, $still psql still running)"
	if [ -z "$victim" ]; then
		for i in $(seq "$backends"); do sed "s/^/# backend $i: /" "$work/bg$i.out"; done
		return 1
	fi
	local apps_before=
	if [ "$device" != cpu ] && command -v nvidia-smi >/dev/null 2>&1; then
		apps_before=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader 2>/dev/null)
		echo "# processes on the GPU before the kill: $(echo "$apps_before" | tr '\n' ';')"
	fi
	echo "# victim pid $victim: state $(awk '/^State/ {print $2 $3}' /proc/"$victim"/status 2>/dev/null)"

	# SIGKILL, then wait for the postmaster to notice, reinitialise and take connections
	t_kill=$(now_ms)
	kill -9 "$victim"
	ok $? "round $r: SIGKILL sent to backend $victim in the middle of its sorts"
	for _ in $(seq 100); do
		[ -n "$server_log" ] || { sleep 0.5; break; }
		grep -q "PID $victim) was terminated by signal 9" "$server_log" 2>/dev/null && break
		sleep 0.1
	done
	ready=1
	for _ in $(seq 600); do
		if pg_isready -q -t 1 && q -c "SELECT 1" >/dev/null 2>&1; then ready=0; break; fi
		sleep 0.05
	done
	t_ready=$(now_ms)
	ok $ready "round $r: the server takes connections again after the crash"
	figure "kill_recovery_round$r" "$((t_ready - t_kill))" ms

	# the siblings: ended by the crash (PostgreSQL ends every backend), never by a wrong answer
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=()
	crashed=0
	wrong=0
	for i in $(seq "$backends"); do
		grep -qE 'wrong answer|no permutation' "$work/bg$i.out" && wrong=$((wrong + 1))
		grep -qE 'terminating connection because of crash|server closed the connection|connection to server was lost' \
			"$work/bg$i.out" && crashed=$((crashed + 1))
		grep -E 'ERROR|wrong|permutation' "$work/bg$i.out" | head -3 | sed "s/^/# backend $i: /"
	done
	ok $([ "$wrong" = 0 ] && [ "$crashed" = "$backends" ]; echo $?) \
		"round $r: every sorting session ended by the crash ($crashed of $backends), none with a wrong answer ($wrong)"

	if [ -n "$server_log" ] && [ -f "$server_log" ]; then
		sed -n "/server process (PID $victim) was terminated by signal 9/,\$p" "$server_log" |
			grep -q 'all server processes terminated; reinitializing'
		ok $? "round $r: the server log shows the killed backend and the reinitialisation"
	fi

	if [ "$device" != cpu ]; then
		# every backend has gone (the crash ended them all): the device memory in
		# use must come back to what it was before the round (NVML, seen from a
		# backend that opens no context; the driver frees a dead process's context)
		local used=
		for _ in $(seq 40); do
			used=$(device_used)
			[ -n "$used" ] && [ -n "$used_base" ] && [ $((used - used_base)) -le 64 ] && break
			sleep 0.5
		done
		if [ -n "$used_base" ] && [ -n "$used" ]; then
			ok $([ $((used - used_base)) -le 64 ]; echo $?) \
				"round $r: device memory in use back to $used MiB (before the round $used_base MiB, tolerance 64 MiB)"
		else
			echo "# no device memory figures: gpusort_devices() shows no device"
		fi
		if echo "$apps_before" | grep -q "^$victim,"; then
			local apps
			apps=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)
			! echo "$apps" | grep -qx "$victim"
			ok $? "round $r: the killed backend is gone from nvidia-smi's list ($(echo $apps))"
		fi
	fi
}

for r in $(seq "$rounds"); do
	round "$r" || break
done
[ -n "$server_log" ] && grep -E "terminated by signal 9|all server processes terminated|automatic recovery" \
	"$server_log" | sed 's/^/# server: /'

# 4. afterwards: N new backends sort correctly at the same time
sorts_sql 3 >"$work/after.sql"
after_pids=()
for i in $(seq "$backends"); do
	timeout -k 5 240 psql -X -A -t -q -v ON_ERROR_STOP=1 -f "$work/after.sql" >"$work/after$i.out" 2>&1 &
	after_pids+=($!)
done
good=0
for i in $(seq "$backends"); do
	wait "${after_pids[$((i - 1))]}" && grep -q kill-sorts-done "$work/after$i.out" && good=$((good + 1))
done
for i in $(seq "$backends"); do grep -v kill-sorts-done "$work/after$i.out" | head -3 | sed "s/^/# after $i: /"; done
ok $([ "$good" = "$backends" ]; echo $?) \
	"after the recovery $good of $backends new backends sorted both arrays 3 times, correctly"
got=$(q -c "SELECT gpu_sort(a_int4) = e_int4 FROM kill_data WHERE typ = 'int4'" 2>&1)
ok $([ "$got" = t ]; echo $?) "the stored data is intact and a fresh session sorts it ($got)"
finish
