# Windows (fence, PSCW, accumulate, misuse); again with a forced node split for the MPI path.
cachecomm_add_mpi_test(mpi_window SOURCES rma/window_test.cpp RANKS 2 3 4 8)
cachecomm_add_mpi_test(mpi_window SOURCES rma/window_test.cpp RANKS 3 4 8 SUFFIX .split ENV CACHECOMM_RANKS_PER_NODE=2)
cachecomm_add_mpi_test(mpi_window SOURCES rma/window_test.cpp RANKS 3 SUFFIX .sleep ENV CACHECOMM_WAIT=sleep)
target_link_libraries(mpi_window PRIVATE GTest::gmock)

# A target killed before posting: every origin waiting for it must fail naming it.
add_executable(window_peer_death rma/window_peer_death.cpp)
target_link_libraries(window_peer_death PRIVATE cachecomm_internal cachecomm_flags)
target_include_directories(window_peer_death PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(np IN ITEMS 2 3)
  add_test(NAME window_peer_death.np${np}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scripts/expect_peer_death.sh ${np} $<TARGET_FILE:window_peer_death>
                   ${MPIEXEC_EXECUTABLE} ${CACHECOMM_MPIEXEC_FLAGS})
  set_tests_properties(window_peer_death.np${np} PROPERTIES TIMEOUT 120 LABELS "mpi;np${np}"
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endforeach()

# Benchmark smoke run: the pscw suite finishes at 2 ranks and writes its JSON.
add_test(NAME bench_pscw_smoke.np2
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${CACHECOMM_MPIEXEC_FLAGS}
                 $<TARGET_FILE:cachecomm-bench> pscw --quick --quiet --json ${CMAKE_CURRENT_BINARY_DIR}/bench_pscw_smoke.json)
set_tests_properties(bench_pscw_smoke.np2 PROPERTIES TIMEOUT 120 LABELS "mpi;np2;bench"
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
