#!/bin/bash
# scripts/package-check.sh: builds the Debian package (debian/, pg_buildext) in
# a copy of the tree and checks it: what it ships, that the build leaves the
# tree as it found it, and, in a throwaway cluster of the PostgreSQL it was
# built for with gpusort preloaded, CREATE EXTENSION (1.0 updated to the
# default, and the default), sorts and ORDER BY against PostgreSQL's own
# (debian/tests/smoke.sql).  TAP lines, then "N passed, N failed".
#
#   bash scripts/package-check.sh             # the package's files from dpkg -x
#   bash scripts/package-check.sh --install   # dpkg -i, check, dpkg -r (root; CI)
#   bash scripts/package-check.sh CUDA=0      # NAME=VALUE: the build's environment
#
# The default leaves /usr alone: the .deb is unpacked (dpkg -x) into a
# temporary folder that the cluster reads through extension_destdir (Debian's
# PostgreSQL looks for extension files and modules under that prefix first)
# and dynamic_library_path (for shared_preload_libraries), as the package's own
# build test does, so a `make install` of gpusort into the same PostgreSQL
# keeps working, and a check confirms that the server maps the unpacked
# gpusort.so.  --install (or GS_PACKAGE_INSTALL=1) does what a user
# does, dpkg -i into the system; files a `make install` had put where the
# package installs are saved first and put back after dpkg -r, and a package
# that was installed before stays installed (at the version built here).
#
# Needs what debian/control's Build-Depends name (debhelper, pg_buildext from
# postgresql-server-dev-all, the servers of postgresql-all for the build's own
# test): as root they are installed with apt when missing; otherwise the script stops
# with exit status 3, SKIPPED (scripts/test.sh reports it and leaves it out of
# its counts).  The build follows the Makefile: CUDA where nvcc is found.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GS_ROOT"

mode=extract
[ "${GS_PACKAGE_INSTALL:-0}" = 1 ] && mode=install
for arg in "$@"; do
	case $arg in
		--install) mode=install ;;
		--extract) mode=extract ;;
		*=*) export "${arg?}" ;;
		*) gs_log "ignoring $arg (usage: $0 [--install|--extract] [NAME=VALUE ...])" ;;
	esac
done
# a release build whatever the caller's test build (debian/rules says so too)
export INJECTION_POINTS=0

n=0
failed=0
tap() {		# tap STATUS DESCRIPTION: one TAP line; STATUS 0 is ok
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}
status() {	# status COMMAND...: 0 when it succeeds, else 1 (for tap)
	if "$@"; then echo 0; else echo 1; fi
}
finish() {
	echo "1..$n"
	echo "$((n - failed)) passed, $failed failed"
	[ "$failed" = 0 ]
}

work=$(mktemp -d /tmp/gpusort-package.XXXXXX)
chmod 755 "$work"		# the cluster's owner reads the unpacked files
installed=		# --install: the package dpkg -i put in, to remove on exit
cleanup() {
	gs_stop_cluster
	undo_install
	rm -rf "$work"
}
trap cleanup EXIT

# --- what the build needs
need_tools() {
	local missing=
	command -v dpkg-buildpackage >/dev/null 2>&1 && command -v pg_buildext >/dev/null 2>&1 &&
		(cd "$GS_ROOT" && dpkg-checkbuilddeps) >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		gs_log "SKIPPED: the build dependencies are missing (dpkg-checkbuilddeps) and this is not root" \
			"to install them (apt-get install debhelper postgresql-server-dev-all postgresql-all)"
		exit 3
	fi
	gs_log "installing debhelper and postgresql-server-dev-all with apt"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		build-essential debhelper postgresql-server-dev-all postgresql-all >/dev/null ||
		missing=1
	if [ -n "$missing" ]; then
		gs_log "SKIPPED: could not install debhelper and postgresql-server-dev-all"
		exit 3
	fi
}
need_tools
[ "$mode" = extract ] || [ "$(id -u)" -eq 0 ] ||
	{ gs_log "--install needs root (dpkg -i)"; exit 2; }

