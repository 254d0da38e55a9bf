#!/bin/bash
# test/hardening/valgrind.sh: memcheck on the CPU path: the CPU sort's
# C test, and a PostgreSQL server that runs gpusort under valgrind.
#
#   test/hardening/valgrind.sh [--device cpu|gpu|auto] [--quick] [--cases N] [--seed S]
#                              [--timeout S] [--keep-logs DIR]
#
# 1. test/bin/test_cpu_sort --quick under memcheck (made with make when missing):
#    --leak-check=full, definite and indirect leaks count as errors, and any
#    error makes valgrind exit 99.  About 12 s on 2 cores.
# 2. A throwaway cluster whose postgres runs under memcheck (pg_ctl -p names a
#    wrapper: --trace-children=yes, one log per process, --quiet so that a log
#    holds nothing but errors, the suppressions of test/hardening/valgrind.supp),
#    every session with gpusort.device = cpu, running
#    - full mode: the whole pg_regress suite, every test of the Makefile's
#      REGRESS (07_property's 10,000 random cases included).  About 50 minutes on
#      2 cores of an AMD EPYC (02_sort 14, 07_property 33: 25-30 times their
#      native time), so it is run by hand, not under scripts/hardening.sh's 420 s
#      (which therefore gives it --quick unless --valgrind-args says otherwise):
#      bash test/hardening/valgrind.sh --device cpu
#    - --quick (CI, about 2 minutes on 2 cores): pg_regress 01_setup; --cases
#      random cases (default 300) of sql/07_property.sql's generator and checks
#      (its prop_case), seeds --seed (default 4242420000) onwards, the same on
#      every run; and the error paths of 05_errors: a multidimensional array, a
#      statement_timeout in the middle of a sort, an error in the middle of
#      gpu_sort_agg's input, each followed by a right sort in the same backend.
#    It passes when the workload does and, once the server has stopped, every
#    process log is empty.  A failure prints the failing seeds or the pg_regress
#    diffs, and the start of each log that is not empty.
# Under --device gpu: one SKIP line (valgrind and the CUDA driver do not mix);
# --device auto runs the CPU path where no NVIDIA driver is loaded and skips
# where one is.  Without valgrind: one SKIP line saying how to install it.
# --timeout: the limit for the server's workload (default 240 s, full mode 7200 s).
# --keep-logs DIR: copy the process logs there before the cluster is removed.
# Own throwaway cluster on GS_PGPORT (default 55580); the server has to start
# under valgrind, so there is no GS_HARDENING_REUSE_CLUSTER form.
#
# Debian's PostgreSQL is built without USE_VALGRIND: memcheck sees malloc-level
# errors (any overrun of gpusort's array-sized buffers, which are malloc'd or
# palloc'd singly) and uses of undefined bytes, not an overrun of a small palloc
# chunk inside a memory-context block.
set -uo pipefail

device=cpu
quick=0
cases=300
seed=4242420000
limit=
keep=
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--cases) cases=$2; shift 2 ;;
		--seed) seed=$2; shift 2 ;;
		--timeout) limit=$2; shift 2 ;;
		--keep-logs) keep=$2; shift 2 ;;
		-h|--help) sed -n '2,41p' "$0"; exit 0 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done
if [ -z "$limit" ]; then
	if [ "$quick" = 1 ]; then limit=240; else limit=7200; fi
fi

HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib.sh"
source "$HERE/tap.bash"
cd "$GS_ROOT"

echo "# valgrind.sh: device=$device quick=$quick; load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$device" = gpu ] || { [ "$device" = auto ] && [ -e /proc/driver/nvidia/version ]; }; then
	skip "memcheck: valgrind and the CUDA driver do not mix, so it checks the CPU path only (--device cpu)"
	finish
fi
if ! command -v valgrind >/dev/null 2>&1; then
	skip "memcheck: valgrind is not installed (apt-get install valgrind; CI's .ci/run installs it)"
	finish
fi
echo "# $(valgrind --version), $(nproc) cores"

