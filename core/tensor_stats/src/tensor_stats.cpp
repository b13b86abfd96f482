// compute_stats(): picks how to reach a tensor's elements (flat memory,
// gathered strided blocks, the device, a conversion for exotic dtypes),
// splits them into fixed blocks over libtorch's thread pool, and combines.
#include "regiontrace/tensor_stats.hpp"

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "byte_hash.hpp"
#if defined(REGIONTRACE_TORCH_HAS_CUDA)
#include "cuda/stats_cuda.hpp"
#endif
#include "stats_kernels.hpp"
#include "stats_partial.hpp"

namespace regiontrace {
namespace {

using stats::ElementKind;
using stats::Partial;

// Elements per block: large enough to amortise the per-block work, small
// enough that a gathered block stays in L2.
constexpr std::int64_t kBlockElements = 16384;

bool kind_of(at::ScalarType type, ElementKind* kind) {
  switch (type) {
    case at::kDouble:
      *kind = ElementKind::kF64;
      return true;
    case at::kFloat:
      *kind = ElementKind::kF32;
      return true;
    case at::kHalf:
      *kind = ElementKind::kF16;
      return true;
    case at::kBFloat16:
      *kind = ElementKind::kBF16;
      return true;
    case at::kByte:
    case at::kBool:
      *kind = ElementKind::kU8;
      return true;
    case at::kChar:
      *kind = ElementKind::kI8;
      return true;
    case at::kShort:
      *kind = ElementKind::kI16;
      return true;
    case at::kInt:
      *kind = ElementKind::kI32;
      return true;
    case at::kLong:
      *kind = ElementKind::kI64;
      return true;
    default:
      return false;
  }
}

// Row-major access to a strided (non-dense) tensor: dimensions of size one
// dropped, dimensions that are contiguous with each other merged.
class StridedLayout {
 public:
  StridedLayout(const at::Tensor& t, int element_size) : element_size_(element_size) {
    base_ = static_cast<const char*>(t.data_ptr());
    for (std::int64_t d = 0; d < t.dim(); ++d) {
      if (t.size(d) == 1) continue;
      const std::int64_t stride = t.stride(d) * element_size;
      if (!sizes_.empty() && strides_.back() == stride * t.size(d)) {
        sizes_.back() *= t.size(d);
        strides_.back() = stride;
      } else {
        sizes_.push_back(t.size(d));
        strides_.push_back(stride);
      }
    }
    if (sizes_.empty()) {
      sizes_.push_back(1);
      strides_.push_back(element_size);
    }
  }

  // Copies elements [begin, begin + count) in row-major order to dst.
  void gather(std::int64_t begin, std::int64_t count, char* dst) const {
    switch (element_size_) {
      case 1:
        return gather_as<std::uint8_t>(begin, count, dst);
      case 2:
        return gather_as<std::uint16_t>(begin, count, dst);
      case 4:
        return gather_as<std::uint32_t>(begin, count, dst);
      default:
        return gather_as<std::uint64_t>(begin, count, dst);
    }
  }

 private:
  template <typename W>
  void gather_as(std::int64_t begin, std::int64_t count, char* dst_bytes) const {
    const int nd = static_cast<int>(sizes_.size());
    std::vector<std::int64_t> index(nd);
    std::int64_t offset = 0;
    std::int64_t rest = begin;
    for (int d = nd - 1; d >= 0; --d) {
      index[d] = rest % sizes_[d];
      rest /= sizes_[d];
      offset += index[d] * strides_[d];
    }
    W* dst = reinterpret_cast<W*>(dst_bytes);
    const int last = nd - 1;
    const std::int64_t step = strides_[last];
    while (count > 0) {
      const std::int64_t run = std::min(count, sizes_[last] - index[last]);
      const char* p = base_ + offset;
      for (std::int64_t r = 0; r < run; ++r, p += step) std::memcpy(dst++, p, sizeof(W));
      count -= run;
      offset += run * step;
      index[last] += run;
      for (int d = last; d > 0 && index[d] == sizes_[d]; --d) {
        offset -= sizes_[d] * strides_[d];
        index[d] = 0;
        ++index[d - 1];
        offset += strides_[d - 1];
      }
    }
  }

