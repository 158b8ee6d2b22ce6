# cmake --install: headers, libcachecomm, the preload library, the programs, the docs, a CMake
# package (find_package(cachecomm 0.2) -> cachecomm::cachecomm) and cachecomm.pc.
include(CMakePackageConfigHelpers)

set(CACHECOMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cachecomm)

install(TARGETS cachecomm cachecomm_mpi EXPORT cachecomm-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cachecomm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
install(EXPORT cachecomm-targets NAMESPACE cachecomm:: DESTINATION ${CACHECOMM_CMAKE_DIR})

# Programs (cachecomm-bench and the report tools are installed by bench/).
foreach(program IN ITEMS cachecomm-info cachecomm-laplace cachecomm-tune)
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

# cachecomm-run finds the preload library relative to itself: one copy for the build tree, one for
# the installed tree.
set(CACHECOMM_RUN_MPIEXEC ${MPIEXEC_EXECUTABLE})
set(CACHECOMM_RUN_PRELOAD "../src/preload/libcachecomm_mpi.so")
configure_file(${PROJECT_SOURCE_DIR}/tools/cachecomm-run.in ${PROJECT_BINARY_DIR}/tools/cachecomm-run @ONLY)
file(RELATIVE_PATH CACHECOMM_RUN_PRELOAD ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
     ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libcachecomm_mpi.so)
configure_file(${PROJECT_SOURCE_DIR}/tools/cachecomm-run.in ${PROJECT_BINARY_DIR}/install/cachecomm-run @ONLY)
install(PROGRAMS ${PROJECT_BINARY_DIR}/install/cachecomm-run DESTINATION ${CMAKE_INSTALL_BINDIR})

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/architecture.md
              ${PROJECT_SOURCE_DIR}/docs/configuration.md ${PROJECT_SOURCE_DIR}/docs/install.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples DESTINATION ${CMAKE_INSTALL_DOCDIR})

# CMake package. 0.x: a minor release may break the API, so only the same minor version matches.
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cachecomm-config.cmake.in
                              ${PROJECT_BINARY_DIR}/install/cachecomm-config.cmake
                              INSTALL_DESTINATION ${CACHECOMM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/install/cachecomm-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install/cachecomm-config.cmake
              ${PROJECT_BINARY_DIR}/install/cachecomm-config-version.cmake
        DESTINATION ${CACHECOMM_CMAKE_DIR})

# pkg-config: the MPI flags are written out (MPIs do not agree on a .pc name of their own).
set(CACHECOMM_PC_MPI_CFLAGS "")
foreach(dir IN LISTS MPI_C_INCLUDE_DIRS)
  string(APPEND CACHECOMM_PC_MPI_CFLAGS " -I${dir}")
endforeach()
set(CACHECOMM_PC_MPI_LIBS "")
foreach(library IN LISTS MPI_C_LIBRARIES)
  get_filename_component(dir ${library} DIRECTORY)
  get_filename_component(name ${library} NAME_WE)
  string(REGEX REPLACE "^lib" "" name ${name})
  string(APPEND CACHECOMM_PC_MPI_LIBS " -L${dir} -l${name}")
endforeach()
get_filename_component(CACHECOMM_PC_MPI_LIBDIR "${CACHECOMM_MPI_LIBRARY}" DIRECTORY)
# Relocatable: the prefix is found from the .pc file's own place (cmake --install --prefix X).
file(RELATIVE_PATH CACHECOMM_PC_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" CACHECOMM_PC_PREFIX "${CACHECOMM_PC_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/cachecomm.pc.in ${PROJECT_BINARY_DIR}/install/cachecomm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/cachecomm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
