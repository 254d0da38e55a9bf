#!/bin/bash
# bench/sql_bench.sh: the SQL benchmark.  In one psql session, on the
# same stored arrays of random int4 and float8 (built once beforehand), times
#   gpu_sort(a)                                  for each gpusort.device asked for
#   sort(a)                                      intarray, int4 only
#   (SELECT array_agg(x ORDER BY x) FROM unnest(a) x)   PostgreSQL's own sort
#   cardinality(a)                               reading the array alone (the floor)
# as the median of RUNS runs after one warm-up, and writes a markdown table to
# bench/results/sql-<devices>-<host>.md naming the CPU (and GPU) it ran on.
#
#   bash bench/sql_bench.sh                      # gpusort.device = cpu
#   bash bench/sql_bench.sh --devices cpu,gpu    # a gpu_sort column per device
#   options: --sizes 10000,1000000,10000000 --runs 5 --host NAME --out FILE
#   BENCH_SOURCE='...' names the source in the table when it is not a commit
# Sets up, builds and installs like scripts/test.sh, in a throwaway cluster.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$GS_ROOT"

devices=cpu
sizes=10000,1000000,10000000
runs=5
host=
out=
make_args=()
while [ $# -gt 0 ]; do
	case "$1" in
		--devices) devices=$2; shift 2 ;;
		--sizes) sizes=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		--host) host=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		*) make_args+=("$1"); shift ;;
	esac
done

