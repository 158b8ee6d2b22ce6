# Data collectives: the full matrix against MPI, errors and checking, a random stress sequence.
# CACHECOMM_CHECK is on in the test suite (off by default for users).
set(CACHECOMM_COLL_TEST_ENV CACHECOMM_CHECK=1)
cachecomm_add_mpi_test(mpi_collectives SOURCES coll/collectives_test.cpp RANKS 1 2 3 4 5 8 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_collectives SOURCES coll/collectives_test.cpp RANKS 3 4 5 SUFFIX .split
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_RANKS_PER_NODE=2)
cachecomm_add_mpi_test(mpi_collectives SOURCES coll/collectives_test.cpp RANKS 2 SUFFIX .no_single_copy
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_SINGLE_COPY=0 CACHECOMM_COLL_CHUNK=4096)
cachecomm_add_mpi_test(mpi_collective_errors SOURCES coll/errors_test.cpp RANKS 1 2 3 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_collective_errors SOURCES coll/errors_test.cpp RANKS 3 SUFFIX .split
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_RANKS_PER_NODE=2)
cachecomm_add_mpi_test(mpi_collective_stress SOURCES coll/stress_test.cpp RANKS 2 3 8 ENV ${CACHECOMM_COLL_TEST_ENV})
cachecomm_add_mpi_test(mpi_collective_stress SOURCES coll/stress_test.cpp RANKS 4 SUFFIX .split
                       ENV ${CACHECOMM_COLL_TEST_ENV} CACHECOMM_RANKS_PER_NODE=2)