WORK=$(mktemp -d /tmp/gs-valgrind.XXXXXX)
chmod 755 "$WORK"
# an immediate stop first: a fast one can take minutes under valgrind, more
# than scripts/hardening.sh waits after its TERM
cleanup() {
	[ -n "${GS_PGDIR:-}" ] && [ -d "$GS_PGDIR/data" ] &&
		"${GS_RUN[@]}" pg_ctl -D "$GS_PGDIR/data" -m immediate -t 30 -w stop >/dev/null 2>&1
	gs_stop_cluster
	rm -rf "$WORK"
}
trap cleanup EXIT
now() { date +%s.%N; }
secs() { echo "scale=1; ($2 - $1) / 1" | bc; }
show() { sed 's/^/#   /' "$1" | head -"${2:-20}"; }

# ---------------------------------------------------------------- 1. test_cpu_sort
PROG=test/bin/test_cpu_sort
if [ ! -x "$PROG" ]; then
	timeout 900 make -s "$PROG" >"$WORK/make.out" 2>&1 || { fail "make $PROG"; show "$WORK/make.out"; }
fi
if [ -x "$PROG" ]; then
	t0=$(now)
	timeout -k 10 600 valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
		--show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
		--log-file="$WORK/test_cpu_sort.vg" "$PROG" --quick >"$WORK/test_cpu_sort.out" 2>&1
	rc=$?
	figure test_cpu_sort_seconds "$(secs "$t0" "$(now)")" s
	checks=$(grep -c '^ok ' "$WORK/test_cpu_sort.out")
	bad=$(grep -c '^not ok ' "$WORK/test_cpu_sort.out")
	summary=$(grep -o 'ERROR SUMMARY: .*' "$WORK/test_cpu_sort.vg" | tail -1)
	if [ "$rc" = 0 ] && [ "$bad" = 0 ] && [ "$checks" -gt 0 ]; then
		pass "test_cpu_sort --quick under memcheck: $checks checks ok, ${summary:-no summary}, no leaks"
	else
		fail "test_cpu_sort --quick under memcheck: exit $rc, $checks ok, $bad not ok, ${summary:-no summary}"
		grep '^not ok' "$WORK/test_cpu_sort.out" | head -5 | sed 's/^/#   /'
		grep -v '^==[0-9]*== *$' "$WORK/test_cpu_sort.vg" | grep -v 'Copyright\|Command:\|Using Valgrind' | head -60 | sed 's/^/#   /'
	fi
fi

# ---------------------------------------------------------------- 2. the server under memcheck
GS_PGPORT=${GS_PGPORT:-55580}
gs_ensure_postgres >/dev/null 2>&1 || { fail "PostgreSQL found"; finish; }
if [ ! -f "$(pg_config --pkglibdir)/gpusort.so" ]; then
	gs_build_install >/dev/null 2>&1 || { fail "gpusort built and installed"; finish; }
fi
gs_start_cluster 2>"$WORK/start.err" || { fail "throwaway cluster started"; show "$WORK/start.err"; finish; }
trap cleanup EXIT	# gs_start_cluster set its own
"${GS_RUN[@]}" pg_ctl -D "$GS_PGDIR/data" -m fast -w stop >/dev/null 2>&1

# the server's user reads the suppressions and the wrapper and writes the logs here
VG=$WORK/vg
mkdir -p "$VG/logs"
chmod 755 "$VG"
chmod 777 "$VG/logs"
cp "$HERE/valgrind.supp" "$VG/valgrind.supp"
cat >"$VG/postgres" <<EOF
#!/bin/sh
exec valgrind --quiet --tool=memcheck --trace-children=yes --error-limit=no --num-callers=30 \\
	--error-markers=gs-error-begin,gs-error-end --suppressions=$VG/valgrind.supp \\
	--log-file=$VG/logs/pg.%p.log $(pg_config --bindir)/postgres "\$@"
