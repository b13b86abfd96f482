// Statistics of a tensor in one pass over its data, accumulated in double:
// what the activation_trace sink writes, open to anyone.
//
//   #include <regiontrace/tensor_stats.hpp>   // library RegionTrace::tensor_stats
//
//   regiontrace::TensorStats s = regiontrace::compute_stats(hidden);
//   if (s.mean) std::cout << *s.mean << " " << s.nan_count << "\n";
//
// Any dtype libtorch has: floating (fp64, fp32, fp16, bf16 and the rest, read
// as double), integers and bool (true = 1). Contiguous or strided, on CPU
// (the loop is split over libtorch's intra-op thread pool) or, where libtorch
// has CUDA, on the device (one fused reduction, one small copy to the host).
// Complex tensors have no numeric statistics: `error` says so.
//
// Definitions (n = numel; NaN and Inf propagate as in torch's reductions):
//   sum       Σx                       0 for an empty tensor
//   mean      Σx / n                   null when n == 0
//   abs_mean  Σ|x| / n                 null when n == 0
//   min, max  smallest, largest        null when n == 0; NaN when any x is NaN
//   absmax    max |x|                  null when n == 0; NaN when any x is NaN
//   std       unbiased (n - 1), as torch.std()   null when n < 2 (0-dim too)
//   rms       sqrt(Σx² / n)            null when n == 0
//   l2        sqrt(Σx²)                0 for an empty tensor
//   nan_count, inf_count, zero_count   element counts
//   hash      fingerprint of the raw bytes in logical (row-major) order:
//             equal for bitwise-equal tensors whatever their strides (opt-in)
//
// compute_stats runs under at::DisableRecordFunctionGuard: the op observer
// (and the torch profiler) never see the statistics' own work.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "regiontrace/tensor_stats_export.hpp"

namespace at {
class Tensor;
}  // namespace at

namespace regiontrace {

struct TensorStats {
  // Always filled.
  std::int64_t numel = 0;
  std::vector<std::int64_t> shape;
  std::string dtype;   // as Python prints it: "torch.bfloat16"
  std::string device;  // "cpu", "cuda:0"

  // Numeric statistics; `error` non-empty when they could not be computed
  // (complex dtype, ...), in which case they are all unset.
  std::string error;
  std::optional<double> sum, mean, abs_mean, min, max, absmax, std, rms, l2;
  std::int64_t nan_count = 0;
  std::int64_t inf_count = 0;
  std::int64_t zero_count = 0;

  // Only when StatsOptions::hash was asked; `hash_error` says why not.
  std::optional<std::uint64_t> hash;
  std::string hash_error;
};

struct StatsOptions {
  bool numeric = true;  // the one-pass statistics above
  bool hash = false;    // a second pass over the raw bytes
};

REGIONTRACE_TENSOR_STATS_API TensorStats compute_stats(const at::Tensor& tensor,
                                                       const StatsOptions& options = {});

// "torch.float32", "torch.bfloat16", ... for a tensor's dtype.
REGIONTRACE_TENSOR_STATS_API std::string dtype_name(const at::Tensor& tensor);

}  // namespace regiontrace
