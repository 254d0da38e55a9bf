# test/hardening/tap.bash: TAP output and a psql wrapper shared by the scripts of
# test/hardening (source it; not a .sh, so that scripts/hardening.sh does not run it).
#   pass TEXT...     one passed test line
#   fail TEXT...     one failed test line
#   skip TEXT...     one skipped test line ("ok N # SKIP TEXT"), counted as passed
#   ok STATUS TEXT   pass or fail by an exit status: STATUS 0 is a pass
#   figure NAME VALUE UNIT   a measured figure, as scripts/hardening.sh collects them
#   finish           the plan line, then exit 1 if any test failed
#   own_cluster PORT [OPTION...]   a throwaway cluster on PORT (GS_PGPORT wins
#                    if set) with gs_start_cluster's OPTIONs, gpusort installed if
#                    it is not; on failure a "Bail out!" line and exit 1.  Needs
#                    scripts/lib.sh sourced first
#   q ARGS...        psql, unaligned and tuples only, stopping at the first error,
#                    under a time limit (Q_LIMIT seconds, default 120); a script
#                    whose psql options or limit differ defines its own q after
#                    sourcing this file
# All of them share the counters tap_n (tests so far) and tap_failed.
tap_n=0
tap_failed=0
pass() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
fail() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $*"; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $*"; }
ok() { if [ "$1" = 0 ]; then pass "$2"; else fail "$2"; fi; }
figure() { echo "# figure: $1 = $2 $3"; }
finish() { echo "1..$tap_n"; exit $((tap_failed > 0)); }
own_cluster() {
	GS_PGPORT=${GS_PGPORT:-$1}
	shift
	gs_ensure_postgres >/dev/null 2>&1 || { echo "Bail out! no PostgreSQL"; exit 1; }
	if [ ! -f "$(pg_config --pkglibdir)/gpusort.so" ]; then
		gs_build_install >/dev/null || { echo "Bail out! build failed"; exit 1; }
	fi
	gs_start_cluster "$@" 2>/dev/null || { echo "Bail out! cluster did not start"; exit 1; }
}
q() { timeout -k 5 "${Q_LIMIT:-120}" psql -X -A -t -q -v ON_ERROR_STOP=1 "$@"; }
