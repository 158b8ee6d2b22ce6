target_sources(cachecomm PRIVATE ${CMAKE_CURRENT_LIST_DIR}/channel.cpp ${CMAKE_CURRENT_LIST_DIR}/copy.cpp)
