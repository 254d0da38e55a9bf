# scripts/lib.sh: what demo.sh, test.sh, bench/sql_bench.sh and .ci/run share
# (source it, bash): find or install PostgreSQL 15, build and install gpusort,
# and run a throwaway cluster in a temporary directory on a unix socket.
#
# PostgreSQL refuses to run as root, so as root the cluster belongs to an
# unprivileged user: postgres or pgrun when they exist (Debian's packages and
# shared/tools/pg-bundle.sh make them), else a gpusort user made here.  The
# clients (psql, pg_regress) connect over the socket as the cluster's
# superuser and may run as anybody.

GS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GS_SUDO=
[ "$(id -u)" -eq 0 ] || GS_SUDO=sudo

gs_log() { printf '== %s\n' "$*" >&2; }

# gs_progress WHAT COMMAND...: runs COMMAND; while it runs, a line
# "== WHAT: still running (N s)" every GS_PROGRESS_S seconds (default 30) on
# stderr, so that a long step (a CUDA build, PostgreSQL's suite) shows it is
# alive.  Returns COMMAND's status.
gs_progress() {
	local what=$1 ticker rc=0
	shift
	(
		start=$SECONDS nap=
		trap 'kill $nap 2>/dev/null; exit 0' TERM
		while :; do
			sleep "${GS_PROGRESS_S:-30}" >/dev/null 2>&1 &
			nap=$!
			wait $nap
			gs_log "$what: still running ($((SECONDS - start)) s)"
		done
	) >/dev/null &
	ticker=$!
	"$@" || rc=$?
	kill "$ticker" 2>/dev/null
	wait "$ticker" 2>/dev/null || true
	return $rc
}

# bc(1) for the scripts' arithmetic where it is not installed (the GPU host's bare
# image): reads one expression like bc does, "scale=N;" included, with awk.  Without
# a scale the result is truncated to an integer, as bc's default scale 0 does;
# comparisons print 1 or 0.
if ! type -P bc >/dev/null 2>&1; then
	bc() {
		awk '{
			expr = $0; scale = 0
			if (match(expr, /scale *= *[0-9]+ *;/)) {
				s = substr(expr, RSTART, RLENGTH); gsub(/[^0-9]/, "", s); scale = s + 0
				expr = substr(expr, RSTART + RLENGTH)
			}
			cmd = "awk -v OFMT=%.10f \"BEGIN { print (" expr ") }\""
			cmd | getline v; close(cmd)
			if (expr ~ /[<>=]/) { print v; next }
			f = 10 ^ scale; v = (v < 0 ? -int(-v * f) : int(v * f)) / f
			printf "%." scale "f\n", v
		}'
	}
fi

# What the build needs of the PostgreSQL whose pg_config is on PATH: its server
# headers (postgres.h; not with GS_PREBUILT=1, which compiles nothing) and
# PGXS's makefile.  Prints those of them that are missing, one a line; nothing
# when the build has them.
gs_pg_build_missing() {
	local f
	for f in "$(pg_config --includedir-server 2>/dev/null)/postgres.h" "$(pg_config --pgxs 2>/dev/null)"; do
		[ "${GS_PREBUILT:-0}" = 1 ] && [ "${f##*/}" = postgres.h ] && continue
		[ -f "$f" ] || echo "$f"
	done
}

