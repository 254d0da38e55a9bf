#!/bin/bash
# scripts/pg-regress-suite.sh [--pg 15|18] [--out DIR] [--report FILE] [--no-build] [MAKE ARGS]
#
# PostgreSQL's own regression suite (src/test/regress, installcheck-parallel)
# twice against the same server binaries: cluster A without gpusort, cluster B
# with shared_preload_libraries = gpusort and the settings that put its sort
# node on every sort it can take; then compares the two runs' results/NAME.out
# statement by statement (scripts/pg-regress-compare.pl): plan text, rows of
# equal keys in another order and the results of the statements listed in
# --allowed are listed, any other difference fails.  The
# comparison is between the two runs, not against the suite's expected/ files
# (the suite of another minor release fails a few tests on both).
#
#   --pg N       PostgreSQL major version (default: the pg_config on PATH, else
#                15), found as scripts/test.sh does (lib.sh's gs_use_postgres)
#   --out DIR    where both runs' results/, their logs and the report go
#                (default: a new /tmp/gpusort-pg-suite-N.XXXXXX)
#   --report F   the markdown report (default DIR/report.md)
#   --no-build   use the gpusort already installed (scripts/test.sh built it)
#   --allowed F  the statements whose results depend on the order of rows with
#                equal sort keys (default scripts/pg-regress-suite.allowed):
#                their differences are listed as "ties", not failures
#   MAKE ARGS    for building gpusort (default CUDA=0)
#
#   GS_SUITE_SETTINGS   run B's server settings beyond the preload
#                       (default "-c gpusort.sort_node_min_rows=0")
#   GS_PGPORT           the clusters' port (one at a time)
#
# The suite's sources are the newest postgresql-N_*.orig.tar.bz2 of the
# folder pg-build.sh uses (GS_PG_SRC), unpacked and configured once into
# $GS_PG_CACHE/regress-src-VERSION, where only src/test/regress is built.
# Exit status: 0 when no result differs (but for the allowed ones), 1 when one does, 2 when it cannot run,
# 3 when there is no source tarball.  Last line:
#   pg-regress-suite N: N tests, N plan-text, N order, N ties, N result differences
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GS_ROOT"

pg='' out='' report='' build=1 allowed=$GS_ROOT/scripts/pg-regress-suite.allowed
while [ $# -gt 0 ]; do
	case $1 in
	--pg) pg=${2:?--pg needs a version}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--report) report=${2:?}; shift 2 ;;
	--no-build) build=0; shift ;;
	--allowed) allowed=${2:?}; shift 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- CUDA=0
settings=${GS_SUITE_SETTINGS--c gpusort.sort_node_min_rows=0}
if [ -z "$pg" ]; then
	pg=15
	command -v pg_config >/dev/null 2>&1 && pg=$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
fi

