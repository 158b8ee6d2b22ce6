# Windows (fence, PSCW, accumulate, misuse); again with a forced node split for the MPI path.
cachecomm_add_mpi_test(mpi_window SOURCES rma/window_test.cpp RANKS 2 3 4 8)
cachecomm_add_mpi_test(mpi_window SOURCES rma/window_test.cpp RANKS 3 4 8 SUFFIX .split ENV CACHECOMM_RANKS_PER_NODE=2)
cachecomm_add_mpi_test(mpi_window SOURCES rma/window_test.cpp RANKS 3 SUFFIX .sleep ENV CACHECOMM_WAIT=sleep)
target_link_libraries(mpi_window PRIVATE GTest::gmock)

# A target killed before posting: every origin waiting for it must fail naming it.
cachecomm_add_script_test(window_peer_death SOURCE rma/window_peer_death.cpp SCRIPT expect_peer_death.sh RANKS 2 3)

# Benchmark smoke run: the pscw suite finishes at 2 ranks and writes its JSON.
add_test(NAME bench_pscw_smoke.np2
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${CACHECOMM_MPIEXEC_FLAGS}
                 $<TARGET_FILE:cachecomm-bench> pscw --quick --quiet --json ${CMAKE_CURRENT_BINARY_DIR}/bench_pscw_smoke.json)
set_tests_properties(bench_pscw_smoke.np2 PROPERTIES TIMEOUT 120 LABELS "mpi;np2;bench"
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
