#!/bin/bash
# scripts/citus-check.sh: gpusort's aggregates and functions on a 3-node Citus
# cluster (a coordinator and two workers on this machine), each answer compared
# with the same query on a local table of the same rows.  Prints TAP: one test
# per query (distributed answer = local answer), one per plain aggregate that
# its partial aggregation runs on the workers (read from EXPLAIN (ANALYZE,
# VERBOSE) of the distributed query; a "# pushdown:" comment for the calls that
# are reported only), and a markdown table of timings (median of --runs) and of the
# bytes the workers sent to the coordinator.
#
#   --rows N        rows of the test table (default 1000000)
#   --shards N      shards of the distributed table (default 32)
#   --runs N        timed runs of each query, the median reported (default 3)
#   --baseline REV  first run every distributed query with gpusort built from
#                   the commit REV (git archive; or a folder holding its tree)
#                   installed, on the same cluster and data, then with the
#                   working tree's; the table compares them
#   --cuda          build gpusort with CUDA=1 (default CUDA=0); the nodes run
#                   the GPU server (server mode) with gpusort.device = auto
#   --out FILE      also write the table to FILE
#   --explain FILE  write the EXPLAIN (ANALYZE, VERBOSE) of every distributed query to FILE
#   --logs DIR      keep the three servers' logs there (citus-c.log, -w1, -w2)
#   --only REGEX    only the calls whose label matches (grep -E), e.g. for 10^7 rows
#   --port P        the coordinator's port; the workers take P+1 and P+2 (default 5811)
#   --no-build      do not build and install gpusort first (not with --baseline,
#                   which replaces the installed module)
#   --build-only    build and install Citus and gpusort, start nothing
#   --pack DIR      after the Citus build, copy it with the libraries it links
#                   into DIR, for GS_CITUS_BUILD=DIR on a machine of the same
#                   PostgreSQL without network (e.g. .gpurun/citus); implies
#                   --build-only
#
# Citus is built once from shared/citus (the tarball matching the server's
# major version, see citus_pick) into $GS_PG_CACHE/citus-VERSION-pgPGVERSION
# (default /var/cache/gpusort) and installed from there into the PostgreSQL
# whose pg_config is first on PATH (Debian's 15 when there is none): Citus
# installs its module and extension files into that server's own directories,
# so the install writes into the system PostgreSQL when that is the one used.
# GS_CITUS_BUILD names a finished build folder (one with root/ and .complete)
# to install instead, e.g. one copied from another machine of the same
# PostgreSQL.  Needs root or sudo for the install, and for running the
# servers as postgres.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rows=1000000
shards=32
runs=3
out=
explain=
port=5811
build_gpusort=1
build_only=0
baseline=
pack=
logs=
only=
make_args=(CUDA=0)
while [ $# -gt 0 ]; do
	case $1 in
	--rows) rows=$2; shift ;;
	--shards) shards=$2; shift ;;
	--runs) runs=$2; shift ;;
	--out) out=$2; shift ;;
	--explain) explain=$2; shift ;;
	--logs) logs=$2; shift ;;
	--only) only=$2; shift ;;
	--port) port=$2; shift ;;
	--baseline) baseline=$2; shift ;;
	--cuda) make_args=(CUDA=1) ;;
	--pack) pack=$2; build_only=1; build_gpusort=0; shift ;;
	--no-build) build_gpusort=0 ;;
	--build-only) build_only=1 ;;
	*) echo "usage: $0 [--rows N] [--shards N] [--runs N] [--baseline REV] [--cuda] [--out FILE] [--explain FILE] [--logs DIR] [--only REGEX] [--port P] [--no-build] [--build-only] [--pack DIR]" >&2; exit 2 ;;
	esac
	shift
done
if [ -n "$baseline" ] && [ "$build_gpusort" = 0 ]; then
	echo "citus-check.sh: --baseline installs the baseline's module, so the working tree's must be installed after it: drop --no-build" >&2
	exit 2
fi

# ---------------------------------------------------------------- Citus build

# The folder of the Citus tarballs: the first shared/citus beside the clone or
# beside one of its parent folders (GS_CITUS_SRC overrides).
citus_src_dir() {
	local dir=$GS_ROOT
	if [ -n "${GS_CITUS_SRC:-}" ]; then echo "$GS_CITUS_SRC"; return; fi
	while [ "$dir" != / ]; do
		dir=$(dirname "$dir")
		[ -d "$dir/shared/citus" ] && { echo "$dir/shared/citus"; return; }
	done
	echo "$GS_ROOT/../shared/citus"
}

