#!/bin/bash
# bench/sql_leader_sort_bench.sh: ORDER BY under a Gather Merge with WORKERS
# parallel workers, where gpusort's sort node lets the leader sort every
# participant's rows at once (gpusort.enable_leader_sort), against
# PostgreSQL's parallel plan (gpusort.enable_sort off: a Sort in each worker,
# the Gather Merge merging them), the node with each worker sorting its own
# share (gpusort.enable_leader_sort off), and the node without workers.  A
# table t of ROWS rows: x int4 uniform, p text of 32 characters, f float8,
# m numeric(15,2), k int4 of 1,000 values, y int8.  The queries (each
# returns one row, so the client's transfer is nothing):
#   ORDER BY x             rows of one int4 (kept as arrays)
#   ORDER BY x, with p     rows with a text column (kept as tuples)
#   ORDER BY f             float8
#   ORDER BY m             numeric(15,2)
#   ORDER BY k, y          two keys
# Each variant runs once under EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) (the
# warm-up; the plan tells the workers launched, whether the leader took their
# rows, and the sort's device), then RUNS times, the variants interleaved,
# timed by clock_timestamp deltas in one plpgsql function; every answer must
# be equal.  Prints a markdown table of medians and ratios against
# PostgreSQL's parallel plan.
#
#   bash bench/sql_leader_sort_bench.sh [--rows 10000000] [--workers 8] [--runs 3]
#        [--only REGEX] [--work-mem 4GB] [--device auto] [--explain] [--no-build] [--out FILE] [make args]
# --only keeps the queries whose name matches REGEX (grep -E); --explain prints each query's plan
# under the leader's sort with EXPLAIN ANALYZE's times (lines "plan|...").
# GS_PREBUILT=1 installs prebuilt files (scripts/lib.sh).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$GS_ROOT"

rows=10000000
workers=8
runs=3
only=
work_mem=4GB
device=auto
build=1
out=
explain=0
while [ $# -gt 0 ]; do
	case $1 in
	--rows) rows=$2; shift ;;
	--workers) workers=$2; shift ;;
	--runs) runs=$2; shift ;;
	--only) only=$2; shift ;;
	--work-mem) work_mem=$2; shift ;;
	--device) device=$2; shift ;;
	--no-build) build=0 ;;
	--explain) explain=1 ;;
	--out) out=$2; shift ;;
	*) break ;;
	esac
	shift
done

gs_ensure_postgres
[ "$build" = 0 ] || gs_build_install "$@"
gs_start_cluster -c max_parallel_workers_per_gather=0 -c work_mem="$work_mem" -c jit=off \
	-c shared_buffers=4GB -c max_worker_processes=$((workers + 8)) -c max_parallel_workers="$workers" \
	-c gpusort.device="$device"

gs_log "loading $rows rows"
psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -v workers="$workers" <<'SQL'
CREATE EXTENSION gpusort;
SELECT setseed(0.41) \gset
CREATE UNLOGGED TABLE t AS
SELECT (floor(random() * 4294967296) - 2147483648)::int4 AS x, md5(random()::text) AS p,
	   (random() - 0.5) * 1e12 AS f, (random() * 1e7)::numeric(15,2) AS m,
	   floor(random() * 1000)::int4 AS k, (random() * 2e18 - 1e18)::int8 AS y
FROM generate_series(1, :rows);
ALTER TABLE t SET (parallel_workers = :workers);
VACUUM ANALYZE t;

\i bench/bench_functions.sql
SQL

