#!/bin/bash
# bench/merge_device_run.sh: checks and measures the merge-path sort's variants on a GPU
# machine, in one go (no PostgreSQL needed; the library, tests and benchmarks only).
#
#   OUT=DIR [GS_MERGE_RUN=short] [GS_PREBUILT=1] bash bench/merge_device_run.sh
#
# GS_PREBUILT=1 skips the build (the programs in test/bin and bench/bin are used as they are).
# GS_MERGE_RUN=short (about 2 minutes, budget 150 s): test_gpu_sort --algorithm merge --quick,
# test_comparison_sorts --quick, memcheck of test_comparison_sorts --quick --only path,
# racecheck of test_comparison_sorts --only path --race on the benched variants (limit 40 s),
# and bench_comparison --only merge,worst on the library's default and the round's candidates
# (bench_comparison's list, or GS_BENCH_MERGE_VARIANTS; limit 60 s).  Otherwise the full run below.
#
# Runs from the repository root, in this order, each step under `timeout`:
#   1. build       make kernels-lib test-progs bench-progs (PGXS is skipped without pg_config)
#   2. tests       test_gpu_sort --algorithm merge; --algorithm all --quick;
#                  test_comparison_sorts --quick (every merge-path option included)
#   3. sanitizers  compute-sanitizer memcheck and racecheck of test_gpu_sort --algorithm merge
#                  --quick (int4, float8; uniform, few_distinct); memcheck of
#                  test_comparison_sorts --quick --only path (every shape and split), racecheck
#                  of its --only path --race (every shape and split, the fewest sorts)
#   4. bench       bench_comparison --only merge,worst: the default and the round's candidates
#                  (GS_BENCH_MERGE_VARIANTS=all: every shape and split) and CUB in one process
# Files in $OUT (default bench/results/merge-device-<date>): build.log, tests.log,
# sanitizers.log, bench.log, summary.txt.  The summary table is the last thing printed.
# Expected wall time about 7 minutes on an H100 with 16 cores (the racecheck of every shape, split
# and merge order takes about 3); the steps share a budget of 560 s so that the whole stays under
# the device's 10-minute limit even when a step hangs.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-$root/bench/results/merge-device-$(date -u +%Y%m%d-%H%M)}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
mode=${GS_MERGE_RUN:-full}
budget=560
[ "$mode" = short ] && budget=150
steps=()

summary() { echo "$*" | tee -a "$out/summary.txt"; }

# step NAME LOG LIMIT COMMAND...: runs COMMAND under the smaller of LIMIT and what is left of
# the budget, appending its output to LOG; records rc, seconds and the TAP count if any.
step() {
	local name=$1 log=$2 limit=$3 start=$SECONDS rc left tmp result
	shift 3
	left=$((budget - SECONDS))
	[ "$left" -lt "$limit" ] && limit=$left
	if [ "$limit" -le 5 ]; then
		steps+=("$(printf '%-22s %-8s %5s  %s' "$name" "skipped" "-" "no time left")")
		return 1
	fi
	tmp=$(mktemp)
	echo "== $name (limit ${limit}s): $*" >>"$out/$log"
	timeout --signal=TERM --kill-after=10 "$limit" "$@" >"$tmp" 2>&1
	rc=$?
	cat "$tmp" >>"$out/$log"
	result=$(grep -E '^# [0-9]+ passed, [0-9]+ failed' "$tmp" | tail -1)
	if grep -q 'ERROR SUMMARY' "$tmp"; then
		result="$result; $(grep 'ERROR SUMMARY' "$tmp" | tail -1 | sed 's/^=* *//')"
	fi
	if grep -q 'RACECHECK SUMMARY' "$tmp"; then
		result="$result; $(grep 'RACECHECK SUMMARY' "$tmp" | tail -1 | sed 's/^=* *//')"
	fi
	grep -q '^1\.\.0 # SKIP' "$tmp" && result="SKIPPED: $(grep -m1 '^1\.\.0 # SKIP' "$tmp" | sed 's/^1..0 # SKIP //')"
	[ "$rc" = 124 ] && result="$result TIMED OUT"
	[ "$rc" != 0 ] && [ "$rc" != 124 ] && [ -z "$result" ] && result="$(tail -1 "$tmp" | cut -c1-100)"
	steps+=("$(printf '%-22s rc=%-5s %4ss  %s' "$name" "$rc" "$((SECONDS - start))" "$result")")
	echo "${steps[-1]}" >>"$out/summary.txt"
	rm -f "$tmp"
	return "$rc"
}

