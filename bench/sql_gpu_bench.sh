#!/bin/bash
# bench/sql_gpu_bench.sh: the SQL figures of a GPU host, in one psql session:
#   - the crossover: gpu_sort on the CPU and on the GPU, int4 and float8, 10^3 .. 10^6,
#     whole statement and inside the function (gpusort_last_run), median of RUNS;
#   - where the time goes (copy in, sort, copy out) at each size, and at 10^8 float8 (800 MB),
#     whose GPU result is checked equal to the CPU sort's;
#   - gpu_sort_agg against array_agg(x ORDER BY x) over a 10^7-row table, serial and parallel,
#     results checked equal.
# Writes a markdown report.  Sets up and installs like scripts/test.sh (GS_PREBUILT=1 to
# install prebuilt files), in a throwaway cluster.
#
#   bash bench/sql_gpu_bench.sh [--device gpu] [--runs 5] [--quick] [--out FILE]
# --device cpu runs the same statements with the CPU in place of the GPU (a rehearsal on a
# machine without one); --quick shrinks the sizes (10^6 instead of 10^8, 10^5 rows).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$GS_ROOT"

device=gpu
runs=5
quick=0
out=
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--out) out=$2; shift 2 ;;
		*) echo "usage: $0 [--device gpu|cpu] [--runs N] [--quick] [--out FILE]" >&2; exit 2 ;;
	esac
done
if [ "$quick" = 1 ]; then
	big=1000000; chunk=100000; rows=100000
else
	big=100000000; chunk=10000000; rows=10000000
fi
out=${out:-bench/results/sql-gpu-$(date -u +%Y-%m-%d).md}

gs_ensure_postgres
gs_build_install
# shared_buffers holds the 800 MB array; parallel workers for the aggregate
gs_start_cluster -c shared_buffers=2GB -c max_parallel_workers_per_gather=4 -c work_mem=1GB

gs_log "GPU SQL benchmark: device $device, median of $runs, 10^8 array of $big"
raw=$(mktemp)
status=0
psql -X -q -At -F '|' -v ON_ERROR_STOP=1 -v runs="$runs" -v dev="$device" -v big="$big" \
	-v chunk="$chunk" -v rows="$rows" >"$raw" <<'SQL' || status=$?
CREATE EXTENSION gpusort;
SET client_min_messages = warning;
\i bench/median.sql
SET bench.runs = :'runs';
SET bench.dev = :'dev';

-- 1. the crossover, with the breakdown at each size
SELECT setseed(0.25);
CREATE TABLE cross_arrays AS
SELECT n, (SELECT array_agg((floor(random() * 4294967296) - 2147483648)::int4) FROM generate_series(1, n + 0 * n)) AS a4,
		  (SELECT array_agg((random() - 0.5) * 1e12) FROM generate_series(1, n + 0 * n)) AS a8
FROM unnest('{1000,3000,10000,30000,100000,300000,1000000,10000000}'::int[]) n;

CREATE TEMP TABLE cross_results (typ text, n int, device text, sql_ms float8, fn_ms float8,
								 copy_in_ms float8, sort_ms float8, copy_out_ms float8, ran text);
DO $$
DECLARE
	r record;
	col text;
	d text;
	m record;
	lr record;
BEGIN
	FOR r IN SELECT n FROM cross_arrays ORDER BY n LOOP
		FOREACH col IN ARRAY ARRAY['a4', 'a8'] LOOP
			FOREACH d IN ARRAY ARRAY['cpu', current_setting('bench.dev')] LOOP
				PERFORM set_config('gpusort.device', d, false);
				m := pg_temp.median_ms(format('SELECT cardinality(gpu_sort(%I)) FROM cross_arrays WHERE n = %s', col, r.n),
									   current_setting('bench.runs')::int, true);
				SELECT * INTO lr FROM gpusort_last_run();
				INSERT INTO cross_results VALUES (CASE col WHEN 'a4' THEN 'int4' ELSE 'float8' END, r.n, d,
												  m.sql_ms, m.fn_ms, lr.copy_in_ms, lr.sort_ms, lr.copy_out_ms,
												  lr.device || ' ' || lr.algorithm);
			END LOOP;
		END LOOP;
	END LOOP;
	RESET gpusort.device;
END $$;
SELECT 'cross', typ, n, device, round(sql_ms::numeric, 3), round(fn_ms::numeric, 3), round(copy_in_ms::numeric, 3),
	   round(sort_ms::numeric, 3), round(copy_out_ms::numeric, 3), ran
FROM cross_results ORDER BY typ DESC, n, device;

-- 2. 10^8 float8 (800 MB): built from chunks (array_agg cannot build it: its state passes 1 GB)
SELECT setseed(0.75);
CREATE TABLE big_chunks AS
SELECT i, (SELECT array_agg((random() - 0.5) * 1e12) FROM generate_series(1, :chunk + 0 * i)) AS a
FROM generate_series(1, :big / :chunk) i;
CREATE TABLE big (a float8[]);
DO $$
DECLARE
	acc float8[] := '{}';
	r record;