# gs_apt_install WHY PACKAGE...: installs the packages with apt (as root, or
# with sudo), saying why.
gs_apt_install() {
	local why=$1
	shift
	gs_log "installing $* with apt ($why)"
	$GS_SUDO apt-get update -qq &&
		$GS_SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# pg_config on PATH (an existing PostgreSQL, or the GPU host's bundle) wins;
# otherwise Debian's PostgreSQL 15 is installed with apt.  The build needs
# that PostgreSQL's server headers and PGXS (gs_pg_build_missing): when one is
# missing, a Debian PostgreSQL N (its headers belong in
# /usr/include/postgresql/N/server) gets postgresql-server-dev-N with apt;
# elsewhere, or when that did not bring them, one line says what to install
# and this returns 1.
gs_ensure_postgres() {
	local major missing
	if ! command -v pg_config >/dev/null 2>&1; then
		command -v apt-get >/dev/null 2>&1 ||
			{ echo "no pg_config on PATH and no apt-get: install PostgreSQL 15 and its server headers" >&2; return 1; }
		gs_apt_install "no pg_config on PATH" postgresql-15 postgresql-server-dev-15 build-essential || return 1
		[ -n "$(type -P pg_config)" ] || PATH=/usr/lib/postgresql/15/bin:$PATH
	fi
	major=$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	missing=$(gs_pg_build_missing)
	if [ -n "$missing" ] && command -v apt-get >/dev/null 2>&1 &&
		[ "$(pg_config --includedir-server)" = "/usr/include/postgresql/$major/server" ]; then
		gs_apt_install "$(pg_config --version) lacks ${missing//$'\n'/ }" "postgresql-server-dev-$major" || true
		missing=$(gs_pg_build_missing)
	fi
	if [ -n "$missing" ]; then
		echo "$(pg_config --version) ($(type -P pg_config)) has no ${missing//$'\n'/ }: install its server development files" \
			"(Debian, Ubuntu: apt-get install postgresql-server-dev-$major; RPM: postgresql$major-devel)" >&2
		return 1
	fi
	if ! command -v make >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
		gs_apt_install "no make or gcc" build-essential || return 1
	fi
	# initdb, pg_ctl and postgres live in the server's bindir, not always on PATH
	PATH=$(pg_config --bindir):$PATH
	export PATH
	gs_log "using $(pg_config --version) from $(pg_config --bindir)"
}

# The folder of PostgreSQL's source tarballs (scripts/pg-build.sh,
# scripts/pg-regress-suite.sh): GS_PG_SRC, else the first shared/pg-src beside
# the clone or beside one of its parent folders, else ../shared/pg-src.
gs_pg_src_dir() {
	local dir=$GS_ROOT
	if [ -n "${GS_PG_SRC:-}" ]; then echo "$GS_PG_SRC"; return; fi
	while [ "$dir" != / ]; do
		dir=$(dirname "$dir")
		[ -d "$dir/shared/pg-src" ] && { echo "$dir/shared/pg-src"; return; }
	done
	echo "$GS_ROOT/../shared/pg-src"
}

# gs_use_postgres [VERSION]: the PostgreSQL to build and test against, first
# on PATH (from the PATH this script started with, so it can be called again).
#   (none)   pg_config on PATH, else Debian's PostgreSQL 15 (gs_ensure_postgres)
#   15, 16.. that major version: pg_config on PATH when it is one, else
#            /usr/lib/postgresql/N/bin when installed, else 15 from Debian's
#            packages and others from source (scripts/pg-build.sh, cached)
#   18.6     that release from source (scripts/pg-build.sh, cached)
# Returns 3 when a version from source has no source tarball to build from.
GS_PATH0=${GS_PATH0:-$PATH}
gs_use_postgres() {
	local want=${1:-} bindir
	PATH=$GS_PATH0
	if [ -n "$want" ] && [ "$want" = "${want%%.*}" ]; then
		if command -v pg_config >/dev/null 2>&1 &&
			[ "$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')" = "$want" ]; then
			want=
		elif [ -x "/usr/lib/postgresql/$want/bin/pg_config" ] && [ -f "$(/usr/lib/postgresql/"$want"/bin/pg_config --pgxs)" ]; then
			PATH=/usr/lib/postgresql/$want/bin:$PATH
			want=
		elif [ "$want" = 15 ]; then
			PATH=/usr/lib/postgresql/15/bin:$PATH	# after the install below
			want=
		fi
	fi
	if [ -n "$want" ]; then
		bindir=$(bash "$GS_ROOT/scripts/pg-build.sh" "$want") || return $?
		PATH=$bindir:$PATH
	fi
	export PATH
	gs_ensure_postgres
}

# Whether make with these arguments builds with CUDA: CUDA=1 or CUDA=0 among
# them or in the environment, else when the Makefile's NVCC exists.
gs_cuda_build() {
	local arg cuda=${CUDA:-} nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
	for arg in "$@"; do
		case $arg in
		CUDA=*) cuda=${arg#CUDA=} ;;
		NVCC=*) nvcc=${arg#NVCC=} ;;
		esac
	done
	[ -n "$cuda" ] || { [ -x "$nvcc" ] && cuda=1; }
	[ "$cuda" = 1 ]
}

# Builds (with CUDA when nvcc is found, see the Makefile) and installs.
# Extra arguments go to make, e.g. CUDA=0.
gs_build_install() {
	local jobs
	if [ "${GS_PREBUILT:-0}" = 1 ]; then
		# artifacts built on another machine of the same PostgreSQL (scripts/gpu-host.sh
		# --prebuilt): install the files `make install` would, without make, whose
		# timestamps of copied files could start a rebuild
		gs_log "installing the prebuilt module into $(pg_config --pkglibdir)"
		[ -f "$GS_ROOT/gpusort.so" ] || { echo "GS_PREBUILT=1 but no gpusort.so in $GS_ROOT" >&2; return 1; }
		# the install and upgrade scripts are built from sql/ (awk only, nothing compiles)
		make -C "$GS_ROOT" -s sql-scripts "$@"
		$GS_SUDO install -m 755 "$GS_ROOT/gpusort.so" "$(pg_config --pkglibdir)/"
		$GS_SUDO install -m 644 "$GS_ROOT/gpusort.control" "$GS_ROOT"/sql/gpusort--*.sql \
			"$(pg_config --sharedir)/extension/"
		return 0
	fi
	jobs=$(nproc 2>/dev/null || echo 2)
	if gs_cuda_build "$@"; then
		gs_log "building gpusort with CUDA (nvcc: a minute or more; make CUDA=0 builds for the CPU alone)"
	else
		gs_log "building gpusort"
	fi
	gs_progress "building gpusort" make -C "$GS_ROOT" -s -j"$jobs" "$@"
	gs_log "installing into $(pg_config --pkglibdir)"
	if [ -w "$(pg_config --pkglibdir)" ]; then
		make -C "$GS_ROOT" -s install "$@"
	else
		$GS_SUDO env PATH="$PATH" make -C "$GS_ROOT" -s install "$@"
	fi
}

# Starts a throwaway cluster and exports PGHOST, PGPORT, PGUSER, PGDATABASE
# for the clients.  Extra arguments are server settings (-c name=value).
# The cluster runs gpusort in server mode (shared_preload_libraries =
# 'gpusort': one GPU server process for every backend) unless GS_SERVER_MODE=0,
# which gives the per-backend mode.
# gs_stop_cluster (set as an EXIT trap here) stops it and removes it.
# With GS_KEEP_PGDIR set, the cluster lives in that folder instead: made
# there the first time (initdb), started again as it is later, and stopped
# but kept by gs_stop_cluster (a loaded benchmark database across runs).
# The user that servers run as, since PostgreSQL refuses root: as root,
# postgres or pgrun where one exists, else a system user gpusort (made here);
# sets GS_OWNER and GS_RUN (the command prefix, gs_as_owner) for it.  Not
# root: the caller, GS_RUN empty.
gs_server_user() {
	GS_RUN=()
	GS_OWNER=
	[ "$(id -u)" -eq 0 ] || return 0
	for GS_OWNER in postgres pgrun; do
		id "$GS_OWNER" >/dev/null 2>&1 && break
		GS_OWNER=
	done
	if [ -z "$GS_OWNER" ]; then
		GS_OWNER=gpusort
		id "$GS_OWNER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/bash "$GS_OWNER"
	fi
	GS_RUN=(gs_as_owner)
}

gs_start_cluster() {
	local owner
	# whether gs_stop_cluster keeps the folder, decided now: GS_KEEP_PGDIR may
	# be set for this call only (GS_KEEP_PGDIR=DIR gs_start_cluster), and gone
	# when the EXIT trap runs
	if [ -n "${GS_KEEP_PGDIR:-}" ]; then
		mkdir -p "$GS_KEEP_PGDIR"
		GS_PGDIR=$(cd "$GS_KEEP_PGDIR" && pwd)
		GS_PGDIR_KEPT=1
	else
		GS_PGDIR=$(mktemp -d /tmp/gpusort-pg.XXXXXX)
		GS_PGDIR_KEPT=0
	fi
	gs_server_user
	if [ -n "$GS_OWNER" ]; then
		owner=$GS_OWNER
		chown "$owner" "$GS_PGDIR"
	else
		owner=$(id -un)
	fi
	trap gs_stop_cluster EXIT

	if [ -f "$GS_PGDIR/data/PG_VERSION" ]; then
		gs_log "starting the kept cluster in $GS_PGDIR (server user $owner)"
	else
		gs_log "starting a $([ "$GS_PGDIR_KEPT" = 1 ] && echo "new, kept" || echo throwaway) cluster in $GS_PGDIR (server user $owner)"
		"${GS_RUN[@]}" initdb -D "$GS_PGDIR/data" -U gpusort -A trust -E UTF8 --no-locale \
			>"$GS_PGDIR/initdb.log" 2>&1 || { tail -20 "$GS_PGDIR/initdb.log" >&2; return 1; }
	fi
	"${GS_RUN[@]}" pg_ctl -D "$GS_PGDIR/data" -l "$GS_PGDIR/server.log" -w start \
		-o "-k '$GS_PGDIR' -p ${GS_PGPORT:-55432} -c listen_addresses='' -c jit=off $(gs_server_option) $*" >/dev/null ||
		{ tail -20 "$GS_PGDIR/server.log" >&2; return 1; }
	export PGHOST=$GS_PGDIR PGPORT=${GS_PGPORT:-55432} PGUSER=gpusort PGDATABASE=postgres
	# server mode: sorts do not wait while the GPU process starts (auto sorts on the
	# CPU meanwhile), so tests start once it is ready or has found no GPU (60 s at most)
	if [ "${GS_SERVER_MODE:-1}" != 0 ]; then
		for _ in $(seq 1 600); do
			[ "$(psql -X -At -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'gpusort GPU server'
				AND query LIKE 'GPU process %' AND query NOT LIKE '%: starting;%'" 2>/dev/null)" = 1 ] && break
			sleep 0.1
		done
	fi
}

# The server setting of gs_start_cluster's mode (see there).
gs_server_option() {
	[ "${GS_SERVER_MODE:-1}" = 0 ] || echo "-c shared_preload_libraries=gpusort"
}

# Runs a command as the cluster's owner (root only), keeping PATH and
# LD_LIBRARY_PATH (the GPU host's bundle needs both).
gs_as_owner() {
	if command -v runuser >/dev/null 2>&1; then
		runuser -u "$GS_OWNER" -- env PATH="$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" "$@"
	else
		su "$GS_OWNER" -s /bin/bash -c "$(printf '%q ' env PATH="$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" "$@")"
	fi
}

gs_stop_cluster() {
	if [ -n "${GS_PGDIR:-}" ] && [ -d "$GS_PGDIR/data" ]; then
		"${GS_RUN[@]}" pg_ctl -D "$GS_PGDIR/data" -m fast -w stop >/dev/null 2>&1 || true
		[ "${GS_PGDIR_KEPT:-0}" = 1 ] || rm -rf "$GS_PGDIR"
	fi
	GS_PGDIR=
}

# gs_rev_tree REV: the tree of the commit REV of this clone (git archive),
# unpacked once into $TMPDIR/gpusort-rev-SHA (kept, so that a later build
# there is incremental); sets GS_REV_DIR to it.  REV may also be a folder
# that holds such a tree (for a machine that has the files but no git
# history, e.g. `git archive REV | tar -x -C .gpurun/base` carried there): it
# is copied with its times into $TMPDIR/gpusort-tree-CKSUM, where the build
# of an earlier run stays valid.
gs_rev_tree() {
	local sha
	if [ -f "$1/Makefile" ] && [ -f "$1/gpusort.control" ]; then
		GS_REV_DIR=${TMPDIR:-/tmp}/gpusort-tree-$(cd "$1" && pwd | cksum | cut -d' ' -f1)
		mkdir -p "$GS_REV_DIR"
		cp -a "$1/." "$GS_REV_DIR/"
		gs_log "gpusort from the tree in $1, copied to $GS_REV_DIR"
		return 0
	fi
	sha=$(git -C "$GS_ROOT" rev-parse --verify --quiet "$1^{commit}") ||
		{ echo "$1 is no commit of $GS_ROOT and no gpusort tree" >&2; return 2; }
	GS_REV_DIR=${TMPDIR:-/tmp}/gpusort-rev-${sha:0:12}
	if [ ! -f "$GS_REV_DIR/Makefile" ]; then
		rm -rf "$GS_REV_DIR" && mkdir -p "$GS_REV_DIR"
		git -C "$GS_ROOT" archive "$sha" | tar -x -C "$GS_REV_DIR"
	fi
	gs_log "gpusort $1 ($sha) in $GS_REV_DIR"
}
