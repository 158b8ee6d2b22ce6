target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/machine.cpp
  ${CMAKE_CURRENT_LIST_DIR}/unit_placement.cpp
)
