# Data collectives: the full matrix against MPI, errors and checking, a random stress sequence.
# CACHECOMM_CHECK is on in the test suite (off by default for users).
set(CACHECOMM_COLL_TEST_ENV CACHECOMM_CHECK=1)
cachecomm_add_mpi_test(mpi_collectives SOURCES coll/collectives_test.cpp RANKS 1 2 3 4 5 8 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_collectives SOURCES coll/collectives_test.cpp RANKS 3 4 SUFFIX .split
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_RANKS_PER_NODE=2)
# Small region and chunks: many pipeline steps per message; single copy refused (the fallback path).
cachecomm_add_mpi_test(mpi_collectives SOURCES coll/collectives_test.cpp RANKS 2 SUFFIX .no_single_copy
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_SINGLE_COPY=off CACHECOMM_COLL_CHUNK=16384 CACHECOMM_COLL_REGION=65536)
# Copies into the shared region with and without streaming stores, whatever this CPU's default.
cachecomm_add_mpi_test(mpi_collectives SOURCES coll/collectives_test.cpp RANKS 2 3 SUFFIX .streaming
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_STREAMING_STORES=1 CACHECOMM_COLL_CHUNK=16384 CACHECOMM_COLL_REGION=65536)
cachecomm_add_mpi_test(mpi_collectives SOURCES coll/collectives_test.cpp RANKS 3 SUFFIX .no_streaming
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_STREAMING_STORES=0)
# The stage-or-pull allgather with each way of moving a block forced (alternate: staged and pulled
# in turn, ranks out of phase), the measured choice, many steps per block, and single copy refused.
set(CACHECOMM_STAGE_OR_PULL_ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_ALLGATHER=stage-or-pull)
cachecomm_add_mpi_test(mpi_allgather_stage_or_pull SOURCES coll/allgather_stage_or_pull_test.cpp RANKS 1 2 3 4 8
                       ENV ${CACHECOMM_STAGE_OR_PULL_ENV} CACHECOMM_ALLGATHER_STAGING=alternate)
cachecomm_add_mpi_test(mpi_allgather_stage_or_pull SOURCES coll/allgather_stage_or_pull_test.cpp RANKS 2 3 SUFFIX .stage
                       ENV ${CACHECOMM_STAGE_OR_PULL_ENV} CACHECOMM_ALLGATHER_STAGING=stage)
cachecomm_add_mpi_test(mpi_allgather_stage_or_pull SOURCES coll/allgather_stage_or_pull_test.cpp RANKS 2 3 SUFFIX .pull
                       ENV ${CACHECOMM_STAGE_OR_PULL_ENV} CACHECOMM_ALLGATHER_STAGING=pull)
cachecomm_add_mpi_test(mpi_allgather_stage_or_pull SOURCES coll/allgather_stage_or_pull_test.cpp RANKS 2 4 SUFFIX .auto
                       ENV ${CACHECOMM_STAGE_OR_PULL_ENV})
cachecomm_add_mpi_test(mpi_allgather_stage_or_pull SOURCES coll/allgather_stage_or_pull_test.cpp RANKS 2 3 SUFFIX .small_region
                       ENV ${CACHECOMM_STAGE_OR_PULL_ENV} CACHECOMM_ALLGATHER_STAGING=alternate CACHECOMM_COLL_REGION=65536)
cachecomm_add_mpi_test(mpi_allgather_stage_or_pull SOURCES coll/allgather_stage_or_pull_test.cpp RANKS 2 SUFFIX .no_single_copy
                       ENV ${CACHECOMM_STAGE_OR_PULL_ENV} CACHECOMM_SINGLE_COPY=off)
# gather-reduce in every store mode, and ranks in different modes (8: oversubscribed).
cachecomm_add_mpi_test(mpi_store_modes SOURCES coll/store_mode_test.cpp RANKS 1 2 3 4 8 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_collective_errors SOURCES coll/errors_test.cpp RANKS 1 2 3 4 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_collective_errors SOURCES coll/errors_test.cpp RANKS 3 SUFFIX .split
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_RANKS_PER_NODE=2)
cachecomm_add_mpi_test(mpi_collective_stress SOURCES coll/stress_test.cpp RANKS 2 3 8 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_collective_stress SOURCES coll/stress_test.cpp RANKS 4 SUFFIX .split
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_RANKS_PER_NODE=2)

