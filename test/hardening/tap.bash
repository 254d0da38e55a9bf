# test/hardening/tap.bash: TAP output and a psql wrapper shared by concurrency.sh,
# kill.sh and leaks.sh (source it; not a .sh, so that scripts/hardening.sh does not run it).
#   ok STATUS TEXT   one test line; STATUS 0 is a pass
#   figure NAME VALUE UNIT   a measured figure, as scripts/hardening.sh collects them
#   finish           the plan line, then exit 1 if any test failed
#   q ARGS...        psql, unaligned and tuples only, stopping at the first error,
#                    under a time limit (Q_LIMIT seconds, default 120)
tap_n=0
tap_failed=0
ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; tap_failed=$((tap_failed + 1)); fi
}
figure() { echo "# figure: $1 = $2 $3"; }
finish() { echo "1..$tap_n"; exit $((tap_failed > 0)); }
q() { timeout -k 5 "${Q_LIMIT:-120}" psql -X -A -t -q -v ON_ERROR_STOP=1 "$@"; }
