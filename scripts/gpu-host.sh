#!/bin/bash
# scripts/gpu-host.sh: the whole check of a GPU host, in one go.
#
#   1. kernels:   the C tests of kernels/ that need a GPU (test/bin/test_host_sort and
#                 test_gpu_sort when built), and bench_radix (--tune, then the table)
#   2. regress:   the whole pg_regress suite with gpusort.device = gpu (the same expected
#                 files as on the CPU) in a throwaway cluster
#   3. sql:       bench/sql_bench.sh --devices gpu,cpu and bench/sql_gpu_bench.sh
#   4. hardening: scripts/hardening.sh --device gpu, when present
#
# Each phase has a time limit and the next one runs whatever the last gave; the logs and
# results go to one folder (at most 8 files, so that a remote runner can fetch them all),
# ending with summary.txt.
#
#   bash scripts/gpu-host.sh [--prebuilt] [--out DIR] [--only PHASES] [--quick]
# --prebuilt: install gpusort.so and the test/bench programs as they are (built elsewhere
#   for the same PostgreSQL and CUDA) instead of building them here
# --only kernels,regress,sql,hardening: run only these phases
# --quick: small sizes (a rehearsal; on a machine without a GPU, gpusort.device = gpu
#   errors and the phases say so)
# --quick-kernel-tests: the C tests in their --quick form only
# On a machine without PostgreSQL, source a bundle first (../shared/tools/pg-bundle.sh):
# .pgbundle/activate.sh is sourced when present and no pg_config is on PATH.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"

prebuilt=0
quick=0
quick_tests=0
only=kernels,regress,sql,hardening
dir=${OUT:-}
while [ $# -gt 0 ]; do
	case "$1" in
		--prebuilt) prebuilt=1; shift ;;
		--quick) quick=1; quick_tests=1; shift ;;
		--quick-kernel-tests) quick_tests=1; shift ;;
		--only) only=$2; shift 2 ;;
		--out) dir=$2; shift 2 ;;
		*) echo "usage: $0 [--prebuilt] [--quick] [--quick-kernel-tests] [--only PHASES] [--out DIR]" >&2; exit 2 ;;
	esac
done
dir=${dir:-$root/bench/results/gpu-host-$(date -u +%Y%m%d-%H%M)}
mkdir -p "$dir"

if ! command -v pg_config >/dev/null 2>&1 && [ -f "$root/.pgbundle/activate.sh" ]; then
	# shellcheck disable=SC1091
	source "$root/.pgbundle/activate.sh"
fi
export GS_PREBUILT=$prebuilt
# the test build, as scripts/test.sh makes it (fault injection compiled in)
export INJECTION_POINTS=${INJECTION_POINTS:-1}

summary() { echo "$*" | tee -a "$dir/summary.txt"; }
wanted() { [[ ",$only," == *",$1,"* ]]; }

# phase NAME LOG LIMIT COMMAND...: runs it with a time limit, appending to LOG
phase() {
	local name=$1 log=$2 limit=$3 start=$SECONDS rc tmp
	shift 3
	tmp=$(mktemp)
	echo "== $name: $*" >>"$dir/$log"
	timeout --signal=TERM --kill-after=10 "$limit" "$@" >"$tmp" 2>&1
	rc=$?
	cat "$tmp" >>"$dir/$log"
	summary "$(printf '%-28s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - start))" \
		"$(grep -E '^# [0-9]+ passed, [0-9]+ failed|^[0-9]+ passed, [0-9]+ failed|tests? (passed|failed)' "$tmp" | tail -1)")"
	rm -f "$tmp"
	return $rc
}

summary "gpu-host.sh on $(hostname) at $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
summary "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"

if [ "$prebuilt" = 0 ]; then
	phase build build.log 900 make -s -j"$(nproc)" all test-progs bench-progs ||
		summary "the build failed: see build.log"
fi

if wanted kernels; then
	for t in test_host_sort test_gpu_sort; do
		[ -x test/bin/$t ] && phase "kernels:$t" kernels.log 150 test/bin/$t $([ "$quick_tests" = 1 ] && echo --quick)
	done
	if [ -x bench/bin/bench_radix ]; then
		phase "kernels:bench_radix --tune" kernels.log 120 bench/bin/bench_radix --tune
		phase "kernels:bench_radix" kernels.log 240 bench/bin/bench_radix --out "$dir/radix-table.md" \
			$([ "$quick" = 1 ] && echo --quick)
	fi
fi

if wanted regress; then
	# the suite as scripts/test.sh runs it, with every sort sent to the GPU
	regress() {
		source "$root/scripts/lib.sh"
		gs_ensure_postgres && gs_build_install && gs_start_cluster || return 1
		rm -rf results regression.diffs regression.out
		PGOPTIONS="-c gpusort.device=gpu" make -s installcheck
		local rc=$?
		[ -f regression.diffs ] && head -300 regression.diffs
		gs_stop_cluster
		return $rc
	}
	phase "regress (device=gpu)" regress.log 300 bash -c "$(declare -f regress); root=$root; regress"
fi

if wanted sql; then
	if [ "$quick" = 1 ]; then sizes=10000,100000; else sizes=10000,1000000,10000000; fi
	phase "sql:sql_bench gpu,cpu" sql.log 300 bash bench/sql_bench.sh --devices gpu,cpu --sizes "$sizes" \
		--runs 3 --out "$dir/sql-bench-gpu-cpu.md"
	phase "sql:sql_gpu_bench" sql.log 400 bash bench/sql_gpu_bench.sh --device gpu --runs 3 \
		--out "$dir/sql-gpu-bench.md" $([ "$quick" = 1 ] && echo --quick)
fi

if wanted hardening && [ -f scripts/hardening.sh ]; then
	phase "hardening (device=gpu)" hardening.log 600 bash scripts/hardening.sh --device gpu \
		$([ "$quick" = 1 ] && echo --quick)
fi

summary "done in ${SECONDS}s; results in $dir"
