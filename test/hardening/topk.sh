#!/bin/bash
# test/hardening/topk.sh: limited jobs (the first k of the order) through the GPU server.
#
#   test/hardening/topk.sh [--device cpu|gpu|auto] [--quick]
#
# With --device cpu the CPU stands in for a GPU in the server's worker threads
# (gpusort.server_cpu_device, a test build's: make INJECTION_POINTS=1), so that limited
# jobs take the server's path (the slot's limit, its device-memory reservation and
# transfer region, the worker's stream of the first k) on a machine without one; gpu and
# auto run on the real GPU.  In a throwaway cluster in server mode, with
# gpusort.device = gpu and PostgreSQL's own sort for the references
# (gpusort.enable_sort = off):
#  1. gpu_topk(a, k, descending) is ORDER BY x [DESC] LIMIT k of the same array for every
#     element type (NULLs, NaN, infinities, -0, many duplicates), both directions, k = 1,
#     2, 100, half the array, the non-NULL count - 1 and the length - 1 (limits the server
#     selects), the length and beyond (full sorts); every answer holding a value came from
#     the server (gpusort_last_run().device = gpu:0).  Arrays of an odd size (300007;
#     --quick 50003), and an int8 one of 1100003 (over one 8 MB chunk of the transfer
#     ring; k = 1 and its non-NULL count - 1) in both modes;
#  2. gpu_topk_agg(x, k [, descending]) is array_agg(x ORDER BY x [DESC])[1:k] (its
#     pruning sends limited jobs to the server);
#  3. a limited job reserves the select's device memory, not the sort's: under a session
#     limit (gpusort.max_device_memory = 18 MB) that the full sort of a 3*10^6 int4 array
#     exceeds (54000), gpu_topk(a, 10) of the same array runs on the server and is right.
# TAP on stdout.  Own throwaway cluster on GS_PGPORT (default 55600).  The data's seed is
# printed.
set -uo pipefail
device=gpu
quick=0
while [ $# -gt 0 ]; do
	case "$1" in
		--device) device=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		*) echo "usage: $0 [--device cpu|gpu|auto] [--quick]" >&2; exit 2 ;;
	esac
done
n=300007
[ "$quick" = 1 ] && n=50003

HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib.sh"
cd "$GS_ROOT"
source "$HERE/tap.bash"
export GS_SERVER_MODE=1
stand_in=()
[ "$device" = cpu ] && stand_in=(-c gpusort.server_cpu_device=on)
own_cluster 55600 -c shared_buffers=256MB "${stand_in[@]}"
trap 'gs_stop_cluster' EXIT
export PGOPTIONS="-c gpusort.device=gpu -c gpusort.enable_sort=off"

echo "# topk: device=$device n=$n"
q -c "CREATE EXTENSION IF NOT EXISTS gpusort" >/dev/null
state=$(q -c "SELECT state FROM gpusort_server() LIMIT 1")
if [ "$state" != ready ]; then
	skip "the server has no device ($(q -c "SELECT reason FROM gpusort_server() LIMIT 1")); --device cpu lets the CPU stand in (test builds)"
	finish
fi
pass "the server is ready on $(q -c "SELECT name FROM gpusort_server() LIMIT 1")"

seed=0.$((RANDOM % 9000 + 1000))
echo "# seed $seed"
Q_LIMIT=600 q >/dev/null <<-SQL
	SELECT setseed($seed);
	CREATE UNLOGGED TABLE td AS
	SELECT i,
		   CASE WHEN random() < 0.02 THEN NULL ELSE (random() * 600 - 300)::int2 END AS i2,
		   CASE WHEN random() < 0.02 THEN NULL ELSE (random() * 4e9 - 2e9)::int4 END AS i4,
		   CASE WHEN random() < 0.02 THEN NULL ELSE (random() * 1e18 - 5e17)::int8 END AS i8,
		   CASE WHEN random() < 0.02 THEN NULL WHEN random() < 0.01 THEN 'NaN'
				WHEN random() < 0.01 THEN '-0' WHEN random() < 0.005 THEN '-Infinity'
				ELSE (random() * 200 - 100)::float4 END AS f4,
		   CASE WHEN random() < 0.02 THEN NULL WHEN random() < 0.01 THEN 'NaN'
				WHEN random() < 0.01 THEN '-0' WHEN random() < 0.005 THEN 'Infinity'
				ELSE (random() - 0.5) * 1e10 END AS f8,
		   CASE WHEN random() < 0.02 THEN NULL WHEN random() < 0.001 THEN 'infinity'
				ELSE date '2000-01-01' + (random() * 20000)::int END AS d,
		   CASE WHEN random() < 0.02 THEN NULL WHEN random() < 0.001 THEN '-infinity'
				ELSE timestamp '2000-01-01' + random() * interval '9000 days' END AS ts,
		   CASE WHEN random() < 0.02 THEN NULL
				ELSE timestamptz '2000-01-01 00:00+00' + (random() * 1000)::int * interval '1 hour' END AS tz
	FROM generate_series(1, $n) i;
	CREATE UNLOGGED TABLE arrs AS
	SELECT array_agg(i2) AS i2, array_agg(i4) AS i4, array_agg(i8) AS i8, array_agg(f4) AS f4,
		   array_agg(f8) AS f8, array_agg(d) AS d, array_agg(ts) AS ts, array_agg(tz) AS tz
	FROM td;
	CREATE UNLOGGED TABLE big AS
	SELECT array_agg(CASE WHEN i % 1000 = 0 THEN NULL ELSE ((i::int8 * 2654435761) % 4294967291) * 1000003 END) AS a
	FROM generate_series(1, 1100003) i;

	-- the number of k cases, of answers other than ORDER BY ... LIMIT k's, and of answers
	-- holding a value that did not come from the server, for gpu_topk(a, k, d) with each k
	-- of ks (NULL: the default list) and both directions
	CREATE FUNCTION topk_cases(a anyarray, ks int[], OUT cases int, OUT wrong int, OUT off_server int)
	LANGUAGE plpgsql AS \$\$
	DECLARE
		total int := cardinality(a);
		nvalues int := (SELECT count(x)::int FROM unnest(a) x);
		k int;
		d bool;
		ok bool;
		got a%TYPE;
	BEGIN
		cases := 0; wrong := 0; off_server := 0;
		ks := coalesce(ks, ARRAY[1, 2, 100, total / 2, nvalues - 1, total - 1, total, total + 5]);
		FOREACH k IN ARRAY ks LOOP
			FOREACH d IN ARRAY ARRAY[false, true] LOOP
				-- a sort on the CPU first, so that gpusort_last_run() tells whether this one ran
				PERFORM set_config('gpusort.device', 'cpu', true);
				PERFORM gpu_sort('{2,1}'::int4[]);
				PERFORM set_config('gpusort.device', 'gpu', true);
				got := gpu_topk(a, k, d);
				IF EXISTS (SELECT 1 FROM unnest(got) x WHERE x IS NOT NULL) AND
				   (SELECT device FROM gpusort_last_run()) <> 'gpu:0' THEN
					off_server := off_server + 1;
				END IF;
				SELECT got = coalesce(array_agg(x ORDER BY o), '{}') INTO ok
				FROM (SELECT x, row_number() OVER () AS o
					  FROM (SELECT x FROM unnest(a) x
							ORDER BY CASE WHEN d THEN NULL ELSE x END, CASE WHEN d THEN x END DESC
							LIMIT k) l) s;
				cases := cases + 1;
				IF NOT ok THEN
					wrong := wrong + 1;
					RAISE NOTICE 'k = %, descending = %: differs from ORDER BY ... LIMIT', k, d;
				END IF;
			END LOOP;
		END LOOP;
	END
	\$\$;
