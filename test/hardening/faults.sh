#!/bin/bash
# test/hardening/faults.sh: no driver or no device, CUDA errors in the middle
# of a sort, device memory taken by another process.  Each must give
# a clear error (gpusort.device = gpu) or a correct CPU fallback (auto), and
# the next call in the same backend must work.
#
#   test/hardening/faults.sh [--device cpu|gpu|auto] [--quick] [--max-n N]
#
# 1. Always: gpusort_info() says whether a GPU is usable and, if not, why.
#    Where none is (this includes a GPU host, in a second cluster started with
#    CUDA_VISIBLE_DEVICES=-1): auto sorts on the CPU, right; gpu errors with
#    SQLSTATE 0A000 and a message that says so; the next call works.
# 2. GPU host: the server restarted with GPUSORT_FAULT_INJECT=N for N = 1, 2,
#    ... (each backend's N-th checked CUDA call fails, once: device memory,
#    pinning, copies, events around the sort) until a sort makes fewer than N
#    calls (--quick: N = 1, 2, 3, 6).  In one backend under gpu: a clear error
#    naming the injected fault, then the same sort right on the GPU; in
#    another under auto: a right result from the CPU, then the GPU again.
#    Only a test build has fault injection (make INJECTION_POINTS=1, as
#    scripts/test.sh builds): against another this part is left out with a
#    "# SKIP" comment, counted neither as passed nor as failed.
# 3. GPU host: test/hardening/hog.cu holds all but 16 MB of the GPU's memory
#    while backends sort: one that had its context already (its pool too
#    small for the sort) and a new one (no room for a context).  auto: right
#    results on the CPU; gpu: a clear error; after the hog exits the same
#    backend sorts on the GPU again.  hog is built with nvcc when there is
#    one, else test/hardening/bin/hog is used (see hog.cu).
# Own throwaway cluster on GS_PGPORT (default 55570); with
# GS_HARDENING_REUSE_CLUSTER=1 the parts that restart the server are skipped.
set -uo pipefail

device=cpu
quick=0
max_n=64
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--max-n) max_n=$2; shift 2 ;;
		-h|--help) sed -n '2,30p' "$0"; exit 0 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done

HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib.sh"
cd "$GS_ROOT"

WORK=$(mktemp -d /tmp/gs-faults.XXXXXX)
chmod 777 "$WORK"
own=0
HOG_PID=
cleanup() {
	[ -n "$HOG_PID" ] && kill "$HOG_PID" 2>/dev/null
	[ -f "$WORK/hog.pid" ] && kill "$(cat "$WORK/hog.pid")" 2>/dev/null
	rm -rf "$WORK"
	[ "$own" = 1 ] && gs_stop_cluster
}
source "$HERE/tap.bash"
if [ "${GS_HARDENING_REUSE_CLUSTER:-0}" != 1 ]; then
	own_cluster 55570
	own=1
fi
trap cleanup EXIT
export PGOPTIONS="${PGOPTIONS:-} -c gpusort.device=$device"

# its own q: no ON_ERROR_STOP (the sessions go on past the errors they provoke)
q() { timeout 300 psql -X -At -q "$@"; }
val() { grep "^$1|" "$2" | head -1 | cut -d'|' -f2-; }
sqlstate() { grep -o 'ERROR:  [0-9A-Z]\{5\}' "$1" | head -1 | awk '{print $2}'; }
show() { sed 's/^/#   /' "$1" | head -${2:-20}; }

