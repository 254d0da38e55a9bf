#!/bin/bash
# scripts/demo.sh: quick start 1.  Sets up what is missing (PostgreSQL 15 from
# apt, unless a pg_config is on PATH already), builds and installs gpusort,
# starts a throwaway cluster, sorts 10 million random int4 with gpu_sort and
# with PostgreSQL's own means, prints the times with gpu_sort's speed-up, and
# removes the cluster.  Every statement timed runs once before, untimed.
#
#   bash scripts/demo.sh            # make arguments pass through, e.g. CUDA=0
#   DEMO_ROWS=1000000 bash scripts/demo.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GS_ROOT"

rows=${DEMO_ROWS:-10000000}

gs_ensure_postgres
gs_build_install "$@"
gs_start_cluster

gs_log "sorting $rows random int4"
psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" <<'SQL'
\pset footer off
CREATE EXTENSION gpusort;
CREATE EXTENSION intarray;
SELECT setseed(0.5) \gset
CREATE TABLE demo AS
	SELECT (floor(random() * 4294967296) - 2147483648)::int4 AS x FROM generate_series(1, :rows);
CREATE TABLE demo_array AS SELECT array_agg(x) AS a FROM demo;

-- milliseconds one statement takes, run in this backend
CREATE FUNCTION pg_temp.ms(q text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
	t timestamptz := clock_timestamp();
BEGIN
	EXECUTE q;
	RETURN round((extract(epoch FROM clock_timestamp() - t) * 1000)::numeric, 1);
END $$;

\echo
SELECT (SELECT format('%s, %s GPU(s)', CASE WHEN gpu_usable THEN 'GPU usable' ELSE 'no GPU: ' || reason END,
					  device_count) FROM gpusort_info()) AS "gpusort sees",
	   current_setting('gpusort.device') AS "gpusort.device",
	   current_setting('work_mem') AS work_mem;

CREATE TEMP TABLE timings (n serial, what text, ms numeric, vs text, note text);
-- warm the caches, the memory paths and the GPU context (if any) with the
-- statements timed below, so that every row times a sort, not a first use
SELECT pg_temp.ms('SELECT cardinality(gpu_sort(a)) FROM demo_array') \gset
SELECT pg_temp.ms('SELECT cardinality(gpu_sort(array_agg(x))) FROM demo') \gset
INSERT INTO timings (what, ms, vs)
	SELECT 'gpu_sort(array_agg(x)) FROM demo', pg_temp.ms('SELECT cardinality(gpu_sort(array_agg(x))) FROM demo'),
		   'array_agg(x ORDER BY x) FROM demo';
INSERT INTO timings (what, ms, note)
	SELECT '  of which in the sort itself', round(total_ms::numeric, 1),
		   format('on %s (%s): copy in %s ms, sort %s ms, copy out %s ms, %s ms setting up (scratch memory); '
				  'the rest of the statement reads the table and collects the values (planned as gpu_sort_agg(x))',
				  device, algorithm, round(copy_in_ms::numeric, 1), round(sort_ms::numeric, 1),
				  round(copy_out_ms::numeric, 1),
				  round((total_ms - copy_in_ms - sort_ms - copy_out_ms)::numeric, 1))
	FROM gpusort_last_run();
INSERT INTO timings (what, ms, note)
	SELECT 'array_agg(x ORDER BY x) FROM demo', pg_temp.ms('SELECT cardinality(array_agg(x ORDER BY x)) FROM demo'),
		   'PostgreSQL''s own sort';
INSERT INTO timings (what, ms, vs)
	SELECT 'gpu_sort(a) on the stored array', pg_temp.ms('SELECT cardinality(gpu_sort(a)) FROM demo_array'),
		   'sort(a) on the stored array';
INSERT INTO timings (what, ms, note)
	SELECT 'sort(a) on the stored array', pg_temp.ms('SELECT cardinality(sort(a)) FROM demo_array'), 'intarray';
INSERT INTO timings (what, ms, note)
	SELECT 'cardinality(a) on the stored array', pg_temp.ms('SELECT cardinality(a) FROM demo_array'),
		   'reading the array alone: the floor under both';
SELECT format('sorting %s random int4 (milliseconds; speed-up: against the statement named in the note)', :rows) AS title \gset
\pset title :title
SELECT t.what, t.ms,
	   coalesce(round(r.ms / nullif(t.ms, 0), 1) || 'x', '') AS "speed-up",
	   coalesce(t.note, 'against ' || t.vs, '') AS note
FROM timings t LEFT JOIN timings r ON r.what = t.vs ORDER BY t.n;
\pset title

-- and the sort is right
SELECT gpu_sort(a) = (SELECT array_agg(x ORDER BY x) FROM demo) AS "gpu_sort(a) equals ORDER BY" FROM demo_array;
SQL

gs_stop_cluster