SQL
rc=$?
ok $rc "setup: 8 arrays of $n elements and an int8 array of 1100003 (seed $seed)"
[ $rc = 0 ] || finish

# 1. gpu_topk against ORDER BY ... LIMIT, every type
for col in i2 i4 i8 f4 f8 d ts tz; do
	got=$(Q_LIMIT=600 q -F ' ' -c "SELECT * FROM topk_cases((SELECT $col FROM arrs), NULL)" 2>&1)
	read -r cases wrong off <<<"$got"
	[ -n "$cases" ] && [ "$cases" -gt 0 ] 2>/dev/null && [ "$wrong" = 0 ] && [ "$off" = 0 ]
	ok $? "gpu_topk of $col: $cases cases (k, direction), $wrong wrong, $off answers not from the server ($(echo "$got" | tr '\n' ' ' | head -c 200))"
done
got=$(Q_LIMIT=600 q -F ' ' -c "SELECT * FROM topk_cases((SELECT a FROM big),
	ARRAY[1, (SELECT count(x)::int - 1 FROM big, unnest(a) x)])" 2>&1)
read -r cases wrong off <<<"$got"
[ -n "$cases" ] && [ "$cases" -gt 0 ] 2>/dev/null && [ "$wrong" = 0 ] && [ "$off" = 0 ]
ok $? "gpu_topk of an int8 array over one chunk of the ring: $cases cases, $wrong wrong, $off not from the server ($(echo "$got" | tr '\n' ' ' | head -c 200))"

# 2. gpu_topk_agg, whose pruning runs limited jobs
got=$(Q_LIMIT=600 q -F ' ' -c "SELECT gpu_topk_agg(i4, 100) = (array_agg(i4 ORDER BY i4))[1:100],
	gpu_topk_agg(f8, 1000, true) = (array_agg(f8 ORDER BY f8 DESC))[1:1000],
	gpu_topk_agg(i2, 1) = (array_agg(i2 ORDER BY i2))[1:1],
	gpu_topk_agg(tz, 5000, true) = (array_agg(tz ORDER BY tz DESC))[1:5000]
	FROM td" 2>&1)
[ "$got" = "t t t t" ]
ok $? "gpu_topk_agg is array_agg(x ORDER BY x)[1:k] (int4 k=100, float8 desc k=1000, int2 k=1, timestamptz desc k=5000): $got"

# 3. the device memory a limited job reserves
got=$(Q_LIMIT=300 q -F ' ' 2>&1 <<-'SQL'
	CREATE TEMP TABLE m AS
	SELECT array_agg(((i::int8 * 48271) % 2147483647)::int4) AS a FROM generate_series(1, 3000000) i;
	CREATE FUNCTION pg_temp.full_sort_outcome() RETURNS text LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM gpu_sort(a) FROM m;
		RETURN 'full sort ran';
	EXCEPTION WHEN program_limit_exceeded THEN
		RETURN 'full sort over the limit';
	END
	$$;
	SET gpusort.max_device_memory = 18;
	SELECT gpu_topk(a, 10) = (SELECT array_agg(x ORDER BY x) FROM (SELECT x FROM unnest(a) x ORDER BY x LIMIT 10) l),
		   (SELECT device FROM gpusort_last_run())
	FROM m;
	SELECT pg_temp.full_sort_outcome();
SQL
)
[ "$(echo "$got" | tr '\n' ' ')" = "t gpu:0 full sort over the limit " ]
ok $? "under gpusort.max_device_memory = 18 MB a 3*10^6 int4 array's top 10 runs on the server, its full sort does not: $(echo "$got" | tr '\n' ' ')"

finish
