# The preload library under unmodified MPI programs: each program runs with and without
# LD_PRELOAD=libcachecomm_mpi.so and must print the same; the summary must show what was served.
set(preload_dir ${CMAKE_CURRENT_LIST_DIR})
set(preload_driver ${preload_dir}/run_case.sh)
# Sanitizer builds: the runtimes must come first in LD_PRELOAD (see run_case.sh).
set(preload_first "")
set(preload_first_libs "")
if(CACHECOMM_SANITIZE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libubsan.so OUTPUT_VARIABLE ubsan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(preload_first "CACHECOMM_TEST_PRELOAD_FIRST=${asan_runtime}:${ubsan_runtime}")
  set(preload_first_libs "${asan_runtime}:${ubsan_runtime}:")
endif()
set(preload_flags)
foreach(flag IN LISTS CACHECOMM_MPIEXEC_FLAGS)
  list(APPEND preload_flags --flag ${flag})
endforeach()

# What the summary must show as served: the barrier always; the other collectives once they exist.
set(preload_served --served MPI_Barrier)
set(preload_passed --reason MPI_Barrier:intercommunicator)
if(EXISTS ${PROJECT_SOURCE_DIR}/include/cachecomm/collectives.hpp)
  list(APPEND preload_served --served MPI_Bcast --served MPI_Reduce --served MPI_Allreduce --served MPI_Allgather)
  # Derived datatypes are served (packed when not dense); user operations and unmapped types pass.
  list(APPEND preload_passed --served MPI_Bcast --served MPI_Allgather
                             --reason MPI_Allreduce:user-op --reason MPI_Reduce:user-op
                             --reason MPI_Allreduce:unmapped-datatype --reason MPI_Bcast:intercommunicator)
endif()

foreach(program IN ITEMS preload_collectives preload_passthrough preload_thread_multiple preload_errors
                        preload_windows preload_datatypes preload_conformance preload_rma
                        preload_window_threads preload_online_selection
                        preload_comm_reuse preload_mpi_warmup)
  add_executable(${program} ${preload_dir}/${program}.c)
  target_link_libraries(${program} PRIVATE MPI::MPI_C Threads::Threads)  # plain MPI: no cachecomm
endforeach()

# preload_case(NAME RANKS ... [RUN_LIMIT s] ARGS ...): registers NAME.npN running the driver with
# ARGS; RUN_LIMIT bounds each of its two runs (default 180 s, the test 240 s; with RUN_LIMIT the
# test gets both runs and a minute).
function(preload_case name)
  cmake_parse_arguments(ARG "" "RUN_LIMIT" "RANKS;ARGS" ${ARGN})
  set(test_limit 240)
  if(ARG_RUN_LIMIT)
    math(EXPR test_limit "2 * ${ARG_RUN_LIMIT} + 60")
  else()
    set(ARG_RUN_LIMIT 180)
  endif()
  foreach(np IN LISTS ARG_RANKS)
    if(np GREATER CACHECOMM_TEST_MAX_RANKS)
      continue()
    endif()
    add_test(NAME ${name}.np${np}
             COMMAND ${preload_driver} --mpirun ${MPIEXEC_EXECUTABLE} ${preload_flags} --np ${np}
                     --lib $<TARGET_FILE:cachecomm_mpi> --run-limit ${ARG_RUN_LIMIT} ${ARG_ARGS})
    set_tests_properties(${name}.np${np} PROPERTIES TIMEOUT ${test_limit} LABELS "mpi;preload;np${np}"
      ENVIRONMENT "CACHECOMM_TIMEOUT=60;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;${preload_first}")
  endforeach()
endfunction()

# Its MPI_CHAR reductions (as OSU's benchmarks make them) are served, not passed as unmapped.
# Calls with every count zero pass to MPI before any lookup (collective_routing.hpp, empty_passes).
preload_case(preload_collectives RANKS 1 2 3 4 8
  ARGS ${preload_served} --reason MPI_Bcast:empty --reason MPI_Allreduce:empty
       --reason MPI_Gather:empty --reason MPI_Exscan:empty
       --no-reason MPI_Allreduce:unmapped-datatype
       --no-reason MPI_Reduce:unmapped-datatype -- $<TARGET_FILE:preload_collectives>)
# Online selection under the preload: the first calls of each size try every candidate (the system
# MPI's call among them: passed through as mpi-trial), results stay right, and the summary says
# per size what was measured and chosen.
preload_case(preload_online_selection RANKS 2 3
  ARGS --env CACHECOMM_TUNING=off --env CACHECOMM_ONLINE_SELECTION=on
       --env CACHECOMM_ONLINE_BUDGET=0
       --served MPI_Bcast --served MPI_Allreduce --reason MPI_Allreduce:mpi-trial
       --reason MPI_Bcast:mpi-trial --expect-summary "measured online"
       -- $<TARGET_FILE:preload_online_selection>)
# The MPI's warm-up (CACHECOMM_PRELOAD_MPI_WARMUP, the default under Intel MPI): the first 4 calls
# of each data collective on each of the two communicators pass to MPI, the other 6 are served, and
# the barriers are not held back; the summary counts them over all ranks.
foreach(np IN ITEMS 1 2 3 4)
  math(EXPR warm "2 * 4 * ${np}")
  math(EXPR warm_served "2 * 6 * ${np}")
  preload_case(preload_mpi_warmup RANKS ${np}
    ARGS --env CACHECOMM_PRELOAD_MPI_WARMUP=4 --no-reason MPI_Barrier:mpi-warming
         --summary-regex "MPI_Allreduce +served +${warm_served} +passed +${warm} +\\(mpi-warming ${warm}\\)"
         --summary-regex "MPI_Bcast +served +${warm_served} +passed +${warm} +\\(mpi-warming ${warm}\\)"
         --summary-regex "MPI_Allgather +served +${warm_served} +passed +${warm} +\\(mpi-warming ${warm}\\)"
         -- $<TARGET_FILE:preload_mpi_warmup>)
endforeach()
# Short-lived communicators take freed communicators' states (state_pool.hpp): per rank the world,
# the first copy, half and reversed copy are built, the 19 later rounds' three are reused; the
# results stay right whatever the group, rank order and freeing order.
foreach(np IN ITEMS 1 2 3 4)
  math(EXPR built "4 * ${np}")
  math(EXPR reused "57 * ${np}")
  preload_case(preload_comm_reuse_${np} RANKS ${np}
    ARGS --served MPI_Allreduce --expect-summary "built ${built}, reused ${reused},"
         --expect "all correct" -- $<TARGET_FILE:preload_comm_reuse>)
endforeach()
# The same at MPI_THREAD_MULTIPLE (mpi4py's level), with the same counts; then threads building and
# freeing communicators of one group at once: each state is taken by one communicator only (a
# state taken twice gives wrong results or hangs); how many are reused depends on the threads'
# timing, some always are (each thread's first copies are built after the sequential rounds).
foreach(np IN ITEMS 2 3)
  math(EXPR built "4 * ${np}")
  math(EXPR reused "57 * ${np}")
  preload_case(preload_comm_reuse_multiple_${np} RANKS ${np}
    ARGS --served MPI_Allreduce --expect-summary "built ${built}, reused ${reused},"
         --expect-summary "thread level MPI_THREAD_MULTIPLE"
         --expect "all correct" -- $<TARGET_FILE:preload_comm_reuse> multiple)
endforeach()
preload_case(preload_comm_reuse_threads RANKS 1 2 3 4 RUN_LIMIT 90
  ARGS --served MPI_Allreduce --summary-regex "reused [1-9][0-9]*,"
       --expect "all correct" -- $<TARGET_FILE:preload_comm_reuse> threads)
# The same program linked against the library instead of preloaded; CACHECOMM_PRELOAD=0 is the baseline.
add_executable(preload_collectives_linked ${preload_dir}/preload_collectives.c)
# cachecomm_flags: in sanitizer builds the program must load the sanitizer runtime first.
target_link_libraries(preload_collectives_linked PRIVATE cachecomm_mpi MPI::MPI_C cachecomm_flags)
preload_case(preload_collectives_linked RANKS 2 3
  ARGS --linked ${preload_served} -- $<TARGET_FILE:preload_collectives_linked>)
# Ranks using different datatypes for the same data (derived on some, predefined on others) take
# the same path: served, packed where the type is not dense, or passed through on every rank.
preload_case(preload_datatypes RANKS 1 2 3 4 5 8
  ARGS ${preload_served} --served MPI_Allgatherv --served MPI_Gatherv --served MPI_Alltoallv
       --reason MPI_Allreduce:unmapped-datatype -- $<TARGET_FILE:preload_datatypes>)
# Conformance: every operation x datatype x root x in-place x communicator kind, checked values,
# identical output plain and preloaded.
# The plain run of this program takes minutes with more ranks than cores, MPICH's (ch4:ucx,
# busy-polling) most (2 cores, 4 ranks: 100 s; 5 ranks: 170 s; preloaded: 23 s and 41 s; on a
# loaded machine Open MPI's at 3 ranks passed 180 s).
set(conformance_limit RUN_LIMIT 400)
if(NOT CACHECOMM_MPIEXEC_VERSION MATCHES "Open MPI|OpenRTE")
  set(conformance_limit RUN_LIMIT 900)
endif()
preload_case(preload_conformance RANKS 1 2 3 4 5 8 ${conformance_limit}
  ARGS ${preload_served} --served MPI_Gather --served MPI_Scatter --served MPI_Alltoall
       --served MPI_Scan --served MPI_Exscan --served MPI_Reduce_scatter_block --served MPI_Reduce_scatter
       --served MPI_Allgatherv --served MPI_Gatherv --served MPI_Scatterv --served MPI_Alltoallv
       --reason MPI_Allreduce:unmapped-datatype --reason MPI_Reduce_scatter_block:unmapped-datatype --reason MPI_Reduce:unmapped-datatype
       --reason MPI_Reduce_scatter:unmapped-datatype
       --reason MPI_Scan:unmapped-datatype --reason MPI_Exscan:unmapped-datatype
       -- $<TARGET_FILE:preload_conformance>)
# MPI-4's large-count calls (MPI_Bcast_c...: mpi4py's under MPICH and Intel MPI) take the int
# calls' routes; windows made by them drive MPI's progress from cachecomm's waits.
if(MPI_C_VERSION VERSION_GREATER_EQUAL 4.0)
  add_executable(preload_large_count ${preload_dir}/preload_large_count.c)
  target_link_libraries(preload_large_count PRIVATE MPI::MPI_C)
  preload_case(preload_large_count RANKS 1 2 3 4
    ARGS --served MPI_Bcast --served MPI_Reduce --served MPI_Allreduce --served MPI_Allgather
         --served MPI_Gather --served MPI_Scatter --served MPI_Alltoall --served MPI_Scan
         --served MPI_Exscan --served MPI_Reduce_scatter_block --served MPI_Reduce_scatter
         --served MPI_Allgatherv --served MPI_Ibcast --served MPI_Iallreduce --served MPI_Ialltoall
         -- $<TARGET_FILE:preload_large_count>)
endif()
preload_case(preload_passthrough RANKS 2 3 4 8
  ARGS --served MPI_Barrier ${preload_passed} -- $<TARGET_FILE:preload_passthrough>)
if(CACHECOMM_MPIEXEC_VERSION MATCHES "Open MPI|OpenRTE")
  # A window of one rank stays MPI's (nothing to accelerate).
  preload_case(preload_windows.single RANKS 1 ARGS --reason MPI_Win_allocate:one-rank -- $<TARGET_FILE:preload_windows>)
  preload_case(preload_rma.single RANKS 1 ARGS --reason MPI_Win_allocate:one-rank -- $<TARGET_FILE:preload_rma>)
  preload_case(preload_windows RANKS 2 3 4 8
    ARGS --served MPI_Win_allocate --served MPI_Win_fence --served MPI_Put --served MPI_Get --served MPI_Accumulate
         --reason MPI_Put:done-by-mpi-under-lock --reason MPI_Put:passive-target -- $<TARGET_FILE:preload_windows>)
  # Every one-sided call in every synchronization mode, and the window's attributes.
  preload_case(preload_rma RANKS 2 3 4 8
    ARGS --served MPI_Win_allocate --served MPI_Win_fence --served MPI_Win_post/start/complete/wait
         --served MPI_Accumulate --served MPI_Get_accumulate --served MPI_Fetch_and_op
         --served MPI_Compare_and_swap --served MPI_Get --served MPI_Put
         --reason MPI_Accumulate:done-by-mpi-under-lock --reason MPI_Accumulate:passive-target
         --reason MPI_Fetch_and_op:passive-target --reason MPI_Put:passive-target
         -- $<TARGET_FILE:preload_rma>)
  # Under MPI_THREAD_MULTIPLE the same calls are served (one thread uses the window).
  preload_case(preload_rma.thread_multiple RANKS 2 4
    ARGS --served MPI_Win_allocate --served MPI_Win_fence --served MPI_Win_post/start/complete/wait
         --served MPI_Accumulate --served MPI_Get_accumulate --served MPI_Fetch_and_op
         --served MPI_Compare_and_swap --served MPI_Get --served MPI_Put
         --reason MPI_Accumulate:done-by-mpi-under-lock --reason MPI_Accumulate:passive-target
         --expect-summary "thread level MPI_THREAD_MULTIPLE: collectives and windows served"
         -- $<TARGET_FILE:preload_rma> multiple)
  # Threads using windows at once: each its own window, then four accumulating into one epoch.
  # Not under Open MPI 5.0.11: its own window code aborts in the plain run of this program
  # (free(): invalid pointer at 2 ranks), so there is nothing to compare the preloaded run with.
  if(NOT CACHECOMM_MPIEXEC_VERSION MATCHES "Open MPI\\) 5\\.")
  preload_case(preload_window_threads RANKS 2 3 4
    ARGS --served MPI_Win_allocate --served MPI_Win_fence --served MPI_Win_post/start/complete/wait
         --served MPI_Put --served MPI_Accumulate --served MPI_Win_free --reason MPI_Put:passive-target
         --reason MPI_Accumulate:done-by-mpi-under-lock
         --expect-summary "thread level MPI_THREAD_MULTIPLE: collectives and windows served"
         -- $<TARGET_FILE:preload_window_threads>)
  endif()
else()
  # MPICH: windows stay MPI's, and its passive target needs the target inside MPI. The barriers and
  # allreduces between the epochs are served all the same: cachecomm's waits then drive MPI's
  # progress (without that, the origin's unlock and the target's served barrier deadlock).
  preload_case(preload_windows RANKS 1 2 3 4 8
    ARGS --env CACHECOMM_PRELOAD_WARMUP=0 --reason MPI_Win_allocate:needs-mpi-progress
         --served MPI_Barrier -- $<TARGET_FILE:preload_windows>)
  preload_case(preload_rma RANKS 1 2 3 4
    ARGS --reason MPI_Win_allocate:needs-mpi-progress --reason MPI_Fetch_and_op:mpi-window
         --served MPI_Barrier -- $<TARGET_FILE:preload_rma>)
endif()
# Threads: collectives are served at every thread level (4 threads, each on its own communicator).
foreach(level IN ITEMS multiple serialized funneled)
  preload_case(preload_threads.${level} RANKS 1 2 3 4
    ARGS ${preload_served} --expect-summary "thread level MPI_THREAD_${level}"
         -- $<TARGET_FILE:preload_thread_multiple> ${level})
endforeach()
preload_case(preload_errors RANKS 1 2 4 ARGS --served MPI_Barrier -- $<TARGET_FILE:preload_errors>)
# A failure inside cachecomm (here: a setting it rejects when it builds the communicator's state)
# comes back from the MPI call as an MPI error class under MPI_ERRORS_RETURN.
preload_case(preload_errors.cachecomm_failure RANKS 2
  ARGS --preload-only CACHECOMM_TREE_DEGREE=1 --expect "barrier failures: 1, error class MPI_ERR_ARG"
       --reason MPI_Barrier:state-failed --failed MPI_Barrier -- $<TARGET_FILE:preload_errors> cachecomm-failure)

# Ranks passing different sizes, operations or types to one call (an erroneous program) fail at
# once with MPI's class for it, without CACHECOMM_CHECK, also when the sizes send them down
# different paths (CACHECOMM_TIMEOUT is 20 s here, "at once" is under 3 s).
set(mismatch_across_paths)
foreach(label IN ITEMS "bcast 200/280 bytes" "bcast 280/200 bytes" "bcast 4000/4200 bytes"
                       "bcast 4200/4000 bytes" "bcast 8000/4000 bytes" "bcast 120/136 KiB"
                       "bcast 136/120 KiB" "allreduce 60/70 ints" "allreduce 1020/1030 ints"
                       "allreduce 1030/1020 ints" "reduce 32000/33000 ints" "reduce 33000/32000 ints"
                       "allgather 200/280 bytes" "allgather 4000/4200 bytes" "allgather 60/72 KiB"
                       "allgather 72/60 KiB" "allgather 1000/1100 KiB" "allgather 1100/1000 KiB")
  list(APPEND mismatch_across_paths --expect "${label}: MPI_ERR_TRUNCATE (at once)")
endforeach()
preload_case(preload_errors.mismatch RANKS 2 3 4
  ARGS --preload-only CACHECOMM_CHECK=0 --preload-only CACHECOMM_TIMEOUT=20
       --expect "bcast count: rank 0 MPI_SUCCESS, others MPI_ERR_TRUNCATE (at once)"
       --expect "allreduce count: rank 0 MPI_ERR_TRUNCATE, others MPI_ERR_TRUNCATE (at once)"
       --expect "allreduce op: rank 0 MPI_ERR_OP, others MPI_ERR_OP (at once)"
       --expect "allreduce type: rank 0 MPI_ERR_TYPE, others MPI_ERR_TYPE (at once)"
       --expect "allgather count: rank 0 MPI_ERR_TRUNCATE, others MPI_ERR_TRUNCATE (at once)"
       ${mismatch_across_paths}
       --expect "allreduce 1020 ints/1020 doubles: MPI_ERR_TYPE (at once)"
       --expect "afterwards: MPI_SUCCESS, sum"
       --served MPI_Allreduce --failed MPI_Allreduce -- $<TARGET_FILE:preload_errors> mismatch)

# mpi4py from PyPI, built against the system Open MPI: only meaningful when this build uses Open MPI.
find_program(CACHECOMM_PYTHON3 python3)
if(CACHECOMM_PYTHON3 AND CACHECOMM_MPIEXEC_VERSION MATCHES "Open MPI|OpenRTE")
  execute_process(COMMAND ${CACHECOMM_PYTHON3} -c "import mpi4py, numpy" RESULT_VARIABLE mpi4py_missing
                  OUTPUT_QUIET ERROR_QUIET)
  if(mpi4py_missing EQUAL 0)
    preload_case(preload_mpi4py RANKS 1 2 3 4 8
      ARGS ${preload_served} --served MPI_Iallreduce --served MPI_Ibcast --served MPI_Iallgather
           --served MPI_Ibarrier --expect-summary "thread level MPI_THREAD_MULTIPLE"
           -- ${CACHECOMM_PYTHON3} ${preload_dir}/preload_mpi4py.py)
  else()
    message(STATUS "mpi4py or numpy not importable by ${CACHECOMM_PYTHON3}: preload_mpi4py tests skipped")
  endif()
endif()

# The preload benchmark's job script, quick, at 2 ranks (a smoke test: no timing is asserted).
add_test(NAME preload_bench_smoke.np2
         COMMAND ${PROJECT_SOURCE_DIR}/bench/preload/run_preload_bench.sh --quick --np 2 --build ${PROJECT_BINARY_DIR}
                 --mpirun ${MPIEXEC_EXECUTABLE} --json ${CMAKE_CURRENT_BINARY_DIR}/preload_bench_smoke.json)
set_tests_properties(preload_bench_smoke.np2 PROPERTIES TIMEOUT 240 LABELS "mpi;preload;np2"
  ENVIRONMENT "CACHECOMM_TIMEOUT=60;${preload_first}")
# The online selection benchmark's job script, one short round (a smoke test: no timing is
# asserted; labelled bench: the test-programs-only builds leave the benchmarks out).
add_test(NAME online_bench_smoke.np2
         COMMAND ${PROJECT_SOURCE_DIR}/bench/preload/run_online_bench.sh --rounds 1 --calls 100
                 --np 2 --build ${PROJECT_BINARY_DIR} --mpirun ${MPIEXEC_EXECUTABLE})
set_tests_properties(online_bench_smoke.np2 PROPERTIES TIMEOUT 240 LABELS "mpi;preload;np2;bench"
  ENVIRONMENT "CACHECOMM_TIMEOUT=60;${preload_first}"
  PASS_REGULAR_EXPRESSION "bcast +1048576 \\|[^\n]*\n\\(first 60 calls")

# Nonblocking collectives: every call x datatype x root x in-place x communicator kind, several
# outstanding, mixed with MPI's own requests under every completion call, freed requests, a rank
# computing between start and wait; the pipelined CG overlaps MPI_Iallreduce with its work.
foreach(program IN ITEMS preload_nonblocking preload_nonblocking_only preload_nonblocking_blocks
                        preload_nonblocking_layouts
                        preload_nonblocking_vector preload_pipelined_cg preload_crossed_nonblocking
                        preload_thread_nonblocking preload_blocking_progress)
  add_executable(${program} ${preload_dir}/${program}.c)
  target_link_libraries(${program} PRIVATE MPI::MPI_C Threads::Threads m)
endforeach()
set(preload_nonblocking_served --served MPI_Ibarrier --served MPI_Ibcast --served MPI_Ireduce
                               --served MPI_Iallreduce --served MPI_Iallgather)
preload_case(preload_nonblocking RANKS 1 2 3 4 8
  ARGS ${preload_nonblocking_served} --no-reason MPI_Iallreduce:beyond-nonblocking-slot
       --no-reason MPI_Ibcast:derived-datatype --no-reason MPI_Ibcast:beyond-nonblocking-slot
       --no-reason MPI_Ibarrier:warming-up
       -- $<TARGET_FILE:preload_nonblocking>)
# The same with the children (dup, split) built lazily, by their blocking calls after the warm-up:
# their first nonblocking calls pass to MPI.
preload_case(preload_nonblocking.lazy_children RANKS 3
  ARGS ${preload_nonblocking_served} --env CACHECOMM_PRELOAD_EAGER_CHILDREN=0
       --reason MPI_Ibarrier:warming-up -- $<TARGET_FILE:preload_nonblocking>)
# A program with no blocking collective at all: the world's state is built at MPI_Init and its
# children's (dup, dup_with_info, split, split_type) in the calls that make them, so every
# nonblocking call is served, none passes to MPI (before session 32 all of them did: warming-up;
# before session 33, all of the children's).
preload_case(preload_nonblocking_only RANKS 1 2 3 4
  ARGS --summary-regex "MPI_Ibarrier +served +[1-9][0-9]* +passed +0$"
       --summary-regex "MPI_Iallreduce +served +[1-9][0-9]* +passed +0$"
       --summary-regex "MPI_Ibcast +served +[1-9][0-9]* +passed +0$"
       -- $<TARGET_FILE:preload_nonblocking_only>)
# 12 duplicates of the world, 20 rounds on each: the first 8 are built in MPI_Comm_dup
# (CACHECOMM_PRELOAD_EAGER_CHILDREN), the last 4 pass their 80 calls of each kind to MPI (the
# summary sums over ranks).
foreach(np IN ITEMS 1 2 3)
  math(EXPR served "160 * ${np}")
  math(EXPR passed "80 * ${np}")
  preload_case(preload_nonblocking_only.many_children RANKS ${np}
    ARGS --summary-regex "MPI_Iallreduce +served +${served} +passed +${passed} +\\(warming-up ${passed}\\)$"
         --summary-regex "MPI_Ibcast +served +${served} +passed +${passed} +\\(warming-up ${passed}\\)$"
         -- $<TARGET_FILE:preload_nonblocking_only> many-children)
endforeach()
# Ranks starting one MPI_Iallreduce on either side of a barrier (mpi4py's fallback Comm.Iagree),
# while the communicator's state and nonblocking area get built and after: the early rank's call
# must neither hang the barrier nor be matched with anything else. A hang fails within 60 s.
# With more than one rank, the calls started before the nonblocking area existed on some rank go
# to MPI on every rank (nonblocking-setup).
# The duplicate it runs on is built lazily (CACHECOMM_PRELOAD_EAGER_CHILDREN=0), as any
# communicator beyond a parent's first children is.
preload_case(preload_crossed_nonblocking RANKS 1 RUN_LIMIT 60
  ARGS --served MPI_Iallreduce --served MPI_Barrier --env CACHECOMM_PRELOAD_EAGER_CHILDREN=0
       -- $<TARGET_FILE:preload_crossed_nonblocking>)
preload_case(preload_crossed_nonblocking RANKS 2 3 4 RUN_LIMIT 60
  ARGS --served MPI_Iallreduce --served MPI_Barrier --reason MPI_Iallreduce:nonblocking-setup
       --env CACHECOMM_PRELOAD_EAGER_CHILDREN=0 -- $<TARGET_FILE:preload_crossed_nonblocking>)
# MPI_Ialltoall, MPI_Igather, MPI_Iscatter, MPI_Ireduce_scatter_block, MPI_Iscan, MPI_Iexscan
# against the system MPI's blocking answer (PMPI_) in the same run.
preload_case(preload_nonblocking_blocks RANKS 1 2 3 4 8
  ARGS --served MPI_Ialltoall --served MPI_Igather --served MPI_Iscatter
       --served MPI_Ireduce_scatter_block --served MPI_Iscan --served MPI_Iexscan
       --no-reason MPI_Ialltoall:derived-datatype --no-reason MPI_Igather:beyond-nonblocking-slot
       --no-reason MPI_Iscan:beyond-nonblocking-slot
       -- $<TARGET_FILE:preload_nonblocking_blocks>)
# Ranks describing the same data with datatypes of different layouts (one signature): every rank
# must take the same path. A rank deciding from its own layout leaves the others waiting forever,
# so each run is limited to 120 s (the test to 300 s) to fail rather than stall (plain Open MPI 4.1
# takes 42 s at 8 ranks on the 2 cores of the EPYC Zen 1 VM).
preload_case(preload_nonblocking_layouts RANKS 1 2 3 4 8 RUN_LIMIT 120
  ARGS --served MPI_Ibcast --served MPI_Iallgather --served MPI_Igather --served MPI_Iscatter
       --served MPI_Ialltoall --served MPI_Ireduce --no-reason MPI_Ibcast:beyond-nonblocking-slot
       --no-reason MPI_Igather:beyond-nonblocking-slot --no-reason MPI_Ibcast:derived-datatype
       --no-reason MPI_Iallgather:derived-datatype --no-reason MPI_Igather:derived-datatype
       --no-reason MPI_Iscatter:derived-datatype --no-reason MPI_Ialltoall:derived-datatype
       -- $<TARGET_FILE:preload_nonblocking_layouts>)
# A rank blocked in MPI's point-to-point calls (receive, probe, synchronous or large send...) or in a
# served blocking collective on another communicator still progresses its pending nonblocking
# collectives (intercept_point_to_point.cpp, the waits' side work): with a ring of 4 and 7
# broadcasts outstanding, the root's wait needs contributions the blocked readers hold. Small
# broadcasts (one slot each), large ones cut into chunks, and large ones by single copy, where the
# root's completion needs its reader's start.
preload_case(preload_blocking_progress RANKS 1 2 3 4 RUN_LIMIT 60
  ARGS --served MPI_Ibcast --served MPI_Barrier --no-reason MPI_Ibcast:beyond-nonblocking-slot
       --env CACHECOMM_PRELOAD_NONBLOCKING_SLOTS=4 --env CACHECOMM_BARRIER=central-line
       -- $<TARGET_FILE:preload_blocking_progress>)
preload_case(preload_blocking_progress.chunks RANKS 2 3 RUN_LIMIT 60
  ARGS --served MPI_Ibcast --no-reason MPI_Ibcast:beyond-nonblocking-slot
       --env CACHECOMM_PRELOAD_NONBLOCKING_SLOTS=4 --env CACHECOMM_BARRIER=central-line
       --env CACHECOMM_NONBLOCKING_SINGLE_COPY=off
       -- $<TARGET_FILE:preload_blocking_progress> 32768)
preload_case(preload_blocking_progress.single_copy_all RANKS 2 RUN_LIMIT 60
  ARGS --served MPI_Ibcast --no-reason MPI_Ibcast:beyond-nonblocking-slot
       --env CACHECOMM_PRELOAD_NONBLOCKING_SLOTS=4 --env CACHECOMM_BARRIER=central-line
       --env CACHECOMM_NONBLOCKING_SINGLE_COPY=all
       -- $<TARGET_FILE:preload_blocking_progress> 32768)

# The same programs with the shallowest ring, 4 slots per rank: where ranks have cores of their own
# the automatic ring (nonblocking_ring_slots) is deeper than the operations they keep outstanding,
# and these runs keep a start that finds every slot in use (its data goes in at the owner's next
# MPI call) tested on any machine. (Oversubscribed, the 3-8 rank runs above use 4 slots anyway.)
preload_case(preload_nonblocking.ring4 RANKS 2
  ARGS --env CACHECOMM_PRELOAD_NONBLOCKING_SLOTS=4 ${preload_nonblocking_served}
       -- $<TARGET_FILE:preload_nonblocking>)
preload_case(preload_nonblocking_blocks.ring4 RANKS 2
  ARGS --env CACHECOMM_PRELOAD_NONBLOCKING_SLOTS=4 --served MPI_Ialltoall --served MPI_Igather
       --served MPI_Iscatter --served MPI_Ireduce_scatter_block --served MPI_Iscan
       --served MPI_Iexscan -- $<TARGET_FILE:preload_nonblocking_blocks>)
preload_case(preload_nonblocking_layouts.ring4 RANKS 2 RUN_LIMIT 60
  ARGS --env CACHECOMM_PRELOAD_NONBLOCKING_SLOTS=4 --served MPI_Ibcast --served MPI_Iallgather
       --served MPI_Igather --served MPI_Iscatter --served MPI_Ialltoall --served MPI_Ireduce
       -- $<TARGET_FILE:preload_nonblocking_layouts>)
# The same programs with single copy for every kind the channel moves that way (ibcast, iscatter,
# igather, iallgather, ialltoall from 64 KiB at 2 ranks on their own cores; auto: ibcast only).
set(preload_single_copy_all --env CACHECOMM_NONBLOCKING_SINGLE_COPY=all)
preload_case(preload_nonblocking.single_copy_all RANKS 2
  ARGS ${preload_single_copy_all} ${preload_nonblocking_served}
       -- $<TARGET_FILE:preload_nonblocking>)
preload_case(preload_nonblocking_blocks.single_copy_all RANKS 2
  ARGS ${preload_single_copy_all} --served MPI_Ialltoall --served MPI_Igather
       --served MPI_Iscatter -- $<TARGET_FILE:preload_nonblocking_blocks>)
preload_case(preload_nonblocking_layouts.single_copy_all RANKS 2 RUN_LIMIT 60
  ARGS ${preload_single_copy_all} --served MPI_Ibcast --served MPI_Iallgather
       --served MPI_Igather --served MPI_Iscatter --served MPI_Ialltoall
       -- $<TARGET_FILE:preload_nonblocking_layouts>)
# MPI_Iallgatherv and MPI_Ireduce_scatter (every rank knows every count) against PMPI_; its largest
# blocks are beyond the slot from 2 ranks on.
set(preload_nonblocking_vector_checks --served MPI_Iallgatherv --served MPI_Ireduce_scatter
    --reason MPI_Iallgatherv:empty --reason MPI_Ireduce_scatter:empty)
preload_case(preload_nonblocking_vector RANKS 1 RUN_LIMIT 60
  ARGS ${preload_nonblocking_vector_checks} -- $<TARGET_FILE:preload_nonblocking_vector>)
preload_case(preload_nonblocking_vector RANKS 2 3 4 8 RUN_LIMIT 60
  ARGS ${preload_nonblocking_vector_checks} --no-reason MPI_Iallgatherv:beyond-nonblocking-slot
       -- $<TARGET_FILE:preload_nonblocking_vector>)
# Calls beyond a whole ring of chunks go to MPI: the same programs with 4 slots of 64 KiB, so that
# their largest cases (256 KiB and more) pass through.
set(preload_small_ring --env CACHECOMM_PRELOAD_NONBLOCKING_SLOTS=4
                       --env CACHECOMM_PRELOAD_NONBLOCKING_BYTES=65536)
preload_case(preload_nonblocking.small_ring RANKS 2
  ARGS ${preload_small_ring} ${preload_nonblocking_served}
       --reason MPI_Iallreduce:beyond-nonblocking-slot --reason MPI_Ibcast:beyond-nonblocking-slot
       -- $<TARGET_FILE:preload_nonblocking>)
preload_case(preload_nonblocking_blocks.small_ring RANKS 2
  ARGS ${preload_small_ring} --served MPI_Ialltoall --served MPI_Igather --served MPI_Iscatter
       --reason MPI_Ialltoall:beyond-nonblocking-slot --reason MPI_Igather:beyond-nonblocking-slot
       --reason MPI_Iscan:beyond-nonblocking-slot -- $<TARGET_FILE:preload_nonblocking_blocks>)
preload_case(preload_nonblocking_layouts.small_ring RANKS 2 RUN_LIMIT 60
  ARGS ${preload_small_ring} --served MPI_Ibcast --served MPI_Igather
       --reason MPI_Ibcast:beyond-nonblocking-slot --reason MPI_Igather:beyond-nonblocking-slot
       -- $<TARGET_FILE:preload_nonblocking_layouts>)
preload_case(preload_nonblocking_vector.small_ring RANKS 2 RUN_LIMIT 60
  ARGS ${preload_small_ring} ${preload_nonblocking_vector_checks}
       --reason MPI_Iallgatherv:beyond-nonblocking-slot
       --reason MPI_Ireduce_scatter:beyond-nonblocking-slot
       -- $<TARGET_FILE:preload_nonblocking_vector>)
preload_case(preload_nonblocking_blocks.peers_early RANKS 2 4 8
  ARGS --preload-only CACHECOMM_PRELOAD_WARMUP=3 --served MPI_Ialltoall --served MPI_Iscatter
       --expect "peers finished while the last rank computed: yes"
       -- $<TARGET_FILE:preload_nonblocking_blocks> peers-early)
# Peers finish while the rank they wait for computes: its data went in at its start.
preload_case(preload_nonblocking.peers_early RANKS 2 4 8
  ARGS --preload-only CACHECOMM_PRELOAD_WARMUP=3 --served MPI_Iallreduce --served MPI_Ibcast
       --expect "peers finished while the last rank computed: yes"
       -- $<TARGET_FILE:preload_nonblocking> peers-early)
# Freed requests still complete (more of them than the ring: the next call needs them done).
preload_case(preload_nonblocking.request_free RANKS 1 2 4
  ARGS --preload-only CACHECOMM_PRELOAD_WARMUP=3 --served MPI_Ibarrier --served MPI_Iallreduce
       --served MPI_Ibcast --expect "freed requests: checked" -- $<TARGET_FILE:preload_nonblocking> request-free)
preload_case(preload_nonblocking.cancel RANKS 2
  ARGS --preload-only CACHECOMM_PRELOAD_WARMUP=3 --served MPI_Iallreduce
       --expect "cancel refused: MPI_ERR_REQUEST" -- $<TARGET_FILE:preload_nonblocking> cancel)
# MPI_THREAD_MULTIPLE: the same program at mpi4py's default level is served as at any other.
preload_case(preload_nonblocking.thread_multiple RANKS 2 3
  ARGS ${preload_nonblocking_served} --expect-summary "thread level MPI_THREAD_MULTIPLE"
       -- $<TARGET_FILE:preload_nonblocking> multiple)
# Threads at MPI_THREAD_MULTIPLE, each starting nonblocking collectives on its own communicator
# and completing them (every completion call, mixed with MPI's own requests, one larger than a
# slot), one thread waiting for a request another started; then with requests freed while other
# threads complete theirs (preloaded only: Open MPI 4 refuses that). A hang fails in 90 s.
preload_case(preload_thread_nonblocking RANKS 1 2 3 4 8 RUN_LIMIT 90
  ARGS ${preload_nonblocking_served} --served MPI_Ialltoall
       --no-reason MPI_Iallreduce:beyond-nonblocking-slot
       --expect-summary "thread level MPI_THREAD_MULTIPLE" -- $<TARGET_FILE:preload_thread_nonblocking>)
preload_case(preload_thread_nonblocking.request_free RANKS 2 3 RUN_LIMIT 90
  ARGS --preload-only CACHECOMM_PRELOAD_WARMUP=3 ${preload_nonblocking_served}
       --expect "freed requests: checked"
       -- $<TARGET_FILE:preload_thread_nonblocking> request-free)
preload_case(preload_pipelined_cg RANKS 1 2 3 4 8
  ARGS --served MPI_Iallreduce -- $<TARGET_FILE:preload_pipelined_cg>)

# The back-to-back loop (bench/peers/osu_compare.sh's b2b-<op>), preloaded at 3 ranks: its rows in
# OSU's layout up to the largest size (a smoke test: no timing is asserted).
# The paired A/B bench, preloaded at 3 ranks: a row for every size of a served and a passed-through
# call, ratios printed (a smoke test: no timing is asserted).
if(TARGET cachecomm-paired-bench)
  add_test(NAME paired_bench_smoke.np3
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${CACHECOMM_MPIEXEC_FLAGS}
                   env LD_PRELOAD=${preload_first_libs}$<TARGET_FILE:cachecomm_mpi>
                   $<TARGET_FILE:cachecomm-paired-bench> --ops allreduce,iallgather -m 4:4096 -i 5
                   --pairs 3 --warmup 5)
  set_tests_properties(paired_bench_smoke.np3 PROPERTIES TIMEOUT 120 LABELS "mpi;preload;np3;bench"
    ENVIRONMENT "CACHECOMM_TIMEOUT=60;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
    PASS_REGULAR_EXPRESSION "preload loaded\n(.*\n)*# allreduce\n.*\n +4 +[0-9.]+ +[0-9.]+ +[0-9.]+ (.*\n)* +4096 (.*\n)*# iallgather\n(.*\n)* +4096 +[0-9.]+")
endif()
if(TARGET cachecomm-b2b-bench)
  add_test(NAME b2b_bench_smoke.np3
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${CACHECOMM_MPIEXEC_FLAGS}
                   env LD_PRELOAD=${preload_first_libs}$<TARGET_FILE:cachecomm_mpi>
                   $<TARGET_FILE:cachecomm-b2b-bench> --op allreduce -m 4:4096 -i 20 --batches 3)
  set_tests_properties(b2b_bench_smoke.np3 PROPERTIES TIMEOUT 120 LABELS "mpi;preload;np3;bench"
    ENVIRONMENT "CACHECOMM_TIMEOUT=60;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
    PASS_REGULAR_EXPRESSION "# Size +Avg Latency\\(us\\)\n4 +[0-9.]+\n(.*\n)*4096 +[0-9.]+\n")
endif()
