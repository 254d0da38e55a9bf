#!/bin/bash
# bench/tpch_bench.sh: the 22 TPC-H queries with gpusort's sort node on and
# off, in one throwaway cluster.  Builds dbgen 2.14 from ../shared/tpch once
# (into a cache outside the clone, like scripts/pg-build.sh), generates scale
# factor SF once (cached per SF, in parallel chunks on the machine's cores),
# loads the eight tables (dss.ddl, COPY), adds ../shared/tpch/keys.sql and
# runs VACUUM ANALYZE.  Then, for each query (../shared/tpch/queries/N.sql;
# Q15 creates its view before and drops it after, untimed), in one session:
#
#   - EXPLAIN (ANALYZE, FORMAT JSON) with gpusort.enable_sort off and on: the
#     Sort and Incremental Sort nodes of the plan with the node off (their
#     keys, and the rows each sorts: the actual rows of its input, times its
#     loops, and the planner's estimate), the Custom Scan (gpusort) nodes and
#     the Sort nodes left with the node on;
#   - EXPLAIN (VERBOSE, COSTS OFF) off and on, saved, and every line of the
#     latter that says "gpusort:" (why the node declined a key);
#   - the query off and on once each (the warm-up), whose answers are
#     compared: row for row where the ORDER BY names every output column,
#     else as a multiset (the rows sorted as text), as peers may come in any
#     order;
#   - then RUNS timed runs of each, the two settings in turn (off, on; then
#     on, off), in ms of psql's \timing (the whole statement, the rows to
#     the client included); the median is kept.
#
# Prints a markdown table (query, Sort nodes, via gpusort, rows sorted,
# identical, ms off, ms on, ratio off / on) with totals, and the details of
# each Sort; writes them to FILE and the plans to FILE without .md plus
# -plans.md.
#
#   bash bench/tpch_bench.sh                     # SF 1, 3 runs
#   bash bench/tpch_bench.sh --sf 0.1 CUDA=0 --out bench/results/tpch-....md
#   bash bench/tpch_bench.sh --gpu-host --sf 10  # the GPU host (see below)
#
#   --sf SF          scale factor (default 1: 6,001,215 lineitem rows, about 1 GB)
#   --runs N         timed runs per query and setting (default 3)
#   --work-mem SIZE  work_mem (default 1GB: every sort in memory on both sides)
#   --workers W      max_parallel_workers_per_gather (default 0)
#   --queries LIST   the queries to run, e.g. 1,3,18 (default 1-22)
#   --device D       gpusort.device (default: the server's, auto; gpu with --gpu-host)
#   --shared-buffers SIZE  (default 1GB)
#   --port P         the cluster's port (default 55490)
#   --no-build       use the gpusort installed in pg_config's PostgreSQL as it is
#   --cluster DIR    keep the cluster in DIR: loaded the first time, used as it is
#                    by later runs with the same DIR and SF (a large SF's queries
#                    over several runs, e.g. --queries 1-11 then 12-22)
#   --fast           one execution fewer per query and setting: the rows each Sort
#                    reads are the planner's estimates (EXPLAIN without ANALYZE);
#                    for a scale factor whose queries take minutes
#   --data-only      build dbgen and generate SF's data into the cache, then stop
#   --gpu-host       the GPU host: PostgreSQL from .pgbundle/activate.sh when no
#                    pg_config is on PATH, gpusort built with CUDA, gpusort.device = gpu;
#                    where ../shared does not travel, copy ../shared/tpch into the
#                    clone's shared/tpch first (or set GS_TPCH_SRC)
#   --host NAME      the machine's name in the default FILE (default: CPU model and cores)
#   --out FILE       the table (default $OUT or bench/results, tpch-HOST-sfSF.md)
#   MAKEVAR=value    passed to make (e.g. CUDA=0); GS_PREBUILT=1 installs prebuilt files
#
# Environment: GS_TPCH_SRC, the folder of tpch-dbgen-2.14.0.tar.gz, keys.sql and
# queries/ (default: the first shared/tpch in the clone or beside it or one of
# its parent folders); GS_TPCH_CACHE, the cache's parent folder (default
# GS_PG_CACHE, else /var/cache/gpusort): dbgen in tpch-dbgen-2.14.0, the data in
# tpch-sfSF.  The cluster runs gpusort's server mode (scripts/lib.sh).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/bench_lib.sh"
cd "$GS_ROOT"

