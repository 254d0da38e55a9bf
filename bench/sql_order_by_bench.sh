#!/bin/bash
# bench/sql_order_by_bench.sh: the ORDER BY node against PostgreSQL's Sort, in
# one psql session, on a table of random rows (x int4, f float8) built once:
#   int4        SELECT count(*) FROM (SELECT x FROM t ORDER BY x) s
#   float8      SELECT count(*) FROM (SELECT f FROM t ORDER BY f) s
#   int4,float8 SELECT count(*) FROM (SELECT x, f FROM t ORDER BY x, f) s
#   LIMIT 100   SELECT count(*) FROM (SELECT x FROM t ORDER BY x LIMIT 100) s
# (the ordered subquery stays a sort under count(*); every row passes through
# it), each with gpusort.enable_sort off (PostgreSQL's Sort) and on, the node
# once per gpusort.device asked for; the median of RUNS runs after one warm-up,
# and the scan alone (count(*) FROM t) as the floor.  Writes a markdown table
# to bench/results/order-by-<devices>-<host>.md naming the CPU (and GPU) and the
# commit, with the plan each run used.
#
#   bash bench/sql_order_by_bench.sh                       # gpusort.device = cpu
#   bash bench/sql_order_by_bench.sh --devices cpu,gpu     # a column per device
#   options: --rows 1000000,10000000 --runs 3 --work-mem 2GB --host NAME --out FILE
#   10^8 rows past work_mem: --rows 100000000 --work-mem 1GB
# Parallel query is off (max_parallel_workers_per_gather = 0) on both sides.
# Sets up, builds and installs like scripts/test.sh, in a throwaway cluster.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/bench_lib.sh"
cd "$GS_ROOT"

devices=cpu
rows=1000000,10000000
runs=3
work_mem=2GB
host=
out=
make_args=()
while [ $# -gt 0 ]; do
	case "$1" in
		--devices) devices=$2; shift 2 ;;
		--rows) rows=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		--work-mem) work_mem=$2; shift 2 ;;
		--host) host=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		*) make_args+=("$1"); shift ;;
	esac
done

