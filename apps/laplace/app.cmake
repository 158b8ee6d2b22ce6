# The seed's streaming Laplacian solver: kernel + loop in a library (tests use it), CLI on top.
add_library(cachecomm_laplace STATIC ${CMAKE_CURRENT_LIST_DIR}/laplace_kernel.cpp ${CMAKE_CURRENT_LIST_DIR}/solver.cpp)
target_include_directories(cachecomm_laplace PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(cachecomm_laplace PUBLIC cachecomm OpenMP::OpenMP_CXX PRIVATE cachecomm_flags)
# Same operations in the same order as the serial reference: no fused multiply-add contraction.
target_compile_options(cachecomm_laplace PRIVATE -march=${CACHECOMM_ARCH} -ffp-contract=off)

add_executable(cachecomm-laplace ${CMAKE_CURRENT_LIST_DIR}/main.cpp)
target_link_libraries(cachecomm-laplace PRIVATE cachecomm_laplace cachecomm_bench_support OpenMP::OpenMP_CXX cachecomm_flags)
