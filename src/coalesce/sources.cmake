target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/line_store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_line_sink.cpp
  ${CMAKE_CURRENT_LIST_DIR}/comm_cache.cpp)
