#!/bin/bash
# test/scripts/ensure-postgres.sh: what scripts/lib.sh's gs_ensure_postgres does
# with the PostgreSQL it finds, tried with a fake pg_config and a fake apt-get
# first on PATH (the fake apt-get records its arguments and installs nothing
# but what a case makes it; the machine's own PostgreSQL and packages stay as
# they are):
#  1. a Debian PostgreSQL N with its client (PGXS) but without the server
#     headers (includedir-server /usr/include/postgresql/N/server, empty): apt
#     installs postgresql-server-dev-N; when that brings no postgres.h, one
#     line names the package and it fails;
#  2. the same, where the install brings the headers: it goes on and puts the
#     server's bindir first on PATH;
#  3. a PostgreSQL elsewhere without postgres.h: no apt, one line naming what
#     to install, failure;
#  4. one without PGXS's makefile: the same;
#  5. one with both: no apt, success.
# TAP on stdout, then "N passed, N failed".
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../../scripts/lib.sh
work=$(mktemp -d /tmp/gpusort-ensure-pg.XXXXXX)
trap 'rm -rf "$work"' EXIT

n=0
failed=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else failed=$((failed + 1)); echo "not ok $n - $2"; fi
}

# a major version whose Debian server headers this machine does not have
major=
for m in 16 17 18 19 14 13; do
	[ -e "/usr/include/postgresql/$m/server/postgres.h" ] || { major=$m; break; }
done

# $work/bin: pg_config reporting what $work/state/* say, apt-get and sudo
mkdir -p "$work/bin" "$work/state" "$work/headers" "$work/pgxs"
touch "$work/headers/postgres.h" "$work/pgxs/pgxs.mk"
cat >"$work/bin/pg_config" <<EOF
#!/bin/sh
case "\$1" in
	--version) echo "PostgreSQL $major.4 (fake)" ;;
	--includedir-server) cat "$work/state/includedir" ;;
	--pgxs) cat "$work/state/pgxs" ;;
	--bindir) echo "$work/bin" ;;
	*) echo "fake pg_config: \$1 not known" >&2; exit 1 ;;
esac
EOF
cat >"$work/bin/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >>"$work/apt.log"
[ "\$1" != install ] || [ ! -f "$work/state/apt-brings" ] || cp "$work/state/apt-brings" "$work/state/includedir"
exit 0
EOF
printf '#!/bin/sh\nexec "$@"\n' >"$work/bin/sudo"
chmod +x "$work/bin/"*

# run_case INCLUDEDIR PGXS [APT_BRINGS]: gs_ensure_postgres in a subshell with the
# fakes first on PATH; sets rc, err (its stderr), apt (the apt-get calls) and
# path1 (the first folder on PATH afterwards)
run_case() {
	echo "$1" >"$work/state/includedir"
	echo "$2" >"$work/state/pgxs"
	rm -f "$work/state/apt-brings" "$work/apt.log"
	[ -z "${3:-}" ] || echo "$3" >"$work/state/apt-brings"
	rc=0
	path1=$(
		exec 2>"$work/err"
		# shellcheck source=../../scripts/lib.sh
		source "$LIB"
		GS_SUDO=
		PATH=$work/bin:$PATH
		gs_ensure_postgres >/dev/null || exit $?
		echo "${PATH%%:*}"
	) || rc=$?
	err=$(cat "$work/err")
	apt=$(cat "$work/apt.log" 2>/dev/null)
}
last_line() { tail -1 <<<"$err"; }

deb=/usr/include/postgresql/$major/server
echo "# PostgreSQL $major (fake) in $work/bin"

run_case "$deb" "$work/pgxs/pgxs.mk"
grep -qx "apt-get install -y -qq --no-install-recommends postgresql-server-dev-$major" <<<"$apt"
ok $? "Debian's $major without its server headers: apt installs postgresql-server-dev-$major ($(tr '\n' ';' <<<"$apt"))"
grep -qx "apt-get update -qq" <<<"$apt"
ok $? "apt-get update before the install"
[ "$rc" != 0 ] && last_line | grep -q "has no $deb/postgres.h: .*apt-get install postgresql-server-dev-$major"
ok $? "the install brought no postgres.h: it fails, and one line says what to install (rc $rc: $(last_line))"

run_case "$deb" "$work/pgxs/pgxs.mk" "$work/headers"
[ "$rc" = 0 ] && grep -q "postgresql-server-dev-$major" <<<"$apt"
ok $? "the install brings the headers: it goes on (rc $rc)"
[ "$path1" = "$work/bin" ]
ok $? "the server's bindir first on PATH ($path1)"

run_case "$work/none" "$work/pgxs/pgxs.mk"
[ "$rc" != 0 ] && [ -z "$apt" ] && last_line | grep -q "has no $work/none/postgres.h: install its server development files.*postgresql-server-dev-$major"
ok $? "headers missing outside Debian's layout: no apt, one line, failure (rc $rc: $(last_line))"

run_case "$work/headers" "$work/none/pgxs.mk"
[ "$rc" != 0 ] && [ -z "$apt" ] && last_line | grep -q "has no $work/none/pgxs.mk: "
ok $? "PGXS missing: one line naming it, failure (rc $rc: $(last_line))"

run_case "$work/headers" "$work/pgxs/pgxs.mk"
[ "$rc" = 0 ] && [ -z "$apt" ]
ok $? "headers and PGXS there: no apt, success (rc $rc)"

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
