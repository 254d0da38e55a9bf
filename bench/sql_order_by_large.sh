#!/bin/bash
# bench/sql_order_by_large.sh: ORDER BY past work_mem, where the sort node
# must behave as PostgreSQL's Sort does.  On a table of ROWS random int4 (10^8
# by default, about 3.5 GB) with work_mem 1GB, runs once each:
#   sort      gpusort.enable_sort = off: PostgreSQL's Sort (an external merge)
#   planned   gpusort.enable_sort = on: the planner expects the rows not to fit,
#             so it should keep Sort (the plan is printed)
#   forced    enable_sort = on over a function declared ROWS (ROWS / 100) that
#             returns every row: the planner picks the node, which outgrows
#             work_mem at run time and hands its rows to a tuplesort; and
#             the same query with enable_sort = off, Sort's time on it
# Each run checks its own output in the same pass: the row count, the sum, and
# the number of rows smaller than the row before (0 when sorted), computed
# over the ordered rows as they come out.  Writes a markdown file naming the
# machine and the commit.
#
#   bash bench/sql_order_by_large.sh [--rows 100000000] [--work-mem 1GB] [--device gpu] [--out FILE]
# Sets up, builds and installs like scripts/test.sh, in a throwaway cluster.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/bench_lib.sh"
cd "$GS_ROOT"

rows=100000000
work_mem=1GB
device=auto
out=
make_args=()
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift 2 ;;
		--work-mem) work_mem=$2; shift 2 ;;
		--device) device=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		*) make_args+=("$1"); shift ;;
	esac
done
gs_bench_machine
out=${out:-${OUT:-bench/results}/order-by-large-$(date -u +%Y-%m-%d).md}
mkdir -p "$(dirname "$out")"

gs_ensure_postgres
gs_build_install "${make_args[@]}"
gs_start_cluster -c shared_buffers=2GB

gs_log "ORDER BY past work_mem: $rows rows, work_mem $work_mem, gpusort.device $device"
raw=$(mktemp)
psql -X -q -At -F '|' -v ON_ERROR_STOP=1 -v rows="$rows" -v work_mem="$work_mem" -v device="$device" \
	>"$raw" <<'SQL'
CREATE EXTENSION gpusort;
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET work_mem = :'work_mem';
SET gpusort.device = :'device';
SELECT setseed(0.5);
CREATE UNLOGGED TABLE t AS
	SELECT (floor(random() * 4294967296) - 2147483648)::int4 AS x FROM generate_series(1, :rows);
ANALYZE t;
SELECT greatest(:rows / 100, 1000) AS est \gset
CREATE FUNCTION pg_temp.all_rows() RETURNS SETOF int4 ROWS :est LANGUAGE plpgsql STABLE
	AS 'BEGIN RETURN QUERY SELECT x FROM t; END';		-- plpgsql: not inlined, so the estimate stays
SELECT 'expect', count(*), sum(x) FROM t;

CREATE FUNCTION pg_temp.run(name text, q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	t timestamptz;
	r record;
	plan text := '';
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line ~ '(Sort|Custom Scan)' AND plan = '' THEN
			plan := trim(regexp_replace(line, '^[ ->]*', ''));
		END IF;
	END LOOP;
	t := clock_timestamp();
	-- lag() over the rows as the subquery emits them: no second sort
	EXECUTE 'SELECT count(*) AS n, sum(x) AS s, count(*) FILTER (WHERE x < p) AS out_of_order FROM '
		|| '(SELECT x, lag(x) OVER () AS p FROM (' || q || ') o) c' INTO r;
	RETURN format('%s|%s|%s|%s|%s|%s', name, plan,
				  round((extract(epoch FROM clock_timestamp() - t) * 1000)::numeric), r.n, r.s, r.out_of_order);
END $$;

SET gpusort.enable_sort = off;
SELECT 'run', pg_temp.run('PostgreSQL Sort (enable_sort off)', 'SELECT x FROM t ORDER BY x');
SET gpusort.enable_sort = on;
SELECT 'run', pg_temp.run('enable_sort on, planned', 'SELECT x FROM t ORDER BY x');
SELECT 'run', pg_temp.run(format('enable_sort on, a function declared ROWS %s', :est), 'SELECT x FROM pg_temp.all_rows() x ORDER BY x');
SET gpusort.enable_sort = off;
SELECT 'run', pg_temp.run(format('enable_sort off, the same function'), 'SELECT x FROM pg_temp.all_rows() x ORDER BY x');
SELECT 'pg', version();
SELECT 'info', format('built with CUDA: %s, GPU usable: %s, mode: %s', built_with_cuda, gpu_usable, mode) FROM gpusort_info();
SQL
gs_stop_cluster

lines() { grep "^$1|" "$raw" | cut -d'|' -f2- || true; }
{
	gs_bench_header "ORDER BY past work_mem: the sort node against PostgreSQL's Sort" "$raw"
	echo "- how: bench/sql_order_by_large.sh --rows $rows --work-mem $work_mem --device $device; one run each,"
	echo "  whole statement in ms; each checks its own output (count, sum, rows smaller than the one before)"
	echo "- expected: $(lines expect | awk -F'|' '{ printf "%s rows, sum %s", $1, $2 }')"
	echo
	echo "| run | plan (top sort node) | ms | rows | sum | out of order |"
	echo "| --- | --- | ---: | ---: | ---: | ---: |"
	lines run | awk -F'|' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }'
} >"$out"
rm -f "$raw"
gs_log "wrote $out"
cat "$out"