EOF
chmod 755 "$VG/postgres" "$VG/valgrind.supp"
t0=$(now)
if ! "${GS_RUN[@]}" pg_ctl -D "$GS_PGDIR/data" -l "$GS_PGDIR/server.log" -p "$VG/postgres" -t 300 -w start \
	-o "-k $GS_PGDIR -p $GS_PGPORT -c listen_addresses='' -c jit=off" >/dev/null 2>&1; then
	fail "the server started under memcheck"
	show "$GS_PGDIR/server.log"
	finish
fi
figure server_start_seconds "$(secs "$t0" "$(now)")" s
export PGOPTIONS="${PGOPTIONS:-} -c gpusort.device=cpu"
deadline=$((SECONDS + limit))
left() { local l=$((deadline - SECONDS)); [ "$l" -lt 1 ] && l=1; echo "$l"; }

# pg_regress through the Makefile (its REGRESS and REGRESS_OPTS), results under $WORK.
# $1: the tests, empty for all of REGRESS
regress() {
	local what=${1:-all} t0 rc n f
	mkdir -p "$WORK/regress"
	t0=$(now)
	if [ -n "$1" ]; then
		timeout -k 10 "$(left)" make -s installcheck REGRESS="$1" \
			REGRESS_OPTS="--load-extension=gpusort --outputdir=$WORK/regress" >"$WORK/regress.out" 2>&1
	else
		timeout -k 10 "$(left)" make -s installcheck \
			REGRESS_OPTS="--load-extension=gpusort --outputdir=$WORK/regress" >"$WORK/regress.out" 2>&1
	fi
	rc=$?
	figure "regress_seconds" "$(secs "$t0" "$(now)")" s
	n=$(grep -cE '^ *(test +)?[^ ]+ +\.\.\. ok' "$WORK/regress.out")
	f=$(grep -cE '^ *(test +)?[^ ]+ +\.\.\. FAILED' "$WORK/regress.out")
	grep -E '\.\.\. (ok|FAILED)' "$WORK/regress.out" | sed 's/^/# /'
	if [ "$rc" = 0 ] && [ "$f" = 0 ] && [ "$n" -gt 0 ]; then
		pass "pg_regress ($what) with the server under memcheck: $n tests passed"
	else
		fail "pg_regress ($what) with the server under memcheck: exit $rc, $n passed, $f failed"
		show "$WORK/regress.out" 20
		[ -f "$WORK/regress/regression.diffs" ] && show "$WORK/regress/regression.diffs" 60
	fi
}

if [ "$quick" = 0 ]; then
	regress ""
else
	regress 01_setup

	# property cases: sql/07_property.sql's functions (all up to its run), then a fixed seed range
	t0=$(now)
	if ! grep -q '^-- The run:' sql/07_property.sql; then
		fail "property cases: sql/07_property.sql has no '-- The run:' line to cut its functions at"
	else
		{
			echo "CREATE EXTENSION IF NOT EXISTS gpusort;"
			sed '/^-- The run:/,$d' sql/07_property.sql
			cat <<EOF
CREATE TEMP TABLE prop_results AS
SELECT c.* FROM generate_series(0, $((cases - 1))) i, LATERAL prop_case($seed + i) c;
SELECT 'CASES', count(*), count(*) FILTER (WHERE result = 'ok') FROM prop_results;
SELECT 'BAD', seed, type, n, result FROM prop_results WHERE result <> 'ok' ORDER BY seed LIMIT 10;
EOF
		} >"$WORK/prop.sql"
		Q_LIMIT=$(left) q -f "$WORK/prop.sql" >"$WORK/prop.out" 2>&1
		rc=$?
		figure property_cases_seconds "$(secs "$t0" "$(now)")" s
		got=$(grep '^CASES|' "$WORK/prop.out" | cut -d'|' -f2-)
		if [ "$rc" = 0 ] && [ "$got" = "$cases|$cases" ]; then
			pass "$cases property cases (seeds $seed..$((seed + cases - 1))) right under memcheck"
		else
			fail "property cases (seeds $seed..$((seed + cases - 1))): exit $rc, cases|ok = '${got:-none}'; SELECT prop_case(seed) reruns one"
			grep '^BAD|' "$WORK/prop.out" | sed 's/^/#   /'
			grep -v '^BAD|' "$WORK/prop.out" | grep -v '^CASES|' | head -10 | sed 's/^/#   /'
		fi
	fi

	# the error paths, each followed by a right sort in the same backend
	t0=$(now)
	timeout -k 5 "$(left)" psql -X -At -q >"$WORK/errors.out" 2>&1 <<'EOF'
