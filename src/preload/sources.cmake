# The preload library's settings are declared in libcachecomm, so cachecomm-info lists them
# (the preload target itself is in CMakeLists.txt here).
target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/settings.cpp
)
