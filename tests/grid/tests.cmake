# Grids, halo exchange and the Laplace solver.
cachecomm_add_unit_test(unit_grid ${CMAKE_CURRENT_LIST_DIR}/grid_unit_test.cpp)
target_link_libraries(unit_grid PRIVATE cachecomm_laplace)
target_compile_options(unit_grid PRIVATE -ffp-contract=off)

# The timeout test abandons messages in flight; a later communicator that reuses the freed one's
# context id could match them (MPICH does), so it runs in processes of its own.
set(grid_timeout_test grid_mpi_errors.mpi_neighbour_that_never_exchanges_is_named)
cachecomm_add_mpi_test(mpi_grid SOURCES ${CMAKE_CURRENT_LIST_DIR}/grid_mpi_test.cpp RANKS 1 2 3 4 8
                       ENV GTEST_FILTER=-${grid_timeout_test})
target_link_libraries(mpi_grid PRIVATE cachecomm_laplace)
target_compile_options(mpi_grid PRIVATE -ffp-contract=off)
cachecomm_add_mpi_test(mpi_grid SOURCES ${CMAKE_CURRENT_LIST_DIR}/grid_mpi_test.cpp RANKS 2 3 SUFFIX .timeout
                       ENV GTEST_FILTER=${grid_timeout_test})
# Forced node split: neighbours on other pretend nodes are reached by packing and MPI.
cachecomm_add_mpi_test(mpi_grid SOURCES ${CMAKE_CURRENT_LIST_DIR}/grid_mpi_test.cpp RANKS 3 4 SUFFIX .split
                       ENV CACHECOMM_RANKS_PER_NODE=2 GTEST_FILTER=-${grid_timeout_test})

# The solver app itself, as make demo runs it (smoke, with the serial comparison).
add_test(NAME laplace_app_smoke.np2
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${CACHECOMM_MPIEXEC_FLAGS} $<TARGET_FILE:cachecomm-laplace>
                 --quick --verify --transport shm,mpi --json ${CMAKE_CURRENT_BINARY_DIR}/laplace_smoke.json)
set_tests_properties(laplace_app_smoke.np2 PROPERTIES TIMEOUT 120 LABELS "mpi;np2"
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
add_test(NAME laplace_app_model COMMAND $<TARGET_FILE:cachecomm-laplace> --quick --verify --no-stream --transport model
                                        --model-ranks 3 --checked --dims 3)
set_tests_properties(laplace_app_model PROPERTIES TIMEOUT 120 LABELS "unit")
# Bad options end with a message naming the problem (no MPI_Abort).
foreach(bad IN ITEMS "size;--size;0,5;at least 1" "ghost;--size;8,8;--ghost;9;wider than" "ranks;--size;1,1;--transport;model;--model-ranks;3;more ranks than cells")
  list(GET bad 0 bad_name)
  list(POP_FRONT bad)
  list(POP_BACK bad bad_expected)
  add_test(NAME laplace_app_rejects_bad_${bad_name} COMMAND $<TARGET_FILE:cachecomm-laplace> --no-stream ${bad})
  set_tests_properties(laplace_app_rejects_bad_${bad_name} PROPERTIES TIMEOUT 60 LABELS "unit" PASS_REGULAR_EXPRESSION "${bad_expected}")
endforeach()
