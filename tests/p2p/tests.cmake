# Point-to-point channel: every ring geometry and protocol (inline, pipelined, single copy) at 2-4
# ranks; the `.split` variant makes some peers remote so the MPI path is exercised too.
cachecomm_add_mpi_test(mpi_channel SOURCES ${CMAKE_CURRENT_LIST_DIR}/channel_test.cpp RANKS 2 3 4 TIMEOUT 180)
cachecomm_add_mpi_test(mpi_channel SOURCES ${CMAKE_CURRENT_LIST_DIR}/channel_test.cpp RANKS 3 4 SUFFIX .split
                       ENV CACHECOMM_RANKS_PER_NODE=2 TIMEOUT 180)
# Every wait asleep on its futex: the words the channel sleeps on must be the ones its peers wake.
cachecomm_add_mpi_test(mpi_channel SOURCES ${CMAKE_CURRENT_LIST_DIR}/channel_test.cpp RANKS 3 SUFFIX .sleep
                       ENV CACHECOMM_WAIT=sleep TIMEOUT 180)
