# The preload library's settings and the identity of the MPI this build is for live in libcachecomm,
# so cachecomm-info lists and names them (the preload target itself is in CMakeLists.txt here).
target_sources(cachecomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/settings.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_identity.cpp
)
