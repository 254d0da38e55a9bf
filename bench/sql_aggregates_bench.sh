#!/bin/bash
# bench/sql_aggregates_bench.sh: the percentile and top-k benchmark.  In one
# psql session, over a table of ROWS random float8 rows (1,000 groups) and a
# stored array of ROWS float8, times
#   percentile_cont(0.5) WITHIN GROUP                  PostgreSQL, serial (it has no parallel form)
#   gpu_percentile_cont(0.5) WITHIN GROUP              serial (an ordered-set aggregate)
#   gpu_median(f) / gpu_percentile_cont_agg(f, 0.5)    serial and with WORKERS parallel workers
# the same grouped by 1,000 groups and with an array of 9 fractions, and
#   gpu_topk(a, 100) against gpu_sort(a) and ORDER BY ... LIMIT 100 (PostgreSQL's top-N sort)
# for each gpusort.device asked for, as the median of RUNS runs after one
# warm-up, and writes a markdown table naming the machine and the commit.
#
#   bash bench/sql_aggregates_bench.sh [OUTDIR]          # gpusort.device = cpu
#   bash bench/sql_aggregates_bench.sh --devices cpu,gpu $OUT
#   options: --rows 10000000 --runs 3 --workers N (default: cores, at most 8)
#            --host NAME (default: CPU model and cores) --out FILE
# OUTDIR defaults to $OUT, else bench/results; the file is
# aggregates-<devices>-<host>.md there.  Sets up, builds and installs like
# scripts/test.sh, in a throwaway cluster.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/bench_lib.sh"
cd "$GS_ROOT"

devices=cpu
rows=10000000
runs=3
workers=
host=
out=
outdir=${OUT:-bench/results}
make_args=()
while [ $# -gt 0 ]; do
	case "$1" in
		--devices) devices=$2; shift 2 ;;
		--rows) rows=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		--workers) workers=$2; shift 2 ;;
		--host) host=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		*=*) make_args+=("$1"); shift ;;
		*) outdir=$1; shift ;;
	esac
done

