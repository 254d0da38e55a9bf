#!/bin/bash
# A/B on one cluster: numeric(15,2) and text ORDER BY at 10^7, Sort against the node with
# the sorted-order gather and without it (gpusort_test.no_gather, test builds)
set -u
source scripts/lib.sh
GS_PGPORT=55499 gs_start_cluster -c max_parallel_workers_per_gather=0 -c jit=off -c gpusort.device=auto -c gpusort.sort_node_min_rows=0 -c shared_buffers=8GB >/dev/null 2>&1 || exit 1
psql -X -q -c "CREATE EXTENSION gpusort" -c "SELECT setseed(0.38)" -c "CREATE TABLE k AS SELECT (random() * 1e7)::numeric(15,2) AS amount, CASE WHEN i % 3 = 0 THEN 'shared-prefix-0123456789' ELSE '' END || substr(md5(random()::text) || md5(random()::text), 1, 8 + (i % 17)) AS name FROM generate_series(1, ${ROWS:-10000000}) i" -c "VACUUM ANALYZE k"
echo "loaded at $SECONDS s"
for q in ${ABQ:-amount}; do
  Q="SELECT count(*) FROM (SELECT $q FROM k ORDER BY $q OFFSET 0) s"
  for v in "off 4GB" "on 4GB" "on 4GB nogather"; do set -- $v; psql -X -q -c "SET work_mem='$2'" -c "SET gpusort_test.no_gather=$([ "${3:-}" = nogather ] && echo on || echo off)" -c "SET gpusort.enable_sort=$1" -c "$Q" >/dev/null; done
  declare -A T=()
  for r in $(seq ${RUNS:-5}); do
    for v in "off 4GB" "on 4GB" "on 4GB nogather"; do
      set -- $v
      t=$(psql -X -q -c "SET work_mem='$2'" -c "SET gpusort_test.no_gather=$([ "${3:-}" = nogather ] && echo on || echo off)" -c "SET gpusort.enable_sort=$1" -c '\timing on' -c "$Q" | grep Time | awk '{print $2}')
      T[$v]="${T[$v]:-} $t"
    done
  done
  for v in "off 4GB" "on 4GB" "on 4GB nogather"; do
    med=$(echo ${T[$v]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    echo "| ORDER BY $q | enable_sort $v | ${T[$v]} | median $med |"
  done
  for v in "on 4GB" "on 4GB nogather"; do set -- $v
    echo "--- EXPLAIN ANALYZE $v"; psql -X -c "SET work_mem='$2'" -c "SET gpusort_test.no_gather=$([ "${3:-}" = nogather ] && echo on || echo off)" -c "SET gpusort.enable_sort=$1" -c "EXPLAIN (ANALYZE) $Q" | grep -E "Device|Memory|Time"
  done
  unset T
done
gs_stop_cluster