command_line="bench/tpch_bench.sh $*"
sf=1
runs=3
work_mem=1GB
workers=0
queries=$(seq -s, 1 22)
device=
shared_buffers=1GB
port=55490
build=1
cluster=
fast=0
data_only=0
gpu_host=0
host=
out=
make_args=()
usage() {
	echo "usage: $0 [--sf SF] [--runs N] [--work-mem SIZE] [--workers W] [--queries LIST] [--device D]" >&2
	echo "          [--shared-buffers SIZE] [--port P] [--no-build] [--cluster DIR] [--fast] [--data-only]" >&2
	echo "          [--gpu-host] [--host NAME] [--out FILE] [MAKEVAR=value]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
		--sf) sf=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		--work-mem) work_mem=$2; shift 2 ;;
		--workers) workers=$2; shift 2 ;;
		--queries) queries=$2; shift 2 ;;
		--device) device=$2; shift 2 ;;
		--shared-buffers) shared_buffers=$2; shift 2 ;;
		--port) port=$2; shift 2 ;;
		--no-build) build=0; shift ;;
		--cluster) cluster=$2; shift 2 ;;
		--fast) fast=1; shift ;;
		--data-only) data_only=1; shift ;;
		--gpu-host) gpu_host=1; shift ;;
		--host) host=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		*=*) make_args+=("$1"); shift ;;
		*) usage ;;
	esac
