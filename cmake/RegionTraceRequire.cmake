# regiontrace_require(<Package> [<find_package arguments>...]
#                     DEBIAN <package> FOR <what it is used for>)
#
# find_package(<Package> ...) for a library the build cannot do without; when
# it is missing, stops with one line that names the Debian package to install
# (what a user building from pip or a checkout needs to read), instead of
# CMake's page about <Package>Config.cmake.
macro(regiontrace_require regiontrace_require_package)
  cmake_parse_arguments(regiontrace_require "" "DEBIAN;FOR" "" ${ARGN})
  find_package(${regiontrace_require_package} ${regiontrace_require_UNPARSED_ARGUMENTS} QUIET)
  if(NOT ${regiontrace_require_package}_FOUND)
    message(FATAL_ERROR "regiontrace needs ${regiontrace_require_package} "
                        "(${regiontrace_require_FOR}): install the Debian package "
                        "${regiontrace_require_DEBIAN} (apt-get install ${regiontrace_require_DEBIAN}; "
                        "scripts/install_deps.sh installs everything), or point "
                        "CMAKE_PREFIX_PATH at another installation")
  endif()
endmacro()

# The same for a pkg-config module, whose imported target is
# PkgConfig::<prefix>.
macro(regiontrace_require_pkg_config regiontrace_require_prefix regiontrace_require_module)
  cmake_parse_arguments(regiontrace_require "" "DEBIAN;FOR" "" ${ARGN})
  find_package(PkgConfig QUIET)
  if(NOT PkgConfig_FOUND)
    message(FATAL_ERROR "regiontrace needs pkg-config to find ${regiontrace_require_module} "
                        "(${regiontrace_require_FOR}): install the Debian package pkg-config")
  endif()
  pkg_check_modules(${regiontrace_require_prefix} QUIET IMPORTED_TARGET ${regiontrace_require_module})
  if(NOT ${regiontrace_require_prefix}_FOUND)
    message(FATAL_ERROR "regiontrace needs ${regiontrace_require_module} "
                        "(${regiontrace_require_FOR}): install the Debian package "
                        "${regiontrace_require_DEBIAN} (apt-get install ${regiontrace_require_DEBIAN}; "
                        "scripts/install_deps.sh installs everything)")
  endif()
endmacro()
