#!/bin/bash
# scripts/citus-check.sh: gpusort's aggregates and functions on a 3-node Citus
# cluster (a coordinator and two workers on this machine), each answer compared
# with the same query on a local table of the same rows.  Prints TAP: one test
# per query (distributed answer = local answer), a "# pushdown:" comment per
# aggregate read from EXPLAIN (VERBOSE) of the distributed query, and a
# markdown table of timings (median of 3, distributed and local).
#
#   --rows N       rows of the test table (default 1000000)
#   --shards N     shards of the distributed table (default 32)
#   --out FILE     also write the timing table to FILE
#   --explain FILE write the EXPLAIN (VERBOSE) of every distributed query to FILE
#   --port P       the coordinator's port; the workers take P+1 and P+2 (default 5811)
#   --no-build     do not build and install gpusort (make CUDA=0) first
#   --build-only   build and install Citus and gpusort, start nothing
#
# Citus is built once from shared/citus (the tarball matching the server's
# major version, see citus_pick) into $GS_PG_CACHE/citus-VERSION-pgPGVERSION
# (default /var/cache/gpusort) and installed from there into the PostgreSQL
# whose pg_config is first on PATH (Debian's 15 when there is none): Citus
# installs its module and extension files into that server's own directories,
# so the install writes into the system PostgreSQL when that is the one used.
# Needs root or sudo for that, and for running the servers as postgres.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rows=1000000
shards=32
out=
explain=
port=5811
build_gpusort=1
build_only=0
while [ $# -gt 0 ]; do
	case $1 in
	--rows) rows=$2; shift ;;
	--shards) shards=$2; shift ;;
	--out) out=$2; shift ;;
	--explain) explain=$2; shift ;;
	--port) port=$2; shift ;;
	--no-build) build_gpusort=0 ;;
	--build-only) build_only=1 ;;
	*) echo "usage: $0 [--rows N] [--shards N] [--out FILE] [--explain FILE] [--port P] [--no-build] [--build-only]" >&2; exit 2 ;;
	esac
	shift
done

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
	) >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; return 1; }
	pg_config --version >"$cache/pg_version"
	touch "$cache/.complete"
	rm -rf "$work"
}

# Installs the cached image into the server's directories unless the same
# citus.so is there already.
citus_install() {
	local cache=$1 lib
	lib=$(pg_config --pkglibdir)/citus.so
	if [ -f "$lib" ] && cmp -s "$cache/root$lib" "$lib"; then
		gs_log "Citus already installed in $(pg_config --pkglibdir)"
		return 0
	fi
	gs_log "installing Citus from $cache into $(pg_config --pkglibdir) and $(pg_config --sharedir)/extension"
	$GS_SUDO cp -a "$cache/root/." /
}

citus_setup() {
	local major version cache
	major=$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	version=$(citus_pick "$major")
	cache=${GS_PG_CACHE:-/var/cache/gpusort}/citus-$version-pg$(pg_config --version | sed -E 's/^PostgreSQL ([0-9.]+).*/\1/')
	$GS_SUDO mkdir -p "$(dirname "$cache")"
	citus_build "$version" "$cache"
	citus_install "$cache"
}

gs_use_postgres
citus_setup
[ "$build_gpusort" = 0 ] || gs_build_install CUDA=0
[ "$build_only" = 0 ] || exit 0

# ------------------------------------------------------------ the cluster

# A coordinator on $port and workers on $port+1 and $port+2, in one temporary
# folder owned by the server user (postgres), sockets there too.
CC_DIR=
cc_stop() {
	local n
	[ -n "$CC_DIR" ] && [ -d "$CC_DIR" ] || return 0
	for n in c w1 w2; do
		[ -f "$CC_DIR/$n/postmaster.pid" ] &&
			"${GS_RUN[@]}" pg_ctl -D "$CC_DIR/$n" -m immediate -w stop >/dev/null 2>&1 || true
	done
	rm -rf "$CC_DIR"
	CC_DIR=
}

cc_server_user() {
	GS_RUN=()
	[ "$(id -u)" -eq 0 ] || return 0
	for GS_OWNER in postgres pgrun; do
		id "$GS_OWNER" >/dev/null 2>&1 && break
		GS_OWNER=
	done
	if [ -z "$GS_OWNER" ]; then
		GS_OWNER=gpusort
		id "$GS_OWNER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/bash "$GS_OWNER"
	fi
	GS_RUN=(gs_as_owner)
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
CONF
	"${GS_RUN[@]}" pg_ctl -D "$CC_DIR/$n" -l "$CC_DIR/$n.log" -w start >/dev/null ||
		{ tail -20 "$CC_DIR/$n.log" >&2; return 1; }
}

cc_psql() {
	local p=$1; shift
	psql -X -q -v ON_ERROR_STOP=1 -h "$CC_DIR" -p "$p" -U postgres -d postgres "$@"
}

