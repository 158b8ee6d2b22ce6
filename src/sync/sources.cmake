target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/futex.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_progress.cpp
  ${CMAKE_CURRENT_LIST_DIR}/peer_monitor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/waiter.cpp
)
