// Statistics of a CUDA tensor, on its device. Compiled only where libtorch
// has CUDA (REGIONTRACE_TORCH_HAS_CUDA).
#pragma once

#include "stats_partial.hpp"

namespace at {
class Tensor;
}  // namespace at

namespace regiontrace::stats {

// Throws std::runtime_error on a CUDA error.
Partial scan_cuda(const at::Tensor& tensor);

}  // namespace regiontrace::stats
