# A CUDA libtorch on a machine without the CUDA toolkit. libtorch's own
# TorchConfig.cmake then stops with "Your installed Caffe2 version uses CUDA
# but I cannot find the CUDA libraries", although its CPU side needs nothing
# of the toolkit (the wheel's CUDA libraries come with it). Here the `torch`
# target is made from the wheel's CPU libraries instead, and CUDA parts are
# off with one line saying why.
#
# In: REGIONTRACE_PYTHON_TORCH_CUDA (the wheel's CUDA version or "none") and
# Torch_DIR, from RegionTraceTorchFromPython.cmake. Out: Torch_FOUND,
# Torch_VERSION, TORCH_INSTALL_PREFIX, TORCH_INCLUDE_DIRS, TORCH_LIBRARIES,
# REGIONTRACE_TORCH_WITHOUT_TOOLKIT.
set(REGIONTRACE_TORCH_WITHOUT_TOOLKIT OFF)
if(NOT Torch_DIR OR NOT DEFINED REGIONTRACE_PYTHON_TORCH_CUDA OR REGIONTRACE_PYTHON_TORCH_CUDA STREQUAL "none")
  return()
endif()
find_program(regiontrace_nvcc nvcc HINTS "${CUDAToolkit_ROOT}/bin" /usr/local/cuda/bin NO_CACHE)
if(regiontrace_nvcc)
  return()
endif()

get_filename_component(TORCH_INSTALL_PREFIX "${Torch_DIR}/../../.." ABSOLUTE)
set(regiontrace_torch_lib "${TORCH_INSTALL_PREFIX}/lib")
foreach(lib torch_cpu c10)
  if(NOT EXISTS "${regiontrace_torch_lib}/lib${lib}.so")
    message(FATAL_ERROR "regiontrace: no ${regiontrace_torch_lib}/lib${lib}.so in the torch wheel at "
                        "${TORCH_INSTALL_PREFIX}")
  endif()
endforeach()
set(TORCH_INCLUDE_DIRS "${TORCH_INSTALL_PREFIX}/include"
                       "${TORCH_INSTALL_PREFIX}/include/torch/csrc/api/include")
add_library(torch INTERFACE IMPORTED)
set_target_properties(torch PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}"
  INTERFACE_LINK_LIBRARIES "${regiontrace_torch_lib}/libtorch_cpu.so;${regiontrace_torch_lib}/libc10.so"
  INTERFACE_COMPILE_FEATURES cxx_std_20)
set(TORCH_LIBRARIES torch)
string(REGEX MATCH "^[0-9]+\\.[0-9]+\\.[0-9]+" Torch_VERSION "${REGIONTRACE_PYTHON_TORCH_VERSION}")
set(Torch_FOUND TRUE)
set(REGIONTRACE_TORCH_WITHOUT_TOOLKIT ON)
message(STATUS "regiontrace: CUDA parts off: this libtorch has CUDA ${REGIONTRACE_PYTHON_TORCH_CUDA} "
               "but no CUDA toolkit (nvcc) was found; building against its CPU libraries "
               "(install the toolkit or set CUDAToolkit_ROOT for the CUDA parts)")