done
[[ $sf =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "tpch_bench.sh: --sf takes a number, not $sf" >&2; exit 2; }
# one spelling per scale factor (1, 1.0 and 01 are SF 1): the cache's and the cluster's markers name it
sf=$(echo "$sf" | sed -E 's/^0+([0-9])/\1/; s/(\.[0-9]*[1-9])0+$/\1/; s/\.0*$//')
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage

# ------------------------------------------------------------ dbgen and the data

# The TPC-H folder: GS_TPCH_SRC, else shared/tpch in the clone, beside it or
# beside one of its parent folders (where scripts/pg-build.sh finds pg-src).
tpch_src=${GS_TPCH_SRC:-}
if [ -z "$tpch_src" ]; then
	dir=$GS_ROOT
	while :; do
		if [ -f "$dir/shared/tpch/keys.sql" ]; then
			tpch_src=$dir/shared/tpch
			break
		fi
		[ "$dir" != / ] || break
		dir=$(dirname "$dir")
	done
fi
[ -n "$tpch_src" ] && [ -f "$tpch_src/tpch-dbgen-2.14.0.tar.gz" ] ||
	{ echo "tpch_bench.sh: no shared/tpch with tpch-dbgen-2.14.0.tar.gz beside the clone (set GS_TPCH_SRC)" >&2; exit 3; }
cache=${GS_TPCH_CACHE:-${GS_PG_CACHE:-/var/cache/gpusort}}
dbgen_dir=$cache/tpch-dbgen-2.14.0
data=$cache/tpch-sf$sf
chunks=$(nproc 2>/dev/null || echo 2)

# dbgen and its dists.dss, built once (plain C: make -f makefile MACHINE=LINUX).
build_dbgen() {
	local work
	[ -f "$dbgen_dir/.complete" ] && [ -x "$dbgen_dir/dbgen" ] && return 0
	(cd "$tpch_src" && sha256sum -c --quiet SHA256SUMS) >&2 ||
		{ echo "tpch_bench.sh: tpch-dbgen-2.14.0.tar.gz does not match SHA256SUMS" >&2; exit 1; }
	gs_log "building dbgen 2.14.0 into $dbgen_dir (once)"
	work=$(mktemp -d /tmp/gpusort-dbgen.XXXXXX)
	tar -xzf "$tpch_src/tpch-dbgen-2.14.0.tar.gz" -C "$work"
	make -C "$work/tpch-dbgen" -s -f makefile MACHINE=LINUX -j"$chunks" dbgen >"$work/build.log" 2>&1 ||
		{ tail -30 "$work/build.log" >&2; exit 1; }
	rm -rf "$dbgen_dir" && mkdir -p "$dbgen_dir"
	cp "$work/tpch-dbgen/dbgen" "$work/tpch-dbgen/dists.dss" "$work/tpch-dbgen/dss.ddl" "$dbgen_dir/"
	touch "$dbgen_dir/.complete"
	rm -rf "$work"
}

# The .tbl files of SF, generated once in CHUNKS parallel parts (-C, -S).
# Every part writes nation and region whole, so each writes into its own
# folder; the first part's copy of those two is kept.
generate_data() {
	local tmp i pids=() failed=0 start=$SECONDS
	[ -f "$data/.complete" ] && return 0
	tmp=$data.tmp
	rm -rf "$data"
	rm -rf "$tmp" && mkdir -p "$tmp"
	gs_log "generating TPC-H SF $sf into $data ($chunks parts, once)"
	if [ "$chunks" -le 1 ]; then
		mkdir -p "$tmp/chunk1"
		(cd "$tmp/chunk1" && DSS_CONFIG=$dbgen_dir DSS_PATH=$tmp/chunk1 "$dbgen_dir/dbgen" -q -f -s "$sf") || failed=1
	else
		for ((i = 1; i <= chunks; i++)); do
			mkdir -p "$tmp/chunk$i"
			(cd "$tmp/chunk$i" && DSS_CONFIG=$dbgen_dir DSS_PATH=$tmp/chunk$i \
				"$dbgen_dir/dbgen" -q -f -s "$sf" -C "$chunks" -S "$i") &
			pids+=($!)
		done
		for i in "${pids[@]}"; do wait "$i" || failed=1; done
	fi
	[ "$failed" = 0 ] || { echo "tpch_bench.sh: dbgen failed" >&2; exit 1; }
	# the parts' files are TABLE.tbl.PART (TABLE.tbl in one part)
	mv "$tmp/chunk1/nation.tbl" "$tmp/chunk1/region.tbl" "$tmp/"
	for ((i = 1; i <= chunks; i++)); do
		rm -f "$tmp/chunk$i/nation.tbl" "$tmp/chunk$i/region.tbl"
		mv "$tmp/chunk$i"/*.tbl* "$tmp/"
		rmdir "$tmp/chunk$i"
	done
	mv "$tmp" "$data"
	touch "$data/.complete"
	gs_log "generated in $((SECONDS - start)) s"
}

# ------------------------------------------------------------ the cluster

TABLES=(region nation part supplier partsupp customer orders lineitem)

sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

# Loads the eight tables (each file's trailing | stripped), as many COPYs at
# once as there are cores, then the keys and VACUUM ANALYZE.
load() {
	local t f n=0 start=$SECONDS
	if [ -n "$cluster" ] && [ -f "$GS_PGDIR/loaded-sf$sf" ]; then
		gs_log "SF $sf loaded in $GS_PGDIR by an earlier run"
		load_s=$(cat "$GS_PGDIR/loaded-sf$sf")
		return 0
	fi
	[ -z "$cluster" ] || [ -z "$(ls "$GS_PGDIR"/loaded-sf* 2>/dev/null)" ] ||
		{ echo "tpch_bench.sh: $GS_PGDIR holds another scale factor ($(ls "$GS_PGDIR"/loaded-sf*))" >&2; exit 2; }
	# the load's first step done, its last not: an earlier run's load failed or was stopped
	[ -z "$cluster" ] || [ "$(sql -At -c "SELECT count(*) FROM pg_extension WHERE extname = 'gpusort'")" = 0 ] ||
		{ echo "tpch_bench.sh: the load of an earlier run into $GS_PGDIR did not finish: remove the folder and run again" >&2; exit 2; }
	sql -c "CREATE EXTENSION gpusort"
	sql -f "$dbgen_dir/dss.ddl"
	gs_log "loading SF $sf"
	for t in "${TABLES[@]}"; do
		for f in "$data/$t".tbl*; do
			[ -f "$f" ] || { echo "tpch_bench.sh: no $t.tbl in $data" >&2; exit 1; }
			if [ "$n" -ge "$chunks" ]; then wait -n; n=$((n - 1)); fi
			sed 's/|$//' "$f" | sql -c "COPY $t FROM STDIN WITH (FORMAT text, DELIMITER '|')" &
			n=$((n + 1))
		done
	done
	while [ "$n" -gt 0 ]; do wait -n; n=$((n - 1)); done
	gs_log "loaded in $((SECONDS - start)) s; adding the keys of keys.sql, VACUUM ANALYZE"
	sql -f "$tpch_src/keys.sql"
	sql -c "VACUUM ANALYZE"
	load_s=$((SECONDS - start))
	[ -z "$cluster" ] || echo "$load_s" >"$GS_PGDIR/loaded-sf$sf"
}

# ------------------------------------------------------------ the queries

# Splits a query file into the statements before its SELECT (Q15's view),
# the SELECT (without its semicolon) and the statements after.
split_query() {
	local file=$1 dir=$2
	awk -v dir="$dir" '
		BEGIN { part = "pre" }
		{ stmt = stmt $0 "\n" }
		/;[[:space:]]*$/ {
			s = stmt; stmt = ""
			if (part == "pre" && s ~ /^[[:space:]]*(select|with)[[:space:]]/) {
				sub(/;[[:space:]]*$/, "", s)
				printf "%s", s > (dir "/main.sql")
				printf "%s;\n", s > (dir "/q.sql"); part = "post"; next
			}
			printf "%s", s > (dir "/" part ".sql")
		}' "$file"
	touch "$dir/pre.sql" "$dir/post.sql"
	[ -s "$dir/main.sql" ] || { echo "tpch_bench.sh: no SELECT in $file" >&2; return 1; }
}

# Whether the ORDER BY of a query names every output column (its header):
# then the order of the rows is fixed and the answers are compared row for row.
order_fixed() {
	local main=$1 header=$2
	awk -v header="$header" '
		{ text = text " " tolower($0) }
		END {
			n = split(text, w, /order[[:space:]]+by/)
			if (n < 2) { print "no"; exit }
			list = w[n]
			sub(/[[:space:]]limit[[:space:]].*/, "", list)
			k = split(list, items, ",")
			for (i = 1; i <= k; i++) {
				item = items[i]
				gsub(/[[:space:]](asc|desc|nulls[[:space:]]+(first|last))/, " ", item)
				gsub(/[[:space:]]/, "", item)
				named[item] = 1
			}
			c = split(header, cols, "|")
			for (i = 1; i <= c; i++)
				if (!(tolower(cols[i]) in named)) { print "no"; exit }
			print "yes"
		}' "$main"
}

