#!/bin/bash
# bench/sql_sort_everywhere.sh: gpusort's sort node against PostgreSQL's Sort
# wherever a plan sorts, with gpusort.enable_sort on and off in the same
# session, for each gpusort.device asked for.  On a table t (x int4, uniform
# random, ROWS rows) and a second one t2 like it:
#
#   query                                            baseline               target: GPU  CPU path
#   row_number() OVER (ORDER BY x)                   node off               2.5x  1.8x
#   merge join t JOIN t2 ON x (no hash join,         node off               2x    1.5x
#     no nested loop)
#   GROUP BY x (GroupAggregate, no hash aggregate)   node off               2x    1.5x
#   SELECT DISTINCT x (Unique, no hash aggregate)    node off               2x    1.5x
#   ORDER BY x LIMIT 100, LIMIT 1000000              node off               2x    1.5x
#   ORDER BY x with WORKERS parallel workers         node off, same workers 2x    -
#   gpu_topk_agg(x, 100)                             ORDER BY x LIMIT 100,  2x    2x
#                                                    node off
#   ORDER BY x LIMIT 100 with WORKERS workers (14)   node off, same workers 1.5x  -
#   gpu_topk_agg(x, 100) with WORKERS workers (15)   ORDER BY x LIMIT 100,  1.5x  -
#                                                    node off, same workers
#   gpu_sort(array_agg(x)) with WORKERS workers      the same, serial       3x    -
#
# and a guard: each query kind (ORDER BY, window, merge join, GROUP BY,
# DISTINCT, LIMIT 100) over smaller tables (GUARD_SIZES rows) in eight shapes
# (int4 key; int4 + int8 keys; float8 key; int4 key with a text payload
# column; int4 key DESC NULLS FIRST, 1% NULLs; numeric(15,2); text of 8-48
# characters, a third sharing a prefix, under the database's collation; a
# category under C and a numeric(15,2)), for the devices and, where a
# GPU is usable, gpusort.device = auto as well; a shape is flagged where the
# node is in its plan and it runs slower than 0.95x of the node off (below
# 0.95x with the same plan on both sides, no node, is reported as noise).
#
# Every query returns one row (count(*), max(rn), sum(...) over the sorted
# rows), so the client's transfer is nothing; the subqueries keep their sort
# (ORDER BY in a subquery is kept, row_number()'s result is read so that the
# window is not dropped).  Each variant runs once as EXPLAIN (ANALYZE, COSTS
# OFF, TIMING OFF) (the warm-up, and the plan saved: which node ran, on which
# device, how many workers launched, whether a sort spilled past work_mem),
# then RUNS times, the variants of a row interleaved, timed by clock_timestamp
# deltas in one plpgsql function (the whole statement, planning included).
# A node-off plan without a Sort makes its row invalid.  The small guard
# shapes repeat the query within one timed run (GUARD_WORK / rows times) and
# report the time of one.  Each row also checks that every variant gave the
# same answer.
#
#   bash bench/sql_sort_everywhere.sh                      # 10^7 rows, devices: cpu (+ gpu if usable)
#   bash bench/sql_sort_everywhere.sh --devices cpu,gpu --out DIR
#   bash bench/sql_sort_everywhere.sh --quick              # 10^5 rows, guard at 10^3 only
#   options: --rows N (10000000)  --runs R (3)  --devices LIST (cpu; cpu,gpu where a GPU is usable)
#            --workers W (8)  --work-mem SIZE (2GB, every sort in memory on both sides)
#            --guard-sizes LIST (1000,100000)  --guard-work N (200000)  --guard-runs R (5)  --parts main,guard
#            --main-rows IDS (the main part's rows by number, comma-separated; all by default)
#            --guard-devices LIST (the devices, and auto where a GPU is usable)
#            --host NAME  --out DIR (default $OUT or bench/results, in sort-everywhere-HOST-DATE)
#   other arguments go to make (CUDA=0); GS_PREBUILT=1 installs prebuilt files.
# Writes DIR/sort-everywhere.md (the tables, also printed), DIR/sort-everywhere-runs.csv (every
# timed run) and DIR/sort-everywhere-plans.md (each variant's plan).  Sets up, builds and
# installs like scripts/test.sh, in a throwaway cluster: work_mem and max_parallel_workers_per_gather
# = 0 for every session, max_worker_processes = WORKERS + 8, max_parallel_workers = WORKERS.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/bench_lib.sh"
cd "$GS_ROOT"

