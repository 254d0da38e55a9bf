#!/bin/bash
# bench/sql_keys_bench.sh: gpusort's sort node on keys other than integers,
# floats and timestamps, against PostgreSQL's Sort (gpusort.enable_sort off)
# in the same session, in one throwaway cluster.  A table k of ROWS rows:
#   amount    numeric(15,2), uniform in [0, 10^7)
#   name      text of 8 to 40 characters, a third of them sharing a 24-character
#             prefix, the rest random letters and digits
#   category  text, 1,000 values
#   x         int4
# and k2, the same names for a merge join.  The queries (each returns one row,
# so the client's transfer is nothing):
#   ORDER BY amount                              (numeric(15,2))
#   ORDER BY name COLLATE C / C.utf8 / en_US.utf8 / an ICU collation (those the
#     server has; PostgreSQL compares libc collations other than C with strcoll)
#   GROUP BY name (a GroupAggregate: hash aggregation off)
#   sum(x) OVER (PARTITION BY category ORDER BY amount)
#   k JOIN k2 USING (name) (a merge join: hash join and nested loop off)
#   small LIMITs: a numeric sum of 100,000 groups DESC LIMIT 10 (TPC-H's Q3),
#     amount::numeric LIMIT 10, and names under each collation LIMIT 100,
#     ascending and descending
# Each variant runs once under EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) (the
# warm-up; the plan tells whether the node ran, and on which device), then
# RUNS times, node off and on interleaved, timed by clock_timestamp deltas in
# one plpgsql function that keeps each run's answer; every answer must be
# equal.  Prints a markdown table: query, node in the plan, sort device, ms
# off, ms on, ratio, same answer.
#
#   bash bench/sql_keys_bench.sh [--rows 10000000] [--runs 3] [--work-mem 4GB]
#        [--device auto] [--only REGEX] [--no-build] [--out FILE] [make args]
# --only: the queries whose name (the first column) matches the extended regex
# GS_PREBUILT=1 installs prebuilt files (scripts/lib.sh).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$GS_ROOT"

rows=10000000
runs=3
work_mem=4GB
device=auto
build=1
only=
out=
while [ $# -gt 0 ]; do
	case $1 in
	--rows) rows=$2; shift ;;
	--runs) runs=$2; shift ;;
	--work-mem) work_mem=$2; shift ;;
	--device) device=$2; shift ;;
	--only) only=$2; shift ;;
	--no-build) build=0 ;;
	--out) out=$2; shift ;;
	*) break ;;
	esac
	shift
done

gs_ensure_postgres
[ "$build" = 0 ] || gs_build_install "$@"
gs_start_cluster -c max_parallel_workers_per_gather=0 -c work_mem="$work_mem" -c jit=off \
	-c gpusort.device="$device" -c gpusort.sort_node_min_rows=0

gs_log "loading $rows rows"
psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" <<'SQL'
CREATE EXTENSION gpusort;
SELECT setseed(0.38) \gset
CREATE TABLE k AS
SELECT (random() * 1e7)::numeric(15,2) AS amount,
	   CASE WHEN i % 3 = 0 THEN 'shared-prefix-0123456789' ELSE '' END ||
		   substr(md5(random()::text) || md5(random()::text), 1, 8 + (i % 17)) AS name,
	   'category ' || (i % 1000) AS category,
	   (random() * 2147483647)::int4 AS x
FROM generate_series(1, :rows) i;
CREATE TABLE k2 AS SELECT name, x FROM k ORDER BY random() LIMIT :rows / 10;
VACUUM ANALYZE k, k2;

\i bench/bench_functions.sql
SQL

