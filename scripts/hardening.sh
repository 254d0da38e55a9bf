#!/bin/bash
# scripts/hardening.sh: the hardening tests (test/hardening/*.sh), in one go.
#
#   bash scripts/hardening.sh --device cpu|gpu [--quick] [--only a,b] [--no-build]
#                             [--<area>-args "ARGS"] [--budget SECONDS]
#
# Installs gpusort once (GS_PREBUILT=1: the files built elsewhere, see scripts/lib.sh),
# then runs every test/hardening/<area>.sh with --device (and --quick), each in its
# own throwaway cluster under a time limit, and prints its TAP lines prefixed with
# [area], one summary line per area, the figures, and last "N passed, N failed".
#
# --only concurrency,kill: just these areas
# --<area>-args: more options for one area, e.g. --concurrency-args "--clients 32 --seconds 60"
# --budget: seconds for all areas together (default 510, so that a GPU host's 10-minute
#   window has room to spare); an area gets min(its own limit, what is left), and an area
#   that cannot start in time is reported as skipped (counted as neither passed nor failed)
# --no-build: gpusort is installed already (scripts/test.sh)
#
# A script that exits non-zero without a "not ok" line (a crash, a time-out) counts one failure.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GS_ROOT"
# the test build: the injection points some areas need (lifecycle, faults)
export INJECTION_POINTS=${INJECTION_POINTS:-1}

device=
quick=0
only=
build=1
budget=510
declare -A extra=()
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--only) only=$2; shift 2 ;;
		--no-build) build=0; shift ;;
		--budget) budget=$2; shift 2 ;;
		--*-args) a=${1#--}; extra[${a%-args}]=$2; shift 2 ;;
		*) echo "usage: $0 --device cpu|gpu [--quick] [--only a,b] [--no-build] [--<area>-args ARGS] [--budget S]" >&2
		   exit 2 ;;
	esac
done
case "$device" in
	cpu|gpu|auto) ;;
	*) echo "$0: --device cpu|gpu|auto is required" >&2; exit 2 ;;
esac

# Each area's own limit (seconds).  Under hardening.sh concurrency runs 8 clients
# for 30 s unless --concurrency-args says otherwise; standalone it defaults to 60 s.
declare -A limit=([concurrency]=180 [kill]=150 [leaks]=240 [cancel]=240 [faults]=150
				  [limits]=300 [valgrind]=420 [server]=240 [lifecycle]=420 [gpu-process]=240
				  [fairness]=240)
# valgrind's full form (the whole pg_regress suite under memcheck) takes about 50 minutes:
# it runs by hand (bash test/hardening/valgrind.sh --device cpu), not under this budget
declare -A default_args=([concurrency]="--seconds 30" [valgrind]="--quick")
order=(concurrency kill leaks cancel faults limits valgrind)

# the areas that exist, in the order above, then any others alphabetically
areas=()
for a in "${order[@]}"; do
	[ -f "test/hardening/$a.sh" ] && areas+=("$a")
done
for f in test/hardening/*.sh; do
	[ -f "$f" ] || continue
	a=$(basename "$f" .sh)
	[[ " ${areas[*]} " == *" $a "* ]] || areas+=("$a")
done
if [ -n "$only" ]; then
	sel=()
	for a in "${areas[@]}"; do [[ ",$only," == *",$a,"* ]] && sel+=("$a"); done
	for a in ${only//,/ }; do
		[[ " ${areas[*]} " == *" $a "* ]] || echo "# no test/hardening/$a.sh" >&2
	done
	areas=("${sel[@]}")
fi

gs_ensure_postgres || exit 1
if [ "$build" = 1 ]; then
	gs_build_install || { echo "0 passed, 1 failed"; exit 1; }
fi

passed=0
failed=0
skipped=()
summary=()
figures=()
start_all=$SECONDS
for a in "${areas[@]}"; do
	left=$((budget - (SECONDS - start_all)))
	lim=${limit[$a]:-150}
	# an area told to run for S seconds (--seconds S) gets S + 150 s at least
	if [[ " ${extra[$a]:-} " =~ \ --seconds\ ([0-9]+) ]] && [ $((BASH_REMATCH[1] + 150)) -gt "$lim" ]; then
		lim=$((BASH_REMATCH[1] + 150))
	fi
	[ "$lim" -gt "$left" ] && lim=$left
	if [ "$lim" -lt 20 ]; then
		skipped+=("$a")
		summary+=("$(printf '%-12s skipped: %ss of the %ss budget left' "$a" "$left" "$budget")")
		continue
	fi
	args=(--device "$device")
	[ "$quick" = 1 ] && args+=(--quick)
	# shellcheck disable=SC2206
	[ "$quick" = 0 ] && [ -n "${default_args[$a]:-}" ] && [ -z "${extra[$a]:-}" ] && args+=(${default_args[$a]})
	# shellcheck disable=SC2206
	[ -n "${extra[$a]:-}" ] && args+=(${extra[$a]})
	gs_log "hardening: $a ${args[*]} (limit ${lim}s)"
	t0=$SECONDS
	log=$(mktemp)
	timeout --signal=TERM --kill-after=20 "$lim" bash "test/hardening/$a.sh" "${args[@]}" >"$log" 2>&1
	rc=$?
	sed "s/^/[$a] /" "$log"
	p=$(grep -cE '^ok [0-9]+' "$log")
	f=$(grep -cE '^not ok [0-9]+' "$log")
	note=
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		f=$((f + 1))
		note=" (timed out after ${lim}s)"
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1
		note=" (exit status $rc without a failed test)"
	elif [ "$rc" = 0 ] && [ "$p" = 0 ]; then
		f=1
		note=" (no test ran)"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	summary+=("$(printf '%-12s %3d passed, %d failed, %4ss%s' "$a" "$p" "$f" "$((SECONDS - t0))" "$note")")
	while IFS= read -r line; do figures+=("[$a] ${line#\# figure: }"); done < <(grep "^# figure:" "$log")
	rm -f "$log"
done

echo "# hardening summary (device=$device$([ "$quick" = 1 ] && echo ", quick"), $((SECONDS - start_all)) s)"
for s in "${summary[@]}"; do echo "# $s"; done
for s in "${figures[@]}"; do echo "# $s"; done
[ ${#skipped[@]} -gt 0 ] && echo "# skipped for want of time: ${skipped[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