gs_bench_machine
host=${host:-$host_slug}
out=${out:-${OUT:+$OUT/}bench/results/order-by-${devices//,/+}-$host.md}
mkdir -p "$(dirname "$out")"

gs_ensure_postgres
gs_build_install "${make_args[@]}"
gs_start_cluster -c shared_buffers=2GB

gs_log "ORDER BY benchmark: devices $devices, rows $rows, median of $runs, work_mem $work_mem"
raw=$(mktemp)
psql -X -q -At -F '|' -v ON_ERROR_STOP=1 -v rows="$rows" -v runs="$runs" -v devices="$devices" \
	-v work_mem="$work_mem" >"$raw" <<'SQL'
CREATE EXTENSION gpusort;
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET work_mem = :'work_mem';
\i bench/median.sql

SET bench.runs = :'runs';
SET bench.devices = :'devices';
SET bench.rows = :'rows';
CREATE TEMP TABLE results (n bigint, query text, method text, ms float8, plan text);

-- the first line of the plan below the count: which sort ran
CREATE FUNCTION pg_temp.sort_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line ~ '(Sort|Custom Scan)' THEN
			RETURN trim(regexp_replace(line, '^[ ->]*', ''));
		END IF;
	END LOOP;
	RETURN '';
END $$;

DO $$
DECLARE
	n bigint;
	d text;
	q record;
	m float8;
	runs int := current_setting('bench.runs')::int;
BEGIN
	FOREACH n IN ARRAY string_to_array(current_setting('bench.rows'), ',')::bigint[] LOOP
		DROP TABLE IF EXISTS t;
		PERFORM setseed(0.5);
		EXECUTE format('CREATE UNLOGGED TABLE t AS SELECT (floor(random() * 4294967296) - 2147483648)::int4 AS x, '
					   '(random() - 0.5) * 1e12 AS f FROM generate_series(1, %s)', n);
		ANALYZE t;		-- (VACUUM cannot run in a DO block; the table is new)
		m := (pg_temp.median_ms('SELECT count(*) FROM t', runs)).sql_ms;
		INSERT INTO results VALUES (n, 'scan', 'scan', m, 'Seq Scan');
		FOR q IN SELECT * FROM (VALUES
				(1, 'int4', 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x) s'),
				(2, 'float8', 'SELECT count(*) FROM (SELECT f FROM t ORDER BY f) s'),
				(3, 'int4, float8', 'SELECT count(*) FROM (SELECT x, f FROM t ORDER BY x, f) s'),
				(4, 'int4 LIMIT 100', 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x LIMIT 100) s')) v(i, name, sql)
				ORDER BY i LOOP
			PERFORM set_config('gpusort.enable_sort', 'off', false);
			m := (pg_temp.median_ms(q.sql, runs)).sql_ms;
			INSERT INTO results VALUES (n, q.name, 'sort', m, pg_temp.sort_plan(q.sql));
			PERFORM set_config('gpusort.enable_sort', 'on', false);
			FOREACH d IN ARRAY string_to_array(current_setting('bench.devices'), ',') LOOP
				PERFORM set_config('gpusort.device', d, false);
				m := (pg_temp.median_ms(q.sql, runs)).sql_ms;
				INSERT INTO results VALUES (n, q.name, 'node:' || d, m, pg_temp.sort_plan(q.sql));
			END LOOP;
			RESET gpusort.device;
		END LOOP;
	END LOOP;
END $$;

SELECT 'row', n, query, method, round(ms::numeric, 1), plan FROM results ORDER BY n, query, method;
SELECT 'pg', version();
SELECT 'gpu', format('%s (compute capability %s, %s MB, %s SMs)', name, compute_capability, memory_total_mb, multiprocessors)
FROM gpusort_devices();
SELECT 'info', format('built with CUDA: %s, GPU usable: %s%s', built_with_cuda, gpu_usable, coalesce(' (' || reason || ')', ''))
FROM gpusort_info();
SQL
gs_stop_cluster

IFS=, read -r -a devs <<<"$devices"
lines() { grep "^$1|" "$raw" | cut -d'|' -f2- || true; }
{
	gs_bench_header "ORDER BY benchmark: gpusort's sort node vs PostgreSQL's Sort" "$raw"
	echo "- how: bench/sql_order_by_bench.sh --devices $devices --rows $rows --runs $runs --work-mem $work_mem;"
	echo "  one psql session, a table of random (x int4, f float8) rows, median of $runs runs after one warm-up,"
	echo "  milliseconds of the whole statement; work_mem = $work_mem, shared_buffers = 2GB,"
	echo "  max_parallel_workers_per_gather = 0; PostgreSQL's Sort is the same query with gpusort.enable_sort = off."
	echo "  Queries: SELECT count(*) FROM (SELECT <cols> FROM t ORDER BY <keys> [LIMIT 100]) s; scan: count(*) FROM t."
	echo
	header="| rows | ORDER BY | scan | PostgreSQL Sort |"
	rule="| ---: | --- | ---: | ---: |"
	for d in "${devs[@]}"; do
		header+=" node, $d | Sort / node $d |"
		rule+=" ---: | ---: |"
	done
	header+=" plans (Sort run; node runs) |"
	rule+=" --- |"
	echo "$header"
	echo "$rule"
	# raw rows: row|n|query|method|ms|plan; lines strips the first field
	lines row | cut -d'|' -f1,2 | grep -v '|scan$' | sort -t'|' -k1,1n -k2,2 -u | while IFS='|' read -r n query; do
		get() { lines row | awk -F'|' -v n="$n" -v q="$query" -v m="$1" -v f="$2" '$1 == n && $2 == q && $3 == m { print $(f + 3); exit }'; }
		scan=$(get_scan() { lines row | awk -F'|' -v n="$n" '$1 == n && $2 == "scan" { print $4; exit }'; }; get_scan)
		sort_ms=$(get sort 1)
		line="| $n | $query | $scan | $sort_ms |"
		plans="$(get sort 2)"
		for d in "${devs[@]}"; do
			node_ms=$(get "node:$d" 1)
			line+=" $node_ms | $(awk -v a="$sort_ms" -v b="$node_ms" 'BEGIN { if (b > 0) printf "%.2fx", a / b }') |"
			plans+="; $(get "node:$d" 2)"
		done
		echo "$line $plans |"
	done
} >"$out"
rm -f "$raw"
gs_log "wrote $out"
cat "$out"