# The Citus release for the server's major version: 13.2.2 supports 15-17,
# 14.0.1 supports 16-18.
citus_pick() {
	case $1 in
	15) echo 13.2.2 ;;
	16 | 17 | 18) echo 14.0.1 ;;
	*) echo "citus-check.sh: no Citus here for PostgreSQL $1" >&2; return 3 ;;
	esac
}

citus_build_deps() {
	local missing=() p
	for p in libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev libssl-dev autoconf flex bison; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	gs_log "installing Citus's build dependencies: ${missing[*]}"
	$GS_SUDO apt-get update -qq
	$GS_SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Builds Citus VERSION against pg_config on PATH into CACHE/root (a DESTDIR
# image of its install), once: CACHE/.complete marks a finished build.
citus_build() {
	local version=$1 cache=$2 src work
	src=$(citus_src_dir)
	if [ -f "$cache/.complete" ]; then
		gs_log "Citus $version: cached build in $cache"
		return 0
	fi
	[ -f "$src/citus-$version.tar.gz" ] || { echo "citus-check.sh: $src/citus-$version.tar.gz not found (set GS_CITUS_SRC)" >&2; return 3; }
	(cd "$src" && grep " citus-$version.tar.gz\$" SHA256SUMS | sha256sum -c --quiet -) >&2 ||
		{ echo "citus-check.sh: citus-$version.tar.gz does not match SHA256SUMS" >&2; return 1; }
	citus_build_deps
	work=$(mktemp -d /tmp/gpusort-citus-build.XXXXXX)
	gs_log "building Citus $version against $(pg_config --version) into $cache (once, about 5 minutes; log $work/build.log)"
	tar -xzf "$src/citus-$version.tar.gz" -C "$work"
	gs_progress "building Citus $version" citus_make "$version" "$src" "$work" "$cache" ||
		{ tail -40 "$work/build.log" >&2; return 1; }
	pg_config --version >"$cache/pg_version"
	touch "$cache/.complete"
	rm -rf "$work"
}

# citus_make VERSION SRC WORK CACHE: configures and builds the unpacked Citus in
# WORK, installs it into CACHE/root (log: WORK/build.log).
citus_make() {
	local version=$1 src=$2 work=$3 cache=$4
	(
		cd "$work/citus-$version"
		# servers that export have_createdb_privilege() themselves (15.20 and
		# later 15.x) collide with Citus 13.2.2's own copy of it
		if [ "$version" = 13.2.2 ] &&
			grep -q 'have_createdb_privilege' "$(pg_config --includedir-server)/commands/dbcommands.h"; then
			echo "applying citus-13.2.2-pg15.20.patch"
			patch -p1 <"$src/citus-13.2.2-pg15.20.patch"
		fi
		./configure PG_CONFIG="$(command -v pg_config)" &&
			make -j2 &&
			rm -rf "$cache" && mkdir -p "$cache" &&
			make install DESTDIR="$cache/root"
	) >"$work/build.log" 2>&1
}

# Installs the cached image into the server's directories unless the same
# citus.so is there already.  The image holds the paths of the server it was
# built against; its module and extension folders are copied into this
# server's pkglibdir and sharedir/extension, which may lie elsewhere (a
# PostgreSQL unpacked under /opt from the same packages).
citus_install() {
	local cache=$1 lib image_lib image_ext
	lib=$(pg_config --pkglibdir)
	image_lib=$(dirname "$(find "$cache/root" -name citus.so -print -quit)")
	image_ext=$(dirname "$(find "$cache/root" -name citus.control -print -quit)")
	[ -f "$image_lib/citus.so" ] && [ -f "$image_ext/citus.control" ] ||
		{ echo "citus-check.sh: no citus.so or citus.control under $cache/root" >&2; return 1; }
	if [ -f "$lib/citus.so" ] && cmp -s "$image_lib/citus.so" "$lib/citus.so"; then
		gs_log "Citus already installed in $lib"
		return 0
	fi
	gs_log "installing Citus from $cache into $lib and $(pg_config --sharedir)/extension"
	citus_copy_tree "$image_lib" "$lib"
	citus_copy_tree "$image_ext" "$(pg_config --sharedir)/extension"
}

# Copies the files of folder FROM into folder TO, each under a temporary name
# renamed over the old one: a server that has the old citus.so mapped keeps
# it intact (cp onto it would rewrite it in place and crash that server).
citus_copy_tree() {
	local from=$1 to=$2 f
	(cd "$from" && find . -type f) | while read -r f; do
		$GS_SUDO mkdir -p "$(dirname "$to/$f")"
		$GS_SUDO cp -a "$from/$f" "$to/$f.new.$$"
		$GS_SUDO mv -f "$to/$f.new.$$" "$to/$f"
	done
}

# Lists the libraries citus.so links.  One this machine lacks comes from the
# build folder's deps/ (--pack puts them there) into pkglibdir/citus-deps,
# which goes on LD_LIBRARY_PATH for the servers; fails when one is found
# nowhere.
citus_check_libs() {
	local so=$1 cache=$2 missing m deps_dir
	deps_dir=$(pg_config --pkglibdir)/citus-deps
	gs_log "$(basename "$so") links: $(ldd "$so" | awk '{ print $1 }' | tr '\n' ' ')"
	for _ in 1 2 3 4 5 6; do
		missing=$(ldd "$so" | awk '/not found/ { print $1 }')
		[ -n "$missing" ] || return 0
		for m in $missing; do
			[ -f "$cache/deps/$m" ] ||
				{ echo "citus-check.sh: $so needs $m, which is neither on this machine nor in $cache/deps" >&2; return 1; }
			gs_log "$m: not on this machine, taken from $cache/deps"
			$GS_SUDO mkdir -p "$deps_dir"
			$GS_SUDO cp -L "$cache/deps/$m" "$deps_dir/"
		done
		LD_LIBRARY_PATH=$deps_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		export LD_LIBRARY_PATH
	done
	echo "citus-check.sh: $so still misses libraries: $missing" >&2
	return 1
}

# --pack DIR: the Citus build for another machine of the same PostgreSQL
# (one without network or build tools): the install image without headers
# and LLVM bitcode, and in deps/ every library the Citus modules link except
# the C library's own and libpq (which comes with PostgreSQL).
citus_pack() {
	local cache=$1 dir=$2 lib
	rm -rf "$dir" && mkdir -p "$dir/deps"
	cp -a "$cache/root" "$cache/pg_version" "$dir/"
	rm -rf "$dir/root/usr/include"
	find "$dir/root" -type d -name bitcode -prune -exec rm -rf {} +
	for lib in $(find "$dir/root" -name '*.so' -exec ldd {} \; | awk '$3 ~ /^\// { print $3 }' | sort -u); do
		case $(basename "$lib") in
		libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | ld-linux*.so.* | libpq.so.*) ;;
		*) cp -L "$lib" "$dir/deps/" ;;
		esac
	done
	touch "$dir/.complete"
	gs_log "packed Citus from $cache into $dir ($(du -sh "$dir" | cut -f1), deps: $(ls "$dir/deps" | tr '\n' ' '))"
}

