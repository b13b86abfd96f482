// A libtorch without CUDA: no GPU to list.
#include "device_properties.hpp"

namespace regiontrace::torch_profiler {

const std::vector<DeviceProperties>& read_device_properties() {
  static const std::vector<DeviceProperties> none;
  return none;
}

}  // namespace regiontrace::torch_profiler
