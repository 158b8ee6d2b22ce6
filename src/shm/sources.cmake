target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/segment.cpp
  ${CMAKE_CURRENT_LIST_DIR}/segment_objects.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cross_memory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_copy.cpp
)