citus_setup() {
	local major version cache
	major=$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	version=$(citus_pick "$major")
	cache=${GS_PG_CACHE:-/var/cache/gpusort}/citus-$version-pg$(pg_config --version | sed -E 's/^PostgreSQL ([0-9.]+).*/\1/')
	if [ -n "${GS_CITUS_BUILD:-}" ]; then
		[ -f "$GS_CITUS_BUILD/.complete" ] || { echo "citus-check.sh: $GS_CITUS_BUILD is no finished Citus build" >&2; return 3; }
		[ "$(cat "$GS_CITUS_BUILD/pg_version")" = "$(pg_config --version)" ] ||
			{ echo "citus-check.sh: $GS_CITUS_BUILD was built for $(cat "$GS_CITUS_BUILD/pg_version"), not $(pg_config --version)" >&2; return 3; }
		cache=$GS_CITUS_BUILD
	else
		$GS_SUDO mkdir -p "$(dirname "$cache")"
		citus_build "$version" "$cache"
	fi
	citus_install "$cache"
	citus_check_libs "$(pg_config --pkglibdir)/citus.so" "$cache"
	citus_check_libs "$(pg_config --pkglibdir)/citus_columnar.so" "$cache"
	[ -z "$pack" ] || citus_pack "$cache" "$pack"
}

gs_use_postgres
citus_setup

# ------------------------------------------------------------ gpusort builds