rows=10000000
runs=3
devices=auto
workers=8
work_mem=2GB
guard_sizes=1000,100000
guard_work=200000
guard_runs=5
guard_devices=auto
parts=main,guard
main_rows=
host=
outdir=
quick=0
make_args=()
usage() {
	echo "usage: $0 [--rows N] [--runs R] [--devices cpu,gpu] [--workers W] [--work-mem SIZE]" >&2
	echo "          [--guard-sizes LIST] [--guard-work N] [--guard-runs R] [--guard-devices LIST] [--parts main,guard] [--quick] [--host NAME] [--out DIR] [MAKEVAR=value]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		--devices) devices=$2; shift 2 ;;
		--workers) workers=$2; shift 2 ;;
		--work-mem) work_mem=$2; shift 2 ;;
		--guard-sizes) guard_sizes=$2; shift 2 ;;
		--guard-work) guard_work=$2; shift 2 ;;
		--guard-runs) guard_runs=$2; shift 2 ;;
		--guard-devices) guard_devices=$2; shift 2 ;;
		--parts) parts=$2; shift 2 ;;
		--main-rows) main_rows=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--host) host=$2; shift 2 ;;
		--out) outdir=$2; shift 2 ;;
		*=*) make_args+=("$1"); shift ;;
		*) usage ;;
	esac
done
if [ "$quick" = 1 ]; then
	rows=100000
	guard_sizes=1000
	guard_work=50000
	guard_runs=3
fi
main=false; guard=false
case ",$parts," in *,main,*) main=true ;; esac
case ",$parts," in *,guard,*) guard=true ;; esac
[ "$main" = true ] || [ "$guard" = true ] || usage

gs_bench_machine
host=${host:-$host_slug}
outdir=${outdir:-${OUT:-bench/results}/sort-everywhere-$host-$(date -u +%Y-%m-%d)}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
md=$outdir/sort-everywhere.md
csv=$outdir/sort-everywhere-runs.csv
plans=$outdir/sort-everywhere-plans.md

gs_ensure_postgres
gs_build_install "${make_args[@]}"
# shared_buffers holds both tables; every session starts serial with work_mem large enough
# that PostgreSQL's Sort and the node both stay in memory
gs_start_cluster -c shared_buffers=2GB -c work_mem="$work_mem" -c max_parallel_workers_per_gather=0 \
	-c max_worker_processes=$((workers + 8)) -c max_parallel_workers="$workers"

gs_log "sort everywhere: $rows rows, devices $devices, best of $runs, $workers workers, work_mem $work_mem," \
	"guard $guard_sizes, parts $parts"
raw=$(mktemp)
psql -X -q -At -F '|' -v ON_ERROR_STOP=1 -v rows="$rows" -v runs="$runs" -v devices="$devices" \
	-v workers="$workers" -v guard_sizes="$guard_sizes" -v guard_work="$guard_work" -v guard_runs="$guard_runs" \
	-v guard_devices="$guard_devices" -v main_rows="${main_rows:-all}" \
	-v main="$main" -v guard="$guard" -v csv="$csv" -v plans="$plans" >"$raw" <<'SQL'
CREATE EXTENSION gpusort;
LOAD 'gpusort';
SET client_min_messages = notice;		-- the progress lines (NOTICE:  bench: ...) go to stderr

-- the devices: those asked for, else the CPU path and the GPU where one is usable
SELECT CASE WHEN :'devices' <> 'auto' THEN :'devices'
			WHEN (SELECT gpu_usable FROM gpusort_info()) THEN 'cpu,gpu' ELSE 'cpu' END AS devices \gset
SET bench.devices = :'devices';
SELECT CASE WHEN :'guard_devices' <> 'auto' THEN :'guard_devices'
			WHEN (SELECT gpu_usable FROM gpusort_info()) AND 'auto' <> ALL (string_to_array(:'devices', ','))
				THEN :'devices' || ',auto' ELSE :'devices' END AS guard_devices \gset
SET bench.guard_devices = :'guard_devices';
SET bench.runs = :'runs';
SET bench.guard_runs = :'guard_runs';
SELECT 'max_parallel_workers_per_gather=0' AS serial,
	   format('max_parallel_workers_per_gather=%s;parallel_setup_cost=0;parallel_tuple_cost=0', :workers) AS par \gset

-- the tables, built once: random int4 as the other benchmarks have them
SELECT setseed(0.5);
\if :main
CREATE UNLOGGED TABLE t AS
	SELECT (floor(random() * 4294967296) - 2147483648)::int4 AS x FROM generate_series(1, :rows);
CREATE UNLOGGED TABLE t2 AS
	SELECT (floor(random() * 4294967296) - 2147483648)::int4 AS x FROM generate_series(1, :rows);