cc_start() {
	local i=0 n
	cc_server_user
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
	# on the coordinator, CREATE EXTENSION reaches the workers
	cc_psql "$port" -c "CREATE EXTENSION gpusort"
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

# label | the call | the call's name in a worker's query when it is pushed
# down.  sum(i8) is the control: an aggregate Citus does push down.
QUERIES=(
	"sum(i8) (control)|sum(i8)|sum"
	"gpu_sort_agg(i4)|gpu_sort_agg(i4)|gpu_sort_agg"
	"gpu_sort_agg(ts, desc)|gpu_sort_agg(ts, true)|gpu_sort_agg"
	"gpu_median(f8)|gpu_median(f8)|gpu_median"
	"gpu_percentile_cont_agg(i8, 0.9)|gpu_percentile_cont_agg(i8, 0.9)|gpu_percentile_cont_agg"
	"gpu_percentile_cont_agg(f8, array)|gpu_percentile_cont_agg(f8, '{0.25,0.5,0.75}'::float8[])|gpu_percentile_cont_agg"
	"gpu_percentile_disc_agg(d, 0.5)|gpu_percentile_disc_agg(d, 0.5)|gpu_percentile_disc_agg"
	"gpu_mode_agg(i4)|gpu_mode_agg(i4)|gpu_mode_agg"
	"gpu_topk_agg(f8, 10)|gpu_topk_agg(f8, 10)|gpu_topk_agg"
	"gpu_topk_agg(ts, 10, desc)|gpu_topk_agg(ts, 10, true)|gpu_topk_agg"
	"gpu_percentile_cont(0.9) WITHIN GROUP (f8)|gpu_percentile_cont(0.9) WITHIN GROUP (ORDER BY f8)|gpu_percentile_cont"
	"gpu_percentile_disc(0.5) WITHIN GROUP (ts)|gpu_percentile_disc(0.5) WITHIN GROUP (ORDER BY ts)|gpu_percentile_disc"
	"gpu_mode() WITHIN GROUP (d)|gpu_mode() WITHIN GROUP (ORDER BY d)|gpu_mode"
	"gpu_sort(array_agg(i8))|gpu_sort(array_agg(i8))|array_agg"
)

# The query of a call on TABLE, ungrouped or GROUP BY g.
cc_query() {
	local call=$1 table=$2 grouped=$3
	if [ "$grouped" = 1 ]; then
		echo "SELECT g, $call FROM $table GROUP BY g ORDER BY g"
	else
		echo "SELECT $call FROM $table"
	fi
}

# Runs QUERY three times; the first answer goes to FILE, the median of the
# three times (ms) to stdout.
cc_time3() {
	local q=$1 file=$2 times
	times=$(cc_psql "$port" -A -t <<SQL | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
\\timing on
\\o $file
$q;
\\o /dev/null
$q;
$q;
SQL
	) || return 1
	[ "$(echo "$times" | wc -l)" -eq 3 ] || return 1
	echo "$times" | sort -g | sed -n 2p
}

# "pushdown" when a worker's query calls the aggregate (or Citus's
# worker_partial_agg), "row-gather" when it selects the raw column only.
cc_pushdown() {
	local q=$1 worker_call=$2 plan
	plan=$(cc_psql "$port" -A -t -c "EXPLAIN (VERBOSE) $q") || { echo "explain failed"; return; }
	[ -z "$explain" ] || printf '%s\n%s\n\n' "$q" "$plan" >>"$explain"
	if ! echo "$plan" | grep -q 'Custom Scan (Citus'; then
		echo "not distributed"
	elif echo "$plan" | grep -E '^ *Query: ' | grep -qE "(${worker_call}|worker_partial_agg)\("; then
		echo "pushdown"
	else
		echo "row-gather"
	fi
}

npass=0
nfail=0
ntest=0
TABLE_ROWS=()

# One call, ungrouped and grouped: a TAP line each, one pushdown line, and
# two rows of the timing table.
cc_check() {
	local label=$1 call=$2 worker_call=$3 grouped q_dist q_local t_dist t_local how hows=() suffix
	for grouped in 0 1; do
		ntest=$((ntest + 1))
		suffix=; [ "$grouped" = 0 ] || suffix=" GROUP BY g"
		q_dist=$(cc_query "$call" t_dist "$grouped")
		q_local=$(cc_query "$call" t_local "$grouped")
		how=$(cc_pushdown "$q_dist" "$worker_call")
		hows+=("$how${suffix:+ with$suffix}")
		if t_dist=$(cc_time3 "$q_dist" "$CC_DIR/dist.out") &&
			t_local=$(cc_time3 "$q_local" "$CC_DIR/local.out") &&
			[ -s "$CC_DIR/local.out" ] && cmp -s "$CC_DIR/dist.out" "$CC_DIR/local.out"; then
			npass=$((npass + 1))
			echo "ok $ntest - $label$suffix: distributed = local ($(wc -c <"$CC_DIR/local.out") bytes)"
		else
			nfail=$((nfail + 1))
			echo "not ok $ntest - $label$suffix: distributed answer differs from the local one, or a query failed"
			t_dist=${t_dist:-failed} t_local=${t_local:-failed}
		fi
		TABLE_ROWS+=("| \`$label\`$suffix | $t_dist | $t_local | $(cc_ratio "$t_dist" "$t_local") | $how |")
	done
	echo "# pushdown: $label: ${hows[0]}; ${hows[1]}"
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

cc_table() {
	echo "Citus $(cc_psql "$port" -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'") on $(pg_config --version), gpusort $(cc_psql "$port" -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'gpusort'"),"
	echo "$rows rows, $shards shards, a coordinator and 2 workers on one machine: $(cc_machine);"
	echo "median of 3 runs in ms as psql's \\timing reports it (the answer travels to psql too)."
	echo
	echo "| query | distributed ms | local ms | distributed / local | on the workers |"
	echo "| --- | ---: | ---: | ---: | --- |"
	printf '%s\n' "${TABLE_ROWS[@]}"
}

[ -z "$explain" ] || : >"$explain"
cc_start
cc_load
echo "1..$((${#QUERIES[@]} * 2))"
for entry in "${QUERIES[@]}"; do
	IFS='|' read -r label call worker_call <<<"$entry"
	cc_check "$label" "$call" "$worker_call"
done
echo
cc_table | tee ${out:+"$out"}
echo
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