# The baseline: REV's tree (gs_rev_tree), built with the same make
# arguments as the working tree.
BASE_DIR=
baseline_build() {
	gs_rev_tree "$baseline"
	BASE_DIR=$GS_REV_DIR
	gs_log "building the baseline gpusort $baseline"
	make -C "$BASE_DIR" -s -j"$(nproc)" "${make_args[@]}" >/dev/null
}

baseline_install() {
	gs_log "installing the baseline gpusort $baseline into $(pg_config --pkglibdir)"
	$GS_SUDO env PATH="$PATH" make -C "$BASE_DIR" -s install "${make_args[@]}" >/dev/null
}

if [ -n "$baseline" ]; then
	baseline_build
	baseline_install
	# installed after the baseline's phase; built now, so that a failing
	# build stops the run before it
	[ "${GS_PREBUILT:-0}" = 1 ] || make -C "$GS_ROOT" -s -j"$(nproc)" "${make_args[@]}" >/dev/null
elif [ "$build_gpusort" = 1 ]; then
	gs_build_install "${make_args[@]}"
fi
[ "$build_only" = 0 ] || exit 0

# ------------------------------------------------------------ the cluster

# A coordinator on $port and workers on $port+1 and $port+2, in one temporary
# folder owned by the server user (postgres), sockets there too.
CC_DIR=
cc_stop() {
	local n
	[ -n "$CC_DIR" ] && [ -d "$CC_DIR" ] || return 0
	if [ -n "$logs" ]; then
		mkdir -p "$logs"
		for n in c w1 w2; do cp "$CC_DIR/$n.log" "$logs/citus-$n.log" 2>/dev/null || true; done
	fi
	for n in c w1 w2; do
		[ -f "$CC_DIR/$n/postmaster.pid" ] &&
			"${GS_RUN[@]}" pg_ctl -D "$CC_DIR/$n" -m immediate -w stop >/dev/null 2>&1 || true
	done
	rm -rf "$CC_DIR"
	CC_DIR=
}


cc_start_node() {
	local n=$1 p=$2
	"${GS_RUN[@]}" initdb -D "$CC_DIR/$n" -U postgres -A trust -E UTF8 --no-locale >"$CC_DIR/$n.initdb.log" 2>&1 ||
		{ tail -20 "$CC_DIR/$n.initdb.log" >&2; return 1; }
	cat >>"$CC_DIR/$n/postgresql.conf" <<CONF
port = $p
listen_addresses = 'localhost'
unix_socket_directories = '$CC_DIR'
shared_preload_libraries = 'citus,gpusort'
shared_buffers = 256MB
work_mem = 256MB
max_parallel_workers_per_gather = 0
jit = off
gpusort.device = auto
CONF
	# three GPU servers share the GPU: a quarter of it each instead of the
	# default 80% (an H100's 80 GB)
	[ "${make_args[*]}" != CUDA=1 ] || echo "gpusort.server_memory = 20000" >>"$CC_DIR/$n/postgresql.conf"
	"${GS_RUN[@]}" pg_ctl -D "$CC_DIR/$n" -l "$CC_DIR/$n.log" -w start >/dev/null ||
		{ tail -20 "$CC_DIR/$n.log" >&2; return 1; }
}

cc_psql() {
	local p=$1; shift
	psql -X -q -v ON_ERROR_STOP=1 -h "$CC_DIR" -p "$p" -U postgres -d postgres "$@"
}

cc_start() {
	local i=0 n
	gs_server_user
	CC_DIR=$(mktemp -d /tmp/gpusort-citus.XXXXXX)
	[ "$(id -u)" -ne 0 ] || chown "$GS_OWNER" "$CC_DIR"
	trap cc_stop EXIT
	trap 'exit 130' INT TERM
	gs_log "starting a coordinator on port $port and workers on $((port + 1)) and $((port + 2)) in $CC_DIR"
	for n in c w1 w2; do
		cc_start_node "$n" $((port + i))
		cc_psql $((port + i)) -c "CREATE EXTENSION citus"
		i=$((i + 1))
	done
	cc_psql "$port" -c "SELECT citus_set_coordinator_host('localhost', $port)" \
		-c "SELECT citus_add_node('localhost', $((port + 1)))" \
		-c "SELECT citus_add_node('localhost', $((port + 2)))" >/dev/null
}

