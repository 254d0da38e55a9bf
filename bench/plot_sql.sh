#!/bin/bash
# bench/plot_sql.sh: the time of a sort in SQL against the array's size, as a PNG,
# from the tables bench/sql_gpu_bench.sh and bench/sql_bench.sh write (gnuplot).
#
#   bash bench/plot_sql.sh GPU_BENCH.md SQL_BENCH.md OUT.png
# GPU_BENCH.md: its "gpu_sort by size" table (CPU and GPU, 10^3 .. 10^7) and its 10^8
#   float8 lines; SQL_BENCH.md: intarray sort() and array_agg ORDER BY at its sizes.
# One panel per type (int4, float8), log-log, whole-statement milliseconds.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 GPU_BENCH.md SQL_BENCH.md OUT.png" >&2; exit 2; }
cross=$1 peers=$2 out=$3
command -v gnuplot >/dev/null || { echo "gnuplot is needed (apt-get install gnuplot-nox)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gpu_sort by size: | type | n | cpu SQL | cpu fn | gpu SQL | ...
for t in int4 float8; do
	awk -F'|' -v t="$t" '$2 ~ "^ " t " $" && $3 + 0 > 0 { gsub(/ /, ""); print $3, $6, $4 }' "$cross" >"$tmp/$t.gpu_cpu"
	# | type | n | read | gpu SQL | gpu fn | cpu SQL | cpu fn | intarray | array_agg | ...
	awk -F'|' -v t="$t" '$2 ~ "^ " t " $" && $3 + 0 > 0 { gsub(/ /, ""); print $3, ($9 == "-" ? "NaN" : $9), $10 }' "$peers" >"$tmp/$t.peers"
done
# 10^8 float8: "whole statement X ms" on the GPU, and the CPU sort's in-function time
big_gpu=$(sed -n 's/^- whole statement \([0-9.]*\) ms.*/\1/p' "$cross" | head -1)
big_cpu=$(sed -n 's/^- the CPU sort of it took \([0-9.]*\) ms.*/\1/p' "$cross" | head -1)
[ -n "$big_gpu" ] && echo "100000000 $big_gpu ${big_cpu:-NaN}" >>"$tmp/float8.gpu_cpu"
gpu=$(sed -n 's/^- GPU: \([^(]*\) (.*/\1/p' "$cross" | head -1 | sed 's/ *$//')

gnuplot <<GP
set terminal pngcairo size 1200,520 font "sans,10"
set output "$out"
set multiplot layout 1,2 title "gpu\\\\_sort in SQL against PostgreSQL's own sorts (${gpu:-GPU}; whole statement, median)"
set logscale xy
set xrange [500:*]
set format x "10^{%L}"
set format y "10^{%L}"
set xlabel "elements"
set ylabel "ms"
set grid
set key top left
do for [t in "int4 float8"] {
	set title t
	plot "$tmp/".t.".gpu_cpu" using 1:2 with linespoints lw 2 pt 7 title "gpu\\\\_sort, GPU", \
	     "$tmp/".t.".gpu_cpu" using 1:3 with linespoints lw 2 pt 5 title "gpu\\\\_sort, CPU path", \
	     "$tmp/".t.".peers" using 1:2 with linespoints lw 2 pt 9 title "intarray sort()", \
	     "$tmp/".t.".peers" using 1:3 with linespoints lw 2 pt 11 title "array\\\\_agg(x ORDER BY x)"
}
unset multiplot
GP
echo "wrote $out"
