# Measured selection: the tuning file, its loading on every rank, the system MPI as a candidate.
cachecomm_add_unit_test(unit_tuning tuning/tuning_table_test.cpp)
# The tuner's choices from its measured medians (bench/tune/tuning_choice.cpp).
cachecomm_add_unit_test(unit_tuning_choice tuning/tuning_choice_test.cpp
                        ${PROJECT_SOURCE_DIR}/bench/tune/tuning_choice.cpp)
target_include_directories(unit_tuning_choice PRIVATE ${PROJECT_SOURCE_DIR}/bench)
target_link_libraries(unit_tuning_choice PRIVATE nlohmann_json::nlohmann_json)
cachecomm_add_mpi_test(mpi_tuning SOURCES tuning/tuning_mpi_test.cpp RANKS 1 2 3 4 8)
# A node split in two: the MPI candidate stays off (a node's table cannot decide for the comm).
cachecomm_add_mpi_test(mpi_tuning SOURCES tuning/tuning_mpi_test.cpp RANKS 4 SUFFIX .split
                       ENV CACHECOMM_RANKS_PER_NODE=2)
# Online selection: one choice on every rank under random delays, correct results in the trial
# phase, forced choices and tuning files win (the test sets CACHECOMM_ONLINE_SELECTION itself).
cachecomm_add_unit_test(unit_online_selector tuning/online_selector_test.cpp)
cachecomm_add_mpi_test(mpi_online_selection SOURCES tuning/online_selection_test.cpp
                       RANKS 1 2 3 4 8)
cachecomm_add_mpi_test(mpi_online_selection SOURCES tuning/online_selection_test.cpp RANKS 4
                       SUFFIX .split ENV CACHECOMM_RANKS_PER_NODE=2)
# cachecomm-info says what online selection will do, and with --measure what it chose and why.
# Labelled bench like tune_smoke_loaded: cachecomm-info is an app, which the test-programs-only
# builds (make test-mpich, make test-mpi) leave out.
# By default (auto) it measures from 16 KiB only: the 64 KiB allreduce, not the 4 KiB one.
foreach(variant IN ITEMS plain measure default)
  set(info_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CACHECOMM_TUNING=off)
  if(NOT variant STREQUAL "default")
    list(APPEND info_env CACHECOMM_ONLINE_SELECTION=on)
  endif()
  if(variant STREQUAL "measure")
    set(info_args --measure)
    set(info_expect "allreduce +4096 B: [a-z-]+ +allreduce 4 KiB\\.\\.8 KiB: [a-z-]+ \\(measured online: ")
  elseif(variant STREQUAL "default")
    set(info_args)
    set(info_expect "online selection: auto: [^\n]* from 16 KiB.*allreduce +65536 B: [a-z-]+ +[^\n]*online selection will measure")
  else()
    set(info_args)
    set(info_expect "online selection will measure gather-reduce, slots, reduce-scatter, split-pipeline, mpi")
  endif()
  add_test(NAME online_info_${variant}.np2
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${CACHECOMM_MPIEXEC_FLAGS}
                   $<TARGET_FILE:cachecomm-info> ${info_args})
  set_tests_properties(online_info_${variant}.np2 PROPERTIES TIMEOUT 120 LABELS "mpi;np2;bench"
    ENVIRONMENT "${info_env}"
    PASS_REGULAR_EXPRESSION "${info_expect}")
  if(variant STREQUAL "default")
    set_tests_properties(online_info_${variant}.np2 PROPERTIES
      FAIL_REGULAR_EXPRESSION "allreduce +4096 B: [^\n]*online selection")
  elseif(variant STREQUAL "plain")
    # Where gather-reduce's allreduce adapts its stores (AMD CPUs), split-pipeline still competes
    # with it below 512 KiB: 64 KiB must not be left to it and the system MPI alone.
    set_tests_properties(online_info_${variant}.np2 PROPERTIES
      FAIL_REGULAR_EXPRESSION "allreduce +65536 B: gather-reduce +online selection will measure gather-reduce, mpi ")
  endif()