# Installs the working tree's gpusort in place of the baseline's with the
# three nodes stopped: `make install` rewrites gpusort.so in place, which
# crashes every server process that has it mapped.
cc_swap_build() {
	local n
	for n in c w1 w2; do
		"${GS_RUN[@]}" pg_ctl -D "$CC_DIR/$n" -m fast -w stop >/dev/null
	done
	gs_build_install "${make_args[@]}"
	for n in c w1 w2; do
		"${GS_RUN[@]}" pg_ctl -D "$CC_DIR/$n" -l "$CC_DIR/$n.log" -w start >/dev/null ||
			{ tail -20 "$CC_DIR/$n.log" >&2; return 1; }
	done
}

# gpusort afresh at the installed build's default version: on the
# coordinator, DROP and CREATE EXTENSION reach the workers.
cc_create_gpusort() {
	cc_psql "$port" -c "DROP EXTENSION IF EXISTS gpusort CASCADE" -c "CREATE EXTENSION gpusort"
}

# t_local and t_dist (distributed by id over $shards shards) hold the same
# rows: a low-cardinality group column g and one column of each type, about
# 1% NULLs in each, from a fixed seed.
cc_load() {
	gs_log "loading $rows rows into t_local and t_dist ($shards shards)"
	cc_psql "$port" >/dev/null <<SQL
SELECT setseed(0.42);
CREATE TABLE t_local AS
SELECT id::int8 AS id,
       (random() * 7)::int4 AS g,
       CASE WHEN random() < 0.01 THEN NULL ELSE (random() * 2000 - 1000)::int4 END AS i4,
       CASE WHEN random() < 0.01 THEN NULL ELSE (random() * 1e15)::int8 - 500000000000000 END AS i8,
       CASE WHEN random() < 0.01 THEN NULL ELSE random() * 1e6 - 5e5 END AS f8,
       CASE WHEN random() < 0.01 THEN NULL ELSE date '2000-01-01' + (random() * 20000)::int4 END AS d,
       CASE WHEN random() < 0.01 THEN NULL
            ELSE timestamptz '2000-01-01 00:00:00+00' + random() * interval '20000 days' END AS ts
FROM generate_series(1, $rows) AS id;
CREATE TABLE t_dist (LIKE t_local);
SELECT create_distributed_table('t_dist', 'id', shard_count => $shards);
INSERT INTO t_dist SELECT * FROM t_local;
ANALYZE t_local;
ANALYZE t_dist;
SQL
}

# ------------------------------------------------------------ the checks

# label | the call | the calls (comma-separated) a worker's query makes when
# the workers aggregate their shards | test: that is a TAP test, report: a
# "# pushdown:" comment | k of a top-k, whose goal is at most k values per
# shard (and group) sent to the coordinator.
# sum(i8) is the control, an aggregate Citus does push down.  The WITHIN
# GROUP forms carry an ORDER BY inside the aggregate, which Citus pushes down
# only when grouped by the distribution column: a report.  gpu_sort(array_agg(x))
# is planned as gpu_sort_agg(x) (a planner support rewrite) where the
# rewrite exists, and runs array_agg on the workers where it does not.
QUERIES=(
	"sum(i8) (control)|sum(i8)|sum|test|"
	"gpu_sort_agg(i4)|gpu_sort_agg(i4)|gpu_sort_agg|test|"
	"gpu_sort_agg(ts, desc)|gpu_sort_agg(ts, true)|gpu_sort_agg|test|"
	"gpu_median(f8)|gpu_median(f8)|gpu_median|test|"
	"gpu_percentile_cont_agg(i8, 0.9)|gpu_percentile_cont_agg(i8, 0.9)|gpu_percentile_cont_agg|test|"
	"gpu_percentile_cont_agg(f8, array)|gpu_percentile_cont_agg(f8, '{0.25,0.5,0.75}'::float8[])|gpu_percentile_cont_agg|test|"
	"gpu_percentile_disc_agg(d, 0.5)|gpu_percentile_disc_agg(d, 0.5)|gpu_percentile_disc_agg|test|"
	"gpu_mode_agg(i4)|gpu_mode_agg(i4)|gpu_mode_agg|test|"
	"gpu_topk_agg(f8, 100)|gpu_topk_agg(f8, 100)|gpu_topk_agg|test|100"
	"gpu_topk_agg(ts, 10, desc)|gpu_topk_agg(ts, 10, true)|gpu_topk_agg|test|10"
	"gpu_percentile_cont(0.9) WITHIN GROUP (f8)|gpu_percentile_cont(0.9) WITHIN GROUP (ORDER BY f8)|gpu_percentile_cont|report|"
	"gpu_percentile_disc(0.5) WITHIN GROUP (ts)|gpu_percentile_disc(0.5) WITHIN GROUP (ORDER BY ts)|gpu_percentile_disc|report|"
	"gpu_mode() WITHIN GROUP (d)|gpu_mode() WITHIN GROUP (ORDER BY d)|gpu_mode|report|"
	"gpu_sort(array_agg(i8))|gpu_sort(array_agg(i8))|gpu_sort_agg,array_agg|test|"
)

