# The corral plugin SDK: target corral::sdk (headers under include/corral, static library).
include(CMakeFindDependencyMacro)
find_dependency(Threads)
find_dependency(CURL)
find_dependency(RapidJSON)
include(${CMAKE_CURRENT_LIST_DIR}/corralTargets.cmake)
if(TARGET corral::sdk AND RAPIDJSON_INCLUDE_DIRS)
  set_property(TARGET corral::sdk APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES ${RAPIDJSON_INCLUDE_DIRS})
endif()
