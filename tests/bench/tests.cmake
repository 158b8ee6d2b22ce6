# Every node characterization suite runs at 2 ranks with --quick --json, its JSON is checked against
# the contract, and the report is drawn from those files (its images must exist and not be empty).
find_package(Python3 COMPONENTS Interpreter)
set(CACHECOMM_SMOKE_DIR ${CMAKE_BINARY_DIR}/tests/bench-smoke)
set(CACHECOMM_SMOKE_SUITES limits pingpong bandwidth threads io all)
foreach(suite IN LISTS CACHECOMM_SMOKE_SUITES)
  add_test(NAME bench_smoke.${suite}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/../scripts/bench_smoke.sh ${suite} ${CACHECOMM_SMOKE_DIR}
                   ${PROJECT_SOURCE_DIR}/tools/check-bench-json $<TARGET_FILE:cachecomm-bench>
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${CACHECOMM_MPIEXEC_FLAGS})
  set_tests_properties(bench_smoke.${suite} PROPERTIES TIMEOUT 180 LABELS "bench;mpi;np2" FIXTURES_SETUP bench_smoke_json
    ENVIRONMENT "CACHECOMM_TIMEOUT=60;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endforeach()
add_test(NAME bench_report
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/../scripts/check_report.sh ${CMAKE_BINARY_DIR}/tools/cachecomm-report
                 ${CACHECOMM_SMOKE_DIR})
set_tests_properties(bench_report PROPERTIES TIMEOUT 180 LABELS "bench" FIXTURES_REQUIRED bench_smoke_json
                     SKIP_RETURN_CODE 77)
add_test(NAME bench_report_selection
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/../scripts/check_report_selection.sh
                 ${CMAKE_BINARY_DIR}/tools/cachecomm-report ${CMAKE_BINARY_DIR}/tests/report-selection)
set_tests_properties(bench_report_selection PROPERTIES TIMEOUT 60 LABELS "bench" SKIP_RETURN_CODE 77)