# Benchmark smoke runs (bench_coll_<name>_smoke.np2: --quick at 2 ranks, JSON written), and their JSON
# meets the contract (bench_coll_<name>_contract: buffers and timing on every row, one
# auto:<algorithm> row per mode).
find_package(Python3 COMPONENTS Interpreter)
function(cachecomm_add_bench_coll_smoke name ops)
  add_test(NAME bench_coll_${name}_smoke.np2
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${CACHECOMM_MPIEXEC_FLAGS} $<TARGET_FILE:cachecomm-bench>
                   coll --op ${ops} --quick --quiet --json ${CMAKE_CURRENT_BINARY_DIR}/bench_coll_${name}_smoke.json)
  set_tests_properties(bench_coll_${name}_smoke.np2 PROPERTIES TIMEOUT 120 LABELS "mpi;np2;bench"
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" FIXTURES_SETUP bench_coll_${name}_json)
  add_test(NAME bench_coll_${name}_contract
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check-bench-json
                   ${CMAKE_CURRENT_BINARY_DIR}/bench_coll_${name}_smoke.json --suite coll)
  set_tests_properties(bench_coll_${name}_contract PROPERTIES LABELS "bench" FIXTURES_REQUIRED bench_coll_${name}_json)
endfunction()
# Every data collective, the copy probes and the exchange floor.
cachecomm_add_bench_coll_smoke(data bcast,reduce,allreduce,allgather,copy-probe,exchange-floor)

# Gather, scatter, alltoall, scan, exscan, reduce_scatter_block, allgatherv, gatherv, scatterv against MPI (.split: across "nodes", the system MPI's path;
# .small_region: many pipeline steps, single copy refused).
cachecomm_add_mpi_test(mpi_block_collectives SOURCES coll/block_collectives_test.cpp coll/vector_collectives_test.cpp RANKS 1 2 3 4 8 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_block_collectives SOURCES coll/block_collectives_test.cpp RANKS 3 SUFFIX .split
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_RANKS_PER_NODE=2)
cachecomm_add_mpi_test(mpi_block_collectives SOURCES coll/block_collectives_test.cpp RANKS 2 3 SUFFIX .small_region
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_SINGLE_COPY=0 CACHECOMM_COLL_CHUNK=16384 CACHECOMM_COLL_REGION=65536)

# reduce_scatter (per-rank counts) against MPI_Reduce_scatter on world, a duplicate and a split
# (.split: across "nodes", the system MPI's path; .small_region: many pipeline steps, single copy
# refused).
cachecomm_add_mpi_test(mpi_reduce_scatter SOURCES coll/reduce_scatter_test.cpp RANKS 1 2 3 4 5 8 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_reduce_scatter SOURCES coll/reduce_scatter_test.cpp RANKS 3 4 SUFFIX .split
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_RANKS_PER_NODE=2)
cachecomm_add_mpi_test(mpi_reduce_scatter SOURCES coll/reduce_scatter_test.cpp RANKS 2 3 SUFFIX .small_region
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_SINGLE_COPY=0 CACHECOMM_COLL_CHUNK=16384 CACHECOMM_COLL_REGION=65536)

# The block, prefix and vector collectives.
cachecomm_add_bench_coll_smoke(blocks gather,scatter,alltoall,scan,exscan,reduce_scatter_block,reduce_scatter,allgatherv,gatherv,scatterv,alltoallv)
# The nonblocking collectives (every mode, one auto:<path> row each).
cachecomm_add_bench_coll_smoke(nonblocking nonblocking,iallreduce-overlap)

# Nonblocking collectives of the C++ API against MPI (.split: across "nodes", the system MPI's path
# everywhere).
cachecomm_add_mpi_test(mpi_nonblocking SOURCES coll/nonblocking_test.cpp RANKS 1 2 3 4 8 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_nonblocking SOURCES coll/nonblocking_test.cpp RANKS 3 SUFFIX .split
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_RANKS_PER_NODE=2)
# igather, iscatter, ialltoall, ireduce_scatter_block, iscan, iexscan on world, dup and split.
cachecomm_add_mpi_test(mpi_nonblocking_blocks SOURCES coll/nonblocking_blocks_test.cpp
                       RANKS 1 2 3 4 8 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_nonblocking_blocks SOURCES coll/nonblocking_blocks_test.cpp RANKS 3
                       SUFFIX .split ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_RANKS_PER_NODE=2)
# Single copy on the channel (2 ranks on their own cores: the shape that takes it), for every kind
# it serves: owners wait for their readers, and push into a blocked one; and the suites above.
cachecomm_add_mpi_test(mpi_nonblocking_single_copy SOURCES coll/nonblocking_single_copy_test.cpp
                       RANKS 2 ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_NONBLOCKING_SINGLE_COPY=all)
# The default rule (auto): large broadcasts by single copy under Open MPI, nothing else.
cachecomm_add_mpi_test(mpi_nonblocking_single_copy SOURCES coll/nonblocking_single_copy_test.cpp
                       RANKS 2 SUFFIX .auto ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_nonblocking SOURCES coll/nonblocking_test.cpp RANKS 2
                       SUFFIX .single_copy_all
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_NONBLOCKING_SINGLE_COPY=all)
cachecomm_add_mpi_test(mpi_nonblocking_blocks SOURCES coll/nonblocking_blocks_test.cpp RANKS 2
                       SUFFIX .single_copy_all
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_NONBLOCKING_SINGLE_COPY=all)
