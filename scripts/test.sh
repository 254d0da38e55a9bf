#!/bin/bash
# scripts/test.sh: sets up what is missing, builds and installs gpusort, runs
# the pg_regress suite in a throwaway cluster, the C tests of kernels/, the
# hardening tests and the other checks below, and ends with the failed tests
# again, one line each under "== failed (N):" (none when all passed), the
# stages that did not run and why ("== skipped: ..."), then
# "N passed, N failed, N skipped" (N skipped: how many stages did not run).
#
#   bash scripts/test.sh            # CUDA build when nvcc is found
#   bash scripts/test.sh CUDA=0     # make arguments pass through
#   bash scripts/test.sh --pg 15,18 CUDA=0   # pg_regress against each PostgreSQL
#   PGOPTIONS='-c gpusort.device=gpu' bash scripts/test.sh   # the suite on the GPU
#
# --pg LIST (or GS_PG=LIST): the PostgreSQL versions to build and run the
# pg_regress suite against, comma-separated (see gs_use_postgres in lib.sh:
# 15 is Debian's, 18 is built from source once into a cache).  Without it,
# the PostgreSQL whose pg_config is on PATH, else Debian's 15.  The C tests
# and the hardening tests run once, with the first.
#
# Counts: each TAP line of the scripts' own tests (test/scripts/*.sh, which
# need no cluster), each pg_regress test of each PostgreSQL, each "ok"/"not ok" line of
# the C tests (a C test program that skips itself, e.g. for want of a GPU,
# counts 0), each TAP line of scripts/hardening.sh --device cpu --quick, each
# TAP line of scripts/readme-check.sh (the README's SQL examples, on each
# PostgreSQL; GS_SKIP_README=1 leaves them out), and PostgreSQL's own
# regression suite with gpusort's node forced on, one per PostgreSQL
# (scripts/pg-regress-suite.sh; GS_SKIP_PG_SUITE=1 leaves it out), each TAP
# line of scripts/package-check.sh (GS_SKIP_PACKAGE=1) and of
# scripts/citus-check.sh at 10^5 rows on Debian's 15 (GS_SKIP_CITUS=1).
# The subtotals of the programs show as "N ok, N not ok", so that the last
# line is the only one of the form "N passed, N failed".  A stage skipped (a
# GS_SKIP_* setting, a PostgreSQL or a suite with no source in ../shared/pg-src,
# Citus with none in ../shared/citus, the package without its build
# dependencies, hardening areas past their time budget) counts neither way:
# it is named on the line before the last and counted in "N skipped".
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GS_ROOT"

# the test build: fault injection and the server's injection points compiled in
# (see the Makefile); `make` reads it from the environment
export INJECTION_POINTS=${INJECTION_POINTS:-1}

pgs=${GS_PG:-}
if [ "${1:-}" = --pg ]; then
	pgs=${2:?--pg needs a list, e.g. 15,18}
	shift 2
fi
IFS=, read -r -a pg_list <<<"${pgs:-default}"

passed=0
failed=0
skipped=()
failures=()

# note_failures STAGE LOG: keeps the failed tests' lines of a stage's log
# (TAP "not ok", pg_regress "... FAILED", a hardening area's summary with
# failures) to list them again at the end, where a log's tail shows them
note_failures() {
	local line
	while IFS= read -r line; do
		failures+=("$1: ${line:0:240}")
	done < <(grep -E 'not ok +[0-9]+|\.\.\. FAILED|^# [a-z0-9-]+ +[0-9]+ passed, [1-9][0-9]* failed' "$2" || true)
}

# skip STAGE: a stage that did not run, with why in STAGE ("Citus (no source in DIR)")
skip() {
	skipped+=("$1")
	gs_log "SKIPPED: $1"
}

# adds the last "N passed, N failed" line of the log $1 of the stage $2 to the
# counts; a log without one (the program did not finish) counts one failure
add_subtotal() {
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1 || true)
	if [ -n "$line" ]; then
		passed=$((passed + $(echo "$line" | awk '{print $1}')))
		failed=$((failed + $(echo "$line" | awk '{print $3}')))
	else
		failed=$((failed + 1))
		failures+=("$2: ended without its counts")
	fi
	note_failures "$2" "$1"
}

# shows a program's output with its own "N passed, N failed" lines reworded
subtotals() {
	sed -E -u 's/^(# )?([0-9]+) passed, ([0-9]+) failed$/\1\2 ok, \3 not ok (subtotal)/'
}

