#!/bin/bash
# bench/sql_run_condition_bench.sh: gpusort's sort node under a WindowAgg
# whose run condition ends its rows (row_number() or rank() <= k), against
# PostgreSQL's Sort (gpusort.enable_sort off) in the same session, in one
# throwaway cluster.  The node then keeps the rows of rank at most k and the
# peer group after them (EXPLAIN: Rank Bound), in each partition under a
# PARTITION BY, where Sort sorts every row and the WindowAgg reads them all.
# A table w of ROWS rows: f float8 uniform in [0, 1), x int4, g int4 of
# GROUPS values.  The queries (each returns one row, so the client's
# transfer is nothing):
#   rank() OVER (ORDER BY f) <= K
#   row_number() OVER (ORDER BY f) <= K
#   rank() OVER (ORDER BY f DESC) <= K, with sum(x) over the same window
#   rank() OVER (ORDER BY f) <= $1 (a generic plan's parameter)
#   rank() OVER (PARTITION BY g ORDER BY f DESC) <= PK
#   gpu_topk_agg(f, PK, true) GROUP BY g (node on: a GroupAggregate over the
#   node, which keeps about PK rows a group) against that rank query (node
#   off): the same rows, as an aggregate
#   the same aggregate hashed (gpusort.enable_topk_groups off), against it
# and the ranking functions the node computes in the WindowAgg's place
# (EXPLAIN: Window Functions), over every row:
#   row_number() OVER (ORDER BY f)
#   rank(), dense_rank(), percent_rank(), cume_dist() OVER (PARTITION BY g ORDER BY f)
#   ntile(100) OVER (ORDER BY x)
# Each variant runs once under EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) (the
# warm-up; the plan tells whether the node ran with the bound, and on which
# device), then RUNS times, node off and on interleaved, timed by
# clock_timestamp deltas in one plpgsql function that keeps each run's
# answer; every answer must be equal.  Prints a markdown table: query, node
# in the plan, bound in the plan, window functions in the node, sort device,
# ms off, ms on (medians), ratio, same answer.
#
#   bash bench/sql_run_condition_bench.sh [--rows 10000000] [--k 1000] [--runs 3]
#        [--groups 10000] [--part-k 10] [--only REGEX]
#        [--work-mem 4GB] [--device auto] [--no-build] [--out FILE] [make args]
# --only keeps the queries whose name matches REGEX (grep -E).
# GS_PREBUILT=1 installs prebuilt files (scripts/lib.sh).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$GS_ROOT"

rows=10000000
k=1000
groups=10000
pk=10
only=
runs=3
work_mem=4GB
device=auto
build=1
out=
while [ $# -gt 0 ]; do
	case $1 in
	--rows) rows=$2; shift ;;
	--k) k=$2; shift ;;
	--groups) groups=$2; shift ;;
	--part-k) pk=$2; shift ;;
	--only) only=$2; shift ;;
	--runs) runs=$2; shift ;;
	--work-mem) work_mem=$2; shift ;;
	--device) device=$2; shift ;;
	--no-build) build=0 ;;
	--out) out=$2; shift ;;
	*) break ;;
	esac
	shift
done

gs_ensure_postgres
[ "$build" = 0 ] || gs_build_install "$@"
gs_start_cluster -c max_parallel_workers_per_gather=0 -c work_mem="$work_mem" -c jit=off \
	-c gpusort.device="$device"

gs_log "loading $rows rows"
psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -v groups="$groups" <<'SQL'
CREATE EXTENSION gpusort;
SELECT setseed(0.31) \gset
CREATE UNLOGGED TABLE w AS
SELECT random() AS f, (random() * 1000)::int4 AS x, floor(random() * :groups)::int4 AS g
FROM generate_series(1, :rows);
VACUUM ANALYZE w;

\i bench/bench_functions.sql
SQL

