# gpusort: PGXS build of the extension plus the kernels/ library.
#
#   make                  build (with CUDA when $(NVCC) exists, else CPU only)
#   make CUDA=0           CPU-only build even where CUDA is installed
#   make install          install into the PostgreSQL that $(PG_CONFIG) names
#   make installcheck     pg_regress against a running server
#   make check-kernels    C tests of kernels/ (no PostgreSQL needed)
#   make INJECTION_POINTS=1   a test build: compiles in the fault injection of
#                         kernels/ and the server's injection points (scripts/test.sh
#                         and scripts/gpu-host.sh build this way; releases do not)
#
# CUDA_HOME, NVCC and CUDA_ARCH select the toolkit and the GPUs to build for.

EXTENSION = gpusort
EXTVERSION = 1.3
PREV_VERSION = 1.2

MODULE_big = gpusort
OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c))

# SQL scripts, as pgvector ships them: one install script per release and one
# update script per step.  Those of earlier releases are frozen as shipped
# (sql/gpusort--1.0.sql, --1.1.sql, --1.0--1.1.sql).  The current release's
# two are built from sql/$(EXTVERSION)/*.sql, in name order: what it adds to
# $(PREV_VERSION), appended to $(PREV_VERSION)'s install script for the new
# install and alone for the update.  A fragment therefore runs after
# $(PREV_VERSION)'s objects exist: it creates new objects and changes old ones
# with CREATE OR REPLACE or ALTER, never DROP (an update keeps every object,
# and with it the views and grants over it), except a monitoring function
# whose columns change (sql/1.3/server.sql), which is made again.  sql/expand.awk writes a
# fragment's per-type blocks once for each type.
SQL_FRAGMENTS = $(sort $(wildcard sql/$(EXTVERSION)/*.sql))
SQL_PREV = sql/$(EXTENSION)--$(PREV_VERSION).sql
SQL_INSTALL = sql/$(EXTENSION)--$(EXTVERSION).sql
SQL_UPDATE = sql/$(EXTENSION)--$(PREV_VERSION)--$(EXTVERSION).sql
DATA_built = $(SQL_INSTALL) $(SQL_UPDATE)
DATA = $(filter-out $(DATA_built),$(wildcard sql/$(EXTENSION)--*.sql))

TESTS = $(sort $(wildcard sql/[0-9]*.sql))
REGRESS = $(patsubst sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --load-extension=$(EXTENSION)

PG_CONFIG ?= pg_config

CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
CUDA ?= $(if $(wildcard $(NVCC)),1,0)
# sm_90 machine code (H100/H200) plus PTX so newer GPUs can JIT it.
CUDA_ARCH ?= -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -std=c++17 $(CUDA_ARCH) -Xcompiler -fPIC -Xcompiler -Wall --expt-relaxed-constexpr

# The sorting library: C sources always, CUDA sources only with CUDA=1;
# no_cuda.c stands in for the runtime when there is no CUDA.
KERNEL_C = $(filter-out kernels/no_cuda.c,$(wildcard kernels/*.c))
KERNEL_CU = $(wildcard kernels/*.cu)
ifeq ($(CUDA),1)
KERNEL_OBJS = $(KERNEL_C:.c=.o) $(KERNEL_CU:.cu=.o)
CUDA_LIBS = -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -lpthread -ldl -lrt
else
KERNEL_OBJS = $(KERNEL_C:.c=.o) kernels/no_cuda.o
CUDA_LIBS = -lpthread
endif
KERNEL_LIB = kernels/libgpusort.a

# Fault injection is for tests only, as PostgreSQL's USE_INJECTION_POINTS is:
# without INJECTION_POINTS=1 none of it is compiled.
INJECTION_POINTS ?= 0
ifeq ($(INJECTION_POINTS),1)
INJECTION_DEFS = -DGS_INJECTION_POINTS
endif

# Test hooks, for the C tests and benchmarks alone: the files that have
# them (gs_host_sort_set_transfer, gs_quick_set_depth_limits) are compiled
# again with -DGS_TEST_HOOKS into the copy of the library those programs
# link; the module links the library without them.
HOOK_CU = kernels/host_sort.cu kernels/quick_sort.cu
ifeq ($(CUDA),1)
TEST_LIB = kernels/libgpusort-test.a
TEST_LIB_OBJS = $(filter-out $(HOOK_CU:.cu=.o),$(KERNEL_OBJS)) $(HOOK_CU:.cu=.hooks.o)
else
TEST_LIB = $(KERNEL_LIB)
endif

PG_CPPFLAGS = -Ikernels $(INJECTION_DEFS)
SHLIB_LINK = $(KERNEL_LIB) $(CUDA_LIBS) -lm
EXTRA_CLEAN = $(KERNEL_LIB) kernels/libgpusort-test.a kernels/*.o kernels/.build-flags src/.pg-build test/bin bench/bin

# JIT inlining from LLVM bitcode buys nothing for array-sized loops, and
# needs clang; build without it so a plain `make` works where clang is absent.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

KERNEL_CFLAGS = -O2 -g -std=gnu11 -Wall -Wextra -fPIC -Ikernels $(INJECTION_DEFS)

kernels/%.o: kernels/%.c kernels/gpusort.h kernels/internal.h kernels/keys.h kernels/.build-flags
	$(CC) $(KERNEL_CFLAGS) -c -o $@ $<

kernels/%.o: kernels/%.cu kernels/gpusort.h kernels/internal.h kernels/keys.h $(wildcard kernels/*.cuh) kernels/.build-flags
	$(NVCC) $(NVCCFLAGS) $(INJECTION_DEFS) -Ikernels -c -o $@ $<

kernels/%.hooks.o: kernels/%.cu kernels/gpusort.h kernels/internal.h kernels/device_internal.h kernels/keys.h $(wildcard kernels/*.cuh) kernels/.build-flags
	$(NVCC) $(NVCCFLAGS) $(INJECTION_DEFS) -DGS_TEST_HOOKS -Ikernels -c -o $@ $<

# The library remembers how it was built: switching CUDA=0/1 (or the GPU
# architectures) rebuilds it and relinks the module instead of keeping a
# library of the other kind.
BUILD_FLAGS = kernels/.build-flags
BUILD_FLAGS_NOW = CUDA=$(CUDA) CUDA_ARCH=$(CUDA_ARCH) INJECTION_POINTS=$(INJECTION_POINTS)
$(shell echo '$(BUILD_FLAGS_NOW)' | cmp -s - $(BUILD_FLAGS) 2>/dev/null || echo '$(BUILD_FLAGS_NOW)' > $(BUILD_FLAGS))

$(KERNEL_LIB): $(KERNEL_OBJS) $(BUILD_FLAGS)
	rm -f $@
	$(AR) crs $@ $(KERNEL_OBJS)

ifeq ($(CUDA),1)
$(TEST_LIB): $(TEST_LIB_OBJS) $(BUILD_FLAGS)
	rm -f $@
	$(AR) crs $@ $(TEST_LIB_OBJS)
endif

$(shlib): $(KERNEL_LIB)

# The module's objects remember which PostgreSQL they were compiled for:
# another pg_config (make PG_CONFIG=...) recompiles them instead of linking
# objects built against other server headers.
PG_BUILD_FLAGS = src/.pg-build
PG_BUILD_NOW = $(VERSION) $(includedir_server) INJECTION_POINTS=$(INJECTION_POINTS)
$(shell echo '$(PG_BUILD_NOW)' | cmp -s - $(PG_BUILD_FLAGS) 2>/dev/null || echo '$(PG_BUILD_NOW)' > $(PG_BUILD_FLAGS))
$(OBJS): $(PG_BUILD_FLAGS) $(wildcard src/*.h) kernels/gpusort.h

SQL_EXPAND = awk -f sql/expand.awk $(SQL_FRAGMENTS) </dev/null

# (the folder too: removing a fragment rebuilds them)
$(SQL_INSTALL): $(SQL_PREV) sql/$(EXTVERSION) $(SQL_FRAGMENTS) sql/expand.awk Makefile
	{ printf '%s\n' '-- gpusort $(EXTVERSION): $(SQL_PREV) and sql/$(EXTVERSION)/*.sql (built by make)' \
	    '\echo Use "CREATE EXTENSION $(EXTENSION)" to load this file. \quit'; \
	  sed '1,/\\quit$$/d' $(SQL_PREV) && $(SQL_EXPAND); } > $@.tmp && mv $@.tmp $@

$(SQL_UPDATE): sql/$(EXTVERSION) $(SQL_FRAGMENTS) sql/expand.awk Makefile
	{ printf '%s\n' '-- gpusort $(PREV_VERSION) to $(EXTVERSION): sql/$(EXTVERSION)/*.sql (built by make)' \
	    '\echo Use "ALTER EXTENSION $(EXTENSION) UPDATE TO '"'"'$(EXTVERSION)'"'"'" to load this file. \quit' ''; \
	  $(SQL_EXPAND); } > $@.tmp && mv $@.tmp $@

.PHONY: sql-scripts
sql-scripts: $(DATA_built)

# C tests and benchmarks of kernels/: test/*.c, test/*.cu, bench/*.c, bench/*.cu,
# one program each, linked with the library alone (the copy with the test
# hooks).  bench/merge_variants/ holds the merge sorts that only
# bench_comparison and test_comparison_sorts build.
TEST_PROGS = $(patsubst test/%.c,test/bin/%,$(wildcard test/*.c))
BENCH_PROGS = $(patsubst bench/%.c,bench/bin/%,$(wildcard bench/*.c))
ifeq ($(CUDA),1)
TEST_PROGS += $(patsubst test/%.cu,test/bin/%,$(wildcard test/*.cu))
BENCH_PROGS += $(patsubst bench/%.cu,bench/bin/%,$(wildcard bench/*.cu))
endif

test/bin/% bench/bin/%: CFLAGS_PROG = -O2 -g -std=gnu11 -Wall -Wextra -Ikernels -DGS_TEST_HOOKS
PROG_CUDA_DEPS = $(wildcard kernels/*.cuh bench/merge_variants/*.cuh)

test/bin/%: test/%.c $(TEST_LIB) $(wildcard test/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_PROG) $(INJECTION_DEFS) -Itest -o $@ $< $(TEST_LIB) $(CUDA_LIBS) -lm

test/bin/%: test/%.cu $(TEST_LIB) $(wildcard test/*.h) $(PROG_CUDA_DEPS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(INJECTION_DEFS) -DGS_TEST_HOOKS -Ikernels -Itest -o $@ $< $(TEST_LIB) -lm

bench/bin/%: bench/%.c $(TEST_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_PROG) -o $@ $< $(TEST_LIB) $(CUDA_LIBS) -lm

bench/bin/%: bench/%.cu $(TEST_LIB) $(wildcard bench/*.cuh) $(PROG_CUDA_DEPS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -DGS_TEST_HOOKS -Ikernels -o $@ $< $(TEST_LIB) -lm

.PHONY: kernels-lib test-progs bench-progs check-kernels
kernels-lib: $(KERNEL_LIB) $(TEST_LIB)
test-progs: $(TEST_PROGS)
bench-progs: $(BENCH_PROGS)

# Runs every C test; each prints its own summary and exits non-zero on failure.
check-kernels: $(TEST_PROGS)
	@fail=0; for t in $(TEST_PROGS); do echo "== $$t"; $$t || fail=1; done; exit $$fail
