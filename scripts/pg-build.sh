#!/bin/bash
# scripts/pg-build.sh VERSION: builds PostgreSQL VERSION (18.6, or 18 for the
# newest 18.x tarball there is) from its source tarball into a cache directory
# outside the clone, once, and prints the cache's bin directory (where
# pg_config is).  A later call finds the build and prints the same directory
# at once.  The first build takes about 10 minutes on 2 cores.
#
#   GS_PG_CACHE    the cache's parent directory (default /var/cache/gpusort);
#                  the build goes to $GS_PG_CACHE/pg-VERSION
#   GS_PG_SRC      the folder of postgresql-MAJOR_VERSION.orig.tar.bz2 and its
#                  SHA256SUMS (default: the first shared/pg-src found beside the
#                  clone or beside one of its parent folders)
#
# Needs bison, flex and a C toolchain (installed with apt when missing);
# configured --without-icu --without-readline.  Progress goes to stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/lib.sh"	# gs_progress, gs_pg_src_dir
version=${1:?usage: pg-build.sh VERSION, e.g. 18.6 or 18}
major=${version%%.*}
src=$(gs_pg_src_dir)
caches=${GS_PG_CACHE:-/var/cache/gpusort}
if [ "$version" = "$major" ]; then
	# the newest tarball of that major version, else the newest build of it in the cache
	tarball=$(cd "$src" 2>/dev/null && ls postgresql-"${major}"_*.orig.tar.bz2 2>/dev/null | sort -V | tail -1 || true)
	if [ -n "$tarball" ]; then
		version=${tarball#postgresql-${major}_}
		version=${version%.orig.tar.bz2}
	else
		built=$(cd "$caches" 2>/dev/null && ls -d pg-"$major".*/.complete 2>/dev/null | sort -V | tail -1 || true)
		[ -n "$built" ] || { echo "pg-build.sh: no postgresql-${major}_*.orig.tar.bz2 in $src (set GS_PG_SRC)" >&2; exit 3; }
		version=${built%/.complete}
		version=${version#pg-}
	fi
fi
cache=$caches/pg-$version
tarball=postgresql-${major}_${version}.orig.tar.bz2

if [ -x "$cache/bin/pg_config" ] && [ -f "$cache/.complete" ]; then
	echo "$cache/bin"
	exit 0
fi

# exit status 3: there is no source to build from (scripts/test.sh reports a skip)
[ -f "$src/$tarball" ] || { echo "pg-build.sh: $src/$tarball not found (set GS_PG_SRC)" >&2; exit 3; }
(cd "$src" && grep " $tarball\$" SHA256SUMS | sha256sum -c --quiet -) >&2 ||
	{ echo "pg-build.sh: $tarball does not match SHA256SUMS" >&2; exit 1; }

missing=
for tool in bison flex make gcc; do
	command -v $tool >/dev/null 2>&1 || missing=1
done
if [ -n "$missing" ]; then
	sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		bison flex build-essential zlib1g-dev >/dev/null
fi

work=$(mktemp -d /tmp/gpusort-pgbuild.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "== building PostgreSQL $version into $cache (once, about 10 minutes on 2 cores; log in $work/build.log while it runs)" >&2
tar -xjf "$src/$tarball" -C "$work"
cd "$work"/postgresql-$version
build() {
	{
		./configure --prefix="$cache" --without-icu --without-readline &&
		make -j"$(nproc 2>/dev/null || echo 2)" -s &&
		rm -rf "$cache" && make -s install
	} >"$work/build.log" 2>&1
}
gs_progress "building PostgreSQL $version" build || { tail -40 "$work/build.log" >&2; exit 1; }
touch "$cache/.complete"
echo "$cache/bin"