# name|query|settings[|query with the node on] (the query returns one text:
# count and sums of the kept rows; VARIANT in it is on or off, for prepared
# statements planned under each)
part_q="SELECT concat_ws(' ', count(*), sum(f::numeric)) FROM (SELECT f, rank() OVER (PARTITION BY g ORDER BY f DESC) r FROM w) s WHERE r <= $pk"
queries=(
	"rank() OVER (ORDER BY f) <= $k|SELECT concat_ws(' ', count(*), sum(r)) FROM (SELECT f, rank() OVER (ORDER BY f) r FROM w) s WHERE r <= $k|"
	"row_number() OVER (ORDER BY f) <= $k|SELECT concat_ws(' ', count(*), sum(r)) FROM (SELECT f, row_number() OVER (ORDER BY f) r FROM w) s WHERE r <= $k|"
	"rank() OVER (ORDER BY f DESC) <= $k, sum(x) OVER it|SELECT concat_ws(' ', count(*), sum(r), sum(sx)) FROM (SELECT f, rank() OVER v r, sum(x) OVER v sx FROM w WINDOW v AS (ORDER BY f DESC)) s WHERE r <= $k|"
	"rank() OVER (ORDER BY f) <= \$1 (generic plan)|EXECUTE p_VARIANT($k)|SET plan_cache_mode = force_generic_plan; SET gpusort.enable_sort = off; PREPARE p_off(int8) AS SELECT concat_ws(' ', count(*), sum(r)) FROM (SELECT f, rank() OVER (ORDER BY f) r FROM w) s WHERE r <= \$1; EXECUTE p_off($k); SET gpusort.enable_sort = on; PREPARE p_on(int8) AS SELECT concat_ws(' ', count(*), sum(r)) FROM (SELECT f, rank() OVER (ORDER BY f) r FROM w) s WHERE r <= \$1;"
	"rank() OVER (PARTITION BY g ORDER BY f DESC) <= $pk, $groups groups|$part_q|"
	"gpu_topk_agg(f, $pk, true) GROUP BY g, against the rank query|$part_q||SELECT concat_ws(' ', count(*), sum(f::numeric)) FROM (SELECT unnest(gpu_topk_agg(f, $pk, true)) f FROM w GROUP BY g) s"
	"gpu_topk_agg(f, $pk, true) GROUP BY g hashed (enable_topk_groups off), against the rank query|$part_q|SET gpusort.enable_topk_groups = off;|SELECT concat_ws(' ', count(*), sum(f::numeric)) FROM (SELECT unnest(gpu_topk_agg(f, $pk, true)) f FROM w GROUP BY g) s"
	"row_number() OVER (ORDER BY f), every row|SELECT max(r)::text FROM (SELECT row_number() OVER (ORDER BY f) r FROM w) s|"
	"rank, dense_rank, percent_rank, cume_dist OVER (PARTITION BY g ORDER BY f), every row|SELECT concat_ws(' ', sum(r), sum(d), round(sum(p)::numeric, 3), round(sum(c)::numeric, 3)) FROM (SELECT rank() OVER v r, dense_rank() OVER v d, percent_rank() OVER v p, cume_dist() OVER v c FROM w WINDOW v AS (PARTITION BY g ORDER BY f)) s|"
	"ntile(100) OVER (ORDER BY x), every row|SELECT sum(t)::text FROM (SELECT ntile(100) OVER (ORDER BY x) t FROM w) s|"
)

table=$(mktemp)
{
	echo "| query | node in plan | bound in plan | window functions in node | sort device | ms off | ms on | ratio | same answer |"
	echo "| --- | --- | --- | --- | --- | ---: | ---: | ---: | --- |"
} >"$table"
for entry in "${queries[@]}"; do
	IFS='|' read -r name q settings q_node <<<"$entry"
	if [ -n "$only" ] && ! grep -Eq "$only" <<<"$name"; then
		continue
	fi
	gs_log "$name"
	q_on=${q//VARIANT/on}
	q_off=${q//VARIANT/off}
	[ -z "$q_node" ] || q_on=$q_node
	result=$(psql -X -At -v ON_ERROR_STOP=1 -F '|' <<SQL
$settings
CREATE TEMP TABLE t (variant text, ms float8, answer text);
SET gpusort.enable_sort = on;
SELECT plan_of(\$q\$$q_on\$q\$) AS on_plan \gset
SET gpusort.enable_sort = off;
SELECT plan_of(\$q\$$q_off\$q\$) AS off_plan \gset
DO \$d\$
BEGIN
	FOR i IN 1..$runs LOOP
		SET LOCAL gpusort.enable_sort = off;
		INSERT INTO t SELECT 'off', * FROM ms(\$q\$$q_off\$q\$);
		SET LOCAL gpusort.enable_sort = on;
		INSERT INTO t SELECT 'on', * FROM ms(\$q\$$q_on\$q\$);
	END LOOP;
END \$d\$;
SELECT :'on_plan' LIKE '%Custom Scan (gpusort)%', :'on_plan' LIKE '%Rank Bound%', :'on_plan' LIKE '%Window Functions%',
	   coalesce(substring(:'on_plan' FROM 'Sort Device: ([^\n]*)'), '-'),
	   round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM t WHERE variant = 'off')::numeric, 1),
	   round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM t WHERE variant = 'on')::numeric, 1),
	   (SELECT count(DISTINCT answer) = 1 FROM t);
SQL
)
	IFS='|' read -r in_plan bound window dev off on same <<<"$(echo "$result" | tail -1)"
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$in_plan" "$bound" "$window" "$dev" "$off" "$on" \
		"$(echo "scale=2; $off / $on" | bc)" "$same" | tee -a "$table"
done
gs_stop_cluster
echo
cat "$table"
[ -z "$out" ] || cp "$table" "$out"
rm -f "$table"
