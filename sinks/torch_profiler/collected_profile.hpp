// What one profiler session left behind: libtorch's ProfilerResult. Only the
// two translation units that talk to libtorch include this header.
#pragma once

#include <torch/csrc/autograd/profiler_kineto.h>

#include <memory>

namespace regiontrace::torch_profiler {

struct CollectedProfile {
  std::unique_ptr<torch::autograd::profiler::ProfilerResult> result;
};

}  // namespace regiontrace::torch_profiler
