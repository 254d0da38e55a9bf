#!/bin/bash
# bench/agg_groups_bench.sh: the gpusort_state aggregates against array_agg(x)
# under a hash aggregation of many small groups, in one throwaway cluster.
# GROUPS groups of 1 to 10 random int4 rows each (5.5 on average), grouped
# by an int8 key; every aggregate runs under a hash aggregation as array_agg(x)
# (enable_sort = off: a HashAggregate), in six shapes:
#   serial fits        no parallel workers, work_mem = 2GB (hash_mem 4 GB):
#                      one batch for the gpusort_state aggregates; array_agg
#                      spills at 10^6 groups all the same (below)
#   serial one batch   the same with hash_mem_multiplier = 16: array_agg too
#                      in one batch, so both hold every group in memory, and
#                      B/group (peak memory / groups) compares like with like
#   serial spills      no parallel workers, work_mem = SPILL_MEM (batches on disk)
#   parallel fits      WORKERS workers scan (parallel costs at 0), work_mem =
#                      2GB: one HashAggregate above the Gather for array_agg
#                      (PostgreSQL 15 has no combine function for it), a
#                      Partial and a Finalize HashAggregate where the planner
#                      finds that cheaper for the gpusort_state aggregates
#                      (sql/25_state_hash_groups checks partial states of many
#                      groups combined in a hash aggregation)
#   parallel one batch the same with hash_mem_multiplier = 16
#   parallel spills    the same with work_mem = SPILL_MEM
#
# What sets the peak memory: a hash aggregation keeps at most hash_mem
# (work_mem x hash_mem_multiplier) and at most as many groups as the planner
# expects to fit in it, by its estimate of a group's size: the key and the
# hash entry, plus for an aggregate whose state is internal and declares no
# SSPACE (array_agg) 8 kB, the first block of a memory context, and for the
# gpusort_state aggregates their SSPACE (224 bytes).  So at 2GB array_agg
# holds about 500,000 groups (4 GB / 8 kB) and spills at 10^6, and at
# SPILL_MEM (16MB: 32 MB of hash_mem) about 4,000, a tenth of what fits in
# hash_mem, where the gpusort_state aggregates hold what hash_mem holds.  In
# the spilling shapes the peak memory is then the planner's estimate for
# array_agg and hash_mem for the others, not the size of a group's state;
# B/group (shown for one batch only) is.
# Each query runs once untimed, then RUNS times under EXPLAIN (ANALYZE,
# TIMING OFF): the median execution time, and the top HashAggregate's peak
# memory, batches and disk use of the median run.  Prints a markdown table
# with each aggregate's time and memory against array_agg's in the same shape.
#
#   bash bench/agg_groups_bench.sh [--pg 18] [--groups 100000,1000000] [--runs 3]
#        [--workers 2] [--spill-mem 16MB] [--no-build] [--out FILE] [make args]
#
# --pg VERSION: the PostgreSQL to run on (scripts/lib.sh gs_use_postgres;
# default: the pg_config on PATH).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$GS_ROOT"

group_counts=100000,1000000
pg=
runs=3
workers=2
spill_mem=16MB
build=1
out=
while [ $# -gt 0 ]; do
	case $1 in
	--groups) group_counts=$2; shift ;;
	--pg) pg=$2; shift ;;
	--runs) runs=$2; shift ;;
	--workers) workers=$2; shift ;;
	--spill-mem) spill_mem=$2; shift ;;
	--no-build) build=0 ;;
	--out) out=$2; shift ;;
	*) break ;;
	esac
	shift
done

gs_use_postgres "$pg"
[ "$build" = 0 ] || gs_build_install "$@"
gs_start_cluster -c max_worker_processes=$((workers + 8)) -c max_parallel_workers=$((workers + 4))
psql -X -q -c 'CREATE EXTENSION gpusort'

aggs=("array_agg(x)" "gpu_sort_agg(x)" "gpu_median(x)" "gpu_percentile_cont_agg(x, 0.9)"
	"gpu_percentile_disc_agg(x, 0.9)" "gpu_mode_agg(x)" "gpu_topk_agg(x, 3)")

table=$(mktemp)
{
	echo "| groups | shape | aggregate | ms | x array_agg | peak kB | x array_agg | B/group | x array_agg | batches | disk kB | plan |"
	echo "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
} >"$table"

IFS=, read -r -a counts <<<"$group_counts"
for groups in "${counts[@]}"; do
	gs_log "loading $groups groups of 1 to 10 rows"
	psql -X -q -v ON_ERROR_STOP=1 -v groups="$groups" <<'SQL'
