#!/bin/bash
# bench/agg_parallel_bench.sh: gpusort's plain aggregates in a parallel plan
# on one node, a baseline commit against the working tree.  Two PostgreSQL 15
# installs, each with its own gpusort (the baseline REV's and the working
# tree's), run two clusters side by side on the same rows (the same seed):
# ROWS int4 and float8 values, max_parallel_workers_per_gather = WORKERS
# with the parallel costs at 0 and the table's parallel_workers = WORKERS so
# that every worker is planned.  Times
#   cardinality(gpu_sort_agg(x)), gpu_median(x), gpu_percentile_cont_agg(x, 0.9)
# for x int4 and float8 (the sorted array is counted, not sent to psql), as
# the median of RUNS runs, the two clusters in turn (ABBA order), after an
# EXPLAIN (ANALYZE, VERBOSE) of each query that must show a Partial
# Aggregate below a Gather with the workers launched.  Prints a markdown
# table with the ratio baseline / now and the workers' EXPLAIN line.
#
#   bash bench/agg_parallel_bench.sh --pg-roots BASE_ROOT,NOW_ROOT [options]
#   bash bench/agg_parallel_bench.sh --gpu-host [options]
#
#   --pg-roots A,B  two PostgreSQL 15 trees unpacked from Debian's packages
#                   (A/usr/lib/postgresql/15/bin/postgres), the baseline's and
#                   the working tree's: gpusort is installed into each
#   --gpu-host      the GPU host: PostgreSQL from .pgbundle/activate.sh in
#                   /opt/pg, copied once to /opt/pg-agg-base and /opt/pg-agg-now;
#                   gpusort built with CUDA=1, gpusort.device = gpu,
#                   gpusort.server_memory = 30000 (MB) in each cluster
#   --baseline REV  the baseline commit (default f16115e), or a folder holding
#                   its tree (scripts/lib.sh gs_rev_tree)
#   --rows N        rows (default 10000000)
#   --runs N        timed runs per query and build (default 5)
#   --workers N     parallel workers (default 8)
#   --device D      gpusort.device (default auto; gpu with --gpu-host)
#   --port P        the baseline's cluster on P, the working tree's on P+1 (default 5821)
#   --out FILE      also write the table to FILE
#
# Both clusters run gpusort's server mode (shared_preload_libraries = 'gpusort').
# As root the servers run as postgres, pgrun or a gpusort user (scripts/lib.sh).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$GS_ROOT"

roots=
gpu_host=0
baseline=f16115e
rows=10000000
runs=5
workers=8
device=
port=5821
out=
make_args=(CUDA=0)
while [ $# -gt 0 ]; do
	case $1 in
	--pg-roots) roots=$2; shift ;;
	--gpu-host) gpu_host=1 ;;
	--baseline) baseline=$2; shift ;;
	--rows) rows=$2; shift ;;
	--runs) runs=$2; shift ;;
	--workers) workers=$2; shift ;;
	--device) device=$2; shift ;;
	--port) port=$2; shift ;;
	--out) out=$2; shift ;;
	*) echo "usage: $0 (--pg-roots BASE_ROOT,NOW_ROOT | --gpu-host) [--baseline REV] [--rows N] [--runs N] [--workers N] [--device D] [--port P] [--out FILE]" >&2; exit 2 ;;
	esac
	shift
done

# ------------------------------------------------------------ the installs

PHASES=(base now)
declare -A ROOT BIN SRC PORT DATA

# The GPU host's PostgreSQL (.pgbundle/activate.sh unpacks it into /opt/pg),
# copied once per phase so that each copy holds its own gpusort.
gpu_host_roots() {
	local p
	if [ ! -x /opt/pg/usr/lib/postgresql/15/bin/postgres ]; then
		[ -f "$GS_ROOT/.pgbundle/activate.sh" ] || { echo "agg_parallel_bench.sh: no /opt/pg and no .pgbundle/activate.sh" >&2; exit 3; }
		# shellcheck disable=SC1091
		source "$GS_ROOT/.pgbundle/activate.sh"
	fi
	for p in "${PHASES[@]}"; do
		[ -x "/opt/pg-agg-$p/usr/lib/postgresql/15/bin/postgres" ] || cp -a /opt/pg "/opt/pg-agg-$p"
	done
	roots=/opt/pg-agg-base,/opt/pg-agg-now
	make_args=(CUDA=1)
	device=${device:-gpu}
}

# Runs a command with PHASE's PostgreSQL first on PATH (its libpq too).
on() {
	local p=$1; shift
	(
		export PATH=${BIN[$p]}:$PATH
		export LD_LIBRARY_PATH=${ROOT[$p]}/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		"$@"
	)
}

