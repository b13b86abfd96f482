# regiontrace_add_sink(<name> SOURCES <files...>
#                      [LINK_LIBRARIES <libs...>]
#                      [OUTPUT_DIRECTORY <dir>] [INSTALL_DESTINATION <dir>] [NO_INSTALL])
#
# Builds the sink plugin regiontrace_sink_<name>.so against RegionTrace::sdk
# only, with hidden visibility (only the REGIONTRACE_SINK_PLUGIN symbols are
# exported). Put its folder in REGIONTRACE_PLUGIN_PATH, or install it into
# <libdir>/regiontrace/plugins to make it a built-in.
function(regiontrace_add_sink name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIRECTORY;INSTALL_DESTINATION" "SOURCES;LINK_LIBRARIES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "regiontrace_add_sink(${name}): SOURCES is required")
  endif()
  if(NOT name MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "regiontrace_add_sink(${name}): sink names are lower_snake_case")
  endif()
  set(target regiontrace_sink_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE RegionTrace::sdk ${ARG_LINK_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME regiontrace_sink_${name}
    CXX_STANDARD 17
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(NOT ARG_OUTPUT_DIRECTORY AND DEFINED REGIONTRACE_SINK_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY ${REGIONTRACE_SINK_OUTPUT_DIRECTORY})
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  endif()
  if(ARG_NO_INSTALL)
    return()
  endif()
  if(NOT ARG_INSTALL_DESTINATION AND DEFINED REGIONTRACE_SINK_INSTALL_DESTINATION)
    set(ARG_INSTALL_DESTINATION ${REGIONTRACE_SINK_INSTALL_DESTINATION})
  endif()
  if(ARG_INSTALL_DESTINATION)
    install(TARGETS ${target} LIBRARY DESTINATION ${ARG_INSTALL_DESTINATION})
  endif()
  # Inside regiontrace: a built-in sink finds libregiontrace_torch and the
  # like in the libdir two folders up, wherever the prefix is.
  # Built with it too: the build tree has the install tree's layout, and a
  # build RUNPATH padded for the install-time rewrite would hold empty
  # entries (the current folder).
  if(DEFINED REGIONTRACE_SINK_INSTALL_RPATH)
    set_target_properties(${target} PROPERTIES INSTALL_RPATH "${REGIONTRACE_SINK_INSTALL_RPATH}"
      BUILD_WITH_INSTALL_RPATH ON)
  endif()
endfunction()