queries=(
	"ORDER BY x|SELECT concat_ws(' ', count(*), min(x)) FROM (SELECT x FROM t ORDER BY x) s"
	"ORDER BY x, with a text column|SELECT concat_ws(' ', count(*), sum(length(p))) FROM (SELECT x, p FROM t ORDER BY x) s"
	"ORDER BY f (float8)|SELECT concat_ws(' ', count(*), min(f)) FROM (SELECT f FROM t ORDER BY f) s"
	"ORDER BY m (numeric(15,2))|SELECT concat_ws(' ', count(*), min(m)) FROM (SELECT m FROM t ORDER BY m) s"
	"ORDER BY k, y|SELECT concat_ws(' ', count(*), min(y)) FROM (SELECT k, y FROM t ORDER BY k, y) s"
)
# variant name|settings (each run sets them in its transaction)
variants=(
	"off|gpusort.enable_sort=off,max_parallel_workers_per_gather=$workers"
	"own|gpusort.enable_sort=on,gpusort.enable_leader_sort=off,max_parallel_workers_per_gather=$workers"
	"leader|gpusort.enable_sort=on,gpusort.enable_leader_sort=on,max_parallel_workers_per_gather=$workers"
	"serial|gpusort.enable_sort=on,max_parallel_workers_per_gather=0"
)

table=$(mktemp)
{
	echo "| query ($rows rows) | workers launched | leader took the rows | sort device | PostgreSQL, $workers workers | node, each worker its share | node, the leader's sort | node, no workers | leader sort vs PostgreSQL | vs each worker its share | same answer |"
	echo "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
} >"$table"
for entry in "${queries[@]}"; do
	IFS='|' read -r name q <<<"$entry"
	if [ -n "$only" ] && ! grep -Eq "$only" <<<"$name"; then
		continue
	fi
	gs_log "$name"
	body=""
	for v in "${variants[@]}"; do
		vname=${v%%|*}
		sets=${v#*|}
		setsql=""
		IFS=',' read -ra kvs <<<"$sets"
		for kv in "${kvs[@]}"; do
			setsql+="SET LOCAL ${kv%%=*} = '${kv#*=}'; "
		done
		body+="$setsql INSERT INTO t_runs SELECT '$vname', * FROM ms(\$q\$$q\$q\$); "
	done
	result=$(psql -X -At -v ON_ERROR_STOP=1 -F '|' <<SQL
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
CREATE TEMP TABLE t_runs (variant text, ms float8, answer text);
SET max_parallel_workers_per_gather = $workers;
SET gpusort.enable_sort = on;
SELECT plan_of(\$q\$$q\$q\$) AS on_plan \gset
SET gpusort.enable_sort = off;
SELECT plan_of(\$q\$$q\$q\$) AS off_plan \gset
SET gpusort.enable_sort = on;
SET gpusort.enable_leader_sort = off;
SELECT plan_of(\$q\$$q\$q\$) AS own_plan \gset
RESET gpusort.enable_leader_sort;
SELECT 'plan|' || l FROM (SELECT plan_timed(\$q\$$q\$q\$) l WHERE $explain = 1) p;
DO \$d\$
BEGIN
	FOR i IN 1..$runs LOOP
		$body
	END LOOP;
END \$d\$;
SELECT coalesce(substring(:'on_plan' FROM 'Workers Launched: (\d+)'), '0') || ' (off ' ||
	   coalesce(substring(:'off_plan' FROM 'Workers Launched: (\d+)'), '0') || ')',
	   :'on_plan' ~ 'Sort Rows From Workers: [1-9]',
	   coalesce(substring(:'on_plan' FROM 'Sort Device: ([^\n]*)'), '-'),
	   round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM t_runs WHERE variant = 'off')::numeric, 1),
	   round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM t_runs WHERE variant = 'own')::numeric, 1),
	   round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM t_runs WHERE variant = 'leader')::numeric, 1),
	   round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM t_runs WHERE variant = 'serial')::numeric, 1),
	   (SELECT count(DISTINCT answer) = 1 FROM t_runs);
SQL
)
	echo "$result" | grep '^plan|' || true
	IFS='|' read -r launched took dev off own leader serial same <<<"$(echo "$result" | tail -1)"
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %sx | %sx | %s |\n' "$name" "$launched" "$took" "$dev" \
		"$off" "$own" "$leader" "$serial" "$(echo "scale=2; $off / $leader" | bc)" \
		"$(echo "scale=2; $own / $leader" | bc)" "$same" | tee -a "$table"
done
gs_stop_cluster
echo
cat "$table"
[ -z "$out" ] || cp "$table" "$out"
rm -f "$table"
