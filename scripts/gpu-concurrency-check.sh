#!/bin/bash
# scripts/gpu-concurrency-check.sh: on a GPU host, small sorts from many
# threads and clients sharing one CUDA context (the GPU server's case), in
# about 6-7 minutes, at most 9 (5 when the build is there already):
#
#   1. build:  the module and the C tests with CUDA and fault injection
#              (INJECTION_POINTS=1), and install the module
#   2. sql:    test/hardening/concurrency-small.sh --device gpu at 16, 64 and
#              300 clients, --seconds each (default 60), in server mode; it
#              runs in the background while 3 and 4 run
#   3. c:      test_shared_context (16 threads on one context: every size
#              2..4096 x 5 types x 5 algorithms, and the first launches at once
#              in 8 fresh processes), test_host_sort --quick (the pool's growth
#              on a short device, injected faults), test_worker --quick
#   4. sanitizers: compute-sanitizer racecheck, then memcheck (leaks too), of
#              test_shared_context --quick (4 workers on one context, a few
#              sizes, every type and algorithm)
#
#   bash scripts/gpu-concurrency-check.sh [--out DIR] [--seconds S] [--clients LIST]
#   bash scripts/gpu-concurrency-check.sh --unfixed-smem-limit [--out DIR]
#
# --unfixed-smem-limit (instead of the above, about 4 minutes): shows that
# test_shared_context catches the race it is for.  It builds a copy of the
# tree in /tmp whose gs_smem_limit (kernels/merge_common.cuh) is the version
# before the race was fixed (it set a kernel's limit to each caller's size,
# lowering it under other threads, and cached it without a lock), and runs
# test_shared_context against it with 16 fresh processes: that run is
# expected to FAIL (unfixed.log); the summary says whether it did.
#
# Logs in DIR (default $OUT, else bench/results/gpu-concurrency-DATE): build.log,
# c.log, racecheck.log, memcheck.log, sql.log and summary.txt (one line per
# step with its exit status and result line).  Every step has a time limit.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"

seconds=60
clients=16,64,300
unfixed=0
dir=${OUT:-}
while [ $# -gt 0 ]; do
	case "$1" in
		--out) dir=$2; shift 2 ;;
		--seconds) seconds=$2; shift 2 ;;
		--clients) clients=$2; shift 2 ;;
		--unfixed-smem-limit) unfixed=1; shift ;;
		*) echo "usage: $0 [--out DIR] [--seconds S] [--clients LIST] | --unfixed-smem-limit [--out DIR]" >&2
		   exit 2 ;;
	esac
done
dir=${dir:-$root/bench/results/gpu-concurrency-$(date -u +%Y%m%d-%H%M)}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

if ! command -v pg_config >/dev/null 2>&1 && [ -f "$root/.pgbundle/activate.sh" ]; then
	# shellcheck disable=SC1091
	source "$root/.pgbundle/activate.sh"
fi
export INJECTION_POINTS=1 CUDA=1
sanitizer=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
start=$SECONDS

summary() { echo "$*" | tee -a "$dir/summary.txt"; }

# step NAME LOG LIMIT COMMAND...: runs it under a time limit, appending to LOG
step() {
	local name=$1 log=$2 limit=$3 t0=$SECONDS rc
	shift 3
	echo "== $name: $* (limit ${limit}s)" >>"$dir/$log"
	timeout --signal=TERM --kill-after=10 "$limit" "$@" >>"$dir/$log" 2>&1
	rc=$?
	summary "$(printf '%-34s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - t0))" \
		"$(grep -E '^# [0-9]+ passed, [0-9]+ failed|^1\.\.[0-9]+|ERROR SUMMARY|RACECHECK SUMMARY' "$dir/$log" | tail -1)")"
	return $rc
}

summary "gpu-concurrency-check.sh on $(hostname) at $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
summary "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"