BEGIN
	FOR r IN SELECT a FROM big_chunks ORDER BY i LOOP
		acc := acc || r.a;
	END LOOP;
	INSERT INTO big VALUES (acc);
END $$;
DROP TABLE big_chunks;

SELECT set_config('gpusort.device', :'dev', false);
SELECT 'big', 'sort', round(sql_ms::numeric, 2), round(fn_ms::numeric, 2)
FROM pg_temp.median_ms('SELECT cardinality(gpu_sort(a)) FROM big', least(current_setting('bench.runs')::int, 3), true);
SELECT 'big', 'last_run', elements, device, algorithm, round(copy_in_ms::numeric, 2), round(sort_ms::numeric, 2),
	   round(copy_out_ms::numeric, 2), round(total_ms::numeric, 2),
	   round((elements * 8 * 2 / 1e6 / total_ms)::numeric, 2)	-- GB/s: in and out over the total
FROM gpusort_last_run();
CREATE TEMP TABLE big_sorted AS SELECT gpu_sort(a) AS s FROM big;
SELECT set_config('gpusort.device', 'cpu', false);
SELECT 'big', 'equal_to_cpu_sort', s = gpu_sort(big.a), cardinality(s) FROM big_sorted, big;
SELECT 'big', 'cpu_last_run', round(total_ms::numeric, 2) FROM gpusort_last_run();
RESET gpusort.device;
DROP TABLE big_sorted;
DROP TABLE big;

-- 3. gpu_sort_agg against array_agg(x ORDER BY x) over a table of rows
SELECT setseed(0.5);
CREATE TABLE agg_rows AS SELECT (floor(random() * 4294967296) - 2147483648)::int4 AS x FROM generate_series(1, :rows);
VACUUM ANALYZE agg_rows;
CREATE TEMP TABLE agg_results (method text, plan text, sql_ms float8, ran text);
DO $$
DECLARE
	m record;
	d text;
	runs int := least(current_setting('bench.runs')::int, 3);
BEGIN
	PERFORM set_config('max_parallel_workers_per_gather', '0', false);
	m := pg_temp.median_ms('SELECT cardinality(array_agg(x ORDER BY x)) FROM agg_rows', runs);
	INSERT INTO agg_results VALUES ('array_agg ORDER BY', 'serial', m.sql_ms, NULL);
	FOREACH d IN ARRAY ARRAY[current_setting('bench.dev'), 'cpu'] LOOP
		PERFORM set_config('gpusort.device', d, false);
		PERFORM set_config('max_parallel_workers_per_gather', '0', false);
		m := pg_temp.median_ms('SELECT cardinality(gpu_sort_agg(x)) FROM agg_rows', runs);
		INSERT INTO agg_results VALUES ('gpu_sort_agg ' || d, 'serial', m.sql_ms,
										(SELECT device || ' ' || algorithm FROM gpusort_last_run()));
		PERFORM set_config('max_parallel_workers_per_gather', '4', false);
		PERFORM set_config('parallel_setup_cost', '0', false);
		PERFORM set_config('min_parallel_table_scan_size', '0', false);
		PERFORM set_config('parallel_tuple_cost', '0', false);
		m := pg_temp.median_ms('SELECT cardinality(gpu_sort_agg(x)) FROM agg_rows', runs);
		INSERT INTO agg_results VALUES ('gpu_sort_agg ' || d, 'parallel', m.sql_ms,
										(SELECT device || ' ' || algorithm FROM gpusort_last_run()));
		RESET parallel_setup_cost;
		RESET parallel_tuple_cost;
	END LOOP;
	RESET gpusort.device;
	RESET max_parallel_workers_per_gather;
END $$;
SELECT 'agg', method, plan, round(sql_ms::numeric, 2), coalesce(ran, '') FROM agg_results;

CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
	acc text := '';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		acc := acc || ' / ' || btrim(line);
	END LOOP;
	RETURN substr(acc, 4);
END $$;
SELECT set_config('gpusort.device', :'dev', false);
SET max_parallel_workers_per_gather = 4;
SET min_parallel_table_scan_size = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SELECT 'agg_plan', pg_temp.plan_of('SELECT gpu_sort_agg(x) FROM agg_rows');
SELECT 'agg_equal', 'parallel', (SELECT gpu_sort_agg(x) FROM agg_rows) = (SELECT array_agg(x ORDER BY x) FROM agg_rows);
SET max_parallel_workers_per_gather = 0;
SELECT 'agg_equal', 'serial', (SELECT gpu_sort_agg(x) FROM agg_rows) = (SELECT array_agg(x ORDER BY x) FROM agg_rows);

