// The GPUs a trace lists in its deviceProperties, read once per process.
#pragma once

#include <vector>

#include "trace_model.hpp"

namespace regiontrace::torch_profiler {

// The GPUs libtorch sees, as Kineto lists them; empty without CUDA, without
// a GPU, or when the CUDA runtime refuses (the trace is written without).
// device_properties_cuda.cpp where libtorch has CUDA, _none.cpp elsewhere.
const std::vector<DeviceProperties>& read_device_properties();

}  // namespace regiontrace::torch_profiler
