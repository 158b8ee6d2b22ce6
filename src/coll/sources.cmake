target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/node_barrier.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reduce_kernels.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coll_engine.cpp
  ${CMAKE_CURRENT_LIST_DIR}/call_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coll_settings.cpp
  ${CMAKE_CURRENT_LIST_DIR}/broadcast.cpp
  ${CMAKE_CURRENT_LIST_DIR}/broadcast_single_copy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reduce.cpp
  ${CMAKE_CURRENT_LIST_DIR}/allgather.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collectives.cpp
  ${CMAKE_CURRENT_LIST_DIR}/algorithm_registry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/barrier.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reduce_large.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reduce_split.cpp
  ${CMAKE_CURRENT_LIST_DIR}/allgather_single_copy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/allgather_stage_or_pull.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shared_copy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/store_mode.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ring_stores.cpp
  ${CMAKE_CURRENT_LIST_DIR}/single_copy_exchange.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gather.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scatter.cpp
  ${CMAKE_CURRENT_LIST_DIR}/alltoall.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/block_arguments.cpp
  ${CMAKE_CURRENT_LIST_DIR}/block_collectives.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reduce_scatter_block.cpp
  ${CMAKE_CURRENT_LIST_DIR}/allgatherv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gatherv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scatterv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/alltoallv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/vector_collectives.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_library.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nonblocking_channel.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nonblocking_finish.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nonblocking_progress.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nonblocking_request.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nonblocking_collectives.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nonblocking_blocks.cpp
)
target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/tuning_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tuning_loader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/online_selection.cpp
)
# The tuning file's JSON parser (header-only, private to the library).
target_link_libraries(cachecomm PRIVATE $<BUILD_INTERFACE:nlohmann_json::nlohmann_json>)