  const char* base_ = nullptr;
  int element_size_ = 1;
  std::vector<std::int64_t> sizes_;
  std::vector<std::int64_t> strides_;  // in bytes
};

Partial scan_cpu(const at::Tensor& t, ElementKind kind) {
  const std::int64_t numel = t.numel();
  const int size = stats::element_size(kind);
  const std::int64_t blocks = (numel + kBlockElements - 1) / kBlockElements;
  std::vector<Partial> partials(static_cast<std::size_t>(blocks));
  // Dense memory (contiguous, or any permutation of it) is scanned in place:
  // the statistics do not depend on element order.
  const bool dense = t.is_non_overlapping_and_dense();
  const char* base = static_cast<const char*>(t.data_ptr());
  std::optional<StridedLayout> layout;
  if (!dense) layout.emplace(t, size);
  at::parallel_for(0, blocks, 16, [&](std::int64_t b0, std::int64_t b1) {
    std::vector<char> buffer;
    if (!dense) buffer.resize(static_cast<std::size_t>(kBlockElements * size));
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t begin = b * kBlockElements;
      const std::int64_t count = std::min(kBlockElements, numel - begin);
      const char* data = base + begin * size;
      if (!dense) {
        layout->gather(begin, count, buffer.data());
        data = buffer.data();
      }
      stats::scan_contiguous(kind, data, count, &partials[b]);
    }
  });
  Partial total;
  for (const Partial& p : partials) stats::merge(total, p);
  return total;
}

void finish(const Partial& p, TensorStats* r) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r->nan_count = p.nans;
  r->inf_count = p.infs;
  r->zero_count = static_cast<std::int64_t>(p.zeros);
  r->sum = p.sum;
  r->l2 = std::sqrt(p.sumsq);
  if (p.n == 0) return;
  const double n = static_cast<double>(p.n);
  r->mean = p.sum / n;
  r->abs_mean = p.abs_sum / n;
  r->rms = std::sqrt(p.sumsq / n);
  if (p.nans > 0) {
    r->min = r->max = r->absmax = nan;
  } else {
    r->min = p.min;
    r->max = p.max;
    r->absmax = std::max(std::fabs(p.min), std::fabs(p.max));
  }
  if (p.n >= 2) {
    r->std = (p.nans > 0 || p.infs > 0) ? nan : std::sqrt(std::max(p.m2, 0.0) / (n - 1));
  }
}

std::string first_line(const char* what) {
  std::string s(what);
  const std::size_t eol = s.find('\n');
  if (eol != std::string::npos) s.resize(eol);
  return s;
}

void numeric_stats(const at::Tensor& tensor, TensorStats* r) {
  if (tensor.layout() != at::kStrided) {
    throw std::runtime_error("no statistics for layout " + c10::str(tensor.layout()));
  }
  if (tensor.is_meta()) throw std::runtime_error("meta tensors hold no data");
  if (tensor.is_quantized()) throw std::runtime_error("no statistics for quantized " + r->dtype);
  if (tensor.is_complex()) throw std::runtime_error("no statistics for complex " + r->dtype);
  ElementKind kind{};
  if (tensor.numel() == 0) {
    finish(Partial{}, r);
    return;
  }
#if defined(REGIONTRACE_TORCH_HAS_CUDA)
  if (tensor.is_cuda()) {
    finish(stats::scan_cuda(tensor), r);
    return;
  }
#endif
  at::Tensor t = tensor.is_cpu() ? tensor : tensor.cpu();
  if (!kind_of(t.scalar_type(), &kind)) {
    t = t.to(at::kDouble);  // float8, wide unsigned, ...: read through double
    kind = ElementKind::kF64;
  }
  finish(scan_cpu(t, kind), r);
}

std::uint64_t tensor_hash(const at::Tensor& tensor) {
  if (tensor.layout() != at::kStrided) {
    throw std::runtime_error("no hash for layout " + c10::str(tensor.layout()));
  }
  if (tensor.is_meta()) throw std::runtime_error("meta tensors hold no data");
  at::Tensor t = tensor.is_cpu() ? tensor : tensor.cpu();
  if (!t.is_contiguous()) t = t.contiguous();
  return stats::hash_bytes(t.numel() == 0 ? nullptr : t.data_ptr(),
                           static_cast<std::size_t>(t.numel()) * t.element_size());
}

}  // namespace

TensorStats compute_stats(const at::Tensor& tensor, const StatsOptions& options) {
  TensorStats r;
  if (!tensor.defined()) {
    r.error = r.hash_error = "undefined tensor";
    return r;
  }
  // Our own aten work (copies, conversions) is invisible to the op observer
  // and to a running profiler.
  const at::DisableRecordFunctionGuard no_recording;
  r.numel = tensor.numel();
  r.shape.assign(tensor.sizes().begin(), tensor.sizes().end());
  r.dtype = dtype_name(tensor);
  r.device = tensor.device().str();
  if (options.numeric) {
    try {
      numeric_stats(tensor, &r);
    } catch (const std::exception& e) {
      r.error = first_line(e.what());
    }
  }
  if (options.hash) {
    try {
      r.hash = tensor_hash(tensor);
    } catch (const std::exception& e) {
      r.hash_error = first_line(e.what());
    }
  }
  return r;
}

}  // namespace regiontrace
