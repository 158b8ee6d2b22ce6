cachecomm_add_unit_test(unit_line_store coalesce/line_store_test.cpp)

# Shared memory within the node, MPI messages forced for every target, and a forced node split
# (the automatic choice then sends to other "nodes" over MPI and to itself through shared memory).
cachecomm_add_mpi_test(mpi_comm_cache SOURCES coalesce/comm_cache_test.cpp RANKS 1 2 3 4)
cachecomm_add_mpi_test(mpi_comm_cache SOURCES coalesce/comm_cache_test.cpp RANKS 2 3 SUFFIX .split
                       ENV CACHECOMM_RANKS_PER_NODE=1)
cachecomm_add_mpi_test(mpi_comm_cache SOURCES coalesce/comm_cache_test.cpp RANKS 4 SUFFIX .split2
                       ENV CACHECOMM_RANKS_PER_NODE=2)

# Smoke run of the benchmark so it cannot rot.
add_test(NAME bench_coalesce_quick
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${CACHECOMM_MPIEXEC_FLAGS}
                 $<TARGET_FILE:cachecomm-bench> coalesce --quick --quiet --json ${CMAKE_CURRENT_BINARY_DIR}/coalesce_quick.json)
set_tests_properties(bench_coalesce_quick PROPERTIES TIMEOUT 120 LABELS "mpi;np2;bench"
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
