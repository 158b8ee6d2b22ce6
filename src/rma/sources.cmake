target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/accumulate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/window.cpp
)
