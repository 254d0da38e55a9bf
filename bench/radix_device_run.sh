#!/bin/bash
# bench/radix_device_run.sh: checks and measures the GPU radix sort on a GPU host in one go,
# with the test and benchmark programs built elsewhere (test/bin, bench/bin) or built here.
#
#   bash bench/radix_device_run.sh [--out DIR] PHASE...
#
# Phases, run in the order given, each under a time limit; each writes one log in DIR
# ($OUT by default) and a line to DIR/summary.txt:
#   tests      test_gpu_sort --algorithm radix (every type, distribution and awkward size),
#              bench_radix --check-ballot (the fallback ballot rank against CUB), test_host_sort --quick
#   large      test_gpu_sort --algorithm radix --large --type int4,float8
#   sanitize   compute-sanitizer memcheck and racecheck of test_gpu_sort --quick (radix)
#   diag       bench_radix --diag: policies and ablations against CUB, argsort and 64-bit key shapes,
#              every distribution, small sorts, traces
#   pairs      bench_radix --diag-pairs: only the argsort and 64-bit key shapes and the argsort traces
#   ncu        ncu on one onesweep pass and one histogram of ours and of CUB's (10^8 int4)
#   sass       the SASS of our onesweep kernels and CUB's, for reading off the machine
#   table      bench_radix --tune --out DIR/radix-table.md (the committed table)
#   comparison bench_comparison --out DIR/comparison-table.md
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${OUT:-/tmp/radix-out}
if [ "${1:-}" = --out ]; then dir=$2; shift 2; fi
mkdir -p "$dir"
summary() { echo "$*" | tee -a "$dir/summary.txt"; }

# phase NAME LOG LIMIT COMMAND...: runs it with a time limit, appending to LOG
phase() {
	local name=$1 log=$2 limit=$3 start=$SECONDS rc
	shift 3
	echo "== $name: $*" >>"$dir/$log"
	timeout --signal=TERM --kill-after=10 "$limit" "$@" >>"$dir/$log" 2>&1
	rc=$?
	summary "$(printf '%-22s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - start))" \
		"$(grep -E '^# [0-9]+ passed|^[0-9]+ passed|ERROR SUMMARY|RACECHECK SUMMARY' "$dir/$log" | tail -1)")"
	return $rc
}

summary "radix_device_run.sh on $(hostname) at $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
summary "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader 2>/dev/null)"

for p in test/bin/test_gpu_sort test/bin/test_host_sort bench/bin/bench_radix bench/bin/bench_comparison; do
	[ -x "$p" ] || phase "build $p" build.log 900 make -s -j"$(nproc)" CUDA=1 "$p"
done

cs=compute-sanitizer
command -v $cs >/dev/null || cs=/usr/local/cuda/bin/compute-sanitizer
ncu=ncu
command -v $ncu >/dev/null || ncu=/usr/local/cuda/bin/ncu

for what in "$@"; do
	case "$what" in
		tests)
			phase "test_gpu_sort radix" tests.log 300 test/bin/test_gpu_sort --algorithm radix
			phase "radix, ballot rank" tests.log 300 bench/bin/bench_radix --check-ballot
			phase "test_host_sort --quick" tests.log 200 test/bin/test_host_sort --quick ;;
		large)
			phase "test_gpu_sort --large" tests.log 400 test/bin/test_gpu_sort --algorithm radix --large --type int4,float8 ;;
		sanitize)
			phase "memcheck radix" sanitize.log 300 $cs --tool memcheck --error-exitcode 1 \
				test/bin/test_gpu_sort --algorithm radix --quick --type int4,float8,int2
			phase "racecheck radix" sanitize.log 300 $cs --tool racecheck --error-exitcode 1 \
				test/bin/test_gpu_sort --algorithm radix --quick --type int4,float8 --dist uniform,few_distinct,sorted ;;
		diag)
			phase "bench_radix --diag" diag.log 240 bench/bin/bench_radix --max 100000000 --diag ;;
		pairs)
			phase "bench_radix --diag-pairs" pairs.log 240 bench/bin/bench_radix --max 100000000 --diag-pairs ;;
		ncu)
			for who in ours cub; do
				phase "ncu onesweep $who" ncu.txt 120 $ncu --clock-control none -k regex:'onesweep|Onesweep' \
					--launch-skip 5 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
					--section WarpStateStats --section SchedulerStats --section InstructionStats \
					--section MemoryWorkloadAnalysis bench/bin/bench_radix --max 100000000 --profile "$who"
				phase "ncu histogram $who" ncu.txt 60 $ncu --clock-control none -k regex:'istogram' \
					--launch-skip 1 --launch-count 1 --section SpeedOfLight --section LaunchStats \
					bench/bin/bench_radix --max 100000000 --profile "$who"
			done ;;
		sass)
			# the onesweep and histogram kernels of our default policy, and CUB's for 32-bit keys
			cuobjdump -sass bench/bin/bench_radix 2>/dev/null | awk '
				/Function : / { keep = ($0 ~ /gs_radix_onesweep_kernelIjLb0E20gs_radix_policy_sm90/ ||
				                        $0 ~ /gs_radix_histogram_kernelIj20gs_radix_policy_sm90/ ||
				                        ($0 ~ /OnesweepKernel/ && $0 ~ /NullType/ && $0 ~ /IjNS0_8NullType/)) }
				keep { print }' >"$dir/sass.txt"
			summary "sass: $(grep -c 'Function :' "$dir/sass.txt") functions, $(wc -l <"$dir/sass.txt") lines" ;;
		table)
			phase "bench_radix --tune" table.log 420 bench/bin/bench_radix --tune --out "$dir/radix-table.md" ;;
		comparison)
			phase "bench_comparison" comparison.log 420 bench/bin/bench_comparison --out "$dir/comparison-table.md" ;;
		*)
			summary "unknown phase $what" ;;
	esac
done
summary "done in ${SECONDS}s"