# the scripts' own tests: lib.sh's set-up tried with fakes (no cluster, no build)
for t in test/scripts/*.sh; do
	[ -f "$t" ] || continue
	gs_log "$t"
	tlog=$(mktemp)
	bash "$t" 2>&1 | tee "$tlog" | subtotals || true
	add_subtotal "$tlog" "$t"
	rm -f "$tlog"
done

# pg_regress through the Makefile in a cluster of the PostgreSQL on PATH;
# pg_regress writes "test NAME ... ok" up to 15 and "ok N - NAME" from 16 on
run_regress() {
	local log=$1 p f
	shift
	gs_log "pg_regress against $(pg_config --version)${PGOPTIONS:+ with PGOPTIONS=$PGOPTIONS}"
	rm -rf results regression.diffs regression.out
	make -s installcheck "$@" 2>&1 | tee "$log" || true
	p=$(grep -cE '^ *(test +)?[^ ]+ +\.\.\. ok|^ok +[0-9]+ +- ' "$log" || true)
	f=$(grep -cE '^ *(test +)?[^ ]+ +\.\.\. FAILED|^not ok +[0-9]+ +- ' "$log" || true)
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		f=1		# the suite did not run at all
		failures+=("pg_regress on $(pg_config --version): no test ran")
	fi
	note_failures "pg_regress on $(pg_config --version)" "$log"
	[ -f regression.diffs ] && { gs_log "differences (regression.diffs):"; head -200 regression.diffs; }
	gs_log "pg_regress against $(pg_config --version): $p ok, $f not ok"
	passed=$((passed + p))
	failed=$((failed + f))
}

first=1
for pg in "${pg_list[@]}"; do
	[ "$pg" = default ] && pg=
	rc=0
	gs_use_postgres "$pg" || rc=$?
	if [ "$rc" = 3 ]; then
		# no tarball beside the clone (GS_PG_SRC names another folder): not a failure
		# of gpusort, so it is reported and left out of the counts
		skip "PostgreSQL $pg (no source in $(gs_pg_src_dir))"
		continue
	fi
	if [ "$rc" != 0 ] || ! gs_build_install "$@" || ! gs_start_cluster; then
		gs_log "PostgreSQL ${pg:-on PATH}: could not build, install or start"
		failed=$((failed + 1))
		gs_stop_cluster
		continue
	fi
	run_regress "$GS_PGDIR/installcheck.log" "$@"

	if [ "$first" = 1 ]; then
		gs_log "C tests of kernels/"
		make -s check-kernels "$@" 2>&1 | tee "$GS_PGDIR/check-kernels.log" | subtotals || true
		p=$(grep -cE '^ok ' "$GS_PGDIR/check-kernels.log" || true)
		f=$(grep -cE '^not ok ' "$GS_PGDIR/check-kernels.log" || true)
		# a program that crashed or failed without TAP lines still counts as a failure
		if grep -qE '^make(\[[0-9]+\])?: \*\*\*' "$GS_PGDIR/check-kernels.log" && [ "$f" -eq 0 ]; then
			f=1
			failures+=("C tests: $(grep -E '^make(\[[0-9]+\])?: \*\*\*' "$GS_PGDIR/check-kernels.log" | head -1)")
		fi
		note_failures "C tests" "$GS_PGDIR/check-kernels.log"
		passed=$((passed + p))
		failed=$((failed + f))
	fi
	gs_stop_cluster

	# the README's SQL examples, run and their outputs compared in a cluster of
	# their own (scripts/readme-check.sh); GS_SKIP_README=1 leaves them out
	if [ "${GS_SKIP_README:-0}" != 1 ]; then
		gs_log "the README's examples (scripts/readme-check.sh)"
		rlog=$(mktemp)
		bash scripts/readme-check.sh --no-build 2>&1 | tee "$rlog" | subtotals || true
		add_subtotal "$rlog" "README examples ($(pg_config --version))"
		rm -f "$rlog"
	elif [ "$first" = 1 ]; then
		skip "the README's examples (GS_SKIP_README=1)"
	fi

	# the hardening tests on the CPU path, short forms (each in its own cluster);
	# GS_SKIP_HARDENING=1 leaves them out, GS_HARDENING_ONLY=a,b picks areas
	if [ "$first" = 1 ] && [ "${GS_SKIP_HARDENING:-0}" != 1 ] && [ -f scripts/hardening.sh ]; then
		gs_log "hardening tests (test/hardening, CPU path, --quick)"
		hlog=$(mktemp)
		bash scripts/hardening.sh --device cpu --quick --no-build --budget 1200 \
			${GS_HARDENING_ONLY:+--only "$GS_HARDENING_ONLY"} 2>&1 | tee "$hlog" | subtotals || true
		add_subtotal "$hlog" hardening
		line=$(sed -n 's/^# skipped for want of time: //p' "$hlog" | tail -1)
		[ -z "$line" ] || skip "hardening areas ${line// /, } (past the time budget)"
		rm -f "$hlog"
	elif [ "$first" = 1 ]; then
		skip "the hardening tests (GS_SKIP_HARDENING=1)"
	fi
	first=0

	# PostgreSQL's own regression suite with and without gpusort's node, one
	# count per PostgreSQL (scripts/pg-regress-suite.sh); GS_SKIP_PG_SUITE=1 leaves it out
	major=$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	if [ "${GS_SKIP_PG_SUITE:-0}" != 1 ]; then
		gs_log "PostgreSQL $major's own regression suite with and without gpusort (scripts/pg-regress-suite.sh, a few minutes)"
		rc=0
		slog=$(mktemp)
		bash scripts/pg-regress-suite.sh --pg "$major" --no-build "$@" 2>&1 | tee "$slog" | subtotals || rc=$?
		case $rc in
		0) passed=$((passed + 1)) ;;
		3) skip "PostgreSQL $major's own regression suite (no source in $(gs_pg_src_dir))" ;;
		*)
			failed=$((failed + 1))
			failures+=("PostgreSQL $major's own suite (exit $rc): $(grep -E '^pg-regress-suite ' "$slog" | tail -1)")
			;;
		esac
		rm -f "$slog"
	else
		skip "PostgreSQL $major's own regression suite (GS_SKIP_PG_SUITE=1)"
	fi
done

# the Debian package (debian/): built in a copy of the tree, checked in a
# throwaway cluster of the PostgreSQL it is for (scripts/package-check.sh,
# which counts its own TAP lines; GS_PACKAGE_INSTALL=1 checks it installed with
# dpkg -i, then removes it); GS_SKIP_PACKAGE=1 leaves it out
if [ "${GS_SKIP_PACKAGE:-0}" != 1 ] && [ -f scripts/package-check.sh ]; then
	gs_log "Debian package (scripts/package-check.sh)"
	plog=$(mktemp)
	rc=0
	bash scripts/package-check.sh "$@" 2>&1 | tee "$plog" | subtotals || rc=$?
	if [ "$rc" = 3 ]; then
		skip "the Debian package (its build dependencies are missing)"
	else
		add_subtotal "$plog" "Debian package"
	fi
	rm -f "$plog"
elif [ "${GS_SKIP_PACKAGE:-0}" = 1 ]; then
	skip "the Debian package (GS_SKIP_PACKAGE=1)"
fi

# Citus: every aggregate and function on a coordinator and two workers against
# a local table, and that the plain aggregates are pushed down
# (scripts/citus-check.sh builds Citus once into /var/cache/gpusort), on
# Debian's PostgreSQL 15 at 10^5 rows; GS_SKIP_CITUS=1 leaves it out
if [ "${GS_SKIP_CITUS:-0}" = 1 ]; then
	skip "Citus (GS_SKIP_CITUS=1)"
elif [ ! -x /usr/lib/postgresql/15/bin/pg_config ]; then
	skip "Citus (no Debian PostgreSQL 15 in /usr/lib/postgresql/15)"
elif [ -f scripts/citus-check.sh ]; then
	gs_log "Citus (scripts/citus-check.sh, PostgreSQL 15, 10^5 rows)"
	clog=$(mktemp)
	rc=0
	PATH=/usr/lib/postgresql/15/bin:$PATH bash scripts/citus-check.sh --rows 100000 --runs 1 2>&1 |
		tee "$clog" | subtotals || rc=$?
	if [ "$rc" = 3 ] && ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$clog"; then
		# its last word on why: "citus-check.sh: DIR/citus-V.tar.gz not found (set GS_CITUS_SRC)"
		why=$(sed -nE 's/ \(set GS_CITUS_SRC\)$//; s/^citus-check.sh: //p' "$clog" | tail -1)
		skip "Citus (${why:-its source or build is missing})"
	else
		add_subtotal "$clog" Citus
	fi
	rm -f "$clog"
fi

# the failed tests again, the stages that did not run, then the counts
if [ ${#failures[@]} -gt 0 ]; then
	echo "== failed (${#failures[@]}):"
	for line in "${failures[@]}"; do echo "==   $line"; done
fi
line=nothing
[ ${#skipped[@]} -eq 0 ] || line=$(printf '%s, ' "${skipped[@]}")
echo "== skipped: ${line%, }"
echo "$passed passed, $failed failed, ${#skipped[@]} skipped"
[ "$failed" -eq 0 ]