# --only REGEX: the calls whose label matches (grep -E), for a long run at many rows
if [ -n "$only" ]; then
	kept=()
	for entry in "${QUERIES[@]}"; do
		grep -qE -- "$only" <<<"${entry%%|*}" && kept+=("$entry")
	done
	QUERIES=("${kept[@]}")
fi

# The query of a call on TABLE, ungrouped or GROUP BY g.
cc_query() {
	local call=$1 table=$2 grouped=$3
	if [ "$grouped" = 1 ]; then
		echo "SELECT g, $call FROM $table GROUP BY g ORDER BY g"
	else
		echo "SELECT $call FROM $table"
	fi
}

# Runs QUERY $runs times; the first answer goes to FILE, the median of the
# times (ms) to stdout.
cc_time() {
	local q=$1 file=$2 times r
	times=$(
		{
			echo '\timing on'
			echo "\o $file"
			echo "$q;"
			echo '\o /dev/null'
			for ((r = 1; r < runs; r++)); do echo "$q;"; done
		} | cc_psql "$port" -A -t | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
	) || return 1
	[ "$(echo "$times" | wc -l)" -eq "$runs" ] || return 1
	echo "$times" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# The plan of a distributed query, once: sets HOW to "pushdown" when a
# worker's query calls one of CALLS (or Citus's worker_partial_agg),
# "row-gather" when it selects the raw column and the coordinator aggregates
# every row; BYTES to what the workers sent.  That is Citus's "Tuple data
# received from nodes" of EXPLAIN (ANALYZE, VERBOSE) (all tasks together, as
# pg_size_pretty prints it).  Citus 13.2 cannot EXPLAIN ANALYZE a query whose
# workers return a partial aggregate (it declares the worker_partial_agg
# column, a cstring, in a column definition list, which PostgreSQL refuses):
# then the plan comes from EXPLAIN (VERBOSE) and BYTES from running every
# task's query on its worker (cc_task_bytes), marked with "≈".
cc_explain() {
	local q=$1 calls=$2 plan err
	HOW="explain failed" BYTES=-
	if plan=$(cc_psql "$port" -A -t -c "EXPLAIN (ANALYZE, VERBOSE) $q" 2>"$CC_DIR/explain.err"); then
		BYTES=$(sed -n 's/^ *Tuple data received from nodes: //p' <<<"$plan" | head -1)
		BYTES=${BYTES:--}
	else
		err=$(head -1 "$CC_DIR/explain.err")
		plan=$(cc_psql "$port" -A -t -c "SET citus.explain_all_tasks = on" -c "EXPLAIN (VERBOSE) $q") || return 0
		BYTES="≈ $(cc_task_bytes "$plan") bytes" || BYTES=-
		gs_log "EXPLAIN ANALYZE failed ($err): bytes from the workers' queries"
	fi
	[ -z "$explain" ] || printf '%s\n%s\n\n' "$q" "$plan" >>"$explain"
	if ! grep -q 'Custom Scan (Citus' <<<"$plan"; then
		HOW="not distributed"
	elif grep -qE "^ *Query: .*(${calls//,/|}|worker_partial_agg)\(" <<<"$plan"; then
		HOW=pushdown
	else
		HOW=row-gather
	fi
}

# The bytes the tasks of a plan (EXPLAIN with every task shown) return: each
# task's query runs again on its worker, and the text of every value of its
# rows is counted (a partial aggregate's state travels as text; a few bytes
# differ from Citus's count where it receives a column in binary).
cc_task_bytes() {
	local plan=$1 worker total=0 n
	for worker in $((port + 1)) $((port + 2)); do
		n=$(awk -v worker="$worker" '
			/^ *Query: / { sub(/^ *Query: /, ""); query = $0 }
			/^ *Node: / && $0 ~ ("port=" worker " ") {
				print "SELECT coalesce(sum(octet_length(e.v)), 0) FROM (" query ") AS r, jsonb_each_text(to_jsonb(r)) AS e(k, v);"
			}' <<<"$plan" | cc_psql "$worker" -A -t | awk '{ s += $1 } END { print s + 0 }') || return 1
		total=$((total + n))
	done
	echo "$total"
}

# What each phase measured, by PHASE.QUERY.GROUPED: the median time (ms),
# the way the workers ran it and the bytes they sent.
declare -A MS WAY SENT LOCAL_MS
npass=0
nfail=0
ntest=0

# One phase (baseline or now) of one call, ungrouped or grouped: the plan,
# then the timings, the answer kept in $CC_DIR/PHASE.KEY.out.
cc_measure() {
	local phase=$1 key=$2 call=$3 calls=$4 grouped=$5 q
	q=$(cc_query "$call" t_dist "$grouped")
	cc_explain "$q" "$calls"
	WAY[$phase.$key]=$HOW
	SENT[$phase.$key]=$BYTES
	MS[$phase.$key]=$(cc_time "$q" "$CC_DIR/$phase.$key.out") || MS[$phase.$key]=failed
}

cc_tap() {
	if [ "$1" = 0 ]; then
		npass=$((npass + 1)); echo "ok $ntest - $2"
	else
		nfail=$((nfail + 1)); echo "not ok $ntest - $2"
	fi
}

# The baseline phase: timings, bytes and plans of every distributed query,
# as comments.
cc_baseline_phase() {
	local i=0 entry label call calls kind k grouped suffix
	for entry in "${QUERIES[@]}"; do
		IFS='|' read -r label call calls kind k <<<"$entry"
		for grouped in 0 1; do
			suffix=; [ "$grouped" = 0 ] || suffix=" GROUP BY g"
			cc_measure base "$i.$grouped" "$call" "$calls" "$grouped"
			echo "# baseline: $label$suffix: ${WAY[base.$i.$grouped]}, ${SENT[base.$i.$grouped]} from the workers, ${MS[base.$i.$grouped]} ms"
		done
		i=$((i + 1))
	done
}

# The working tree's phase: per call and grouping a TAP test that the
# distributed answer equals the local one, and for the calls of kind "test"
# one that the workers aggregate their shards.
cc_now_phase() {
	local i=0 entry label call calls kind k grouped suffix key q_local local_ok hows
	for entry in "${QUERIES[@]}"; do
		IFS='|' read -r label call calls kind k <<<"$entry"
		hows=
		for grouped in 0 1; do
			suffix=; [ "$grouped" = 0 ] || suffix=" GROUP BY g"
			key=$i.$grouped
			cc_measure now "$key" "$call" "$calls" "$grouped"
			q_local=$(cc_query "$call" t_local "$grouped")
			LOCAL_MS[$key]=$(cc_time "$q_local" "$CC_DIR/local.$key.out") || LOCAL_MS[$key]=failed
			local_ok=1
			[ "${MS[now.$key]}" != failed ] && [ "${LOCAL_MS[$key]}" != failed ] && [ -s "$CC_DIR/local.$key.out" ] &&
				cmp -s "$CC_DIR/now.$key.out" "$CC_DIR/local.$key.out" && local_ok=0
			ntest=$((ntest + 1))
			if [ "$local_ok" = 0 ]; then
				cc_tap 0 "$label$suffix: distributed = local ($(wc -c <"$CC_DIR/local.$key.out") bytes)"
			else
				cc_tap 1 "$label$suffix: distributed answer differs from the local one, or a query failed"
			fi
			if [ -f "$CC_DIR/base.$key.out" ] && ! cmp -s "$CC_DIR/base.$key.out" "$CC_DIR/local.$key.out"; then
				echo "# baseline: $label$suffix: its distributed answer differs from the local one"
			fi
			if [ "$kind" = test ]; then
				ntest=$((ntest + 1))
				if [ "${WAY[now.$key]}" = pushdown ]; then
					cc_tap 0 "$label$suffix: the workers aggregate their shards (${SENT[now.$key]} sent)"
				else
					cc_tap 1 "$label$suffix: ${WAY[now.$key]}: the workers do not aggregate (${SENT[now.$key]} sent)"
				fi
			else
				hows+="${hows:+; }${WAY[now.$key]}${suffix:+ with$suffix}"
			fi
		done
		[ "$kind" = test ] || echo "# pushdown: $label: $hows"
		i=$((i + 1))
	done
}

cc_ratio() {
	case "$1$2" in
	*failed*) echo - ;;
	*) awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }' ;;
	esac
}

