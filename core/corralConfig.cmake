# The corral plugin SDK: target corral::sdk (headers under include/corral, static library).
include(CMakeFindDependencyMacro)
find_dependency(Threads)
find_dependency(CURL)
find_dependency(RapidJSON)
find_dependency(OpenSSL)
include(${CMAKE_CURRENT_LIST_DIR}/corralTargets.cmake)
if(TARGET corral::sdk AND RAPIDJSON_INCLUDE_DIRS)
  set_property(TARGET corral::sdk APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES ${RAPIDJSON_INCLUDE_DIRS})
endif()

# corral_add_plugin(NAME SOURCES file... [LIBS lib...]): a provider plugin built the way
# corral loads it: a module named lib<NAME>.so linking corral::sdk, exporting only its
# entry point (the SDK's symbols stay private), installed to lib/corral/plugins.
function(corral_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "corral_add_plugin(${name}) needs SOURCES")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE corral::sdk ${ARG_LIBS})
  target_compile_features(${name} PRIVATE cxx_std_20)
  set_target_properties(${name} PROPERTIES PREFIX "lib" CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${name} PRIVATE -Wl,--exclude-libs,ALL -Wl,-z,defs)
  install(TARGETS ${name} LIBRARY DESTINATION lib/corral/plugins)
endfunction()