# The library with gs_smem_limit as it was before the fix, and the test against it.
unfixed_check() {
	local copy
	copy=$(mktemp -d /tmp/gs-unfixed.XXXXXX)
	cp -a Makefile gpusort.control kernels src sql test "$copy/"
	rm -rf "$copy"/kernels/*.o "$copy"/kernels/*.a "$copy"/kernels/.build-flags "$copy/test/bin"
	perl -0pi -e 's{template <auto KERNEL>\nstatic cudaError_t\ngs_smem_limit\(size_t bytes\)\n\{.*?\n\}\n}{template <auto KERNEL>
static cudaError_t
gs_smem_limit(size_t bytes)
{
	static size_t done[64];
	int			dev = 0;
	cudaError_t e = cudaGetDevice(&dev);

	if (e != cudaSuccess)
		return e;
	if (dev >= 0 && dev < 64 && done[dev] >= bytes)
		return cudaSuccess;
	e = cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) bytes);
	if (e == cudaSuccess && dev >= 0 && dev < 64)
		done[dev] = bytes;
	return e;
}
}s' "$copy/kernels/merge_common.cuh"
	grep -q 'static size_t done\[64\]' "$copy/kernels/merge_common.cuh" || { echo "could not put the old gs_smem_limit back"; return 2; }
	make -C "$copy" -s -j"$(nproc)" test/bin/test_shared_context || return 2
	"$copy/test/bin/test_shared_context" --processes 16
	local rc=$?
	rm -rf "$copy"
	return $rc
}

if [ "$unfixed" = 1 ]; then
	step "unfixed gs_smem_limit: test_shared_context" unfixed.log 480 bash -c "$(declare -f unfixed_check); unfixed_check"
	case $? in
		1) summary "as expected, test_shared_context FAILS with the unfixed gs_smem_limit (unfixed.log)" ;;
		0) summary "test_shared_context passed even with the unfixed gs_smem_limit: the race did not show this time" ;;
		*) summary "the unfixed build or run did not complete (unfixed.log)" ;;
	esac
	summary "done in $((SECONDS - start))s; logs in $dir"
	exit 0
fi

# 1. the module first (the SQL test needs it), then the test programs while the SQL test runs
jobs=$(nproc 2>/dev/null || echo 4)
step "build: module (CUDA, injection)" build.log 300 \
	bash -c "source scripts/lib.sh && gs_ensure_postgres && gs_build_install" ||
	summary "the build failed: see build.log"

# 2. the SQL test, in the background
echo "== concurrency-small.sh --device gpu --clients $clients --seconds $seconds" >"$dir/sql.log"
sql_limit=$(( (seconds + 40) * $(echo "$clients" | tr ',' '\n' | wc -l) + 60 ))
sql_t0=$SECONDS
timeout --signal=TERM --kill-after=15 "$sql_limit" bash test/hardening/concurrency-small.sh --device gpu \
	--clients "$clients" --seconds "$seconds" >>"$dir/sql.log" 2>&1 &
sql_pid=$!

step "build: C tests" build.log 240 \
	make -s -j"$jobs" test/bin/test_shared_context test/bin/test_host_sort test/bin/test_worker

# 3. the C tests
[ -x test/bin/test_shared_context ] && step "c: test_shared_context" c.log 120 test/bin/test_shared_context
[ -x test/bin/test_host_sort ] && step "c: test_host_sort --quick" c.log 90 test/bin/test_host_sort --quick
[ -x test/bin/test_worker ] && step "c: test_worker --quick" c.log 60 test/bin/test_worker --quick

# 4. the sanitizers over the worker path, small
if [ -x "$sanitizer" ] && [ -x test/bin/test_shared_context ]; then
	step "racecheck: test_shared_context" racecheck.log 100 "$sanitizer" --tool racecheck --error-exitcode 9 \
		test/bin/test_shared_context --quick --sizes 2,33,513,4096
	step "memcheck: test_shared_context" memcheck.log 80 "$sanitizer" --tool memcheck --leak-check full \
		--error-exitcode 9 test/bin/test_shared_context --quick
else
	summary "no compute-sanitizer at $sanitizer (or no test program): sanitizers not run"
fi

wait "$sql_pid"
rc=$?
summary "$(printf '%-34s rc=%-3s %4ss  %s' "sql: concurrency-small.sh" "$rc" "$((SECONDS - sql_t0))" \
	"$(grep -cE '^ok [0-9]+' "$dir/sql.log") ok, $(grep -cE '^not ok [0-9]+' "$dir/sql.log") not ok; $(grep -E 'gpusort_server\(\)' "$dir/sql.log" | tail -1)")"
summary "done in $((SECONDS - start))s; logs in $dir"