# --- build in a copy: the committed and the new files (a tarball's tree: all
# of it, cleaned first as dpkg-buildpackage would)
src=$work/src/gpusort
mkdir -p "$src"
if git -C "$GS_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$GS_ROOT" ls-files -z --cached --others --exclude-standard |
		(cd "$GS_ROOT" && tar -cf - --null --ignore-failed-read -T - 2>/dev/null) | tar -xf - -C "$src"
else
	tar -C "$GS_ROOT" -cf - . | tar -xf - -C "$src"
	(cd "$src" && dpkg-buildpackage -T clean) >"$work/build.log" 2>&1 || true
fi
(cd "$src" && find . -type f | sort) >"$work/files-before"

gs_log "dpkg-buildpackage -us -uc in $src${CUDA:+ (CUDA=$CUDA)} (a few minutes; log $work/build.log)"
start=$(date +%s)
rc=0
build_package() (
	cd "$src" && dpkg-buildpackage -us -uc -j"$(nproc 2>/dev/null || echo 2)" >>"$work/build.log" 2>&1
)
gs_progress "dpkg-buildpackage" build_package || rc=$?
secs=$(($(date +%s) - start))
[ "$rc" = 0 ] || tail -40 "$work/build.log" >&2
mapfile -t debs < <(find "$work/src" -maxdepth 1 -name 'postgresql-*-gpusort_*.deb' | sort)
tap "$(status test "$rc" = 0 -a "${#debs[@]}" -gt 0)" \
	"dpkg-buildpackage builds ${debs[*]##*/} (${secs} s)"
[ "${#debs[@]}" -gt 0 ] || { finish; exit; }

# build + clean leaves the tree as it was
(cd "$src" && dpkg-buildpackage -T clean) >>"$work/build.log" 2>&1 || true
(cd "$src" && find . -type f | sort) >"$work/files-after"
if diff "$work/files-before" "$work/files-after" >"$work/files.diff"; then
	tap 0 "the build and debian/rules clean leave the tree's files as they were"
else
	sed 's/^/# /' "$work/files.diff" | head -20
	tap 1 "the build and debian/rules clean leave the tree's files as they were"
fi

# what the package must ship for PostgreSQL $1: the module, the control file,
# the tree's sql/gpusort--*.sql and the two scripts the Makefile builds
expected_files() {
	local v=$1 ext prev
	ext=$(awk '$1 == "EXTVERSION" && $2 == "=" { print $3 }' "$src/Makefile")
	prev=$(awk '$1 == "PREV_VERSION" && $2 == "=" { print $3 }' "$src/Makefile")
	{
		echo "./usr/lib/postgresql/$v/lib/gpusort.so"
		echo "./usr/share/postgresql/$v/extension/gpusort.control"
		for f in "$src"/sql/gpusort--*.sql gpusort--"$ext".sql gpusort--"$prev"--"$ext".sql; do
			echo "./usr/share/postgresql/$v/extension/${f##*/}"
		done
	} | sort -u
}

run_smoke() {		# the smoke test's TAP lines, numbered on from ours
	local line rc=0 out
	out=$(psql -XqtA -v ON_ERROR_STOP=1 -f "$src/debian/tests/smoke.sql" 2>&1) || rc=$?
	while IFS= read -r line; do
		case $line in
			'ok '*) tap 0 "${line#ok * - }" ;;
			'not ok '*) tap 1 "${line#not ok * - }" ;;
			1..*) ;;
			'') ;;
			'#'*) echo "$line" ;;
			*) echo "# $line" ;;
		esac
	done <<<"$out"
	tap "$rc" "debian/tests/smoke.sql ran to its end"
}

module_path() {
	psql -XqtAc "SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/maps'), '\\S*gpusort\\.so'))[1]"
}

