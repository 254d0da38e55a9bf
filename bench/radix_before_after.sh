#!/bin/bash
# bench/radix_before_after.sh: the GPU radix sort of two source trees against CUB in one run on one GPU, side by side.
#
#   bash bench/radix_before_after.sh [--out DIR] [--max N] BEFORE_TREE AFTER_TREE PHASE...
#
# Phases, in the order given (each runs BEFORE then AFTER, so both meet the same GPU state):
#   build       make CUDA=1 the bench and test programs in each tree (make -j$(nproc))
#   regs        ptxas registers, spills and stack of every radix kernel of each tree (compiles
#               kernels/radix_sort.cu once more with -Xptxas -v), side by side
#   sass        instruction counts of each onesweep and histogram kernel of each tree's bench_radix (cuobjdump)
#   table       bench_radix --max N (default 10^8): ours and CUB, int4 / float8 / int4 [0,10^6), keys and pairs
#   dist        bench_radix --dist: 10^7 int4 keys and pairs of every distribution against CUB
#   comparison  bench_comparison --only quick,small (our radix sort against the comparison sorts)
#   tests       test_gpu_sort --algorithm radix, bench_radix --check-ballot (AFTER only: the fallback rank against
#               the library's own sort), compute-sanitizer memcheck and racecheck of test_gpu_sort --quick (radix)
# Logs go to DIR (default $OUT, else /tmp/radix-before-after): PHASE-before.log, PHASE-after.log, and
# DIR/summary.md, which gets the side-by-side tables (CUB time / ours, each tree's, from the same run).
set -uo pipefail
dir=${OUT:-/tmp/radix-before-after}
max=100000000
while [ $# -gt 0 ]; do
	case "$1" in
		--out) dir=$2; shift 2 ;;
		--max) max=$2; shift 2 ;;
		*) break ;;
	esac
