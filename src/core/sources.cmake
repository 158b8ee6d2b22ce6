target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/error.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/comm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/machine_sharing.cpp
  ${CMAKE_CURRENT_LIST_DIR}/datatype.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_types.cpp
)