# Unpacks and configures the newest source of major version $1 once and
# builds src/test/regress (pg_regress, regress.so and the spi modules it
# loads); prints the folder of src/test/regress.
prepare_suite() {
	local major=$1 src tarball version tree
	src=$(gs_pg_src_dir)
	tarball=$(cd "$src" 2>/dev/null && ls postgresql-"$major"_*.orig.tar.bz2 2>/dev/null | sort -V | tail -1 || true)
	[ -n "$tarball" ] || { echo "pg-regress-suite: no postgresql-${major}_*.orig.tar.bz2 in $src (set GS_PG_SRC)" >&2; return 3; }
	version=${tarball#postgresql-"${major}"_}
	version=${version%.orig.tar.bz2}
	tree=${GS_PG_CACHE:-/var/cache/gpusort}/regress-src-$version
	if [ ! -f "$tree/.complete" ]; then
		gs_log "unpacking and configuring PostgreSQL $version's regression suite into $tree (once)"
		(cd "$src" && grep " $tarball\$" SHA256SUMS | sha256sum -c --quiet -) >&2 ||
			{ echo "pg-regress-suite: $tarball does not match SHA256SUMS" >&2; return 1; }
		rm -rf "$tree"
		mkdir -p "$tree"
		tar -xjf "$src/$tarball" -C "$tree" --strip-components=1
		gs_progress "configuring and building the regression suite" build_suite "$tree" ||
			{ tail -30 "$tree/build.log" >&2; return 1; }
		touch "$tree/.complete"
	fi
	echo "$tree/src/test/regress"
}

# Configures the source tree $1 and builds its src/test/regress (log: $1/build.log).
build_suite() (
	cd "$1" && { ./configure --without-icu --without-readline &&
		make -s -j"$(nproc 2>/dev/null || echo 2)" -C src/test/regress; } >"$1/build.log" 2>&1
)

# pg_regress of the suite $regress against the running cluster, into $1
run_pg_regress() {
	"${GS_RUN[@]}" "$regress/pg_regress" --inputdir="$regress" --outputdir="$1" --bindir="$(pg_config --bindir)" \
		--dlpath="$regress" --max-concurrent-tests=20 --schedule="$regress/parallel_schedule" \
		--host="$PGHOST" --port="$PGPORT" --user="$PGUSER" >"$1/pg_regress.log" 2>&1
}

# run_suite NAME SERVER_MODE SETTINGS: one cluster, installcheck-parallel into
# $out/NAME (results/, regression.diffs, pg_regress.log, server.log).  Both
# runs write into $out/run first: some outputs show its path.
run_suite() {
	local name=$1 run=$out/run start
	shift
	start=$(date +%s)
	rm -rf "$run"
	mkdir -p "$run/results"
	GS_SERVER_MODE=$1 gs_start_cluster "$2" || return 2
	# pg_regress runs as the server's user: psql and the server (COPY TO,
	# lo_export) write the same files in results/
	[ -z "${GS_OWNER:-}" ] || chown -R "$GS_OWNER" "$run"
	[ "$name" = a ] || check_node
	gs_log "installcheck-parallel, run $name ($(pg_config --version)${2:+, $2}; a minute or more)"
	gs_progress "installcheck-parallel, run $name" run_pg_regress "$run" || true
	grep -E 'tests? (passed|failed)|failed \(|All [0-9]+ tests' "$run/pg_regress.log" | sed 's/^/   /' >&2 || true
	cp "$GS_PGDIR/server.log" "$run/server.log"
	gs_stop_cluster
	mv "$run" "$out/$name"
	echo "$name $(($(date +%s) - start))" >>"$out/times"
}

# Notes for the report on run B: whether its settings exist and whether the
# planner puts the node on a plain ORDER BY.
check_node() {
	local name plan
	# shellcheck disable=SC2086
	for name in $(printf '%s\n' $settings | sed -nE 's/^(gpusort\.[a-z_]+)=.*/\1/p'); do
		if [ "$(psql -XAtc "select count(*) from pg_settings where name = '$name'")" = 1 ]; then
			echo "- run B: \`$name\` = $(psql -XAtc "show $name")" >>"$out/notes.md"
		else
			echo "- run B: this gpusort has no setting \`$name\`: the node runs at its own costs" >>"$out/notes.md"
			gs_log "WARNING: this gpusort has no setting $name: the node runs at its own costs"
		fi
	done
	plan=$(psql -XAtc "explain (costs off) select g from generate_series(1, 10) g order by g desc")
	if grep -q 'Custom Scan (gpusort)' <<<"$plan"; then
		echo "- run B: the node sorts \`generate_series(1, 10) ORDER BY g DESC\`" >>"$out/notes.md"
	else
		echo "- run B: the node does not sort \`generate_series(1, 10) ORDER BY g DESC\`" >>"$out/notes.md"
		gs_log "the node does not sort a plain ORDER BY of 10 rows in run B"
	fi
}

start=$(date +%s)
rc=0
gs_use_postgres "$pg" || rc=$?
[ "$rc" = 0 ] || exit "$rc"
pg=$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
rc=0
regress=$(prepare_suite "$pg") || rc=$?
[ "$rc" = 0 ] || exit "$([ "$rc" = 3 ] && echo 3 || echo 2)"
if [ "$build" = 1 ]; then
	gs_build_install "$@" || exit 2
fi
[ -n "$out" ] || out=$(mktemp -d /tmp/gpusort-pg-suite-"$pg".XXXXXX)
mkdir -p "$out"
chmod 755 "$out"
out=$(cd "$out" && pwd)
report=${report:-$out/report.md}
rm -rf "$out/a" "$out/b" "$out/times"
{
	echo "- server: $(pg_config --version) ($(pg_config --bindir)); suite: $(dirname "$(dirname "$(dirname "$regress")")")"
	echo "- run A: no gpusort; run B: \`shared_preload_libraries = gpusort\`${settings:+ and \`$settings\`}"
} >"$out/notes.md"

run_suite a 0 "" || exit 2
run_suite b 1 "$settings" || exit 2

# the suite's own failures of each run, against expected/ (the same in both when only plan text differs)
for run in a b; do
	echo "- run ${run^^}: $(grep -cE '^not ok|\.\.\. FAILED|failed \(ignored\)' "$out/$run/pg_regress.log" || true) tests differ from expected/; $(awk -v r="$run" '$1 == r { print $2 }' "$out/times") s" >>"$out/notes.md"
done
diff -ru "$out/a/results" "$out/b/results" >"$out/a-b.diff" || true
echo "- both runs' results/: $out/a, $out/b; their whole difference: $out/a-b.diff" >>"$out/notes.md"

gs_log "pg-regress-suite $pg: $(($(date +%s) - start)) s (runs: $(tr '\n' ' ' <"$out/times")); comparing (report: $report)"
rc=0
perl "$GS_ROOT/scripts/pg-regress-compare.pl" --sql "$regress/sql" --a "$out/a/results" --b "$out/b/results" \
	--a-log "$out/a/pg_regress.log" --b-log "$out/b/pg_regress.log" --server-log "$out/b/server.log" \
	--notes "$out/notes.md" --report "$report" --label "$pg" --allowed "$allowed" || rc=$?
exit "$rc"