# Restarts our server with extra environment (VAR=VALUE ...), or none.
restart_with() {
	(
		unset GPUSORT_FAULT_INJECT CUDA_VISIBLE_DEVICES
		[ $# -gt 0 ] && export "$@"
		"${GS_RUN[@]}" pg_ctl -D "$GS_PGDIR/data" -l "$GS_PGDIR/server.log" -m fast -w restart >/dev/null 2>&1
	)
}

server_mode=0
[[ "$(q -c "SHOW shared_preload_libraries" 2>/dev/null)" == *gpusort* ]] && server_mode=1
echo "# faults.sh: device=$device quick=$quick server_mode=$server_mode; load $(cut -d' ' -f1-3 /proc/loadavg)"
small=2000000
big=10000000
[ "$quick" = 1 ] && big=4000000
# a: small random int4, e: a sorted by ORDER BY; b, eb: the same, larger
q -v ON_ERROR_STOP=1 >"$WORK/gen.out" 2>&1 <<EOF
CREATE EXTENSION IF NOT EXISTS gpusort;
DROP TABLE IF EXISTS gs_faults;
CREATE TABLE gs_faults (a int4[], e int4[], b int4[], eb int4[]);
INSERT INTO gs_faults(a, b) SELECT
	array(SELECT (random() * 4e9 - 2e9)::int4 FROM generate_series(1, $small)),
	array(SELECT (random() * 4e9 - 2e9)::int4 FROM generate_series(1, $big));
UPDATE gs_faults SET e = array(SELECT x FROM unnest(a) x ORDER BY x), eb = array(SELECT x FROM unnest(b) x ORDER BY x);
EOF
[ $? = 0 ] || { show "$WORK/gen.out"; echo "Bail out! could not make the data"; exit 1; }

# ---------------------------------------------------------------- 1. no GPU
# $1 label: the checks of part 1 against the running server.
no_gpu_checks() {
	local label=$1
	q >"$WORK/info.out" 2>&1 <<EOF
SELECT 'INFO', built_with_cuda, coalesce(driver_version, '-'), device_count, gpu_usable, coalesce(reason, '') FROM gpusort_info();
EOF
	local info usable reason
	info=$(val INFO "$WORK/info.out")
	usable=$(echo "$info" | cut -d'|' -f4)
	reason=$(echo "$info" | cut -d'|' -f5-)
	echo "# $label: gpusort_info: built_with_cuda|driver|devices|usable|reason = $info"
	if [ "$usable" = f ] && [ -n "$reason" ]; then
		pass "$label: gpusort_info says no GPU is usable and why ($reason)"
	else
		fail "$label: gpusort_info should say no GPU is usable, with a reason (got '$info')"
		return
	fi
	q >"$WORK/nogpu.out" 2>&1 <<EOF
\\set VERBOSITY verbose
SET gpusort.gpu_min_elements = 0;
SET gpusort.device = auto;
SELECT 'AUTO', gpu_sort(a) = e, gpu_argsort(a) IS NOT NULL FROM gs_faults;
SELECT 'AUTODEV', device FROM gpusort_last_run();
SET gpusort.device = gpu;
SELECT 'GPU', cardinality(gpu_sort(a)) FROM gs_faults;
SELECT 'NEXT', gpu_sort(a) = e FROM gs_faults;
SET gpusort.device = auto;
SELECT 'NEXTAUTO', gpu_sort(a) = e FROM gs_faults;
SET gpusort.device = cpu;
SELECT 'NEXTCPU', gpu_sort(a) = e FROM gs_faults;
EOF
	if [ "$(val AUTO "$WORK/nogpu.out")" = "t|t" ] && [ "$(val AUTODEV "$WORK/nogpu.out")" = cpu ]; then
		pass "$label: device=auto sorts $small int4 on the CPU, same as ORDER BY"
	else
		fail "$label: device=auto should sort right on the CPU"; show "$WORK/nogpu.out"
	fi
	local st msg
	st=$(sqlstate "$WORK/nogpu.out")
	msg=$(grep -m1 'ERROR:' "$WORK/nogpu.out" | sed 's/.*ERROR: *[0-9A-Z]*: //')
	if [ "$st" = 0A000 ] && ! grep -q '^GPU|' "$WORK/nogpu.out" &&
		{ [[ "$msg" == *"no GPU is usable"* ]] || [[ "$msg" == *"built without CUDA"* ]]; } &&
		grep -q 'HINT:' "$WORK/nogpu.out"; then
		pass "$label: device=gpu errors 0A000: $msg ($(grep -m1 'DETAIL:' "$WORK/nogpu.out" | sed 's/^DETAIL: *//'))"
	else
		fail "$label: device=gpu should error 0A000 'no GPU is usable' with a hint (got '$st' '$msg')"; show "$WORK/nogpu.out"
	fi
	if [ "$(val NEXTAUTO "$WORK/nogpu.out")" = t ] && [ "$(val NEXTCPU "$WORK/nogpu.out")" = t ] &&
		[ "$(grep -c 'ERROR:' "$WORK/nogpu.out")" = 2 ]; then
		pass "$label: after the errors the same backend sorts right (gpu errors the same way again, auto and cpu sort)"
	else
		fail "$label: the backend should sort after the error"; show "$WORK/nogpu.out"
	fi
}

ngpu=$(q -c "SELECT count(*) FROM gpusort_devices()" 2>/dev/null || echo 0)
usable=$(q -c "SELECT gpu_usable FROM gpusort_info()" 2>/dev/null)
if [ "$usable" != t ]; then
	no_gpu_checks "this host"
else
	pass "this host: gpusort_info says a GPU is usable ($ngpu device(s): $(q -c "SELECT string_agg(name || ' ' || memory_total_mb || ' MB', ', ') FROM gpusort_devices()"))"
	if [ "$own" = 1 ]; then
		restart_with CUDA_VISIBLE_DEVICES=-1 || { echo "Bail out! restart failed"; exit 1; }
		no_gpu_checks "devices hidden (CUDA_VISIBLE_DEVICES=-1)"
		restart_with || { echo "Bail out! restart failed"; exit 1; }
	else
		skip "devices hidden: needs its own server (GS_HARDENING_REUSE_CLUSTER=1)"
	fi
fi

# ---------------------------------------------------------------- 2. injected CUDA errors
gpu_session() {	# $1 device setting, $2 output file
	q >"$2" 2>&1 <<EOF
\\set VERBOSITY verbose
SET gpusort.gpu_min_elements = 0;
SET gpusort.device = $1;
SELECT 'R1', gpu_sort(a) = e FROM gs_faults;
SELECT 'D1', device FROM gpusort_last_run();
SELECT 'R2', gpu_sort(a) = e FROM gs_faults;
SELECT 'D2', device FROM gpusort_last_run();
EOF
}

# the installed module has fault injection when it has the variable's name in it
injection=0
grep -qa GPUSORT_FAULT_INJECT "$(pg_config --pkglibdir)/gpusort.so" 2>/dev/null && injection=1
if [ "$usable" != t ]; then
	skip "injected CUDA errors: no GPU"
elif [ "$injection" != 1 ]; then
	echo "# SKIP injected CUDA errors: the installed gpusort has no fault injection (build with make INJECTION_POINTS=1)"
elif [ "$own" != 1 ]; then
	skip "injected CUDA errors: need their own server (GS_HARDENING_REUSE_CLUSTER=1)"
else
	if [ "$quick" = 1 ]; then ns="1 2 3 6"; else ns=$(seq 1 "$max_n"); fi
	clean=0 bad=0 calls=
	for n in $ns; do
		restart_with GPUSORT_FAULT_INJECT="$n" || { fail "restart with GPUSORT_FAULT_INJECT=$n failed"; break; }
		gpu_session gpu "$WORK/g.out"
		# in server mode the fault fires once in the server, not once per backend: arm it again
		if [ "$server_mode" = 1 ]; then
			restart_with GPUSORT_FAULT_INJECT="$n" || { fail "restart with GPUSORT_FAULT_INJECT=$n failed"; break; }
		fi
		gpu_session auto "$WORK/a.out"
		if [ "$(val R1 "$WORK/g.out")" = t ]; then
			# the sort made fewer than n checked calls: the end of the walk
			calls=$((n - 1))
			echo "# N=$n: no fault in the first sort (it makes $calls checked CUDA calls)"
			break
		fi
		st=$(sqlstate "$WORK/g.out")
		msg=$(grep -m1 'ERROR:' "$WORK/g.out" | sed 's/.*ERROR: *[0-9A-Z]*: //')
		detail=$(grep -m1 'DETAIL:' "$WORK/g.out" | sed 's/^DETAIL: *//')
		echo "# N=$n gpu: $st $msg; $detail"
		echo "# N=$n auto: first sort $(val R1 "$WORK/a.out") on $(val D1 "$WORK/a.out"), $(grep -m1 'WARNING:' "$WORK/a.out" | sed 's/.*WARNING: *[0-9A-Z]*: //' || true)"
		problems=
		case "$st" in 58000|53200|XX000) ;; *) problems="$problems gpu SQLSTATE '$st';" ;; esac
		[[ "$detail" == *"injected by GPUSORT_FAULT_INJECT"* ]] || problems="$problems the detail does not name the fault;"
		[ "$(val R2 "$WORK/g.out")" = t ] && [[ "$(val D2 "$WORK/g.out")" == gpu:* ]] || problems="$problems gpu: the next sort did not run right on the GPU;"
		[ "$(val R1 "$WORK/a.out")" = t ] && [ "$(val D1 "$WORK/a.out")" = cpu ] || problems="$problems auto: the faulted sort was not a right CPU fallback;"
		[ "$(val R2 "$WORK/a.out")" = t ] && [[ "$(val D2 "$WORK/a.out")" == gpu:* ]] || problems="$problems auto: the next sort did not run right on the GPU;"
		if [ -n "$problems" ]; then
			bad=$((bad + 1))
			fail "GPUSORT_FAULT_INJECT=$n:$problems"
			show "$WORK/g.out" 12; show "$WORK/a.out" 12
		else
			clean=$((clean + 1))
		fi
	done
	restart_with || { echo "Bail out! restart failed"; exit 1; }
	[ -n "$calls" ] && figure "checked_cuda_calls_per_sort" "$calls" calls
	if [ "$clean" -gt 0 ] && [ "$bad" = 0 ]; then
		pass "a CUDA error injected at each of $clean calls: gpu errors clearly, auto falls back right, the next sort in the same backend runs on the GPU"
	elif [ "$bad" = 0 ]; then
		fail "no injected fault fired"
	fi