summary "merge_device_run.sh at $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
summary "$(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"

# 1. build (PG_CONFIG points nowhere: PGXS is skipped, the kernels/test/bench rules stand alone)
if [ "${GS_PREBUILT:-0}" = 1 ]; then
	summary "prebuilt programs: no build ($mode run)"
else
	if ! step build build.log 240 make -s -j"$(nproc)" CUDA=1 PG_CONFIG=/nonexistent/pg_config \
		kernels-lib test-progs bench-progs; then
		echo "build failed: see $out/build.log" >&2
		tail -30 "$out/build.log" >&2
	fi
	grep -iE 'warning' "$out/build.log" >/dev/null && summary "the build printed warnings: see build.log"
fi

if ! command -v compute-sanitizer >/dev/null 2>&1; then
	for d in /usr/local/cuda/compute-sanitizer /usr/local/cuda-*/compute-sanitizer /opt/nvidia/compute-sanitizer; do
		[ -x "$d/compute-sanitizer" ] && PATH=$d:$PATH && break
	done
fi

finish() {
	echo
	echo "== steps (logs in $out)"
	printf '%s\n' "${steps[@]}"
	if [ -f "$out/bench.log" ]; then
		echo
		sed -n '/^## Summary/,$p' "$out/bench.log" | tee -a "$out/summary.txt"
	fi
}

if [ "$mode" = short ]; then
	# the variants the bench runs: the default and the candidates, as bench_comparison lists them
	variants=${GS_BENCH_MERGE_VARIANTS:-4/auto/rand,4/fused/rand,4/thread/rand,4/auto,0/auto/rand,0/quad}
	step test-gpu-merge-quick tests.log 30 test/bin/test_gpu_sort --algorithm merge --quick
	step test-comparison-quick tests.log 30 test/bin/test_comparison_sorts --quick
	step memcheck-path-options sanitizers.log 30 \
		compute-sanitizer --tool memcheck --error-exitcode 1 test/bin/test_comparison_sorts --quick --only path
	step racecheck-path-race sanitizers.log 40 \
		compute-sanitizer --tool racecheck --error-exitcode 1 test/bin/test_comparison_sorts --only path --race \
		--variants "$variants"
	export GS_BENCH_MERGE_VARIANTS=$variants
	step bench bench.log 60 bench/bin/bench_comparison --only merge,worst
	finish
	exit 0
fi

# 2. correctness
step test-gpu-merge tests.log 90 test/bin/test_gpu_sort --algorithm merge
step test-gpu-all-quick tests.log 40 test/bin/test_gpu_sort --algorithm all --quick
step test-comparison-quick tests.log 60 test/bin/test_comparison_sorts --quick

# 3. sanitizers, small sizes
san=(--type int4,float8 --dist uniform,few_distinct)
step memcheck-gpu-merge sanitizers.log 40 \
	compute-sanitizer --tool memcheck --error-exitcode 1 test/bin/test_gpu_sort --algorithm merge --quick "${san[@]}"
step memcheck-path-options sanitizers.log 40 \
	compute-sanitizer --tool memcheck --error-exitcode 1 test/bin/test_comparison_sorts --quick --only path
step racecheck-gpu-merge sanitizers.log 75 \
	compute-sanitizer --tool racecheck --error-exitcode 1 test/bin/test_gpu_sort --algorithm merge --quick "${san[@]}"
step racecheck-path-race sanitizers.log 200 \
	compute-sanitizer --tool racecheck --error-exitcode 1 test/bin/test_comparison_sorts --only path --race

# 4. every variant against CUB, one process (its tables in bench.log)
step bench bench.log 170 bench/bin/bench_comparison --only merge,worst
finish