ALTER TABLE t SET (parallel_workers = :workers);
VACUUM ANALYZE t;
VACUUM ANALYZE t2;
\endif
\if :guard
-- g_N and h_N (the join's other side): x int4, k int4 in [0, 1000), y int8, f float8,
-- xn = x with 1% NULLs, p a 32-character text, m numeric(15,2), s text of 8 to 48
-- characters (a third sharing a 24-character prefix) under the database's collation,
-- cat one of 100 categories under "C"
SELECT format('CREATE UNLOGGED TABLE %I AS SELECT x, floor(random() * 1000)::int4 AS k, '
			  '(random() * 2e18 - 1e18)::int8 AS y, (random() - 0.5) * 1e12 AS f, '
			  'CASE WHEN random() < 0.01 THEN NULL ELSE x END AS xn, md5(random()::text) AS p, '
			  '(random() * 1e7)::numeric(15,2) AS m, '
			  'CASE WHEN x %% 3 = 0 THEN ''shared-prefix-0123456789'' ELSE '''' END || '
			  'substr(md5(x::text), 1, 8 + abs(x %% 17)) AS s, '
			  '(''category '' || abs(x %% 100)) COLLATE "C" AS cat '
			  'FROM (SELECT (floor(random() * 4294967296) - 2147483648)::int4 AS x '
			  'FROM generate_series(1, %s)) s', side || n, n)
FROM unnest(string_to_array(:'guard_sizes', ',')::bigint[]) n, unnest(ARRAY['g_', 'h_']) side
ORDER BY n, side \gexec
SELECT format('VACUUM ANALYZE %I', side || n)
FROM unnest(string_to_array(:'guard_sizes', ',')::bigint[]) n, unnest(ARRAY['g_', 'h_']) side \gexec
\endif

-- A row: a baseline and a measured variant (the latter once per device; the
-- former too where per_device), the settings of the row and of each variant
-- ('name=value;...'), targets for the GPU and the CPU path, and how many
-- times one timed run repeats the query.
CREATE TEMP TABLE bench_rows (
	id int PRIMARY KEY, part text, kind text, shape text, n bigint,
	base_label text, base_q text, base_set text, cand_label text, cand_q text, cand_set text,
	row_set text, per_device bool, fn_row bool, target_gpu float8, target_cpu float8, reps int);
CREATE TEMP TABLE variants (rid int, vno int, role text, label text, device text, q text, settings text);
CREATE TEMP TABLE runs (rid int, vno int, run int, ms float8);
CREATE TEMP TABLE plans (rid int, vno int, plan text, summary text, sorted bool, node bool, result text);
CREATE TEMP TABLE row_errors (rid int, vno int, message text);	-- vno NULL: the row's

\if :main
INSERT INTO bench_rows
SELECT id, 'main', kind, 'int4', :rows, 'node off', q, 'gpusort.enable_sort=off',
	   'node on', q, 'gpusort.enable_sort=on', rs, false, false, tg, tc, 1
FROM (VALUES
	(1, 'row_number() OVER (ORDER BY x)',
	 'SELECT max(rn) FROM (SELECT row_number() OVER (ORDER BY x) rn FROM t) s', :'serial', 2.5, 1.8),
	(2, 'merge join t JOIN t2 ON x',
	 'SELECT count(*) FROM t a JOIN t2 b ON a.x = b.x',
	 :'serial' || ';enable_hashjoin=off;enable_nestloop=off', 2, 1.5),
	(3, 'GROUP BY x (GroupAggregate)',
	 'SELECT count(*), sum(c) FROM (SELECT x, count(*) c FROM t GROUP BY x) s', :'serial' || ';enable_hashagg=off', 2, 1.5),
	(4, 'SELECT DISTINCT x',
	 'SELECT count(*) FROM (SELECT DISTINCT x FROM t) s', :'serial' || ';enable_hashagg=off', 2, 1.5),
	(5, 'ORDER BY x LIMIT 100',
	 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x LIMIT 100) s', :'serial', 2, 1.5),
	(6, 'ORDER BY x LIMIT 1000000',
	 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x LIMIT 1000000) s', :'serial', 2, 1.5),
	(7, format('ORDER BY x, %s workers', :workers),
	 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x) s', :'par', 2, NULL),
	(10, 'row_number() OVER (ORDER BY x), rn <= 1000 (run condition)',
	 'SELECT count(*) FROM (SELECT x, row_number() OVER (ORDER BY x) rn FROM t) s WHERE rn <= 1000', :'serial', NULL, NULL),
	(11, 'ORDER BY x LIMIT 10000',
	 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x LIMIT 10000) s', :'serial', NULL, NULL),
	(12, 'ORDER BY x (serial)',
	 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x) s', :'serial', NULL, NULL),
	(13, 'the scan alone (no sort: the floor of every row above)',
	 'SELECT count(*) FROM t', :'serial', NULL, NULL)) v(id, kind, q, rs, tg, tc);
INSERT INTO bench_rows VALUES
	(8, 'main', 'gpu_topk_agg(x, 100)', 'int4', :rows,
	 'ORDER BY x LIMIT 100, node off', 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x LIMIT 100) s',
	 'gpusort.enable_sort=off', 'gpu_topk_agg', 'SELECT cardinality(gpu_topk_agg(x, 100)) FROM t',
	 'gpusort.enable_sort=on', :'serial', false, true, 2, 2, 1),
	(9, 'main', format('gpu_sort(array_agg(x)), %s workers', :workers), 'int4', :rows,
	 'serial', 'SELECT cardinality(gpu_sort(array_agg(x))) FROM t', 'max_parallel_workers_per_gather=0',
	 format('%s workers', :workers), 'SELECT cardinality(gpu_sort(array_agg(x))) FROM t', :'par',
	 'gpusort.enable_sort=on', true, true, 3, NULL, 1),
	(14, 'main', format('ORDER BY x LIMIT 100, %s workers', :workers), 'int4', :rows,
	 'node off', 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x LIMIT 100) s', 'gpusort.enable_sort=off',
	 'node on', 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x LIMIT 100) s', 'gpusort.enable_sort=on',
	 :'par', false, false, 1.5, NULL, 1),
	(15, 'main', format('gpu_topk_agg(x, 100), %s workers', :workers), 'int4', :rows,
	 'ORDER BY x LIMIT 100, node off', 'SELECT count(*) FROM (SELECT x FROM t ORDER BY x LIMIT 100) s',
	 'gpusort.enable_sort=off', 'gpu_topk_agg', 'SELECT cardinality(gpu_topk_agg(x, 100)) FROM t',
	 'gpusort.enable_sort=on', :'par', false, true, 1.5, NULL, 1);
-- --main-rows: only the rows named
SELECT :'main_rows' <> 'all' AS some_main_rows \gset
\if :some_main_rows
DELETE FROM bench_rows WHERE part = 'main' AND id <> ALL (string_to_array(:'main_rows', ',')::int[]);
\endif
\endif

\if :guard
-- each kind's query over each shape: %1$s table, %2$s columns, %3$s ORDER BY keys,
-- %4$s what the outer query reads (the payload where there is one), %5$s the keys
-- without direction, %6$s the join's other table, %7$s the join condition
INSERT INTO bench_rows
SELECT 100 + row_number() OVER (ORDER BY sz.n, k.i, sh.i), 'guard', k.kind, sh.shape, sz.n,
	   'node off', f.q, 'gpusort.enable_sort=off', 'node on', f.q, 'gpusort.enable_sort=on',
	   :'serial' || k.rs, false, false, NULL, NULL, greatest(1, :guard_work / sz.n)
FROM unnest(string_to_array(:'guard_sizes', ',')::bigint[]) sz(n)
CROSS JOIN (VALUES
	(1, 'ORDER BY', 'SELECT count(*), %4$s FROM (SELECT %2$s FROM %1$s ORDER BY %3$s) s', ''),
	(2, 'window', 'SELECT max(rn), %4$s FROM (SELECT row_number() OVER (ORDER BY %3$s) rn, %2$s FROM %1$s) s', ''),
	(3, 'merge join', 'SELECT count(*), %4$s FROM (SELECT a.* FROM %1$s a JOIN %6$s b ON %7$s) s',
	 ';enable_hashjoin=off;enable_nestloop=off'),
	(4, 'GROUP BY', 'SELECT count(*), sum(c), sum(u) FROM (SELECT %5$s, count(*) c, %4$s u FROM %1$s GROUP BY %5$s ORDER BY %3$s) s',
	 ';enable_hashagg=off'),
	(5, 'DISTINCT', 'SELECT count(*), %4$s FROM (SELECT DISTINCT ON (%5$s) %2$s FROM %1$s ORDER BY %3$s) s',
	 ';enable_hashagg=off'),
	(6, 'LIMIT 100', 'SELECT count(*), %4$s FROM (SELECT %2$s FROM %1$s ORDER BY %3$s LIMIT 100) s', '')) k(i, kind, tmpl, rs)
CROSS JOIN (VALUES
	(1, 'int4', 'x', 'x', 'count(*)', 'x', 'a.x = b.x'),
	(2, 'int4, int8', 'k, y', 'k, y', 'count(*)', 'k, y', 'a.k = b.k AND a.y = b.y'),
	(3, 'float8', 'f', 'f', 'count(*)', 'f', 'a.f = b.f'),
	(4, 'int4 + text payload', 'x, p', 'x', 'sum(length(p))', 'x', 'a.x = b.x'),
	(5, 'int4 DESC NULLS FIRST', 'xn', 'xn DESC NULLS FIRST', 'count(*)', 'xn', 'a.xn = b.xn'),
	(6, 'numeric(15,2)', 'm', 'm', 'count(*)', 'm', 'a.m = b.m'),
	(7, 'text', 's', 's', 'count(*)', 's', 'a.s = b.s'),
	(8, 'text under C, numeric(15,2)', 'cat, m', 'cat, m', 'count(*)', 'cat, m', 'a.cat = b.cat AND a.m = b.m')) sh(i, shape, cols, ord, use, grp, jcond)
CROSS JOIN LATERAL (SELECT format(k.tmpl, 'g_' || sz.n, sh.cols, sh.ord, sh.use, sh.grp, 'h_' || sz.n, sh.jcond) AS q) f;
\endif

-- settings 'name=value;...', each for the session
CREATE FUNCTION pg_temp.apply(settings text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	kv text;
BEGIN
	FOREACH kv IN ARRAY string_to_array(settings, ';') LOOP
		IF kv <> '' THEN
			PERFORM set_config(trim(split_part(kv, '=', 1)), trim(split_part(kv, '=', 2)), false);
		END IF;
	END LOOP;
END $$;

-- what an EXPLAIN ANALYZE shows: the sort nodes (PostgreSQL's and gpusort's),
-- the node's devices, parallel workers, and sorts that went past work_mem
CREATE FUNCTION pg_temp.summarize(plan text, OUT summary text, OUT sorted bool, OUT node bool) LANGUAGE plpgsql AS $$
DECLARE
	sorts int;
	nodes int;
	devs text;
	planned int;
	launched int;
BEGIN
	SELECT count(*) FILTER (WHERE l ~ '^\s*(->\s+)?(Incremental )?Sort( \(|$)'),
		   count(*) FILTER (WHERE l ~ '^\s*(->\s+)?(Parallel )?Custom Scan \(gpusort\)')
	INTO sorts, nodes FROM regexp_split_to_table(plan, E'\n') l;
	SELECT string_agg(DISTINCT m[1], ', ') INTO devs
	FROM regexp_matches(plan, 'Sort Device: (cpu|gpu \d+|tuplesort)', 'g') m;
	SELECT sum(m[1]::int) INTO planned FROM regexp_matches(plan, 'Workers Planned: (\d+)', 'g') m;
	SELECT sum(m[1]::int) INTO launched FROM regexp_matches(plan, 'Workers Launched: (\d+)', 'g') m;
	summary := concat_ws(', ',
		CASE WHEN nodes > 0 THEN format('gpusort x%s', nodes) || coalesce(' (' || devs || ')', '') END,
		CASE WHEN sorts > 0 THEN format('Sort x%s', sorts) END,
		CASE WHEN planned IS NOT NULL THEN format('workers %s/%s', launched, planned) END,
		CASE WHEN plan ~ 'Partial Aggregate' THEN 'partial aggregates' END,
		CASE WHEN plan ~ 'gpu_sort_agg\(' THEN 'gpu_sort_agg' END,
		CASE WHEN plan ~ '(Disk: |external (merge|sort)|tuplesort \(past work_mem\))' THEN 'SPILLED past work_mem' END);
	sorted := sorts + nodes > 0;
	node := nodes > 0;
	IF summary = '' THEN
		summary := 'no sort node';
	END IF;
END $$;

-- One row: each variant once under EXPLAIN ANALYZE (warm-up and plan), then
-- runs rounds; a round runs the variants in turn, reps times, forwards and
-- backwards by turns, each execution timed on its own (so that a burst of
-- load on the machine falls on all of them alike), and records each
-- variant's mean.  The answer of each variant's
-- last execution is kept.  An error is recorded and ends the row only.
CREATE FUNCTION pg_temp.run_row(rid int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	r bench_rows;
	v variants;
	vs variants[] := '{}';
	total float8[];
	d text;
	i int;
	j int;
	vno int := 0;
	t timestamptz;
	line text;
	plan text;
	s record;
	res record;
	runs int;
BEGIN
	SELECT * INTO r FROM bench_rows WHERE id = rid;
	runs := current_setting(CASE r.part WHEN 'guard' THEN 'bench.guard_runs' ELSE 'bench.runs' END)::int;
	RAISE NOTICE 'bench: % % (%, % rows)', r.part, r.kind, r.shape, r.n;
	IF NOT r.per_device THEN
		INSERT INTO variants VALUES (r.id, vno, 'base', r.base_label, NULL, r.base_q, r.base_set);
		vno := vno + 1;
	END IF;
	FOREACH d IN ARRAY string_to_array(current_setting(CASE r.part WHEN 'guard' THEN 'bench.guard_devices'
															ELSE 'bench.devices' END), ',') LOOP
		IF r.per_device THEN
			INSERT INTO variants VALUES (r.id, vno, 'base', r.base_label, d, r.base_q, r.base_set || ';gpusort.device=' || d);
			vno := vno + 1;
		END IF;
		INSERT INTO variants VALUES (r.id, vno, 'cand', r.cand_label, d, r.cand_q, r.cand_set || ';gpusort.device=' || d);
		vno := vno + 1;
	END LOOP;
	BEGIN
		PERFORM pg_temp.apply(r.row_set);
		-- a variant that fails here (no GPU, say) is left out; the others go on
		FOR v IN SELECT * FROM variants WHERE variants.rid = r.id ORDER BY variants.vno LOOP
			BEGIN
				PERFORM pg_temp.apply(v.settings);
				plan := '';
				FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF'
						|| CASE WHEN r.fn_row THEN ', VERBOSE' ELSE '' END || ') ' || v.q LOOP
					plan := plan || line || E'\n';
				END LOOP;
				s := pg_temp.summarize(plan);
				IF r.fn_row AND (v.role = 'cand' OR r.per_device) THEN
					s.summary := s.summary || coalesce((SELECT '; last sort: ' || device || ' ' || algorithm
														FROM gpusort_last_run()), '');
				END IF;
				INSERT INTO plans VALUES (r.id, v.vno, plan, s.summary, s.sorted, s.node, NULL);
				vs := vs || v;
			EXCEPTION WHEN others THEN
				INSERT INTO row_errors VALUES (r.id, v.vno, SQLERRM);
				RAISE NOTICE 'bench: error (%): %', coalesce(v.device, v.label), SQLERRM;
			END;
		END LOOP;
		FOR i IN 1 .. runs LOOP
			total := array_fill(0::float8, ARRAY[vno]);
			FOR j IN 1 .. r.reps LOOP
				-- the order turns round each time, so that no variant always follows another
				FOREACH v IN ARRAY CASE (i + j) % 2 WHEN 0 THEN vs
										ELSE ARRAY(SELECT x FROM unnest(vs) x ORDER BY x.vno DESC) END LOOP
					PERFORM pg_temp.apply(v.settings);
					t := clock_timestamp();
					EXECUTE v.q INTO res;	-- (EXECUTE runs it whole: parallel workers allowed)
					total[v.vno + 1] := total[v.vno + 1] + extract(epoch FROM clock_timestamp() - t) * 1000;
					IF i = runs AND j = r.reps THEN
						UPDATE plans SET result = res::text WHERE plans.rid = r.id AND plans.vno = v.vno;
					END IF;
				END LOOP;
			END LOOP;
			INSERT INTO runs SELECT r.id, x.vno, i, total[x.vno + 1] / r.reps FROM unnest(vs) x;
		END LOOP;
		-- the row's best times, on stderr as it ends (a run cut short still shows them)
		RAISE NOTICE 'bench:   best ms: %',
			(SELECT string_agg(format('%s%s %s', x.label, coalesce(' ' || x.device, ''),
									  (SELECT round(min(u.ms)::numeric, 3) FROM runs u WHERE u.rid = x.rid AND u.vno = x.vno)),
							   ', ' ORDER BY x.vno)
			 FROM variants x WHERE x.rid = r.id);
	EXCEPTION WHEN others THEN
		INSERT INTO row_errors VALUES (r.id, NULL, SQLERRM);
		RAISE NOTICE 'bench: error: %', SQLERRM;
	END;
	-- back to the session's settings
	FOR line IN SELECT DISTINCT trim(split_part(kv, '=', 1))
				FROM variants, unnest(string_to_array(r.row_set || ';' || settings, ';')) kv
				WHERE variants.rid = r.id AND kv <> '' LOOP
		EXECUTE format('RESET %s', line);
	END LOOP;
END $$;

SELECT format('SELECT pg_temp.run_row(%s)', id) FROM bench_rows ORDER BY id \gexec

-- per row and device: the baseline and the measured variant, best and median of the runs
CREATE FUNCTION pg_temp.ms(x float8) RETURNS text LANGUAGE sql AS $$
	SELECT CASE WHEN x IS NULL THEN '-' WHEN x >= 100 THEN round(x::numeric)::text
				WHEN x >= 1 THEN round(x::numeric, 1)::text ELSE round(x::numeric, 3)::text END $$;
CREATE FUNCTION pg_temp.x(x float8) RETURNS text LANGUAGE sql AS $$
	SELECT coalesce(to_char(x, 'FM9990.00') || 'x', '-') $$;
CREATE TEMP VIEW timing AS
	SELECT rid, vno, min(ms) AS best, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS med FROM runs GROUP BY rid, vno;
CREATE TEMP VIEW result AS
SELECT r.*, c.device,
	   CASE c.device WHEN 'gpu' THEN r.target_gpu WHEN 'cpu' THEN r.target_cpu END AS target,
	   tb.best AS base_best, tb.med AS base_med, tc.best AS cand_best, tc.med AS cand_med,
	   tb.best / nullif(tc.best, 0) AS ratio, tb.med / nullif(tc.med, 0) AS ratio_med,
	   pb.summary AS base_plan, pc.summary AS cand_plan,
	   -- a function's row has no sort to check, but for a baseline that is ORDER BY
	   (r.fn_row AND r.per_device OR coalesce(pb.sorted, false)) AS base_sorts,
	   (r.fn_row OR coalesce(pc.sorted, false)) AS cand_sorts, r.fn_row OR coalesce(pc.node, false) AS node_used,
	   pb.result IS NOT DISTINCT FROM pc.result AS same_answer, e.message AS error
FROM bench_rows r
JOIN variants c ON c.rid = r.id AND c.role = 'cand'
JOIN variants b ON b.rid = r.id AND b.role = 'base' AND (b.device = c.device OR b.device IS NULL)
LEFT JOIN timing tb ON tb.rid = r.id AND tb.vno = b.vno
LEFT JOIN timing tc ON tc.rid = r.id AND tc.vno = c.vno
LEFT JOIN plans pb ON pb.rid = r.id AND pb.vno = b.vno
LEFT JOIN plans pc ON pc.rid = r.id AND pc.vno = c.vno
LEFT JOIN LATERAL (SELECT string_agg(DISTINCT message, '; ') AS message FROM row_errors e
				   WHERE e.rid = r.id AND (e.vno IS NULL OR e.vno IN (b.vno, c.vno))) e ON true;
CREATE TEMP VIEW verdict AS
SELECT result.*,
	   CASE WHEN error IS NOT NULL THEN 'error: ' || error
			WHEN id = 13 THEN 'reference: no sort'
			WHEN NOT base_sorts THEN 'invalid: no sort in the baseline''s plan'
			WHEN NOT cand_sorts THEN 'invalid: no sort in the plan'
			WHEN NOT same_answer THEN 'ANSWERS DIFFER'
			WHEN part = 'guard' THEN CASE WHEN ratio >= 0.95 THEN 'ok'
										  WHEN node_used THEN '**below 0.95x**'
										  ELSE 'below 0.95x, same plan (noise)' END
			WHEN NOT node_used THEN '**missed**: the node is not in the plan (the ratio is the spread between runs)'
			WHEN target IS NULL THEN CASE WHEN ratio < 0.95 THEN 'no target; **below 0.95x**' ELSE 'no target' END
			WHEN ratio >= target THEN 'met'
			ELSE '**missed**' || CASE WHEN ratio < 0.95 THEN ', below 0.95x' ELSE '' END END AS verdict
FROM result;

SELECT 'md', format('| %s: %s vs %s | %s | %s (%s) | %s (%s) | %s (%s) | %s | %s | %s | %s |',
					kind, cand_label, base_label, device, pg_temp.ms(base_best), pg_temp.ms(base_med),
					pg_temp.ms(cand_best), pg_temp.ms(cand_med), pg_temp.x(ratio), pg_temp.x(ratio_med),
					coalesce(target || 'x', '-'), verdict, base_plan, cand_plan)
FROM verdict WHERE part = 'main' ORDER BY id, device;
SELECT 'met', count(*) FILTER (WHERE verdict = 'met'), count(*) FILTER (WHERE target IS NOT NULL)
FROM verdict WHERE part = 'main';
SELECT 'guard', format('| %s | %s | %s | %s | %s (%s) | %s (%s) | %s (%s) | %s | %s |',
					   kind, shape, n, device, pg_temp.ms(base_best), pg_temp.ms(base_med),
					   pg_temp.ms(cand_best), pg_temp.ms(cand_med), pg_temp.x(ratio), pg_temp.x(ratio_med), cand_plan, verdict)
FROM verdict WHERE part = 'guard' ORDER BY n, device, id;
SELECT 'below', count(*) FILTER (WHERE verdict NOT LIKE 'ok' AND verdict NOT LIKE '%same plan%'), count(*),
	   count(*) FILTER (WHERE verdict LIKE '%same plan%'),
	   coalesce(string_agg(format('%s / %s / %s rows / %s: %s (%s)', kind, shape, n, device, pg_temp.x(ratio), verdict), '; '
						   ORDER BY id, device) FILTER (WHERE verdict <> 'ok' AND verdict NOT LIKE '%same plan%'), '')
FROM verdict WHERE part = 'guard';
SELECT 'pg', version();
SELECT 'gpu', format('%s (compute capability %s, %s MB, %s SMs)', name, compute_capability, memory_total_mb, multiprocessors)
FROM gpusort_devices();
SELECT 'info', format('built with CUDA: %s, GPU usable: %s%s, mode: %s', built_with_cuda, gpu_usable,
					  coalesce(' (' || reason || ')', ''), mode)
FROM gpusort_info();
SELECT 'devices', current_setting('bench.devices'), current_setting('bench.guard_devices');
SELECT 'settings', concat_ws(', ', 'work_mem = ' || current_setting('work_mem'),
							 'shared_buffers = ' || current_setting('shared_buffers'),
							 'max_worker_processes = ' || current_setting('max_worker_processes'),
							 'max_parallel_workers = ' || current_setting('max_parallel_workers'),
							 'gpusort.sort_node_min_rows = ' || current_setting('gpusort.sort_node_min_rows', true));

-- every timed run, and every plan
\pset format csv
\pset tuples_only off
\o :csv
SELECT r.id AS row_id, r.part, r.kind, r.shape, r.n AS rows, v.role, v.label AS variant,
	   coalesce(v.device, '') AS device, x.run, round(x.ms::numeric, 4) AS ms, r.reps
FROM runs x JOIN bench_rows r ON r.id = x.rid JOIN variants v ON v.rid = x.rid AND v.vno = x.vno
ORDER BY r.id, x.run, v.vno;
\o
\pset format unaligned
\pset tuples_only on
\o :plans
SELECT '# Plans of bench/sql_sort_everywhere.sh (EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) of the warm-up run)';
SELECT format(E'\n## %s: %s, %s, %s rows, device %s\n\nquery: `%s`  \nsettings: `%s`  \nanswer: %s\n\n```\n%s```',
			  r.kind, v.label, r.shape, r.n, coalesce(v.device, '(any)'), v.q, r.row_set || ';' || v.settings,
			  coalesce(p.result, '-'), coalesce(p.plan, '(none: ' || coalesce(e.message, 'not run') || E')\n'))
FROM bench_rows r JOIN variants v ON v.rid = r.id
LEFT JOIN plans p ON p.rid = v.rid AND p.vno = v.vno
LEFT JOIN LATERAL (SELECT string_agg(message, '; ') AS message FROM row_errors e
				   WHERE e.rid = r.id AND (e.vno IS NULL OR e.vno = v.vno)) e ON true
ORDER BY r.id, v.vno;
\o
SQL
gs_stop_cluster

lines() { grep "^$1|" "$raw" | cut -d'|' -f2- || true; }
devices=$(lines devices | cut -d'|' -f1)
guard_devices=$(lines devices | cut -d'|' -f2)
{
	gs_bench_header "Sort everywhere: gpusort's sort node against PostgreSQL's Sort, in one session" "$raw"
	echo "- how: bench/sql_sort_everywhere.sh --rows $rows --runs $runs --devices $devices --workers $workers" \
		"--work-mem $work_mem --guard-sizes $guard_sizes --guard-work $guard_work --guard-runs $guard_runs --guard-devices $guard_devices --parts $parts"
	echo "- settings: $(lines settings); every row serial (max_parallel_workers_per_gather = 0) but the"
	echo "  ones that name workers (max_parallel_workers_per_gather = $workers, parallel_setup_cost ="
	echo "  parallel_tuple_cost = 0, t's parallel_workers = $workers); work_mem keeps every sort in memory on"
	echo "  both sides (a plan whose sort went past it says SPILLED)."
	echo "- timing: one psql session; each variant once under EXPLAIN ANALYZE (the warm-up; the plans are in"
	echo "  $(basename "$plans")), then rounds in which the variants of a row run in turn; ms of the whole"
	echo "  statement (clock_timestamp in plpgsql), best of the rounds (median in parentheses); every round"
	echo "  in $(basename "$csv")."
	echo "  Ratios are baseline / measured: above 1 the measured variant is faster. Queries return one row."
	[ "$main" = false ] || echo "- data: t and t2, $rows rows each of x int4 uniform random (setseed 0.5)."
	echo
	if [ "$main" = true ]; then
		echo "## The figures ($rows rows)"
		echo
		echo "| query: measured vs baseline | device | baseline ms | measured ms | ratio | target | verdict | plan: baseline | plan: measured |"
		echo "| --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- |"
		lines md
		echo
		lines met | awk -F'|' '{ printf "Targets met: %s of %s.\n", $1, $2 }'
		echo
	fi
	if [ "$guard" = true ]; then
		echo "## The guard: no shape below 0.95x of the node off"
		echo
		echo "Tables g_N, h_N of N rows: x int4, k int4 in [0, 1000), y int8, f float8, xn (x with 1% NULLs),"
		echo "p text (32 characters); each timed round repeats the query max(1, $guard_work / N) times and"
		echo "reports the time of one, best of $guard_runs rounds (median in parentheses). Shapes: keys x; k, y;"
		echo "f; x with p carried through; xn DESC NULLS FIRST (the merge join joins on xn, ascending); m numeric(15,2);"
		echo "s text (8-48 characters, a third sharing 24, the database's collation); cat (100 categories under C), m."
		echo "Devices: $guard_devices."
		echo
		echo "| kind | shape | rows | device | node off ms | node on ms | off / on | plan, node on | flag |"
		echo "| --- | --- | ---: | --- | ---: | ---: | ---: | --- | --- |"
		lines guard
		echo
		lines below | awk -F'|' '{ printf "Guard: %s of %s shapes flagged%s\n", $1, $2, ($4 == "" ? "." : ": " $4);
			printf "(%s more below 0.95x ran the same plan with the node on and off: the spread between runs.)\n", $3 }'
	fi
} >"$md"
rm -f "$raw"
gs_log "wrote $md, $csv, $plans"
cat "$md"