fi

# ---------------------------------------------------------------- 3. memory taken by another process
HOG=
if [ "$usable" = t ]; then
	NVCC=${NVCC:-$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")}
	if [ -x "$NVCC" ] && "$NVCC" -O2 -o "$WORK/hog" test/hardening/hog.cu >"$WORK/nvcc.out" 2>&1; then
		HOG=$WORK/hog
	elif [ -x test/hardening/bin/hog ]; then
		HOG=$GS_ROOT/test/hardening/bin/hog
	fi
fi

# $1 device setting.  Backend A gets its context (a small sort), the hog
# takes the memory, A sorts an array too large for its pool; a new backend B
# (no room for a context) sorts, the hog exits, B and then A sort again.
hog_session() {
	rm -f "$WORK/ready" "$WORK/stop" "$WORK/hog.pid"
	cat >"$WORK/cold.sql" <<EOF
\\set VERBOSITY verbose
SET gpusort.gpu_min_elements = 0;
SET gpusort.device = $1;
SELECT 'N1', gpu_sort(a) = e FROM gs_faults;
SELECT 'ND1', device FROM gpusort_last_run();
\\! touch $WORK/stop; for i in \$(seq 1 300); do kill -0 \$(cat $WORK/hog.pid) 2>/dev/null || break; sleep 0.1; done
SELECT 'N2', gpu_sort(a) = e FROM gs_faults;
SELECT 'ND2', device FROM gpusort_last_run();
EOF
	q >"$WORK/h.out" 2>&1 <<EOF
\\set VERBOSITY verbose
SET gpusort.gpu_min_elements = 0;
SET gpusort.device = $1;
SELECT 'W', gpu_sort(a) = e FROM gs_faults;
SELECT 'WD', device FROM gpusort_last_run();
\\! $HOG --ready $WORK/ready --until $WORK/stop --seconds 240 >$WORK/hog.out 2>&1 & echo \$! >$WORK/hog.pid; for i in \$(seq 1 600); do [ -f $WORK/ready ] && break; sleep 0.1; done
SELECT 'FREE', string_agg(memory_free_mb::text, ',') FROM gpusort_devices();
SELECT 'R1', gpu_sort(b) = eb FROM gs_faults;
SELECT 'D1', device FROM gpusort_last_run();
\\! timeout 200 psql -X -At -q -f $WORK/cold.sql >$WORK/cold.out 2>&1
SELECT 'R2', gpu_sort(b) = eb FROM gs_faults;
SELECT 'D2', device FROM gpusort_last_run();
EOF
}

if [ "$usable" != t ]; then
	skip "device memory held by another process: no GPU"
elif [ -z "$HOG" ]; then
	fail "device memory held by another process: no nvcc and no test/hardening/bin/hog"
	show "$WORK/nvcc.out"
else
	for mode in auto gpu; do
		hog_session "$mode"
		echo "# hog ($mode): $(cat "$WORK/hog.out" 2>/dev/null); free MB during: $(val FREE "$WORK/h.out")"
		[ -f "$WORK/ready" ] || { fail "hog ($mode): did not get ready"; show "$WORK/h.out"; continue; }
		C=$WORK/cold.out
		if [ "$server_mode" = 1 ] && [ "$mode" = auto ]; then
			# the server keeps the device memory it had (its pool within its budget): right, wherever
			[ "$(val R1 "$WORK/h.out")" = t ] && [ "$(val N1 "$C")" = t ]
			r=$?
			what="auto, server mode: $big int4 and $small in a new backend both right (on $(val D1 "$WORK/h.out") and $(val ND1 "$C"))"
		elif [ "$server_mode" = 1 ]; then
			st1=$(sqlstate "$WORK/h.out")
			st2=$(sqlstate "$C")
			{ [ "$(val R1 "$WORK/h.out")" = t ] || [[ " 53200 58000 " == *" $st1 "* ]]; } &&
				{ [ "$(val N1 "$C")" = t ] || [[ " 53200 58000 " == *" $st2 "* ]]; }
			r=$?
			what="gpu, server mode: right or a clear error (with the server's memory: $(val R1 "$WORK/h.out")$st1; new backend: $(val N1 "$C")$st2)"
		elif [ "$mode" = auto ]; then
			[ "$(val R1 "$WORK/h.out")" = t ] && [ "$(val D1 "$WORK/h.out")" = cpu ] &&
				[ "$(val N1 "$C")" = t ] && [ "$(val ND1 "$C")" = cpu ]
			r=$?
			what="auto: $big int4 in a backend with a context and $small in a new one, both right on the CPU"
		else
			st1=$(sqlstate "$WORK/h.out")
			st2=$(sqlstate "$C")
			! grep -q '^R1|' "$WORK/h.out" && ! grep -q '^N1|' "$C" &&
				[[ " 53200 58000 0A000 " == *" $st1 "* ]] && [[ " 53200 58000 0A000 " == *" $st2 "* ]]
			r=$?
			what="gpu: clear errors (with a context: $st1 $(grep -m1 'ERROR:' "$WORK/h.out" | sed 's/.*ERROR: *[0-9A-Z]*: //'); new backend: $st2 $(grep -m1 'ERROR:' "$C" | sed 's/.*ERROR: *[0-9A-Z]*: //'))"
		fi
		if [ "$r" = 0 ]; then pass "hog holds the GPU's memory, $what"; else fail "hog ($mode): $what"; show "$WORK/h.out" 30; show "$C" 20; fi
		if [ "$(val R2 "$WORK/h.out")" = t ] && [[ "$(val D2 "$WORK/h.out")" == gpu:* ]] &&
			[ "$(val N2 "$C")" = t ] && [[ "$(val ND2 "$C")" == gpu:* ]]; then
			pass "hog ($mode): after it exits both backends sort on the GPU again"
		else
			fail "hog ($mode): after it exits both backends should sort on the GPU (A: $(val D2 "$WORK/h.out"), B: $(val ND2 "$C"))"
			show "$WORK/h.out" 30; show "$C" 20
		fi
	done
fi

echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
finish