\set VERBOSITY verbose
SELECT 'E1', gpu_sort('{{1,2},{3,4}}'::int4[]);
SELECT 'OK1', gpu_sort('{3,NULL,1,2}'::int4[]) IS NOT DISTINCT FROM '{1,2,3,NULL}'::int4[];
CREATE TEMP TABLE big AS SELECT array_agg(((i::int8 * 7919) % 1000003)::int4) a FROM generate_series(1, 500000) i;
SET statement_timeout = '200ms';
SELECT 'E2', cardinality(gpu_sort(a || a || a || a || a || a || a || a)) FROM big;
RESET statement_timeout;
SELECT 'OK2', gpu_sort(a) = array(SELECT x FROM unnest(a) x ORDER BY x) FROM big;
SELECT 'E3', gpu_sort_agg(100 / (x - 500)) FROM generate_series(1, 1000) x;
SELECT 'OK3', gpu_sort_agg(x::float8, true) = array(SELECT x::float8 FROM generate_series(1, 1000) x ORDER BY x DESC)
  FROM generate_series(1, 1000) x;
SELECT 'OK4', gpu_argsort('{2.5,-1,0,NULL}'::float8[]) = '{2,3,1,4}'::int4[];
EOF
	rc=$?
	figure error_paths_seconds "$(secs "$t0" "$(now)")" s
	states=$(grep -o 'ERROR:  [0-9A-Z]\{5\}' "$WORK/errors.out" | awk '{print $2}' | tr '\n' ' ')
	oks=$(grep -c '^OK[0-9]|t$' "$WORK/errors.out")
	if [ "$rc" = 0 ] && [ "$states" = "0A000 57014 22012 " ] && [ "$oks" = 4 ] && ! grep -q '^E[0-9]|' "$WORK/errors.out"; then
		pass "error paths under memcheck: multidimensional array (0A000), statement_timeout mid-sort (57014), error mid-gpu_sort_agg (22012), each followed by right sorts"
	else
		fail "error paths: want errors 0A000 57014 22012 and 4 right sorts after them (got '$states', $oks right, exit $rc)"
		show "$WORK/errors.out" 30
	fi
fi

# ---------------------------------------------------------------- the logs, once every process has exited
t0=$(now)
"${GS_RUN[@]}" pg_ctl -D "$GS_PGDIR/data" -m fast -t 300 -w stop >/dev/null 2>&1 ||
	fail "the server under memcheck stopped within 300 s"
figure server_stop_seconds "$(secs "$t0" "$(now)")" s
[ -n "$keep" ] && mkdir -p "$keep" && cp "$VG"/logs/pg.*.log "$keep"/ 2>/dev/null
logs=$(find "$VG/logs" -name 'pg.*.log' | wc -l)
dirty=$(find "$VG/logs" -name 'pg.*.log' -size +0c | sort)
figure processes_logged "$logs" processes
ndirty=$(echo -n "$dirty" | grep -c .)
errors=0
for l in $dirty; do
	errors=$((errors + $(grep -c 'gs-error-begin' "$l")))
done
figure process_logs_with_errors "$ndirty" logs
figure memcheck_errors "$errors" errors
if [ "$logs" -lt 5 ]; then
	fail "memcheck logged only $logs processes: the server did not run under valgrind as meant"
elif [ "$ndirty" = 0 ]; then
	pass "memcheck: every one of the $logs process logs of the server is empty (no errors)"
else
	fail "memcheck: $ndirty of the $logs process logs are not empty ($errors distinct errors)"
	for l in $(echo "$dirty" | head -3); do
		echo "#   $(basename "$l"):"
		show "$l" 40
	done
fi
finish
