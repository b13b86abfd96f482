// Host side of the CUDA statistics: the tensor's stream and device, scratch
// memory from libtorch's caching allocator, the element type.
#include "cuda/stats_cuda.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <stdexcept>
#include <string>

#include "cuda/stats_kernel.hpp"

namespace regiontrace::stats {

Partial scan_cuda(const at::Tensor& tensor) {
  const c10::cuda::CUDAGuard device_guard(tensor.device());
  at::Tensor t = tensor;
  ElementKind kind{};
  switch (t.scalar_type()) {
    case at::kDouble:
      kind = ElementKind::kF64;
      break;
    case at::kFloat:
      kind = ElementKind::kF32;
      break;
    case at::kHalf:
      kind = ElementKind::kF16;
      break;
    case at::kBFloat16:
      kind = ElementKind::kBF16;
      break;
    case at::kByte:
    case at::kBool:
      kind = ElementKind::kU8;
      break;
    case at::kChar:
      kind = ElementKind::kI8;
      break;
    case at::kShort:
      kind = ElementKind::kI16;
      break;
    case at::kInt:
      kind = ElementKind::kI32;
      break;
    case at::kLong:
      kind = ElementKind::kI64;
      break;
    default:  // float8, wide unsigned, ...: read through double, on the device
      t = t.to(at::kDouble);
      kind = ElementKind::kF64;
  }
  // Dense memory in any order is read in place; other views are copied once.
  if (!t.is_non_overlapping_and_dense()) t = t.contiguous();
  const int blocks = cuda_stats_blocks(kind, t.numel());
  const at::Tensor scratch = at::empty(
      {static_cast<std::int64_t>(cuda_stats_scratch_bytes(blocks))}, t.options().dtype(at::kByte));
  Partial out;
  const char* error =
      cuda_stats(kind, t.data_ptr(), t.numel(), scratch.data_ptr(), blocks,
                 c10::cuda::getCurrentCUDAStream(t.device().index()).stream(), &out);
  if (error != nullptr) throw std::runtime_error(std::string("CUDA statistics failed: ") + error);
  return out;
}

}  // namespace regiontrace::stats