SELECT 'pg', version();
SELECT 'gpu', format('%s (compute capability %s, %s MB, %s SMs)', name, compute_capability, memory_total_mb, multiprocessors)
FROM gpusort_devices();
SELECT 'info', format('built with CUDA: %s, runtime %s, driver %s, GPU usable: %s%s', built_with_cuda,
					  coalesce(cuda_runtime_version, '-'), coalesce(driver_version, '-'), gpu_usable,
					  coalesce(' (' || reason || ')', ''))
FROM gpusort_info();
SQL
gs_stop_cluster

lines() { grep "^$1|" "$raw" | cut -d'|' -f2- || true; }
cpu_model=$( { lscpu 2>/dev/null || true; } | sed -n 's/^Model name: *//p' | head -1)
{
	echo "# SQL on the GPU host: crossover, where the time goes, 10^8 float8, the aggregate"
	echo
	echo "- date: $(date -u +%Y-%m-%d)"
	lines gpu | sed 's/^/- GPU: /'
	echo "- CPU: ${cpu_model:-unknown}, $(nproc) cores"
	lines info | sed 's/^/- gpusort: /'
	lines pg | sed 's/ on .*//; s/^/- server: /'
	echo "- gpusort: ${BENCH_SOURCE:-commit $(git -C "$GS_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
	echo "- how: bench/sql_gpu_bench.sh --device $device --runs $runs$([ "$quick" = 1 ] && echo ' --quick'); one psql session,"
	echo "  stored arrays (TOASTed, in shared_buffers), median of $runs runs after one warm-up (3 for the 10^8"
	echo "  array and the aggregate), milliseconds.  SQL: the whole statement; in function:"
	echo "  gpusort_last_run().total_ms; copy in / sort / copy out: gpusort_last_run() of the last run."
	echo
	echo "## gpu_sort by size: CPU against $device"
	echo
	echo "| type | n | cpu SQL | cpu in function | $device SQL | $device in function | $device copy in | $device sort | $device copy out | faster in SQL |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
	lines cross | awk -F'|' -v dev="$device" '
		{ key = $1 "|" $2 }
		$3 == "cpu" { csql[key] = $4; cfn[key] = $5; order[++k] = key; typ[key] = $1; n[key] = $2 }
		$3 == dev && dev != "cpu" { gsql[key] = $4; gfn[key] = $5; gin[key] = $6; gsort[key] = $7; gout[key] = $8 }
		$3 == dev && dev == "cpu" { gsql[key] = $4; gfn[key] = $5; gin[key] = $6; gsort[key] = $7; gout[key] = $8 }
		END { for (i = 1; i <= k; i++) { key = order[i]; if (seen[key]++) continue;
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", typ[key], n[key], csql[key], cfn[key],
				gsql[key], gfn[key], gin[key], gsort[key], gout[key],
				(gsql[key] + 0 < csql[key] + 0) ? dev " (" sprintf("%.1fx", csql[key] / gsql[key]) ")" : "cpu" } }'
	echo
	echo "## 10^8 float8 (800 MB), gpusort.device = $device"
	echo
	lines big | awk -F'|' '
		$1 == "sort" { printf "- whole statement %s ms, in function %s ms (median)\n", $2, $3 }
		$1 == "last_run" { printf "- last run: %s elements on %s (%s): copy in %s ms, sort %s ms, copy out %s ms, total %s ms; %s GB/s (800 MB in and 800 MB out over the total)\n", $2, $3, $4, $5, $6, $7, $8, $9 }
		$1 == "equal_to_cpu_sort" { printf "- result equal to the CPU sort of the same array: %s (%s elements)\n", $2, $3 }
		$1 == "cpu_last_run" { printf "- the CPU sort of it took %s ms in function\n", $2 }'
	echo
	echo "## gpu_sort_agg against array_agg(x ORDER BY x), $rows rows of int4"
	echo
	echo "| method | plan | SQL ms | ran on | array_agg ORDER BY / this |"
	echo "| --- | --- | ---: | --- | ---: |"
	base=$(lines agg | awk -F'|' '$1 == "array_agg ORDER BY" { print $3 }')
	lines agg | awk -F'|' -v base="$base" '{ printf "| %s | %s | %s | %s | %.1fx |\n", $1, $2, $3, $4, base / $3 }'
	echo
	lines agg_equal | awk -F'|' '{ printf "- gpu_sort_agg = array_agg(x ORDER BY x), %s plan: %s\n", $1, $2 }'
	lines agg_plan | sed 's/^/- parallel plan: /'
} >"$out"
if [ "$status" -ne 0 ]; then
	# keep what ran: the report is partial, say so, and show the raw rows
	echo "- **incomplete: psql stopped with status $status; rows so far below**" >>"$out"
	sed 's/^/    /' "$raw" >>"$out"
fi
rm -f "$raw"
gs_log "wrote $out"
cat "$out"
exit "$status"