DROP TABLE IF EXISTS ag;
SELECT setseed(0.37);
CREATE TABLE ag AS
	SELECT g::int8 AS g, (random() * 2147483647)::int4 AS x
	FROM generate_series(1, :groups) g, generate_series(1, 1 + (g::int8 * 7919 % 10)::int) r;
VACUUM ANALYZE ag;
SQL
	for shape in "serial fits" "serial one batch" "serial spills" "parallel fits" "parallel one batch" "parallel spills"; do
		set -- $shape
		settings="SET jit = off; SET enable_sort = off; SET work_mem = '$([ "$2" = spills ] && echo "$spill_mem" || echo 2GB)';"
		[ "$2" != one ] || settings="$settings SET hash_mem_multiplier = 16;"
		if [ "$1" = serial ]; then
			settings="$settings SET max_parallel_workers_per_gather = 0;"
		else
			settings="$settings SET max_parallel_workers_per_gather = $workers; SET parallel_setup_cost = 0;
				SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; ALTER TABLE ag SET (parallel_workers = $workers);"
		fi
		base_ms=
		base_kb=
		base_bpg=
		for agg in "${aggs[@]}"; do
			q="SELECT g, $agg FROM ag GROUP BY g"
			lines=$(mktemp)
			psql -X -q -At -v ON_ERROR_STOP=1 >"$lines" <<SQL
$settings
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $q;
$(for _ in $(seq "$runs"); do echo "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $q;"; done)
SQL
			# the runs after the untimed first: execution time, then the top aggregate's memory line
			read -r ms kb batches disk plan < <(awk -v runs="$runs" '
				/^(Finalize )?HashAggregate|^Partial HashAggregate|^Gather/ && !top { top = $0; sub(/ *\(.*/, "", top) }
				/Batches:/ && !mem { line = $0; mem = 1
					match(line, /Batches: [0-9]+/); b = substr(line, RSTART + 9, RLENGTH - 9)
					match(line, /Memory Usage: [0-9]+/); m = substr(line, RSTART + 14, RLENGTH - 14)
					d = 0; if (match(line, /Disk Usage: [0-9]+/)) d = substr(line, RSTART + 12, RLENGTH - 12) }
				/^Execution Time:/ { n++; if (n > 1) { t[n - 1] = $3; mm[n - 1] = m; bb[n - 1] = b; dd[n - 1] = d }
					mem = 0; plan[n] = top; top = "" }
				END {
					for (i = 1; i <= runs; i++) idx[i] = i
					for (i = 1; i <= runs; i++) for (j = i + 1; j <= runs; j++)
						if (t[idx[j]] < t[idx[i]]) { k = idx[i]; idx[i] = idx[j]; idx[j] = k }
					med = idx[int((runs + 1) / 2)]
					gsub(/ /, "_", plan[n])
					printf "%.1f %d %d %d %s\n", t[med], mm[med], bb[med], dd[med], plan[n]
				}' "$lines")
			if grep -q "Partial HashAggregate" "$lines"; then plan="Partial+Finalize HashAggregate"
			elif grep -q "Gather" "$lines" && grep -q "HashAggregate" "$lines"; then plan="HashAggregate over Gather"
			elif grep -q "HashAggregate" "$lines"; then plan="HashAggregate"
			else plan="(not hashed)"; fi
			rm -f "$lines"
			# bytes a group: peak memory over the groups, where every group was in memory at once
			bpg=-
			[ "$batches" != 1 ] || bpg=$((kb * 1024 / groups))
			if [ "$agg" = "array_agg(x)" ]; then
				base_ms=$ms
				base_kb=$kb
				base_bpg=$bpg
			fi
			printf '| %s | %s | `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$groups" "$shape" "$agg" "$ms" \
				"$(echo "scale=2; $ms / $base_ms" | bc)" "$kb" \
				"$([ "$base_kb" -gt 0 ] && echo "scale=2; $kb / $base_kb" | bc || echo -)" \
				"$bpg" "$([ "$bpg" != - ] && [ "$base_bpg" != - ] && echo "scale=2; $bpg / $base_bpg" | bc || echo -)" \
				"$batches" "$disk" "$plan" | tee -a "$table"
		done
	done
done
gs_stop_cluster

echo
cat "$table"
[ -z "$out" ] || cp "$table" "$out"
rm -f "$table"