# The helper the sessions call: the sort nodes of a query's plan under
# EXPLAIN (ANALYZE, FORMAT JSON), one row per node in plan order: its kind,
# the rows it reads (its input's actual rows times loops), the planner's
# estimate of those, its method or device, and its keys.
setup_functions() {
	sql <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS tpch_bench CASCADE;
RESET client_min_messages;
CREATE SCHEMA tpch_bench;
CREATE FUNCTION tpch_bench.sorts(q text, with_analyze bool)
RETURNS TABLE (node text, rows_in numeric, rows_est numeric, method text, keys text)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE CASE WHEN with_analyze THEN 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' ELSE 'EXPLAIN (FORMAT JSON) ' END
		|| q INTO plan;
	RETURN QUERY
	WITH RECURSIVE n(p, path) AS (
		SELECT plan -> 0 -> 'Plan', ARRAY[0]
		UNION ALL
		SELECT c.value, n.path || c.ordinality::int
		FROM n, json_array_elements(n.p -> 'Plans') WITH ORDINALITY c
	)
	SELECT CASE WHEN n.p ->> 'Node Type' = 'Custom Scan' THEN 'gpusort' ELSE n.p ->> 'Node Type' END,
		   CASE WHEN (n.p -> 'Plans' -> 0 ->> 'Actual Loops')::numeric > 0
				THEN round((n.p -> 'Plans' -> 0 ->> 'Actual Rows')::numeric * (n.p -> 'Plans' -> 0 ->> 'Actual Loops')::numeric) END,
		   (n.p -> 'Plans' -> 0 ->> 'Plan Rows')::numeric,
		   concat_ws(', ', n.p ->> 'Sort Method', n.p ->> 'Sort Device', n.p ->> 'Sort Space Type',
					 'bound ' || (n.p ->> 'Sort Bound')),
		   (SELECT string_agg(k, ', ') FROM json_array_elements_text(n.p -> 'Sort Key') k)
	FROM n
	WHERE n.p ->> 'Node Type' IN ('Sort', 'Incremental Sort')
	   OR (n.p ->> 'Node Type' = 'Custom Scan' AND n.p ->> 'Custom Plan Provider' = 'gpusort')
	ORDER BY n.path;
END $$;
SQL
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

declare -A SORTS VIA LEFT ROWS SAME MS_OFF MS_ON ALL_OFF ALL_ON NOTE DETAIL
# Runs query N in one session and fills the arrays above.
run_query() {
	local n=$1 dir=$work/q$n out r order side header fixed
	mkdir -p "$dir"
	split_query "$tpch_src/queries/$n.sql" "$dir"
	{
		echo '\pset footer off'
		cat "$dir/pre.sql"
		for side in off on; do
			echo "SET gpusort.enable_sort = $side;"
			echo "SELECT 'S', '$side', * FROM tpch_bench.sorts(:'q', $([ "$fast" = 1 ] && echo false || echo true));"
			echo "\\o $dir/plan-$side.txt"
			echo "EXPLAIN (VERBOSE, COSTS OFF)"
			cat "$dir/main.sql"; echo ";"
			echo "\\o"
		done
		echo '\pset tuples_only off'
		for side in off on; do
			echo "SET gpusort.enable_sort = $side;"
			echo "\\o $dir/answer-$side.txt"
			echo "\\i $dir/q.sql"
			echo "\\o"
		done
		echo '\timing on'
		for ((r = 0; r < runs; r++)); do
			order="off on"
			[ $((r % 2)) = 0 ] || order="on off"
			for side in $order; do
				echo "SET gpusort.enable_sort = $side;"
				echo "\\o /dev/null"
				echo "\\echo T|$side"
				echo "\\i $dir/q.sql"
				echo "\\o"
			done
		done
		echo '\timing off'
		cat "$dir/post.sql"
	} >"$dir/session.sql"
	gs_log "Q$n"
	if ! sql -A -t -F '|' -v q="$(cat "$dir/main.sql")" -f "$dir/session.sql" >"$dir/out.txt" 2>"$dir/err.txt"; then
		NOTE[$n]="error: $(grep -m1 ERROR "$dir/err.txt" || tail -1 "$dir/err.txt")"
		gs_log "Q$n: ${NOTE[$n]}"
		# Q15's view, if the error came between its creation and its drop
		[ ! -s "$dir/post.sql" ] || sql -f "$dir/post.sql" >/dev/null 2>&1 || true
		return 0
	fi
	out=$dir/out.txt
	SORTS[$n]=$(grep -c '^S|off|\(Sort\|Incremental Sort\)|' "$out" || true)
	VIA[$n]=$(grep -c '^S|on|gpusort|' "$out" || true)
	LEFT[$n]=$(grep -c '^S|on|\(Sort\|Incremental Sort\)|' "$out" || true)
	ROWS[$n]=$(awk -F'|' '$1 == "S" && $2 == "off" { printf "%s%s", (k++ ? ", " : ""), ($4 != "" ? $4 : "~" $5) }' "$out")
	DETAIL[$n]=$(awk -F'|' '$1 == "S" { printf "| %s | %s | %s | %s | %s | %s | `%s` |\n", q, $2, $3, $4, $5, $6, $7 }' q="Q$n" "$out")
	NOTE[$n]=$(grep -h 'gpusort:' "$dir/plan-on.txt" | sed 's/^ *//' | sort -u | paste -sd ';' - || true)
	header=$(head -1 "$dir/answer-off.txt")
	fixed=$(order_fixed "$dir/main.sql" "$header")
	if cmp -s "$dir/answer-off.txt" "$dir/answer-on.txt"; then
		SAME[$n]=yes
	elif [ "$fixed" = no ] && [ "$(LC_ALL=C sort "$dir/answer-off.txt" | md5sum)" = "$(LC_ALL=C sort "$dir/answer-on.txt" | md5sum)" ]; then
		SAME[$n]="yes (as a multiset)"
	else
		SAME[$n]="**NO**"
	fi
	[ "$fixed" = yes ] || SAME[$n]+=" ¹"
	for side in off on; do
		r=$(awk -v want="$side" '/^T\|/ { side = substr($0, 3); next } side == want && /^Time: / { print $2; side = "" }' "$out")
		if [ "$side" = off ]; then
			MS_OFF[$n]=$(echo "$r" | median)
			ALL_OFF[$n]=$(echo "$r" | paste -sd ' ' -)
		else
			MS_ON[$n]=$(echo "$r" | median)
			ALL_ON[$n]=$(echo "$r" | paste -sd ' ' -)
		fi
	done
	gs_log "$(printf 'Q%-2s Sort %s, via gpusort %s, identical %s, off %s ms, on %s ms' "$n" "${SORTS[$n]}" "${VIA[$n]}" \
		"${SAME[$n]}" "${MS_OFF[$n]}" "${MS_ON[$n]}")"
}

# ------------------------------------------------------------ main

if [ "$gpu_host" = 1 ]; then
	if ! command -v pg_config >/dev/null 2>&1 && [ -f "$GS_ROOT/.pgbundle/activate.sh" ]; then
		# shellcheck disable=SC1091
		source "$GS_ROOT/.pgbundle/activate.sh"
	fi
	device=${device:-gpu}
fi
gs_bench_machine
host=${host:-$host_slug}
out=${out:-${OUT:-bench/results}/tpch-$host-sf$sf.md}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
plans_out=${out%.md}-plans.md

build_dbgen
generate_data
[ "$data_only" = 0 ] || exit 0
gs_ensure_postgres
[ "$build" = 0 ] || gs_build_install "${make_args[@]}"
[ -z "$cluster" ] || export GS_KEEP_PGDIR=$cluster
GS_PGPORT=$port gs_start_cluster -c shared_buffers="$shared_buffers" -c work_mem="$work_mem" \
	-c max_parallel_workers_per_gather="$workers" -c max_worker_processes=$((workers + 8)) \
	-c max_parallel_workers="$((workers > 8 ? workers : 8))" -c max_wal_size=8GB \
	${device:+-c gpusort.device=$device}
work=$(mktemp -d /tmp/gpusort-tpch.XXXXXX)
trap 'gs_stop_cluster; rm -rf "$work"' EXIT
load
setup_functions

raw=$work/raw.txt
sql -A -t -F '|' >"$raw" <<'SQL'
SELECT 'pg', version();
SELECT 'gpu', format('%s (compute capability %s, %s MB, %s SMs)', name, compute_capability, memory_total_mb, multiprocessors)
FROM gpusort_devices();
SELECT 'info', format('version %s, built with CUDA: %s, GPU usable: %s%s, mode: %s',
					  (SELECT extversion FROM pg_extension WHERE extname = 'gpusort'), built_with_cuda, gpu_usable,
					  coalesce(' (' || reason || ')', ''), mode)
FROM gpusort_info();
SELECT 'settings', concat_ws(', ', 'work_mem = ' || current_setting('work_mem'),
							 'shared_buffers = ' || current_setting('shared_buffers'),
							 'max_parallel_workers_per_gather = ' || current_setting('max_parallel_workers_per_gather'),
							 'gpusort.device = ' || current_setting('gpusort.device'),
							 'gpusort.sort_node_min_rows = ' || current_setting('gpusort.sort_node_min_rows', true),
							 'jit = ' || current_setting('jit'));
SELECT 'lineitem', count(*) FROM lineitem;
SQL
lines() { grep "^$1|" "$raw" | cut -d'|' -f2- || true; }

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }
load_before=$(loadavg)
IFS=, read -r -a QLIST <<<"$queries"
for n in "${QLIST[@]}"; do
	[ -f "$tpch_src/queries/$n.sql" ] || { echo "tpch_bench.sh: no query $n in $tpch_src/queries" >&2; exit 2; }
	run_query "$n"
