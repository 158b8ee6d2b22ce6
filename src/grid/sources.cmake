target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/decomposition.cpp
  ${CMAKE_CURRENT_LIST_DIR}/halo_exchange.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transport_mpi.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transport_model.cpp)