cc_machine() {
	local cpu gpu
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
	echo "$(nproc) cores of ${cpu:-an unknown CPU}, ${gpu:-no GPU}"
}

# The goal of a top-k's transfer: k values per shard and group.
cc_bound() {
	local k=$1 grouped=$2 n
	[ -n "$k" ] || return 0
	n=$((k * shards))
	if [ "$grouped" = 1 ]; then
		echo " (goal: at most $((n * NGROUPS)) values, k x shards x $NGROUPS groups)"
	else
		echo " (goal: at most $n values, k x shards)"
	fi
}

cc_table() {
	local i=0 entry label call calls kind k grouped suffix key
	echo "Citus $(cc_psql "$port" -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'") on $(pg_config --version), gpusort $(cc_psql "$port" -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'gpusort'") ($(git -C "$GS_ROOT" describe --always --dirty 2>/dev/null || echo "working tree")) built with ${make_args[*]}${baseline:+, baseline $baseline (gpusort $BASE_VERSION)},"
	echo "$rows rows, $shards shards, a coordinator and 2 workers on one machine: $(cc_machine);"
	echo "median of $runs runs in ms as psql's \\timing reports it (the answer travels to psql too); bytes: Citus's"
	echo "\"Tuple data received from nodes\" in EXPLAIN ANALYZE (all shards together); \"≈\": Citus cannot EXPLAIN ANALYZE"
	echo "it, the text of the rows of every task's query run on its worker."
	echo
	if [ -n "$baseline" ]; then
		echo "| query | local ms | distributed ms, baseline | distributed ms, now | baseline / now | bytes from workers, baseline | bytes from workers, now | on the workers, baseline → now |"
		echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
	else
		echo "| query | local ms | distributed ms | distributed / local | bytes from workers | on the workers |"
		echo "| --- | ---: | ---: | ---: | ---: | --- |"
	fi
	for entry in "${QUERIES[@]}"; do
		IFS='|' read -r label call calls kind k <<<"$entry"
		for grouped in 0 1; do
			suffix=; [ "$grouped" = 0 ] || suffix=" GROUP BY g"
			key=$i.$grouped
			if [ -n "$baseline" ]; then
				echo "| \`$label\`$suffix | ${LOCAL_MS[$key]} | ${MS[base.$key]} | ${MS[now.$key]} | $(cc_ratio "${MS[base.$key]}" "${MS[now.$key]}") | ${SENT[base.$key]} | ${SENT[now.$key]}$(cc_bound "$k" "$grouped") | ${WAY[base.$key]} → ${WAY[now.$key]} |"
			else
				echo "| \`$label\`$suffix | ${LOCAL_MS[$key]} | ${MS[now.$key]} | $(cc_ratio "${MS[now.$key]}" "${LOCAL_MS[$key]}") | ${SENT[now.$key]}$(cc_bound "$k" "$grouped") | ${WAY[now.$key]} |"
			fi
		done
		i=$((i + 1))
	done
}

cc_plan() {
	local entry n=0 kind
	for entry in "${QUERIES[@]}"; do
		kind=$(echo "$entry" | cut -d'|' -f4)
		n=$((n + 2))
		[ "$kind" != test ] || n=$((n + 2))
	done
	echo "1..$n"
}

[ -z "$explain" ] || : >"$explain"
cc_start
cc_create_gpusort
cc_load
NGROUPS=$(cc_psql "$port" -A -t -c "SELECT count(DISTINCT g) FROM t_local")
if [ -n "$baseline" ]; then
	BASE_VERSION=$(cc_psql "$port" -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'gpusort'")
	gs_log "baseline phase: gpusort $baseline (extension version $BASE_VERSION)"
	[ -z "$explain" ] || echo "-- baseline $baseline" >>"$explain"
	cc_baseline_phase
	cc_swap_build
	cc_create_gpusort
	gs_log "the working tree's phase: gpusort $(cc_psql "$port" -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'gpusort'")"
	[ -z "$explain" ] || echo "-- the working tree" >>"$explain"
fi
cc_plan
cc_now_phase
echo
cc_table | tee ${out:+"$out"}
echo
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