# unowned gpusort files of a `make install` where the package installs
save_unowned() {
	local v=$1 f
	for f in /usr/lib/postgresql/"$v"/lib/gpusort.so /usr/share/postgresql/"$v"/extension/gpusort.control \
		/usr/share/postgresql/"$v"/extension/gpusort--*.sql; do
		[ -e "$f" ] && ! dpkg -S "$f" >/dev/null 2>&1 && echo "$f"
	done >"$work/unowned-$v" || true
	if [ -s "$work/unowned-$v" ]; then
		tar -cpf "$work/unowned-$v.tar" -P -T "$work/unowned-$v"
		gs_log "saved $(wc -l <"$work/unowned-$v") gpusort files of a make install into PostgreSQL $v"
	fi
}
restore_unowned() {
	local v=$1
	[ -s "$work/unowned-$v" ] && tar -xpf "$work/unowned-$v.tar" -P
	rm -f "$work/unowned-$v"
}
# --install: dpkg -r of what it installed, then the saved files back; a package
# that was installed before stays (its files are the package's)
undo_install() {
	local rc=0
	[ -n "$installed" ] || return 0
	dpkg -r "$installed" >"$work/dpkg.log" 2>&1 || { rc=$?; cat "$work/dpkg.log" >&2; }
	[ ! -e "/usr/lib/postgresql/$v/lib/gpusort.so" ] || rc=1
	tap "$rc" "dpkg -r removes $installed and its files"
	installed=
	restore_unowned "$v"
}

for deb in "${debs[@]}"; do
	pkg=$(dpkg-deb -f "$deb" Package)
	v=$(echo "$pkg" | sed -E 's/^postgresql-([0-9.]+)-gpusort$/\1/')
	bindir=/usr/lib/postgresql/$v/bin
	echo "# $pkg $(dpkg-deb -f "$deb" Version): $(dpkg-deb -f "$deb" Depends)"

	if diff <(expected_files "$v") <(dpkg -c "$deb" | awk '{print $6}' | grep -E 'gpusort(\.so|\.control|--.*\.sql)$' | sort) \
		>"$work/ships.diff"; then
		tap 0 "$pkg ships gpusort.so, gpusort.control and every gpusort--*.sql"
	else
		sed 's/^/# /' "$work/ships.diff"
		tap 1 "$pkg ships gpusort.so, gpusort.control and every gpusort--*.sql"
	fi

	if [ "$mode" = install ]; then
		was_installed=$(dpkg-query -W -f '${db:Status-Status}' "$pkg" 2>/dev/null || true)
		save_unowned "$v"
		rc=0
		dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { rc=$?; cat "$work/dpkg.log" >&2; }
		[ "$was_installed" = installed ] || installed=$pkg
		tap "$rc" "dpkg -i installs $pkg"
		prefix=
		extra=()
	else
		rm -rf "$work/root"
		mkdir -p "$work/root"
		dpkg -x "$deb" "$work/root"
		prefix=$work/root
		# extension_destdir for CREATE EXTENSION, dynamic_library_path for the
		# preload (which reads no extension_destdir), as pg_virtualenv -p does
		libdir=$("$bindir/pg_config" --pkglibdir)
		extra=(-c "extension_destdir=$prefix" -c "dynamic_library_path=$prefix$libdir:$libdir")
	fi

	PATH=$bindir:$GS_PATH0
	unset LD_LIBRARY_PATH		# Debian's server with its own libraries
	rc=0
	GS_SERVER_MODE=1 gs_start_cluster "${extra[@]}" || rc=$?
	trap cleanup EXIT		# (gs_start_cluster sets its own)
	if [ "$rc" = 0 ]; then
		run_smoke
		got=$(module_path || true)
		tap "$(status test "$got" = "$prefix/usr/lib/postgresql/$v/lib/gpusort.so")" \
			"the server maps the package's gpusort.so (${got:-none})"
	else
		tap 1 "a cluster of PostgreSQL $v starts with the package's gpusort preloaded"
	fi
	gs_stop_cluster

	if [ "$mode" = install ]; then
		[ "$was_installed" != installed ] ||
			gs_log "$pkg was installed before: it stays installed (now $(dpkg-deb -f "$deb" Version))"
		undo_install
	fi
done

finish