done

load_after=$(loadavg)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.2fx", a / b; else print "-" }'; }
ms() { awk -v x="$1" 'BEGIN { if (x == "") print "-"; else if (x >= 100) printf "%.0f", x; else printf "%.1f", x }'; }
{
	gs_bench_header "TPC-H, SF $sf: the 22 queries with gpusort's sort node on and off" "$raw"
	echo "- how: \`$command_line\`"
	echo "- settings: $(lines settings); gpusort preloaded (server mode); the node on and off by"
	echo "  gpusort.enable_sort in the same session"
	echo "- data: dbgen 2.14.0 -s $sf ($(lines lineitem) lineitem rows), loaded with COPY, then"
	echo "  shared/tpch/keys.sql and VACUUM ANALYZE ($load_s s in all${cluster:+; the cluster kept in $cluster across runs})"
	echo "- timing: each query once with the node off and once on (the warm-up; the answers compared), then"
	echo "  $runs runs of each, off and on in turn (off, on; on, off; ...); the median of the runs in ms of psql's"
	echo "  \\timing (the whole statement, the rows sent to the client included). Ratio: off / on, above 1 the"
	echo "  node is faster. The machine's load average (1, 5, 15 min): $load_before before the queries,"
	echo "  $load_after after."
	if [ "$fast" = 0 ]; then
		echo "- Sort nodes: Sort and Incremental Sort nodes in EXPLAIN ANALYZE with the node off; via gpusort:"
		echo "  Custom Scan (gpusort) nodes with the node on; rows sorted: the actual rows of each Sort's input"
		echo "  (rows times loops), ~ the planner's estimate where the input did not run."
	else
		echo "- Sort nodes: Sort and Incremental Sort nodes in EXPLAIN (--fast: not ANALYZE) with the node off;"
		echo "  via gpusort: Custom Scan (gpusort) nodes with the node on; rows sorted: ~ the planner's estimate"
		echo "  of each Sort's input."
	fi
	echo
	echo "| query | Sort nodes | via gpusort | rows sorted | identical | ms off | ms on | ratio |"
	echo "| --- | ---: | ---: | --- | --- | ---: | ---: | ---: |"
	t_sorts=0 t_via=0 t_same=0 t_ran=0 t_off=0 t_on=0
	for n in "${QLIST[@]}"; do
		if [ -z "${MS_OFF[$n]:-}" ]; then
			echo "| Q$n | - | - | - | ${NOTE[$n]:-not run} | - | - | - |"
			continue
		fi
		t_ran=$((t_ran + 1))
		t_sorts=$((t_sorts + SORTS[$n]))
		t_via=$((t_via + VIA[$n]))
		case ${SAME[$n]} in yes*) t_same=$((t_same + 1)) ;; esac
		t_off=$(awk -v a="$t_off" -v b="${MS_OFF[$n]}" 'BEGIN { print a + b }')
		t_on=$(awk -v a="$t_on" -v b="${MS_ON[$n]}" 'BEGIN { print a + b }')
		echo "| Q$n | ${SORTS[$n]} | ${VIA[$n]} | ${ROWS[$n]:--} | ${SAME[$n]} | $(ms "${MS_OFF[$n]}") | $(ms "${MS_ON[$n]}") | $(ratio "${MS_OFF[$n]}" "${MS_ON[$n]}") |"
	done
	echo "| **total** | $t_sorts | $t_via | | $t_same of $t_ran | $(ms "$t_off") | $(ms "$t_on") | $(ratio "$t_off" "$t_on") |"
	echo
	echo "¹ The ORDER BY does not name every output column: rows with equal keys may come in any order, so"
	echo "the answers are compared as multisets (\"yes\" alone: the same rows in the same order as well)."
	echo
	echo "## Each sort node"
	echo
	echo "With the node off and on (Sort and Incremental Sort are PostgreSQL's, gpusort the Custom Scan):"
	echo "rows read (actual rows times loops of its input), the planner's estimate of them, method or device."
	echo
	echo "| query | node | kind | rows | estimate | method | keys |"
	echo "| --- | --- | --- | ---: | ---: | --- | --- |"
	for n in "${QLIST[@]}"; do [ -z "${DETAIL[$n]:-}" ] || echo "${DETAIL[$n]}"; done
	echo
	echo "## Each timed run"
	echo
	echo "In ms, in the order they ran (the settings took turns: off first in odd runs, on first in even ones)."
	echo
	echo "| query | off | on |"
	echo "| --- | --- | --- |"
	for n in "${QLIST[@]}"; do
		[ -z "${MS_OFF[$n]:-}" ] || echo "| Q$n | ${ALL_OFF[$n]} | ${ALL_ON[$n]} |"
	done
	echo
	echo "## Why the node declined (\"gpusort:\" lines of EXPLAIN VERBOSE, node on)"
	echo
	any=0
	for n in "${QLIST[@]}"; do
		[ -n "${NOTE[$n]:-}" ] && [ -n "${MS_OFF[$n]:-}" ] || continue
		echo "- Q$n: ${NOTE[$n]//;/; }"
		any=1
	done
	[ "$any" = 1 ] || echo "None: no plan has a \"gpusort:\" line."
} >"$out"
{
	echo "# Plans of $command_line"
	echo
	echo "EXPLAIN (VERBOSE, COSTS OFF) of each query, gpusort.enable_sort off and on."
	for n in "${QLIST[@]}"; do
		for side in off on; do
			[ -f "$work/q$n/plan-$side.txt" ] || continue
			printf '\n## Q%s, node %s\n\n```\n' "$n" "$side"
			cat "$work/q$n/plan-$side.txt"
			echo '```'
		done
	done
} >"$plans_out"
gs_log "wrote $out and $plans_out"
cat "$out"
