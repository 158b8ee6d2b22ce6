# Which MPI a build is for, and a preload library loaded into a program of another MPI.
cachecomm_add_unit_test(unit_mpi_identity ${CMAKE_CURRENT_LIST_DIR}/mpi_identity_test.cpp)

set(mismatch_flags)
foreach(flag IN LISTS CACHECOMM_MPIEXEC_FLAGS)
  list(APPEND mismatch_flags --flag ${flag})
endforeach()
# The preload sees a faked MPI_Get_library_version of an Open MPI no build is for: it must print one
# line naming both MPIs and pass every call through (the program prints what it prints without it).
foreach(np IN ITEMS 1 2 4)
  if(np GREATER CACHECOMM_TEST_MAX_RANKS OR CACHECOMM_SANITIZE)
    continue()  # sanitizer builds: the preload needs the runtimes first (see tests/preload)
  endif()
  add_test(NAME preload_mpi_mismatch.np${np}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/expect_mpi_mismatch.sh --mpirun ${MPIEXEC_EXECUTABLE}
                   ${mismatch_flags} --np ${np} --lib $<TARGET_FILE:cachecomm_mpi>
                   --fake "Open MPI v99.0.0, package: faked by the test" --running "Open MPI 99.0.0"
                   -- $<TARGET_FILE:preload_collectives>)
  set_tests_properties(preload_mpi_mismatch.np${np} PROPERTIES TIMEOUT 240 LABELS "mpi;preload;np${np}"
    ENVIRONMENT "CACHECOMM_TIMEOUT=60;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endforeach()

