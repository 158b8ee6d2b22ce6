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

# Genuinely another MPI: when this build is not for Debian's Open MPI (make test-mpi), a plain program
# built with Debian's Open MPI 4.1 runs under its mpirun with this build's preload library.
find_program(CACHECOMM_SYSTEM_OPENMPI_CC mpicc.openmpi)
find_program(CACHECOMM_SYSTEM_OPENMPI_RUN mpirun.openmpi)
if(CACHECOMM_SYSTEM_OPENMPI_CC AND CACHECOMM_SYSTEM_OPENMPI_RUN AND NOT CACHECOMM_SANITIZE
   AND NOT CACHECOMM_MPI_LIBRARY MATCHES "^/usr/lib/x86_64-linux-gnu/openmpi/")
  set(system_program ${CMAKE_CURRENT_BINARY_DIR}/preload_collectives_system_openmpi)
  add_custom_command(OUTPUT ${system_program}
    COMMAND ${CACHECOMM_SYSTEM_OPENMPI_CC} -o ${system_program} ${PROJECT_SOURCE_DIR}/tests/preload/preload_collectives.c
    DEPENDS ${PROJECT_SOURCE_DIR}/tests/preload/preload_collectives.c
    COMMENT "preload_collectives built with Debian's Open MPI")
  add_custom_target(preload_collectives_system_openmpi ALL DEPENDS ${system_program})
  foreach(np IN ITEMS 1 2)
    add_test(NAME preload_mpi_mismatch.system_openmpi.np${np}
             COMMAND ${CMAKE_CURRENT_LIST_DIR}/expect_mpi_mismatch.sh --mpirun ${CACHECOMM_SYSTEM_OPENMPI_RUN}
                     --flag --oversubscribe --np ${np} --lib $<TARGET_FILE:cachecomm_mpi> --running "Open MPI 4"
                     -- ${system_program})
    set_tests_properties(preload_mpi_mismatch.system_openmpi.np${np} PROPERTIES TIMEOUT 240
      LABELS "mpi;preload;np${np}"
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endforeach()
endif()

# `test-programs`: every program the tests run, without the benchmarks and apps (make test-mpi
# builds only these); `test-programs-core`: the preload programs (and the tuning-file writer their
# mpi-faster case needs) and the segment and barrier tests
# (make test-mpi MPI_SUBSET=core, CI's quick pass). Collected when tests/ is read.
function(cachecomm_add_test_programs_target)
  get_property(targets DIRECTORY ${PROJECT_SOURCE_DIR}/tests PROPERTY BUILDSYSTEM_TARGETS)
  set(programs)
  set(core)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      list(APPEND programs ${target})
      if(target MATCHES "^(preload_|mpi_segment$|mpi_barrier$|write_mpi_table$)")
        list(APPEND core ${target})
      endif()
    endif()
  endforeach()
  if(TARGET preload_collectives_system_openmpi)
    list(APPEND programs preload_collectives_system_openmpi)
    list(APPEND core preload_collectives_system_openmpi)
  endif()
  add_custom_target(test-programs DEPENDS ${programs} cachecomm_mpi)
  add_custom_target(test-programs-core DEPENDS ${core} cachecomm_mpi)
endfunction()
cmake_language(DEFER CALL cachecomm_add_test_programs_target)
