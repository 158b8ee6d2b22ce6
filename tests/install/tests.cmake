# cmake --install into a fresh prefix, then the examples and cachecomm-run against the installed tree.
if(NOT CACHECOMM_SANITIZE)
  set(install_flags)
  foreach(flag IN LISTS CACHECOMM_MPIEXEC_FLAGS)
    list(APPEND install_flags --flag ${flag})
  endforeach()
  # A compiler of the other Debian MPI, for cachecomm-run's "different MPI" refusal.
  if(CACHECOMM_MPIEXEC_VERSION MATCHES "Open MPI|OpenRTE")
    find_program(CACHECOMM_OTHER_MPICC NAMES mpicc.mpich)
  else()
    find_program(CACHECOMM_OTHER_MPICC NAMES mpicc.openmpi)
  endif()
  set(other_mpicc)
  if(CACHECOMM_OTHER_MPICC)
    set(other_mpicc --other-mpicc ${CACHECOMM_OTHER_MPICC})
  endif()
  add_test(NAME install_and_consume
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_install.sh --build ${PROJECT_BINARY_DIR}
                   --source ${PROJECT_SOURCE_DIR} --mpirun ${MPIEXEC_EXECUTABLE} ${install_flags}
                   --program $<TARGET_FILE:preload_collectives> ${other_mpicc})
  set_tests_properties(install_and_consume PROPERTIES TIMEOUT 600 LABELS "install;mpi;np2"
    ENVIRONMENT "CACHECOMM_TIMEOUT=60;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endif()
