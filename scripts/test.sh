#!/bin/bash
# scripts/test.sh: sets up what is missing, builds and installs gpusort, runs
# the pg_regress suite in a throwaway cluster and the C tests of kernels/,
# and ends with one line "N passed, N failed".
#
#   bash scripts/test.sh            # CUDA build when nvcc is found
#   bash scripts/test.sh CUDA=0     # make arguments pass through
#   PGOPTIONS='-c gpusort.device=gpu' bash scripts/test.sh   # the suite on the GPU
#
# Counts: each pg_regress test, each "ok"/"not ok" line of the C tests
# (a C test program that skips itself, e.g. for want of a GPU, counts 0), and
# each TAP line of scripts/hardening.sh --device cpu --quick (issue 6).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GS_ROOT"

gs_ensure_postgres
gs_build_install "$@"
gs_start_cluster

passed=0
failed=0

gs_log "pg_regress${PGOPTIONS:+ with PGOPTIONS=$PGOPTIONS}"
rm -rf results regression.diffs regression.out
make -s installcheck "$@" 2>&1 | tee "$GS_PGDIR/installcheck.log" || true
p=$(grep -cE '^ *(test +)?[^ ]+ +\.\.\. ok' "$GS_PGDIR/installcheck.log" || true)
f=$(grep -cE '^ *(test +)?[^ ]+ +\.\.\. FAILED' "$GS_PGDIR/installcheck.log" || true)
if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
	f=1		# the suite did not run at all
fi
[ -f regression.diffs ] && { gs_log "differences (regression.diffs):"; head -200 regression.diffs; }
passed=$((passed + p))
failed=$((failed + f))

gs_log "C tests of kernels/"
make -s check-kernels "$@" 2>&1 | tee "$GS_PGDIR/check-kernels.log" || true
p=$(grep -cE '^ok ' "$GS_PGDIR/check-kernels.log" || true)
f=$(grep -cE '^not ok ' "$GS_PGDIR/check-kernels.log" || true)
# a program that crashed or failed without TAP lines still counts as a failure
if grep -qE '^make(\[[0-9]+\])?: \*\*\*' "$GS_PGDIR/check-kernels.log" && [ "$f" -eq 0 ]; then
	f=1
fi
passed=$((passed + p))
failed=$((failed + f))

gs_stop_cluster

# the hardening tests of issue 6 on the CPU path, short forms (each in its own cluster);
# GS_SKIP_HARDENING=1 leaves them out, GS_HARDENING_ONLY=a,b picks areas
if [ "${GS_SKIP_HARDENING:-0}" != 1 ] && [ -f scripts/hardening.sh ]; then
	gs_log "hardening tests (test/hardening, CPU path, --quick)"
	hlog=$(mktemp)
	bash scripts/hardening.sh --device cpu --quick --no-build --budget 1200 \
		${GS_HARDENING_ONLY:+--only "$GS_HARDENING_ONLY"} 2>&1 | tee "$hlog" || true
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$hlog" | tail -1 || true)
	if [ -n "$line" ]; then
		passed=$((passed + $(echo "$line" | awk '{print $1}')))
		failed=$((failed + $(echo "$line" | awk '{print $3}')))
	else
		failed=$((failed + 1))		# the runner itself did not finish
	fi
	rm -f "$hlog"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
