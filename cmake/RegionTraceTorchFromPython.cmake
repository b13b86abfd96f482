# Finds the libtorch that a Python PyTorch carries (pip wheels, conda, a venv):
# users of CUDA 2.x rarely have a separate libtorch download, but always have
# `import torch`. Asked for with -DREGIONTRACE_TORCH_FROM_PYTHON=ON or by
# naming the interpreter, -DREGIONTRACE_PYTHON=/path/to/python (the
# environment variable REGIONTRACE_PYTHON works too).
#
# Sets Torch_DIR from torch.utils.cmake_prefix_path and compiles everything
# with the C++ ABI the wheel was built with (torch._C._GLIBCXX_USE_CXX11_ABI):
# mixing the two std::string layouts in one process links but crashes.
option(REGIONTRACE_TORCH_FROM_PYTHON "Use the libtorch inside a Python PyTorch (see REGIONTRACE_PYTHON)" OFF)
set(REGIONTRACE_PYTHON "$ENV{REGIONTRACE_PYTHON}" CACHE FILEPATH
    "Python interpreter whose `import torch` provides libtorch (implies REGIONTRACE_TORCH_FROM_PYTHON)")
# pip (scikit-build-core) names the interpreter it builds for: its torch is
# the one the wheel must link.
if(REGIONTRACE_WHEEL AND REGIONTRACE_PYTHON STREQUAL "" AND Python3_EXECUTABLE)
  set(REGIONTRACE_PYTHON "${Python3_EXECUTABLE}" CACHE FILEPATH "" FORCE)
endif()

if(NOT REGIONTRACE_TORCH_FROM_PYTHON AND REGIONTRACE_PYTHON STREQUAL "")
  return()
endif()
if(REGIONTRACE_WITH_TORCH STREQUAL "OFF")
  if(REGIONTRACE_TORCH_FROM_PYTHON)
    message(FATAL_ERROR "REGIONTRACE_TORCH_FROM_PYTHON=ON asks for libtorch, "
                        "but REGIONTRACE_WITH_TORCH=OFF")
  endif()
  # A build without libtorch (the sanitizer and fuzz builds): the interpreter
  # named in the environment is for the Python side only, which such a
  # build leaves out or builds without observe().
  return()
endif()

if(REGIONTRACE_PYTHON STREQUAL "")
  # The first python3 on PATH that imports torch; /usr/bin/python3 is where
  # Debian's python3-torch lives when PATH has another interpreter first.
  find_program(regiontrace_python_on_path NAMES python3 python NO_CACHE)
  foreach(candidate IN ITEMS "${regiontrace_python_on_path}" /usr/bin/python3)
    if(candidate AND EXISTS "${candidate}")
      execute_process(COMMAND "${candidate}" -c "import torch" RESULT_VARIABLE has_torch
                      OUTPUT_QUIET ERROR_QUIET)
      if(has_torch EQUAL 0)
        set(REGIONTRACE_PYTHON "${candidate}" CACHE FILEPATH "" FORCE)
        break()
      endif()
    endif()
  endforeach()
  if(REGIONTRACE_PYTHON STREQUAL "")
    message(FATAL_ERROR "REGIONTRACE_TORCH_FROM_PYTHON=ON: no Python on PATH (nor /usr/bin/python3) "
                        "can `import torch`; name one with -DREGIONTRACE_PYTHON=/path/to/python")
  endif()
endif()

# One query, one line per fact, so that a failure names the fact it lacks.
set(regiontrace_torch_query [=[
import os, sys
try:
    import torch
except Exception as e:
    sys.exit("cannot import torch: %s" % e)
import torch.utils
print(torch.__version__)
print(torch.version.cuda or "none")
print(int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
print(os.path.dirname(torch.__file__))
print(getattr(torch.utils, "cmake_prefix_path", ""))
]=])
execute_process(COMMAND "${REGIONTRACE_PYTHON}" -c "${regiontrace_torch_query}"
                RESULT_VARIABLE query_result OUTPUT_VARIABLE query_out ERROR_VARIABLE query_err
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT query_result EQUAL 0)
  message(FATAL_ERROR "REGIONTRACE_PYTHON=${REGIONTRACE_PYTHON}: ${query_err}")
endif()
string(REPLACE "\n" ";" query_lines "${query_out}")
list(GET query_lines 0 REGIONTRACE_PYTHON_TORCH_VERSION)
list(GET query_lines 1 REGIONTRACE_PYTHON_TORCH_CUDA)
list(GET query_lines 2 REGIONTRACE_PYTHON_TORCH_CXX11_ABI)
list(GET query_lines 3 regiontrace_torch_package)
list(LENGTH query_lines query_count)
set(regiontrace_torch_cmake_prefix "")
if(query_count GREATER 4)
  list(GET query_lines 4 regiontrace_torch_cmake_prefix)
endif()

set(regiontrace_torch_config "${regiontrace_torch_cmake_prefix}/Torch/TorchConfig.cmake")
if(regiontrace_torch_cmake_prefix STREQUAL "" OR NOT EXISTS "${regiontrace_torch_config}")
  message(FATAL_ERROR
    "REGIONTRACE_PYTHON=${REGIONTRACE_PYTHON} has torch ${REGIONTRACE_PYTHON_TORCH_VERSION} "
    "(${regiontrace_torch_package}) but no libtorch CMake package: "
    "${regiontrace_torch_config} is missing. Wheels from PyTorch ship it under "
    "torch/share/cmake; distribution packages (Debian's python3-torch) do not: there, install "
    "the distribution's libtorch development package (Debian: libtorch-dev) and build without "
    "REGIONTRACE_TORCH_FROM_PYTHON, or set Torch_DIR.")
endif()

set(Torch_DIR "${regiontrace_torch_cmake_prefix}/Torch" CACHE PATH "libtorch's CMake package" FORCE)
# Asked for by name: not finding it is an error, not a build without torch.
set(REGIONTRACE_WITH_TORCH ON)
# The C++11 ABI is the compiler's default: only the old one needs saying (and
# a define everywhere would override the test plugin built for the other ABI).
if(REGIONTRACE_PYTHON_TORCH_CXX11_ABI STREQUAL "0")
  add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=0)
endif()
message(STATUS "regiontrace: libtorch from ${REGIONTRACE_PYTHON}: torch "
               "${REGIONTRACE_PYTHON_TORCH_VERSION}, CUDA ${REGIONTRACE_PYTHON_TORCH_CUDA}, "
               "_GLIBCXX_USE_CXX11_ABI=${REGIONTRACE_PYTHON_TORCH_CXX11_ABI}, at ${Torch_DIR}")
if(REGIONTRACE_PYTHON_TORCH_CXX11_ABI STREQUAL "0")
  message(WARNING "regiontrace: this PyTorch uses the pre-C++11 std::string ABI; yaml-cpp and "
                  "every other C++ library linked into regiontrace must be built with "
                  "_GLIBCXX_USE_CXX11_ABI=0 as well (PyTorch >= 2.7 wheels use the C++11 ABI)")
endif()
