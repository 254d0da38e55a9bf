#!/bin/bash
# bench/server_bench.sh: many connections sorting on the GPU at once, server mode
# against per-backend mode.  Each transaction sorts a stored 10^5-element int4 array:
#   check: SELECT 1/(gpu_sort(a) = sort(a))::int FROM arr5   (intarray's sort checks it)
#   pure:  SELECT cardinality(gpu_sort(a)) FROM arr5
# pgbench runs each for --seconds at each client count; the report gives transactions,
# errors (clients aborted), tps and latency p50/p99 from pgbench's per-transaction log,
# the GPU processes and memory nvidia-smi saw during the run (sampled every 0.5 s), and
# the first sort of new connections against the same sort warm.
#
#   bash bench/server_bench.sh [--modes server,backend] [--clients 1,16,64,128,300]
#                              [--workloads check,pure] [--seconds 15] [--device gpu]
#                              [--large] [--out FILE]
# --large: instead of pgbench, single large sorts in each mode: a stored 10^7-element int4
#   array (whole statement, and inside the function from gpusort_last_run) and a stored
#   10^8-element float8 array (800 MB; inside the function), median of 5, results checked
# Sets up and installs like scripts/test.sh (GS_PREBUILT=1: prebuilt files), one throwaway
# cluster per mode with max_connections 400.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$GS_ROOT"

modes=server,backend
clients_list=1,16,64,128,300
workloads=check,pure
seconds=15
device=gpu
large=0
out=
while [ $# -gt 0 ]; do
	case "$1" in
		--modes) modes=$2; shift 2 ;;
		--clients) clients_list=$2; shift 2 ;;
		--workloads) workloads=$2; shift 2 ;;
		--seconds) seconds=$2; shift 2 ;;
		--device) device=$2; shift 2 ;;
		--large) large=1; shift ;;
		--out) out=$2; shift 2 ;;
		*) echo "usage: $0 [--large] [--modes server,backend] [--clients LIST] [--workloads check,pure] [--seconds S] [--device gpu|auto|cpu] [--out FILE]" >&2; exit 2 ;;
	esac
done
out=${out:-$GS_ROOT/bench/results/server-$(hostname)-$(date -u +%Y-%m-%d).md}

gs_ensure_postgres
gs_build_install
work=$(mktemp -d /tmp/gpusort-server-bench.XXXXXX)
chmod 777 "$work"

has_smi=0
command -v nvidia-smi >/dev/null 2>&1 && has_smi=1

# percentile P (0..100) of the latencies (microseconds, field 3) in pgbench logs, in ms
pct() {
	local p=$1
	shift
	cat "$@" 2>/dev/null | awk '{print $3}' | sort -n | awk -v p="$p" '
		{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } i = int(NR * p / 100); if (i < 1) i = 1; printf "%.2f", v[i] / 1000 }'
}

{
	echo "# gpusort server mode against per-backend mode"
	echo
	echo "- machine: $(hostname), $(nproc) cores; $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU')"
	echo "- commit: $(git -C "$GS_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown); $(pg_config --version)"
	echo "- command: bash bench/server_bench.sh --modes $modes --clients $clients_list --workloads $workloads --seconds $seconds --device $device"
	echo "- each transaction sorts a stored 10^5-element int4 array with gpusort.device = $device; pgbench -T $seconds, -j min(clients, 16)"
	echo
	echo "| mode | workload | clients | transactions | clients aborted | tps | p50 ms | p99 ms | GPU processes (max) | GPU memory MiB (max) |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
} >"$out"