collations=$(psql -X -At -c "SELECT string_agg(c, ' ') FROM unnest('{C,C.utf8,en_US.utf8,und-x-icu}'::text[]) c
	WHERE EXISTS (SELECT FROM pg_collation WHERE collname = c AND collencoding IN (-1, 6))")
# name|query|settings|a check of the node's order (ORDER BY only): true when each row is >= the one before
queries=("ORDER BY amount|SELECT count(*) FROM (SELECT amount FROM k ORDER BY amount OFFSET 0) s||SELECT bool_and(p IS NULL OR p <= v) FROM (SELECT v, lag(v) OVER () p FROM (SELECT amount v FROM k ORDER BY amount OFFSET 0) s) t")
for c in $collations; do
	queries+=("ORDER BY name COLLATE \"$c\"|SELECT count(*) FROM (SELECT name FROM k ORDER BY name COLLATE \"$c\" OFFSET 0) s||SELECT bool_and(p IS NULL OR p <= v) FROM (SELECT v, lag(v) OVER () p FROM (SELECT name COLLATE \"$c\" v FROM k ORDER BY 1 OFFSET 0) s) t")
done
queries+=("GROUP BY name|SELECT count(*), sum(n) FROM (SELECT name, count(*) n FROM k GROUP BY name) s|SET enable_hashagg = off;")
queries+=("sum(x) OVER (PARTITION BY category ORDER BY amount)|SELECT sum(s) FROM (SELECT sum(x) OVER (PARTITION BY category ORDER BY amount) s FROM k) t|")
queries+=("merge join on name|SELECT count(*), sum(k.x::int8 - k2.x) FROM k JOIN k2 USING (name)|SET enable_hashjoin = off; SET enable_nestloop = off;")
# small LIMITs over keys that do not pack exactly: pruned by their leading bits, or
# (DESC over the names, whose third that share a prefix come first) given to a
# tuplesort's bounded heap when those tie too often
# (the planner's choice: gpusort.sort_node_min_rows at its default, 1000; "forced" the same
# with the node forced, at 0)
for m in "SET gpusort.sort_node_min_rows = 1000;|" "|, forced"; do
	IFS='|' read -r set tag <<<"$m"
	queries+=("sum(amount) GROUP BY category, x % 100 ORDER BY sum DESC LIMIT 10$tag|SELECT md5(string_agg(s::text, ',')) FROM (SELECT category, x % 100, sum(amount) s FROM k GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 10) t|$set")
	queries+=("ORDER BY amount::numeric LIMIT 10$tag|SELECT md5(string_agg(a::text, ',')) FROM (SELECT amount::numeric a FROM k ORDER BY 1 LIMIT 10) t|$set")
	for c in $collations; do
		queries+=("ORDER BY name COLLATE \"$c\" LIMIT 100$tag|SELECT md5(string_agg(name, ',')) FROM (SELECT name FROM k ORDER BY name COLLATE \"$c\" LIMIT 100) t|$set")
		queries+=("ORDER BY name COLLATE \"$c\" DESC LIMIT 100$tag|SELECT md5(string_agg(name, ',')) FROM (SELECT name FROM k ORDER BY name COLLATE \"$c\" DESC LIMIT 100) t|$set")
	done
done

table=$(mktemp)
{
	echo "| query | node in plan | sort device | ms off | ms on | ratio | same answer | node's order checked |"
	echo "| --- | --- | --- | ---: | ---: | ---: | --- | --- |"
} >"$table"
for entry in "${queries[@]}"; do
	IFS='|' read -r name q settings check <<<"$entry"
	[ -z "$only" ] || [[ "$name" =~ $only ]] || continue
	gs_log "$name"
	result=$(psql -X -At -v ON_ERROR_STOP=1 -F '|' <<SQL
$settings
SET gpusort.enable_sort = off;
SELECT plan_of(\$q\$$q\$q\$) AS off_plan \gset
SET gpusort.enable_sort = on;
SELECT plan_of(\$q\$$q\$q\$) AS on_plan \gset
CREATE TEMP TABLE t (variant text, ms float8, answer text);
DO \$d\$
BEGIN
	FOR i IN 1..$runs LOOP
		SET LOCAL gpusort.enable_sort = off;
		INSERT INTO t SELECT 'off', * FROM ms_row(\$q\$$q\$q\$);
		SET LOCAL gpusort.enable_sort = on;
		INSERT INTO t SELECT 'on', * FROM ms_row(\$q\$$q\$q\$);
	END LOOP;
END \$d\$;
SELECT :'on_plan' LIKE '%Custom Scan (gpusort)%',
	   coalesce(substring(:'on_plan' FROM 'Sort Device: ([^\n]*)'), '-'),
	   round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM t WHERE variant = 'off')::numeric, 1),
	   round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM t WHERE variant = 'on')::numeric, 1),
	   (SELECT count(DISTINCT answer) = 1 FROM t);
SQL
)
	ordered=-
	if [ -n "$check" ]; then
		ordered=$(psql -X -At -v ON_ERROR_STOP=1 -c "SET gpusort.enable_sort = on" -c "$check" | tail -1)
	fi
	IFS='|' read -r in_plan dev off on same <<<"$(echo "$result" | tail -1)"
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$in_plan" "$dev" "$off" "$on" \
		"$(echo "scale=2; $off / $on" | bc)" "$same" "$ordered" | tee -a "$table"
done
gs_stop_cluster
echo
cat "$table"
[ -z "$out" ] || cp "$table" "$out"
rm -f "$table"