cpu_model=$( { lscpu 2>/dev/null || true; } | sed -n 's/^Model name: *//p' | head -1)
[ -n "$cpu_model" ] || cpu_model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1 || true)
cores=$(nproc)
if [ -z "$host" ]; then
	# the machine's kind rather than its (throwaway) name: CPU model and cores
	host=$(printf '%s-%scores' "${cpu_model:-unknown-cpu}" "$cores" |
		tr 'A-Z' 'a-z' | sed 's/([^)]*)//g; s/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
fi
out=${out:-bench/results/sql-${devices//,/+}-$host.md}

gs_ensure_postgres
gs_build_install "${make_args[@]}"
# shared_buffers large enough to hold the stored arrays (the 128MB default does
# not hold 10^7 float8), so that reading them is not a trip to the OS each run
gs_start_cluster -c shared_buffers=1GB

gs_log "benchmark: devices $devices, sizes $sizes, median of $runs"
raw=$(mktemp)
psql -X -q -At -F '|' -v ON_ERROR_STOP=1 -v sizes="$sizes" -v runs="$runs" -v devices="$devices" >"$raw" <<'SQL'
CREATE EXTENSION gpusort;
CREATE EXTENSION intarray;
SET client_min_messages = warning;

-- the arrays, built once; stored (TOASTed) as a user's would be
SELECT setseed(0.5);
CREATE TABLE arrays AS
SELECT n, (SELECT array_agg((floor(random() * 4294967296) - 2147483648)::int4) FROM generate_series(1, n)) AS a4,
		  (SELECT array_agg((random() - 0.5) * 1e12) FROM generate_series(1, n)) AS a8
FROM unnest(string_to_array(:'sizes', ',')::int[]) n;

\i bench/median.sql

SET bench.runs = :'runs';
SET bench.devices = :'devices';
CREATE TEMP TABLE results (typ text, n int, method text, sql_ms float8, fn_ms float8, ran_on text);

DO $$
DECLARE
	r record;
	d text;
	col text;
	m record;
	runs int := current_setting('bench.runs')::int;
BEGIN
	FOR r IN SELECT n FROM arrays ORDER BY n LOOP
		FOREACH col IN ARRAY ARRAY['a4', 'a8'] LOOP
			FOREACH d IN ARRAY string_to_array(current_setting('bench.devices'), ',') LOOP
				PERFORM set_config('gpusort.device', d, false);
				m := pg_temp.median_ms(format('SELECT cardinality(gpu_sort(%I)) FROM arrays WHERE n = %s', col, r.n), runs, true);
				INSERT INTO results
					SELECT CASE col WHEN 'a4' THEN 'int4' ELSE 'float8' END, r.n, 'gpu_sort:' || d, m.sql_ms, m.fn_ms,
						   (SELECT device || ' ' || algorithm FROM gpusort_last_run());
			END LOOP;
			RESET gpusort.device;
			IF col = 'a4' THEN
				m := pg_temp.median_ms(format('SELECT cardinality(sort(a4)) FROM arrays WHERE n = %s', r.n), runs);
				INSERT INTO results VALUES ('int4', r.n, 'intarray', m.sql_ms, NULL, NULL);
			END IF;
			m := pg_temp.median_ms(format('SELECT cardinality((SELECT array_agg(x ORDER BY x) FROM unnest(%I) x)) FROM arrays WHERE n = %s', col, r.n), runs);
			INSERT INTO results VALUES (CASE col WHEN 'a4' THEN 'int4' ELSE 'float8' END, r.n, 'array_agg', m.sql_ms, NULL, NULL);
			m := pg_temp.median_ms(format('SELECT cardinality(%I) FROM arrays WHERE n = %s', col, r.n), runs);
			INSERT INTO results VALUES (CASE col WHEN 'a4' THEN 'int4' ELSE 'float8' END, r.n, 'read', m.sql_ms, NULL, NULL);
		END LOOP;
	END LOOP;
END $$;

-- raw rows for the shell to lay out, and what the machine has
SELECT 'row', typ, n, method, round(sql_ms::numeric, 2), coalesce(round(fn_ms::numeric, 2)::text, ''), coalesce(ran_on, '')
FROM results ORDER BY typ DESC, n, method;
SELECT 'pg', version();
SELECT 'gpu', format('%s (compute capability %s, %s MB, %s SMs)', name, compute_capability, memory_total_mb, multiprocessors)
FROM gpusort_devices();
SELECT 'info', format('built with CUDA: %s, runtime %s, driver %s, GPU usable: %s%s', built_with_cuda,
					  coalesce(cuda_runtime_version, '-'), coalesce(driver_version, '-'), gpu_usable,
					  coalesce(' (' || reason || ')', ''))
FROM gpusort_info();
SQL
gs_stop_cluster

# lay the rows out: one line per type and size, a column per method, ratios to the first device
IFS=, read -r -a devs <<<"$devices"
lines() { grep "^$1|" "$raw" | cut -d'|' -f2- || true; }
{
	echo "# SQL benchmark: gpu_sort vs intarray sort() vs array_agg ORDER BY"
	echo
	echo "- date: $(date -u +%Y-%m-%d)"
	echo "- CPU: ${cpu_model:-unknown}, $cores cores ($(uname -m))"
	lines gpu | sed 's/^/- GPU: /'
	lines info | sed 's/^/- gpusort: /'
	lines pg | sed 's/ on .*//; s/^/- server: /'
	echo "- gpusort: ${BENCH_SOURCE:-commit $(git -C "$GS_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}, gpusort settings at their defaults but gpusort.device"
	echo "- how: bench/sql_bench.sh --devices $devices --sizes $sizes --runs $runs; one psql session, arrays of"
	echo "  random values stored in a table beforehand, median of $runs runs after one warm-up, milliseconds;"
	echo "  shared_buffers = 1GB (so the stored arrays stay in PostgreSQL's buffers), other settings default."
	echo "  SQL: the whole statement (reading the stored array, sorting, building the result);"
	echo "  in function: gpusort_last_run().total_ms (copies and sort inside gpu_sort); read: cardinality(a),"
	echo "  reading the stored array alone, the floor under every method."
	echo
	header="| type | n | read |"
	rule="| --- | ---: | ---: |"
	for d in "${devs[@]}"; do
		header+=" gpu_sort $d (SQL) | gpu_sort $d (in function) |"
		rule+=" ---: | ---: |"
	done
	header+=" intarray sort() | array_agg ORDER BY | intarray / gpu_sort ${devs[0]} | array_agg / gpu_sort ${devs[0]} |"
	rule+=" ---: | ---: | ---: | ---: |"
	echo "$header"
	echo "$rule"
	lines row | cut -d'|' -f1,2 | uniq | while IFS='|' read -r typ n; do
		get() { lines "row|$typ|$n|$1" | cut -d"|" -f"$(($2 - 1))"; }
		line="| $typ | $n | $(get read 5) |"
		for d in "${devs[@]}"; do
			line+=" $(get "gpu_sort:$d" 5) | $(get "gpu_sort:$d" 6) |"
		done
		first=$(get "gpu_sort:${devs[0]}" 5)
		ia=$(get intarray 5)
		aa=$(get array_agg 5)
		ratio() { [ -n "$1" ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b }'; }
		line+=" ${ia:--} | $aa | $(ratio "$ia" "$first" || true) | $(ratio "$aa" "$first") |"
		echo "$line"
	done
	echo
	echo "Where each gpu_sort ran (gpusort_last_run, last run):"
	lines row | awk -F'|' '$3 ~ /^gpu_sort:/ { printf "%s %s %s: %s; ", $1, $2, $3, $6 }' | sed 's/; $//'
	echo
} >"$out"
rm -f "$raw"
gs_log "wrote $out"
cat "$out"