# Builds a phase's tree against its PostgreSQL and installs it there.
build_install() {
	local p=$1
	gs_log "$p: building gpusort in ${SRC[$p]} (${make_args[*]}) for ${ROOT[$p]}"
	on "$p" make -C "${SRC[$p]}" -s -j"$(nproc)" PG_CONFIG="${BIN[$p]}/pg_config" "${make_args[@]}" >/dev/null
	on "$p" make -C "${SRC[$p]}" -s install PG_CONFIG="${BIN[$p]}/pg_config" "${make_args[@]}" >/dev/null
}

setup_installs() {
	local p base_root now_root
	[ "$gpu_host" = 0 ] || gpu_host_roots
	[ -n "$roots" ] || { echo "agg_parallel_bench.sh: give --pg-roots BASE_ROOT,NOW_ROOT or --gpu-host" >&2; exit 2; }
	IFS=, read -r base_root now_root <<<"$roots"
	ROOT[base]=$base_root ROOT[now]=$now_root
	gs_rev_tree "$baseline"
	SRC[base]=$GS_REV_DIR SRC[now]=$GS_ROOT
	PORT[base]=$port PORT[now]=$((port + 1))
	device=${device:-auto}
	for p in "${PHASES[@]}"; do
		BIN[$p]=${ROOT[$p]}/usr/lib/postgresql/15/bin
		[ -x "${BIN[$p]}/postgres" ] || { echo "agg_parallel_bench.sh: no PostgreSQL in ${ROOT[$p]}" >&2; exit 3; }
		build_install "$p"
	done
}

# ------------------------------------------------------------ the clusters


stop_clusters() {
	local p
	for p in "${PHASES[@]}"; do
		[ -n "${DATA[$p]:-}" ] && [ -d "${DATA[$p]}" ] || continue
		on "$p" "${GS_RUN[@]}" pg_ctl -D "${DATA[$p]}/data" -m fast -w stop >/dev/null 2>&1 || true
		rm -rf "${DATA[$p]}"
	done
}

start_cluster() {
	local p=$1 dir
	dir=$(mktemp -d /tmp/gpusort-aggbench.XXXXXX)
	DATA[$p]=$dir
	[ "$(id -u)" -ne 0 ] || chown "$GS_OWNER" "$dir"
	on "$p" "${GS_RUN[@]}" initdb -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
		{ tail -20 "$dir/initdb.log" >&2; return 1; }
	cat >>"$dir/data/postgresql.conf" <<CONF
port = ${PORT[$p]}
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'gpusort'
gpusort.device = $device
shared_buffers = 1GB
work_mem = 1GB
max_worker_processes = $((workers + 8))
max_parallel_workers = $workers
max_parallel_workers_per_gather = $workers
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
jit = off
CONF
	# the two clusters' GPU servers share the GPU: 30 GB each of an H100's 80
	[ "$gpu_host" = 0 ] || echo "gpusort.server_memory = 30000" >>"$dir/data/postgresql.conf"
	on "$p" "${GS_RUN[@]}" pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null ||
		{ tail -20 "$dir/server.log" >&2; return 1; }
}

sql() {
	local p=$1; shift
	on "$p" psql -X -q -v ON_ERROR_STOP=1 -h "${DATA[$p]}" -p "${PORT[$p]}" -U postgres -d postgres "$@"
}

# The same rows in both clusters: one seed, one query.  A checksum of the
# rows shows they are the same.
load() {
	local p=$1
	sql "$p" >/dev/null <<SQL
CREATE EXTENSION gpusort;
SELECT setseed(0.42);
CREATE TABLE t AS
SELECT (random() * 2e9 - 1e9)::int4 AS i4, random() * 1e6 - 5e5 AS f8
FROM generate_series(1, $rows);
ALTER TABLE t SET (parallel_workers = $workers);
VACUUM ANALYZE t;
SQL
	sql "$p" -A -t -c "SELECT count(*) || ' rows, sum(i4) ' || sum(i4) || ', sum(f8) ' || round(sum(f8)::numeric, 3) FROM t"
}

# ------------------------------------------------------------ the runs

QUERIES=(
	"SELECT cardinality(gpu_sort_agg(i4)) FROM t"
	"SELECT gpu_median(i4) FROM t"
	"SELECT gpu_percentile_cont_agg(i4, 0.9) FROM t"
	"SELECT cardinality(gpu_sort_agg(f8)) FROM t"
	"SELECT gpu_median(f8) FROM t"
	"SELECT gpu_percentile_cont_agg(f8, 0.9) FROM t"
)

