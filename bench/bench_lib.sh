# bench/bench_lib.sh: what the SQL benchmarks share; source it after
# scripts/lib.sh.

# Sets cpu_model, cores and host_slug (the CPU model and core count as a part
# of a file name, e.g. amd-epyc-2cores).
gs_bench_machine() {
	cpu_model=$( { lscpu 2>/dev/null || true; } | sed -n 's/^Model name: *//p' | head -1)
	[ -n "$cpu_model" ] ||
		cpu_model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1 || true)
	cores=$(nproc)
	host_slug=$(printf '%s-%scores' "${cpu_model:-unknown-cpu}" "$cores" |
		tr 'A-Z' 'a-z' | sed 's/([^)]*)//g; s/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
}

# gs_bench_header TITLE RAW: a result file's title and the lines that name the
# date, the machine, gpusort's build and the server (from RAW, the psql
# output's "gpu|", "info|" and "pg|" lines) and the source measured
# (BENCH_SOURCE, else the commit).  Call gs_bench_machine first.
gs_bench_header() {
	local raw=$2
	echo "# $1"
	echo
	echo "- date: $(date -u +%Y-%m-%d)"
	echo "- CPU: ${cpu_model:-unknown}, $cores cores ($(uname -m))"
	{ grep '^gpu|' "$raw" || true; } | cut -d'|' -f2- | sed 's/^/- GPU: /'
	{ grep '^info|' "$raw" || true; } | cut -d'|' -f2- | sed 's/^/- gpusort: /'
	{ grep '^pg|' "$raw" || true; } | cut -d'|' -f2- | sed 's/ on .*//; s/^/- server: /'
	echo "- gpusort: ${BENCH_SOURCE:-commit $(git -C "$GS_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
}
