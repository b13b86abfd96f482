# Finds what the project builds on; optional parts default ON when found.
find_package(Threads REQUIRED)
include(RegionTraceRequire)
regiontrace_require(yaml-cpp DEBIAN libyaml-cpp-dev FOR "YAML profiles and region catalogs")
regiontrace_require(Boost 1.74 DEBIAN libboost-dev FOR "Boost.DLL plugins and Boost.PropertyTree")

function(regiontrace_resolve_option var found what)
  if(${var} STREQUAL "AUTO")
    set(result ${found})
  elseif(${var})
    if(NOT ${found})
      message(FATAL_ERROR "${var}=ON but ${what} was not found")
    endif()
    set(result ON)
  else()
    set(result OFF)
  endif()
  set(${var}_RESOLVED ${result} PARENT_SCOPE)
endfunction()

include(RegionTraceTorchFromPython)
# A CUDA libtorch's config sets the device code's targets for every CUDA
# file in the project from TORCH_CUDA_ARCH_LIST (it ignores
# CMAKE_CUDA_ARCHITECTURES): Hopper's SASS plus PTX that later GPUs JIT.
set(TORCH_CUDA_ARCH_LIST "9.0+PTX" CACHE STRING "GPU architectures of the CUDA code (libtorch's spelling)")
if(NOT REGIONTRACE_WITH_TORCH STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  include(RegionTraceTorchWithoutToolkit)
  if(NOT REGIONTRACE_TORCH_WITHOUT_TOOLKIT)
    find_package(Torch QUIET)
  endif()
endif()
regiontrace_resolve_option(REGIONTRACE_WITH_TORCH "${Torch_FOUND}" "libtorch (set Torch_DIR)")
set(REGIONTRACE_HAVE_TORCH ${REGIONTRACE_WITH_TORCH_RESOLVED})
if(REGIONTRACE_HAVE_TORCH)
  # libtorch's CMake config adds flags for its own build; keep only targets.
  # CUDA parts: a CUDA libtorch and a CUDA compiler. Without the toolkit a
  # CUDA libtorch still links (its device libraries come with the wheel);
  # only our own device code is left out.
  set(REGIONTRACE_TORCH_HAS_CUDA OFF)
  if(REGIONTRACE_TORCH_WITHOUT_TOOLKIT)
    # Said when the CPU libraries were chosen.
  elseif(TORCH_CUDA_LIBRARIES OR TARGET torch_cuda)
    if(CMAKE_CUDA_COMPILER)
      set(REGIONTRACE_TORCH_HAS_CUDA ON)
    else()
      message(STATUS "regiontrace: CUDA parts off: libtorch has CUDA but no CUDA compiler (nvcc) "
                     "was found; install the CUDA toolkit or set CUDAToolkit_ROOT")
    endif()
  else()
    message(STATUS "regiontrace: CUDA parts off: this libtorch was built without CUDA")
  endif()
  message(STATUS "regiontrace: libtorch ${Torch_VERSION} found (CUDA: ${REGIONTRACE_TORCH_HAS_CUDA})")
  # libtorch 2.x asks its users for a newer C++ than the project's 17
  # (cxx_std_20 on torch); the configure checks against its headers use it.
  get_target_property(regiontrace_torch_features torch INTERFACE_COMPILE_FEATURES)
  set(REGIONTRACE_TORCH_CXX_STANDARD 17)
  foreach(standard IN ITEMS 20 23)
    if("cxx_std_${standard}" IN_LIST regiontrace_torch_features)
      set(REGIONTRACE_TORCH_CXX_STANDARD ${standard})
    endif()
  endforeach()
endif()

if(NOT REGIONTRACE_WITH_NVTX STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
endif()
if(TARGET CUDA::nvtx3)
  set(regiontrace_nvtx_found ON)
else()
  set(regiontrace_nvtx_found OFF)
endif()
regiontrace_resolve_option(REGIONTRACE_WITH_NVTX "${regiontrace_nvtx_found}" "NVTX3 headers (CUDA::nvtx3)")
set(REGIONTRACE_HAVE_NVTX ${REGIONTRACE_WITH_NVTX_RESOLVED})
message(STATUS "regiontrace: torch=${REGIONTRACE_HAVE_TORCH} nvtx=${REGIONTRACE_HAVE_NVTX}")

# A torch wheel keeps CUDA's libraries in the nvidia-* wheels beside it, and
# libtorch_cuda names them without a search path: `import torch` loads them
# first, a C++ program has no such step and would get whatever the system
# has under the same names (the toolkit's older libnccl.so.2 here, which
# lacks symbols libtorch_cuda needs: the link fails). Whatever links libtorch
# carries these folders as DT_RPATH, which, unlike RUNPATH, also serves the
# libraries it loads; the linker searches them first too.
#
# In a wheel (REGIONTRACE_WHEEL) the same folders are named relative to
# site-packages in REGIONTRACE_TORCH_SITE_LIB_DIRS and reached from $ORIGIN
# (the root's regiontrace_origin_rpath); the link only searches them here.
add_library(regiontrace_torch_runtime INTERFACE)
set(REGIONTRACE_TORCH_SITE_LIB_DIRS "")
if(REGIONTRACE_HAVE_TORCH AND TORCH_INSTALL_PREFIX)
  get_filename_component(regiontrace_torch_site "${TORCH_INSTALL_PREFIX}/.." ABSOLUTE)
  file(GLOB regiontrace_wheel_lib_dirs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
  set(regiontrace_torch_runtime_dirs "${TORCH_INSTALL_PREFIX}/lib")
  foreach(dir IN LISTS regiontrace_wheel_lib_dirs)
    get_filename_component(dir "${dir}" ABSOLUTE)
    list(APPEND regiontrace_torch_runtime_dirs "${dir}")
  endforeach()
  foreach(dir IN LISTS regiontrace_torch_runtime_dirs)
    file(RELATIVE_PATH rel "${regiontrace_torch_site}" "${dir}")
    list(APPEND REGIONTRACE_TORCH_SITE_LIB_DIRS "${rel}")
  endforeach()
  list(JOIN regiontrace_torch_runtime_dirs ":" regiontrace_joined)
  if(REGIONTRACE_WHEEL)
    target_link_options(regiontrace_torch_runtime INTERFACE
      "LINKER:--disable-new-dtags" "LINKER:-rpath-link,${regiontrace_joined}")
    message(STATUS "regiontrace: wheel: torch's libraries reached from site-packages/{"
                   "${REGIONTRACE_TORCH_SITE_LIB_DIRS}}")
  elseif(regiontrace_wheel_lib_dirs)
    target_link_options(regiontrace_torch_runtime INTERFACE
      "LINKER:--disable-new-dtags" "LINKER:-rpath,${regiontrace_joined}"
      "LINKER:-rpath-link,${regiontrace_joined}")
    message(STATUS "regiontrace: libtorch's CUDA libraries from ${TORCH_INSTALL_PREFIX}/../nvidia")
  endif()
endif()

# Next to libtorch headers, always -DNDEBUG: RecordFunction's layout depends on it.
function(regiontrace_use_torch target)
  target_link_libraries(${target} PRIVATE ${TORCH_LIBRARIES} regiontrace_torch_runtime)
  target_compile_definitions(${target} PRIVATE NDEBUG)
endfunction()