declare -A WORKERS_LINE ANSWER
# EXPLAIN (ANALYZE, VERBOSE) of query I on a phase's cluster: the plan must
# hold a Gather over a Partial Aggregate; keeps its "Workers Planned/Launched"
# line.
explain() {
	local p=$1 i=$2 plan planned launched
	plan=$(sql "$p" -A -t -c "EXPLAIN (ANALYZE, VERBOSE) ${QUERIES[$i]}")
	planned=$(sed -n 's/^ *Workers Planned: //p' <<<"$plan" | head -1)
	launched=$(sed -n 's/^ *Workers Launched: //p' <<<"$plan" | head -1)
	if grep -q 'Gather' <<<"$plan" && grep -q 'Partial Aggregate' <<<"$plan"; then
		WORKERS_LINE[$p.$i]="Partial Aggregate; Workers Planned: ${planned:-0}, Launched: ${launched:-0}"
		[ "${launched:-0}" = "$workers" ] || gs_log "$p: ${QUERIES[$i]}: ${launched:-0} workers launched, not $workers"
	else
		WORKERS_LINE[$p.$i]="no parallel partial aggregate"
		gs_log "$p: ${QUERIES[$i]} has no Gather over a Partial Aggregate:"
		echo "$plan" >&2
	fi
	ANSWER[$p.$i]=$(sql "$p" -A -t -c "${QUERIES[$i]}")
}

# One timed run (ms, psql's \timing) of query I on a phase's cluster.
time_once() {
	local p=$1 i=$2
	sql "$p" -A -t <<SQL | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
\\timing on
\\o /dev/null
${QUERIES[$i]};
SQL
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

declare -A TIMES MS
measure() {
	local i=$1 r order p
	for p in "${PHASES[@]}"; do explain "$p" "$i"; done
	for ((r = 0; r < runs; r++)); do
		order="base now"
		[ $((r % 2)) = 0 ] || order="now base"
		for p in $order; do
			TIMES[$p.$i]+=" $(time_once "$p" "$i")"
		done
	done
	for p in "${PHASES[@]}"; do MS[$p.$i]=$(median <<<"${TIMES[$p.$i]}"); done
	gs_log "$(printf '%-50s base %10s ms  now %10s ms' "${QUERIES[$i]}" "${MS[base.$i]}" "${MS[now.$i]}")"
}

machine() {
	local cpu gpu
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
	echo "$(nproc) cores of ${cpu:-an unknown CPU}, ${gpu:-no GPU}"
}

table() {
	local i
	echo "gpusort's plain aggregates in parallel plans: baseline $baseline (gpusort $(sql base -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'gpusort'"))"
	echo "against the working tree $(git -C "$GS_ROOT" describe --always --dirty 2>/dev/null) (gpusort $(sql now -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'gpusort'")), both built with ${make_args[*]};"
	echo "$(on now postgres --version), $rows rows of int4 and float8, max_parallel_workers_per_gather = $workers,"
	echo "server mode, gpusort.device = $device; $(machine); median of $runs runs in ms (psql's \\timing),"
	echo "the two clusters in turn."
	echo
	echo "| query | baseline ms | now ms | baseline / now | workers (EXPLAIN ANALYZE), baseline | now | same answer |"
	echo "| --- | ---: | ---: | ---: | --- | --- | --- |"
	for i in "${!QUERIES[@]}"; do
		echo "| \`${QUERIES[$i]}\` | ${MS[base.$i]} | ${MS[now.$i]} | $(awk -v a="${MS[base.$i]}" -v b="${MS[now.$i]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') | ${WORKERS_LINE[base.$i]} | ${WORKERS_LINE[now.$i]} | $([ "${ANSWER[base.$i]}" = "${ANSWER[now.$i]}" ] && echo yes || echo "no: ${ANSWER[base.$i]} / ${ANSWER[now.$i]}") |"
	done
}

setup_installs
gs_server_user
trap stop_clusters EXIT
trap 'exit 130' INT TERM
declare -A SUM
for p in "${PHASES[@]}"; do
	gs_log "$p: a cluster on port ${PORT[$p]}, loading $rows rows"
	start_cluster "$p"
	SUM[$p]=$(load "$p")
done
[ "${SUM[base]}" = "${SUM[now]}" ] || { echo "agg_parallel_bench.sh: the two tables differ: ${SUM[base]} / ${SUM[now]}" >&2; exit 1; }
gs_log "both tables: ${SUM[now]}"
for i in "${!QUERIES[@]}"; do measure "$i"; done
echo
table | tee ${out:+"$out"}