done
if [ $# -lt 3 ]; then
	sed -n '2,19p' "$0" >&2
	exit 2
fi
before=$(cd "$1" && pwd) after=$(cd "$2" && pwd)
shift 2
mkdir -p "$dir"
sum=$dir/summary.md
say() { echo "$*" | tee -a "$sum"; }

cs=compute-sanitizer
command -v $cs >/dev/null || cs=/usr/local/cuda/bin/compute-sanitizer
objdump=cuobjdump
command -v $objdump >/dev/null || objdump=/usr/local/cuda/bin/cuobjdump
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

# in TREE, with a time limit, appending to LOG: COMMAND...
run_in() {
	local tree=$1 log=$2 limit=$3 rc
	shift 3
	echo "== $tree: $*" >>"$log"
	(cd "$tree" && timeout --signal=TERM --kill-after=10 "$limit" "$@") >>"$log" 2>&1
	rc=$?
	say "- $(basename "$log" .log): rc=$rc: $*"
	return $rc
}

# side by side: the rows "| name | mode | n | ... |" of two bench_radix tables (columns: ours ms 5, ratio 9)
table_side_by_side() {
	say ""
	say "| keys | mode | n | before ms | after ms | after / before | CUB / ours before | CUB / ours after |"
	say "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	awk -F'|' '
		FNR == 1 { file++ }
		/^\| (int4|float8)/ && NF >= 13 {
			k = $2 "|" $3 "|" $4
			gsub(/ /, "", $6); gsub(/ /, "", $10)
			if (file == 1) { ms_b[k] = $6; r_b[k] = $10; order[++n] = k }
			else { ms_a[k] = $6; r_a[k] = $10 }
		}
		END {
			for (i = 1; i <= n; i++) {
				k = order[i]; split(k, p, "|")
				if (!(k in ms_a)) continue
				printf("|%s|%s|%s| %s | %s | %.3f | %s | %s |\n", p[1], p[2], p[3], ms_b[k], ms_a[k],
					   ms_a[k] / ms_b[k], r_b[k], r_a[k])
			}
		}' "$1" "$2" | tee -a "$sum"
}

# side by side: the rows "| distribution | mode | CUB | ours | ratio | ... |" of two bench_radix --dist tables
dist_side_by_side() {
	say ""
	say "| distribution | mode | CUB / ours before | CUB / ours after | ours ms before | ours ms after |"
	say "| --- | --- | ---: | ---: | ---: | ---: |"
	awk -F'|' '
		FNR == 1 { file++ }
		/^\| / && $3 ~ /keys|pairs/ && NF >= 8 {
			k = $2 "|" $3
			gsub(/ /, "", $5); gsub(/ /, "", $6)
			if (file == 1) { o_b[k] = $5; r_b[k] = $6; order[++n] = k }
			else { o_a[k] = $5; r_a[k] = $6 }
		}
		END {
			for (i = 1; i <= n; i++) {
				k = order[i]; split(k, p, "|")
				printf("|%s|%s| %s | %s | %s | %s |\n", p[1], p[2], r_b[k], r_a[k], o_b[k], o_a[k])
			}
		}' "$1" "$2" | tee -a "$sum"
}

# registers, spills and stack per kernel from ptxas -v of kernels/radix_sort.cu
ptxas_regs() {
	(cd "$1" && "$nvcc" -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -Xcompiler -fPIC \
		--expt-relaxed-constexpr -Ikernels -Xptxas -v -c -o /dev/null kernels/radix_sort.cu 2>&1) |
		awk '/Compiling entry function/ { f = $0; sub(/.*function .?/, "", f); sub(/.? for .*/, "", f) }
			/spill stores/ { s = $1 "," $5 "/" $9 }
			/Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") r = $(i + 1); print f, r, s }' |
		sed -E 's/22gs_radix_no_instrument//' | sort
}

say "# radix before/after on $(hostname) at $(date -u '+%Y-%m-%d %H:%M UTC')"
say "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null)"
say "before: $before ($(git -C "$before" rev-parse --short HEAD 2>/dev/null || echo '?')); after: $after ($(git -C "$after" rev-parse --short HEAD 2>/dev/null || echo '?'))"

for phase in "$@"; do
	say ""
	say "## $phase"
	case "$phase" in
		build)
			for t in before after; do
				tree=$before; [ $t = after ] && tree=$after
				run_in "$tree" "$dir/build-$t.log" 1500 make -s -j"$(nproc)" CUDA=1 bench/bin/bench_radix \
					bench/bin/bench_comparison test/bin/test_gpu_sort
			done ;;
		regs)
			ptxas_regs "$before" >"$dir/regs-before.txt"
			ptxas_regs "$after" >"$dir/regs-after.txt"
			say ""
			say '```'
			join -a1 -a2 -e- -o 0,1.2,1.3,2.2,2.3 "$dir/regs-before.txt" "$dir/regs-after.txt" |
				awk '{ printf("%-100s regs %s -> %s, stack,spill st/ld %s -> %s\n", $1, $2, $4, $3, $5) }' |
				tee -a "$sum"
			say '```' ;;
		sass)
			for t in before after; do
				tree=$before; [ $t = after ] && tree=$after
				$objdump -sass "$tree/bench/bin/bench_radix" 2>/dev/null | awk '
					/Function : / { name = $3 }
					name ~ /gs_radix_(onesweep|histogram)_kernel/ && /\/\*[0-9a-f]+\*\// { n[name]++ }
					END { for (k in n) print k, n[k] }' | sed -E 's/22gs_radix_no_instrument//' | sort >"$dir/sass-$t.txt"
			done
			say '```'
			join -a1 -a2 -e- -o 0,1.2,2.2 "$dir/sass-before.txt" "$dir/sass-after.txt" |
				awk '{ printf("%-100s instructions %s -> %s\n", $1, $2, $3) }' | tee -a "$sum"
			say '```' ;;
		table)
			run_in "$before" "$dir/table-before.log" 580 bench/bin/bench_radix --max "$max"
			run_in "$after" "$dir/table-after.log" 580 bench/bin/bench_radix --max "$max"
			table_side_by_side "$dir/table-before.log" "$dir/table-after.log" ;;
		dist)
			run_in "$before" "$dir/dist-before.log" 300 bench/bin/bench_radix --dist
			run_in "$after" "$dir/dist-after.log" 300 bench/bin/bench_radix --dist
			dist_side_by_side "$dir/dist-before.log" "$dir/dist-after.log" ;;
		comparison)
			run_in "$before" "$dir/comparison-before.log" 420 bench/bin/bench_comparison --only quick,small
			run_in "$after" "$dir/comparison-after.log" 420 bench/bin/bench_comparison --only quick,small
			say "(the radix columns of comparison-before.log and comparison-after.log)" ;;
		tests)
			run_in "$after" "$dir/tests-after.log" 300 test/bin/test_gpu_sort --algorithm radix
			run_in "$after" "$dir/tests-after.log" 300 bench/bin/bench_radix --check-ballot
			run_in "$after" "$dir/tests-after.log" 300 $cs --tool memcheck --error-exitcode 1 \
				test/bin/test_gpu_sort --algorithm radix --quick --type int4,float8,int2
			run_in "$after" "$dir/tests-after.log" 300 $cs --tool racecheck --error-exitcode 1 \
				test/bin/test_gpu_sort --algorithm radix --quick --type int4,float8 --dist uniform,few_distinct,sorted
			say "$(grep -E '^# [0-9]+ passed|^[0-9]+ passed|passed, [0-9]+ failed|ERROR SUMMARY|RACECHECK SUMMARY' \
				"$dir/tests-after.log")" ;;
		*)
			say "unknown phase $phase" ;;
	esac
done
say ""
say "done in ${SECONDS}s"
