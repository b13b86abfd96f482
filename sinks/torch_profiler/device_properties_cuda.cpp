// The GPUs' properties from libtorch's CUDA side (its cached
// cudaGetDeviceProperties). Built where libtorch has CUDA; without a GPU the
// list is empty. Checked on a GPU by scripts/gpu_check.sh.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>

#include <exception>

#include "device_properties.hpp"

namespace regiontrace::torch_profiler {
namespace {

std::vector<DeviceProperties> read_all() {
  std::vector<DeviceProperties> out;
  try {
    const int count = static_cast<int>(c10::cuda::device_count());
    for (int i = 0; i < count; ++i) {
      const cudaDeviceProp* p = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(i));
      if (p == nullptr) return {};
      DeviceProperties d;
      d.id = i;
      d.name = p->name;
      d.total_global_mem = static_cast<std::int64_t>(p->totalGlobalMem);
      d.compute_major = p->major;
      d.compute_minor = p->minor;
      d.max_threads_per_block = p->maxThreadsPerBlock;
      d.max_threads_per_multiprocessor = p->maxThreadsPerMultiProcessor;
      d.regs_per_block = p->regsPerBlock;
      d.warp_size = p->warpSize;
      d.shared_mem_per_block = static_cast<std::int64_t>(p->sharedMemPerBlock);
      d.num_sms = p->multiProcessorCount;
      d.regs_per_multiprocessor = p->regsPerMultiprocessor;
      d.shared_mem_per_block_optin = static_cast<std::int64_t>(p->sharedMemPerBlockOptin);
      d.shared_mem_per_multiprocessor = static_cast<std::int64_t>(p->sharedMemPerMultiprocessor);
      out.push_back(std::move(d));
    }
  } catch (const std::exception&) {
    return {};  // a driver that refuses: the trace goes without, as Kineto's
  }
  return out;
}

}  // namespace

const std::vector<DeviceProperties>& read_device_properties() {
  static const std::vector<DeviceProperties> devices = read_all();
  return devices;
}

}  // namespace regiontrace::torch_profiler