# --large: one psql session per mode, the median of 5 of each measurement
if [ "$large" = 1 ]; then
	{
		echo "# gpusort server mode against per-backend mode: single large sorts"
		echo
		echo "- machine: $(hostname), $(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU')"
		echo "- commit: $(git -C "$GS_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown); $(pg_config --version)"
		echo "- command: bash bench/server_bench.sh --large --modes $modes --device $device"
		echo "- stored arrays (EXTERNAL storage), gpusort.device = $device, median of 5 runs, ms; each result checked against the CPU sort"
		echo
		echo "| mode | array | statement | in the function | copy in | sort | copy out | queue |"
		echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	} >"$out"
	for mode in ${modes//,/ }; do
		if [ "$mode" = server ]; then export GS_SERVER_MODE=1; else export GS_SERVER_MODE=0; fi
		gs_start_cluster -c shared_buffers=4GB -c max_wal_size=8GB
		PGOPTIONS="-c gpusort.device=$device" psql -X -q -A -t -v ON_ERROR_STOP=1 -v mode="$mode" <<-'SQL' | grep '^|' >>"$out"
			CREATE EXTENSION IF NOT EXISTS gpusort;
			ALTER EXTENSION gpusort UPDATE;
			CREATE TABLE big (name text, a int4[], f float8[]);
			ALTER TABLE big ALTER COLUMN a SET STORAGE EXTERNAL, ALTER COLUMN f SET STORAGE EXTERNAL;
			INSERT INTO big SELECT '10^7 int4', array_agg((random() * 4e9 - 2e9)::int4), NULL FROM generate_series(1, 10000000);
			-- array_agg stops at 1 GB of state: four pieces of 2.5*10^7, concatenated
			INSERT INTO big SELECT '10^8 float8', NULL,
				(SELECT array_agg(random() * 1e9 - 5e8) FROM generate_series(1, 25000000)) ||
				(SELECT array_agg(random() * 1e9 - 5e8) FROM generate_series(1, 25000000)) ||
				(SELECT array_agg(random() * 1e9 - 5e8) FROM generate_series(1, 25000000)) ||
				(SELECT array_agg(random() * 1e9 - 5e8) FROM generate_series(1, 25000000));
			CREATE TEMP TABLE runs (name text, stmt_ms float8, fn_ms float8, in_ms float8, sort_ms float8, out_ms float8, queue_ms float8);
			CREATE FUNCTION pg_temp.measure(which text) RETURNS void LANGUAGE plpgsql AS $f$
			DECLARE t0 timestamptz; g4 int4[]; g8 float8[]; dev text := current_setting('gpusort.device');
			BEGIN
				-- warm, and the result against the CPU's
				IF which = '10^7 int4' THEN
					SELECT gpu_sort(a) INTO g4 FROM big WHERE name = which;
					PERFORM set_config('gpusort.device', 'cpu', true);
					IF (SELECT gpu_sort(a) FROM big WHERE name = which) <> g4 THEN
						RAISE EXCEPTION 'the % sort differs from the CPU sort', dev;
					END IF;
				ELSE
					SELECT gpu_sort(f) INTO g8 FROM big WHERE name = which;
					PERFORM set_config('gpusort.device', 'cpu', true);
					IF (SELECT gpu_sort(f) FROM big WHERE name = which) <> g8 THEN
						RAISE EXCEPTION 'the % sort differs from the CPU sort', dev;
					END IF;
				END IF;
				PERFORM set_config('gpusort.device', dev, true);
				FOR i IN 1..5 LOOP
					t0 := clock_timestamp();
					IF which = '10^7 int4' THEN
						PERFORM cardinality(gpu_sort(a)) FROM big WHERE name = which;
					ELSE
						PERFORM cardinality(gpu_sort(f)) FROM big WHERE name = which;
					END IF;
					INSERT INTO runs SELECT which, extract(epoch FROM clock_timestamp() - t0) * 1000,
						total_ms, copy_in_ms, sort_ms, copy_out_ms, queue_ms FROM gpusort_last_run();
				END LOOP;
			END $f$;
			SELECT pg_temp.measure('10^7 int4');
			SELECT pg_temp.measure('10^8 float8');
			SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s |', :'mode', name,
				round(percentile_cont(0.5) WITHIN GROUP (ORDER BY stmt_ms)::numeric, 1),
				round(percentile_cont(0.5) WITHIN GROUP (ORDER BY fn_ms)::numeric, 2),
				round(percentile_cont(0.5) WITHIN GROUP (ORDER BY in_ms)::numeric, 2),
				round(percentile_cont(0.5) WITHIN GROUP (ORDER BY sort_ms)::numeric, 2),
				round(percentile_cont(0.5) WITHIN GROUP (ORDER BY out_ms)::numeric, 2),
				round(percentile_cont(0.5) WITHIN GROUP (ORDER BY queue_ms)::numeric, 3))
			FROM runs GROUP BY name ORDER BY name;
		SQL
		gs_stop_cluster
		trap - EXIT
	done
	sed -i '/^$/N;/^\n$/D' "$out"
	echo "wrote $out" >&2
	exit 0
fi

