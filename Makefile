# Thin wrapper over the CMake presets. `make demo` and `make test` are all a new user needs.
SHELL := /bin/bash
JOBS ?= 2
NP ?= $(shell nproc)
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
MPIRUN := mpirun --oversubscribe
OUT ?= out

.PHONY: all setup build demo test test-mpich test-mpi test-sanitize install ci format format-check tidy clean

all: build

setup:
	@bash scripts/setup.sh

build/release/CMakeCache.txt: | setup
	cmake --preset release

build: setup build/release/CMakeCache.txt
	cmake --build --preset release -j $(JOBS)

demo: build
	@bash scripts/demo.sh "$(NP)" "$(OUT)"

test: build
	cd build/release && ctest -j $(JOBS) --output-on-failure --timeout 600

# The same tests built against MPICH, at 1 and 2 ranks (the benchmarks' own smoke tests, the Laplace
# application and the install test run under Open MPI only: what they check does not depend on the MPI;
# the Laplace solver's MPI code is covered by mpi_grid and the halo tests). One test at a time:
# Debian's MPICH (over UCX) busy-polls inside its own calls, so two 2-rank jobs on 2 cores
# oversubscribe them and the tests' reference MPI calls wait out scheduler slices (two such jobs
# side by side took over 150 s each, alone 3-4 s).
test-mpich: setup
	cmake --preset mpich -DCACHECOMM_TEST_MAX_RANKS=2
	cmake --build --preset mpich -j $(JOBS) --target test-programs cachecomm-preload-bench
	cd build/mpich && ctest -j 1 --output-on-failure --timeout 600 -LE "bench|install" -E "^laplace_app"

# The MPI and preload tests under another MPI: make test-mpi MPI_HOME=<prefix> [MPI_MAX_RANKS=4]
# [MPI_SUBSET=core]. Builds only the test programs (build/mpi-<name of the prefix>); core: only the
# preload tests and the segment, barrier and collective tests. See docs/install.md for each MPI.
MPI_MAX_RANKS ?= 4
MPI_SUBSET ?= all
# CACHECOMM_MPI_ABI=ON: build against the MPI-5 standard ABI (MPI_HOME with bin/mpicc_abi).
CACHECOMM_MPI_ABI ?= OFF
MPI_BUILD = build/mpi-$(notdir $(abspath $(MPI_HOME)))$(if $(filter ON,$(CACHECOMM_MPI_ABI)),-abi)
MPI_TARGET = $(if $(filter core,$(MPI_SUBSET)),test-programs-core,test-programs)
MPI_TESTS = $(if $(filter core,$(MPI_SUBSET)),^(preload_|mpi_segment|mpi_barrier),.)
# Intel MPI: its mpicc needs I_MPI_ROOT; on one node its ranks talk through shared memory only.
test-mpi: export I_MPI_ROOT := $(if $(wildcard $(MPI_HOME)/bin/impi_info),$(abspath $(MPI_HOME)),$(I_MPI_ROOT))
test-mpi: export I_MPI_FABRICS := $(or $(I_MPI_FABRICS),shm)
test-mpi: setup
	@[ -n "$(MPI_HOME)" ] && [ -d "$(MPI_HOME)" ] || { echo "make test-mpi: set MPI_HOME to the prefix of an MPI (its bin/mpicc)" >&2; exit 2; }
	cmake -S . -B $(MPI_BUILD) -DCMAKE_BUILD_TYPE=Release -DMPI_HOME=$(abspath $(MPI_HOME)) \
	  -DCACHECOMM_TEST_MAX_RANKS=$(MPI_MAX_RANKS) -DCACHECOMM_MPI_ABI=$(CACHECOMM_MPI_ABI)
	cmake --build $(MPI_BUILD) -j $(JOBS) --target $(MPI_TARGET)
	cd $(MPI_BUILD) && ctest -j $(JOBS) --output-on-failure --timeout 600 -L mpi -LE "bench|install" \
	  -R '$(MPI_TESTS)' -E "laplace_app|preload_bench_smoke"

# Installs headers, libraries, programs, docs, the CMake package and cachecomm.pc under PREFIX.
PREFIX ?= /usr/local
install: build
	cmake --install build/release --prefix $(PREFIX)

# Debug build under AddressSanitizer and UndefinedBehaviorSanitizer, at 1 to 4 ranks: the library,
# the preload and every test program (the benchmarks and the Laplace application run in `make test`).
test-sanitize: setup
	cmake --preset debug-sanitize -DCACHECOMM_TEST_MAX_RANKS=4
	cmake --build --preset debug-sanitize -j $(JOBS) --target test-programs cachecomm-preload-bench
	cd build/debug-sanitize && ASAN_OPTIONS=detect_leaks=0 ctest -j $(JOBS) --output-on-failure --timeout 900 \
	  -LE "bench|install" -E "^laplace_app"

SOURCES = $$(git ls-files '*.cpp' '*.hpp' '*.c' '*.h')

format:
	clang-format -i $(SOURCES)

# CI: fails when a file is not formatted (.clang-format) or clang-tidy (.clang-tidy) warns on src/.
format-check:
	clang-format --dry-run --Werror $(SOURCES)

tidy: build
	@warnings=$$(run-clang-tidy -quiet -p build/release $$(git ls-files 'src/*.cpp') 2>&1 \
	  | sed 's/\x1b\[[0-9;]*m//g' | grep -E "(warning|error):" | sort -u); \
	if [ -n "$$warnings" ]; then echo "$$warnings"; exit 1; fi; echo "clang-tidy: no warnings in src/"

clean:
	rm -rf build out
