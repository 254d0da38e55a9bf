#!/bin/bash
# scripts/readme-check.sh: runs every ```sql block of README.md, in the README's
# order, in a fresh database of a throwaway cluster, so that no example can go
# stale.  TAP lines, then "N passed, N failed".
#
#   bash scripts/readme-check.sh              # builds and installs gpusort first
#   bash scripts/readme-check.sh --no-build   # the gpusort installed already (scripts/test.sh)
#   bash scripts/readme-check.sh CUDA=0       # make arguments pass through
#
# - Each sql block runs in a psql session of its own (psql -X -q, ON_ERROR_STOP,
#   footers off): an error fails it.  What one block creates, the next ones see.
# - A ```text block that follows a sql block with only blank lines between them
#   is that block's output: psql's output must equal it, blanks at line ends
#   and blank lines at the end aside.  A ```text block that follows no sql
#   block fails: its output would go unchecked.
# - ```sh blocks are not run (scripts/demo.sh, scripts/test.sh and .ci/run run
#   the install commands), except `systemctl restart postgresql`, which restarts
#   the throwaway cluster.
# - The cluster starts as the README's installation finds a server: gpusort not
#   preloaded, and another library (auto_explain, when installed) already in
#   shared_preload_libraries.  The README's preload block must add gpusort and
#   keep that library; after its restart the remaining blocks run in server mode,
#   as the README states.  No GPU is needed: under gpusort.device = auto every
#   sort falls back to the CPU.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GS_ROOT"

build=1
if [ "${1:-}" = --no-build ]; then
	build=0
	shift
fi
readme=${GS_README:-$GS_ROOT/README.md}

passed=0
failed=0
n=0
tap() {		# tap ok|not-ok DESCRIPTION
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - $2"
		passed=$((passed + 1))
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

# The README's fenced blocks as files NNN.LANG in $blocks, and an index of
# "NNN LANG FIRST_LINE LAST_LINE" (the lines inside the fences).
split_blocks() {
	awk -v dir="$blocks" '
		/^```/ {
			if (!inside) {
				lang = substr($0, 4); if (lang == "") lang = "none"
				count++; file = sprintf("%s/%03d.%s", dir, count, lang)
				printf "" > file; first = NR + 1; inside = 1
			} else {
				close(file); inside = 0
				printf "%03d %s %d %d\n", count, lang, first, NR - 1 > (dir "/index")
			}
			next
		}
		inside { print > file }
	' "$readme"
}

# strips blanks at line ends and blank lines at the end
normalise() {
	sed -E 's/[[:space:]]+$//' "$1" | awk '{ lines[NR] = $0 } END {
		last = NR; while (last > 0 && lines[last] == "") last--
		for (i = 1; i <= last; i++) print lines[i] }'
}

# true when only blank lines lie between README lines $1 and $2 (exclusive)
adjacent() {
	[ "$2" -le $(($1 + 1)) ] && return 0
	! sed -n "$(($1 + 1)),$(($2 - 1))p" "$readme" | grep -q '[^[:space:]]'
}

restart_cluster() {
	"${GS_RUN[@]}" pg_ctl -D "$GS_PGDIR/data" -l "$GS_PGDIR/server.log" -w restart >/dev/null ||
		{ tail -20 "$GS_PGDIR/server.log" >&2; return 1; }
}

if [ "$build" = 1 ]; then
	gs_ensure_postgres
	gs_build_install "$@"
else
	PATH=$(pg_config --bindir):$PATH
fi

blocks=$(mktemp -d)
chmod 755 "$blocks"
split_blocks
[ -s "$blocks/index" ] || { echo "no fenced blocks in $readme" >&2; exit 1; }

GS_SERVER_MODE=0 gs_start_cluster
other=
if [ -f "$(pg_config --pkglibdir)/auto_explain.so" ]; then
	other=auto_explain
	psql -X -q -c "ALTER SYSTEM SET shared_preload_libraries = '$other'" && restart_cluster
fi
psql -X -q -c 'CREATE DATABASE readme_check'
export PGDATABASE=readme_check

mapfile -t index <"$blocks/index"
for i in "${!index[@]}"; do
	read -r num lang first last <<<"${index[$i]}"
	file=$blocks/$num.$lang
	where="README.md:$((first - 1))"
	case $lang in
	sql)
		out=$blocks/$num.out
		if psql -X -q -v ON_ERROR_STOP=1 -P footer=off -f "$file" >"$out" 2>"$out.err"; then
			tap ok "$where: sql block runs"
		else
			sed 's/^/# /' "$out.err"
			tap not-ok "$where: sql block runs"
			continue
		fi
		next=${index[$((i + 1))]:-}
		read -r nnum nlang nfirst _ <<<"${next:-x x 0 0}"
		if [ "$nlang" = text ] && adjacent "$((last + 1))" "$((nfirst - 1))"; then
			if diff -u <(normalise "$blocks/$nnum.text") <(normalise "$out") >"$out.diff"; then
				tap ok "$where: output as README.md:$((nfirst - 1)) shows"
			else
				sed 's/^/# /' "$out.diff"
				tap not-ok "$where: output as README.md:$((nfirst - 1)) shows"
			fi
		fi
		;;
	text)
		prev="x x 0 0"
		[ "$i" -gt 0 ] && prev=${index[$((i - 1))]}
		read -r _ plang _ plast <<<"$prev"
		if ! { [ "$plang" = sql ] && adjacent "$((plast + 1))" "$((first - 1))"; }; then
			tap not-ok "$where: text block follows no sql block, so nothing checks it"
		fi
		;;
	sh)
		if grep -qx 'systemctl restart postgresql' "$file"; then
			if restart_cluster; then
				tap ok "$where: the cluster restarts (systemctl restart postgresql)"
			else
				tap not-ok "$where: the cluster restarts (systemctl restart postgresql)"
			fi
		else
			echo "# $where: sh block not run here (the quick start and CI run it)"
		fi
		;;
	esac
done

# what the README's installation promised: gpusort preloaded, the list kept, server mode
libs=$(psql -X -At -c 'SHOW shared_preload_libraries' | tr -d ' ')
want=${other:+$other,}gpusort
if [ "$libs" = "$want" ]; then
	tap ok "shared_preload_libraries is '$libs' after the README's installation"
else
	tap not-ok "shared_preload_libraries is '$libs' after the README's installation, not '$want'"
fi
mode=$(psql -X -At -c 'SELECT mode FROM gpusort_info()' 2>&1 || true)
if [ "$mode" = server ]; then
	tap ok "gpusort runs in server mode"
else
	tap not-ok "gpusort runs in server mode (gpusort_info().mode: $mode)"
fi

gs_stop_cluster
rm -rf "$blocks"
echo "1..$n"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