first_rows=()
for mode in ${modes//,/ }; do
	if [ "$mode" = server ]; then
		export GS_SERVER_MODE=1
	else
		export GS_SERVER_MODE=0
	fi
	gs_start_cluster -c max_connections=400 -c shared_buffers=1GB
	psql -X -q -v ON_ERROR_STOP=1 <<-'SQL'
		CREATE EXTENSION IF NOT EXISTS gpusort;
		CREATE EXTENSION IF NOT EXISTS intarray;
		DROP TABLE IF EXISTS arr5;
		CREATE TABLE arr5 AS SELECT array_agg((random() * 2e9 - 1e9)::int4) AS a FROM generate_series(1, 100000);
		ALTER TABLE arr5 ALTER COLUMN a SET STORAGE EXTERNAL;
		UPDATE arr5 SET a = a;
		VACUUM ANALYZE arr5;
	SQL
	[ "$mode" = server ] && sleep 2		# the server's contexts

	echo "SELECT 1/(gpu_sort(a) = sort(a))::int FROM arr5;" >"$work/check.sql"
	echo "SELECT cardinality(gpu_sort(a)) FROM arr5;" >"$work/pure.sql"

	for wl in ${workloads//,/ }; do
		for c in ${clients_list//,/ }; do
			j=$((c < 16 ? c : 16))
			rm -f "$work"/log.* "$work/smi.txt"
			smi_pid=
			if [ "$has_smi" = 1 ]; then
				( while :; do
					nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
						awk -F', *' '{n++; m += $2} END {print n + 0, m + 0}'
					sleep 0.5
				  done >"$work/smi.txt" ) &
				smi_pid=$!
			fi
			(cd "$work" && PGOPTIONS="-c gpusort.device=$device" timeout -k 10 $((seconds * 4 + 120)) \
				pgbench -n -c "$c" -j "$j" -T "$seconds" -f "$work/$wl.sql" -l --log-prefix=log \
				>"$work/pgbench.out" 2>&1) || true
			[ -n "$smi_pid" ] && { kill "$smi_pid" 2>/dev/null; wait "$smi_pid" 2>/dev/null || true; }
			tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/pgbench.out")
			failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/pgbench.out")
			aborted=$(grep -c 'client [0-9]* aborted' "$work/pgbench.out" || true)
			tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial.*/\1/p' "$work/pgbench.out" | head -1)
			[ -n "$tps" ] || tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$work/pgbench.out" | head -1)
			procs=- mem=-
			if [ -s "$work/smi.txt" ]; then
				procs=$(awk 'BEGIN {m = 0} $1 > m {m = $1} END {print m}' "$work/smi.txt")
				mem=$(awk 'BEGIN {m = 0} $2 > m {m = $2} END {print m}' "$work/smi.txt")
			fi
			echo "| $mode | $wl | $c | ${tx:-0} | $aborted${failed:+ ($failed failed)} | ${tps:-0} | $(pct 50 "$work"/log.*) | $(pct 99 "$work"/log.*) | $procs | $mem |" >>"$out"
			grep -m3 -iE 'error|aborted' "$work/pgbench.out" | sed 's/^/    /' >>"$work/errors.txt" || true
			echo "$mode $wl $c: ${tx:-0} tx, $aborted aborted, ${tps:-0} tps" >&2
		done
	done

	# the first sort of a new connection against the second one (warm), 5 connections
	for i in 1 2 3 4 5; do
		t=$(PGOPTIONS="-c gpusort.device=$device" psql -X -q <<-'SQL' 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tr '\n' ' '
			\timing on
			SELECT cardinality(gpu_sort(a)) FROM arr5 \g /dev/null
			SELECT cardinality(gpu_sort(a)) FROM arr5 \g /dev/null
			SELECT cardinality(gpu_sort(a)) FROM arr5 \g /dev/null
		SQL
		)
		first_rows+=("| $mode | $i | $(echo "$t" | awk '{print $1}') | $(echo "$t" | awk '{print $3}') | $(echo "$t" | awk '{printf "%.2f", $1 - $3}') |")
	done
	if [ "$mode" = server ]; then
		psql -X -x -c "SELECT * FROM gpusort_server()" >"$work/server-status.txt" 2>&1 || true
	fi
	gs_stop_cluster
	trap - EXIT
done

{
	echo
	echo "## The first sort of a new connection"
	echo
	echo "Statement time in ms of the first gpu_sort of arr5 in a new connection and of the third (warm)."
	echo
	echo "| mode | connection | first | warm | first - warm |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	printf '%s\n' "${first_rows[@]}"
	if [ -s "$work/server-status.txt" ]; then
		echo
		echo "## gpusort_server() after the runs"
		echo
		echo '```'
		cat "$work/server-status.txt"
		echo '```'
	fi
	if [ -s "$work/errors.txt" ]; then
		echo
		echo "## Errors pgbench printed (first lines per run)"
		echo
		echo '```'
		head -60 "$work/errors.txt"
		echo '```'
	fi
} >>"$out"
echo "wrote $out" >&2
rm -rf "$work"