endforeach()
# CACHECOMM_COLL_RING reaches the layout of the collectives' data region (cachecomm-info reads it
# from the engine).
add_test(NAME region_info.np2
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${CACHECOMM_MPIEXEC_FLAGS}
                 $<TARGET_FILE:cachecomm-info>)
set_tests_properties(region_info.np2 PROPERTIES TIMEOUT 120 LABELS "mpi;np2;bench"
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;CACHECOMM_TUNING=off;CACHECOMM_COLL_RING=3145728"
  PASS_REGULAR_EXPRESSION "data region: 2 halves of 3072 KiB \\(the rings go through all of each, the pipelines chunk from its first 1024 KiB\\)")
# The tuner itself, quick: it writes a file the library then loads.
add_test(NAME tune_smoke.np2
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${CACHECOMM_MPIEXEC_FLAGS} $<TARGET_FILE:cachecomm-tune>
                 --quick --output ${CMAKE_CURRENT_BINARY_DIR}/tune_smoke.json)
set_tests_properties(tune_smoke.np2 PROPERTIES TIMEOUT 120 LABELS "mpi;np2;bench"
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" FIXTURES_SETUP tune_smoke_file)
# ... and cachecomm-info names that file as the one in use.
add_test(NAME tune_smoke_loaded.np2
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${CACHECOMM_MPIEXEC_FLAGS} $<TARGET_FILE:cachecomm-info>)
set_tests_properties(tune_smoke_loaded.np2 PROPERTIES TIMEOUT 120 LABELS "mpi;np2;bench"
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;CACHECOMM_TUNING=${CMAKE_CURRENT_BINARY_DIR}/tune_smoke.json"
  PASS_REGULAR_EXPRESSION "tuning file: [^\n]*tune_smoke.json \\(measured" FIXTURES_REQUIRED tune_smoke_file)

# The preload passes every collective through where the tuning file says the system MPI wins:
# the same output as plain MPI, and the summary counts each call as mpi-faster.
add_executable(write_mpi_table tuning/write_mpi_table.cpp)
target_link_libraries(write_mpi_table PRIVATE cachecomm_internal cachecomm_flags)
foreach(np IN ITEMS 2 3)
  if(np GREATER CACHECOMM_TEST_MAX_RANKS)
    continue()
  endif()
  add_test(NAME preload_mpi_faster_file.np${np}
           COMMAND write_mpi_table ${CMAKE_CURRENT_BINARY_DIR}/preload_mpi_faster.np${np}.json ${np})
  set_tests_properties(preload_mpi_faster_file.np${np} PROPERTIES LABELS "preload" FIXTURES_SETUP preload_mpi_faster_np${np})
  preload_case(preload_mpi_faster RANKS ${np}
    ARGS --env CACHECOMM_TUNING=${CMAKE_CURRENT_BINARY_DIR}/preload_mpi_faster.np${np}.json
         --reason MPI_Barrier:mpi-faster --reason MPI_Bcast:mpi-faster --reason MPI_Reduce:mpi-faster
         --reason MPI_Allreduce:mpi-faster --reason MPI_Allgather:mpi-faster
         -- $<TARGET_FILE:preload_collectives>)
  set_tests_properties(preload_mpi_faster.np${np} PROPERTIES FIXTURES_REQUIRED preload_mpi_faster_np${np})
  if(np EQUAL 2)
    # The block collectives a tuning file can hand to MPI, every datatype, root and in-place case.
    preload_case(preload_mpi_faster_blocks RANKS ${np} RUN_LIMIT 400
      ARGS --env CACHECOMM_TUNING=${CMAKE_CURRENT_BINARY_DIR}/preload_mpi_faster.np${np}.json
           --reason MPI_Gather:mpi-faster --reason MPI_Scatter:mpi-faster
           --reason MPI_Alltoall:mpi-faster --reason MPI_Allgatherv:mpi-faster
           -- $<TARGET_FILE:preload_conformance>)
    set_tests_properties(preload_mpi_faster_blocks.np${np} PROPERTIES
      FIXTURES_REQUIRED preload_mpi_faster_np${np})
  endif()
endforeach()