gs_bench_machine
workers=${workers:-$((cores < 8 ? cores : 8))}
host=${host:-$host_slug}
mkdir -p "$outdir"
out=${out:-$outdir/aggregates-${devices//,/+}-$host.md}

gs_ensure_postgres
gs_build_install "${make_args[@]}"
gs_start_cluster -c shared_buffers=2GB -c max_worker_processes=$((workers + 8)) \
	-c max_parallel_workers=$workers -c work_mem=1GB

gs_log "benchmark: devices $devices, $rows rows, $workers workers, median of $runs"
raw=$(mktemp)
psql -X -q -At -F '|' -v ON_ERROR_STOP=1 -v rows="$rows" -v runs="$runs" -v devices="$devices" \
	-v workers="$workers" >"$raw" <<'SQL'
CREATE EXTENSION gpusort;
SET client_min_messages = warning;

SELECT setseed(0.5);
CREATE TABLE t AS SELECT i % 1000 AS g, (random() - 0.5) * 1e6 AS f FROM generate_series(1, :rows) i;
ALTER TABLE t SET (parallel_workers = :workers);
VACUUM ANALYZE t;
CREATE TABLE arr AS SELECT array_agg((random() - 0.5) * 1e12) AS a FROM generate_series(1, :rows);

\i bench/median.sql

SET bench.runs = :'runs';
SET bench.devices = :'devices';
SET bench.workers = :'workers';
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
CREATE TEMP TABLE results (what text, method text, workers int, ms float8, ran_on text, in_function_ms float8);

CREATE FUNCTION pg_temp.bench(what text, method text, q text, parallel int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	m record;
BEGIN
	PERFORM set_config('max_parallel_workers_per_gather', parallel::text, false);
	m := pg_temp.median_ms(q, current_setting('bench.runs')::int);
	-- the last run's sort (gpusort_last_run), where the statement ran one of gpusort's
	INSERT INTO results SELECT what, method, parallel, m.sql_ms,
		(SELECT device || ' ' || algorithm FROM gpusort_last_run() WHERE method !~ 'PostgreSQL'),
		(SELECT total_ms FROM gpusort_last_run() WHERE method !~ 'PostgreSQL');
END $$;

DO $$
DECLARE
	d text;
	w int := current_setting('bench.workers')::int;
	nine text := '''{0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9}''::float8[]';
BEGIN
	PERFORM pg_temp.bench('median', 'count(f), the scan alone (PostgreSQL)', 'SELECT count(f) FROM t', 0);
	PERFORM pg_temp.bench('median', 'count(f), the scan alone (PostgreSQL)', 'SELECT count(f) FROM t', w);
	PERFORM pg_temp.bench('median', 'percentile_cont (PostgreSQL)',
						  'SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f) FROM t', 0);
	PERFORM pg_temp.bench('1000 groups', 'percentile_cont (PostgreSQL)',
						  'SELECT count(m) FROM (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f) m FROM t GROUP BY g) s', 0);
	PERFORM pg_temp.bench('9 fractions', 'percentile_cont (PostgreSQL)',
						  format('SELECT percentile_cont(%s) WITHIN GROUP (ORDER BY f) FROM t', nine), 0);
	PERFORM pg_temp.bench('top-100 of an array', 'ORDER BY LIMIT (PostgreSQL)',
						  'SELECT (SELECT count(*) FROM (SELECT x FROM unnest(a) x ORDER BY x LIMIT 100) l) FROM arr', 0);
	FOREACH d IN ARRAY string_to_array(current_setting('bench.devices'), ',') LOOP
		PERFORM set_config('gpusort.device', d, false);
		PERFORM pg_temp.bench('median', 'gpu_percentile_cont WITHIN GROUP:' || d,
							  'SELECT gpu_percentile_cont(0.5) WITHIN GROUP (ORDER BY f) FROM t', 0);
		PERFORM pg_temp.bench('median', 'gpu_median:' || d, 'SELECT gpu_median(f) FROM t', 0);
		PERFORM pg_temp.bench('median', 'gpu_median:' || d, 'SELECT gpu_median(f) FROM t', w);
		PERFORM pg_temp.bench('median', 'gpu_percentile_cont_agg:' || d,
							  'SELECT gpu_percentile_cont_agg(f, 0.5) FROM t', w);
		PERFORM pg_temp.bench('1000 groups', 'gpu_percentile_cont WITHIN GROUP:' || d,
							  'SELECT count(m) FROM (SELECT gpu_percentile_cont(0.5) WITHIN GROUP (ORDER BY f) m FROM t GROUP BY g) s', 0);
		PERFORM pg_temp.bench('1000 groups', 'gpu_median:' || d,
							  'SELECT count(m) FROM (SELECT gpu_median(f) m FROM t GROUP BY g) s', w);
		PERFORM pg_temp.bench('9 fractions', 'gpu_percentile_cont WITHIN GROUP:' || d,
							  format('SELECT gpu_percentile_cont(%s) WITHIN GROUP (ORDER BY f) FROM t', nine), 0);
		PERFORM pg_temp.bench('9 fractions', 'gpu_percentile_cont_agg:' || d,
							  format('SELECT gpu_percentile_cont_agg(f, %s) FROM t', nine), w);
		PERFORM pg_temp.bench('top-100 of an array', 'gpu_topk:' || d,
							  'SELECT cardinality(gpu_topk(a, 100)) FROM arr', 0);
		PERFORM pg_temp.bench('top-100 of an array', 'gpu_sort (whole array):' || d,
							  'SELECT cardinality(gpu_sort(a)) FROM arr', 0);
	END LOOP;
	RESET gpusort.device;
END $$;

-- the answers agree (the benchmark's own check)
SELECT 'check', (SELECT gpu_median(f) FROM t) = (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f) FROM t)
	AND (SELECT gpu_topk(a, 100) = (gpu_sort(a))[1:100] FROM arr);
-- the parallel plan used
SET max_parallel_workers_per_gather = :workers;
CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		RETURN NEXT line;
	END LOOP;
END $$;
SELECT 'plan', string_agg(trim(line), '; ')
FROM pg_temp.plan('SELECT gpu_median(f) FROM t') line
WHERE line ~ 'Workers|Partial|Finalize';
SELECT 'row', what, method, workers, round(ms::numeric, 1), coalesce(ran_on, ''),
	   coalesce(round(in_function_ms::numeric, 1)::text, '') FROM results ORDER BY what, method, workers;
SELECT 'pg', version();
SELECT 'gpu', format('%s (compute capability %s, %s MB, %s SMs)', name, compute_capability, memory_total_mb, multiprocessors)
FROM gpusort_devices();
SELECT 'info', format('built with CUDA: %s, GPU usable: %s%s, mode: %s', built_with_cuda, gpu_usable,
					  coalesce(' (' || reason || ')', ''), mode)
FROM gpusort_info();
SQL
gs_stop_cluster

lines() { grep "^$1|" "$raw" | cut -d'|' -f2- || true; }
base() { lines row | awk -F'|' -v w="$1" -v m="$2" '$1 == w && $2 == m { print $4 }' | head -1; }
{
	gs_bench_header "SQL benchmark: percentiles and top-k (gpusort vs PostgreSQL)" "$raw"
	echo "- how: bench/sql_aggregates_bench.sh --devices $devices --rows $rows --runs $runs --workers $workers;"
	echo "  one psql session; a table of $rows random float8 rows (g = i % 1000) and one stored array of $rows"
	echo "  random float8; median of $runs runs after one warm-up, whole statement, milliseconds;"
	echo "  shared_buffers 2GB, work_mem 1GB, parallel_setup_cost = parallel_tuple_cost = 0."
	echo "- answers checked equal (gpu_median = percentile_cont, gpu_topk = gpu_sort[1:100]): $(lines check | sed 's/t/yes/; s/^f$/NO/')"
	echo "- parallel plan of gpu_median: $(lines plan)"
	echo
	echo "ms: the whole statement; in gpusort: the last run's sort as gpusort_last_run().total_ms gives it"
	echo "(for an aggregate, the sort of its final function; with workers, the leader's)."
	echo
	echo "| query | method | workers | ms | PostgreSQL / this | ran on (last sort) | in gpusort, ms |"
	echo "| --- | --- | ---: | ---: | ---: | --- | ---: |"
	lines row | while IFS='|' read -r what method w ms ran infn; do
		case "$what" in
			top-100*) ref=$(base "$what" 'ORDER BY LIMIT (PostgreSQL)') ;;
			*) ref=$(base "$what" 'percentile_cont (PostgreSQL)') ;;
		esac
		ratio=$(awk -v a="$ref" -v b="$ms" 'BEGIN { if (b > 0) printf "%.1fx", a / b }')
		echo "| $what | $(echo "$method" | sed 's/:\(.*\)$/ (device \1)/') | $w | $ms | $ratio | $ran | $infn |"
	done
	echo
	sort_ms=$(lines row | awk -F'|' '$2 ~ /^gpu_sort/ { print $2 "|" $4 "|" $6 }')
	topk_ms=$(lines row | awk -F'|' '$2 ~ /^gpu_topk/ { print $2 "|" $4 "|" $6 }')
	echo "gpu_topk(a, 100) vs gpu_sort(a) of the same $rows-element array:"
	paste -d'|' <(echo "$topk_ms") <(echo "$sort_ms") | awk -F'|' '{ d = $1; sub(/^[^:]*:/, "", d); if ($2 > 0) printf "device %s: the statement %.1fx faster (%s ms vs %s ms)", d, $5 / $2, $2, $5; if ($3 > 0) printf ", in gpusort %.1fx (%s ms vs %s ms)", $6 / $3, $3, $6; printf "\n" }'
} >"$out"
rm -f "$raw"
gs_log "wrote $out"
cat "$out"
