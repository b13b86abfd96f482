// The CUDA statistics kernel's per-thread code (stats_vector_math.hpp) run
// on the CPU in the kernel's decomposition: every thread of every block of a
// grid, each block reduced by the kernel's tree, the blocks combined by the
// combining kernel's assignment and tree. Compared with compute_stats on the
// host within the tolerances tests/cuda/cuda_stats_test.cpp holds the device
// to, on data that reach every path: misaligned starts (the scalar head),
// lengths that are not whole vectors (the tail), grids with and without
// whole unrolled chunks, NaN and Inf anywhere (the recount), zeros, values
// spanning many binades, and a mean that dwarfs the spread.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cuda/stats_vector_math.hpp"
#include "regiontrace/tensor_stats.hpp"

namespace regiontrace::stats::gpu {
namespace {

// partial_kernel's block_reduce, one level at a time: at each level thread i
// (i < stride) adds element i + stride, which no thread writes at that level.
void block_tree(std::vector<Sums>& shared) {
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    for (int i = 0; i < stride; ++i) add(shared[i], shared[i + stride]);
  }
}

// partial_kernel on `blocks` blocks, then combine_kernel.
template <typename T>
Partial emulate(const T* data, std::int64_t n, int blocks) {
  const double shift = shift_for(data);
  const std::int64_t threads = static_cast<std::int64_t>(blocks) * kThreads;
  std::vector<Sums> partials(blocks);
  std::vector<Sums> shared(kThreads);
  for (int b = 0; b < blocks; ++b) {
    for (int t = 0; t < kThreads; ++t) {
      shared[t] = widen_sums(
          accumulate_thread(data, n, shift, static_cast<std::int64_t>(b) * kThreads + t, threads));
    }
    block_tree(shared);
    partials[b] = shared[0];
  }
  for (int t = 0; t < kThreads; ++t) {
    shared[t] = empty_sums();
    for (int b = t; b < blocks; b += kThreads) add(shared[t], partials[b]);
  }
  block_tree(shared);
  return finish_sums(shared[0], n, shift_for(data));
}

// tensor_stats.cpp's finish(): the published statistics of a Partial.
TensorStats published(const Partial& p) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  TensorStats r;
  r.numel = p.n;
  r.nan_count = p.nans;
  r.inf_count = p.infs;
  r.zero_count = static_cast<std::int64_t>(p.zeros);
  r.sum = p.sum;
  r.l2 = std::sqrt(p.sumsq);
  const double n = static_cast<double>(p.n);
  r.mean = p.sum / n;
  r.abs_mean = p.abs_sum / n;
  r.rms = std::sqrt(p.sumsq / n);
  if (p.nans > 0) {
    r.min = r.max = r.absmax = nan;
  } else {
    r.min = p.min;
    r.max = p.max;
    r.absmax = std::max(std::fabs(p.min), std::fabs(p.max));
  }
  if (p.n >= 2) {
    r.std = (p.nans > 0 || p.infs > 0) ? nan : std::sqrt(std::max(p.m2, 0.0) / (n - 1));
  }
  return r;
}

// cuda_stats_test.cpp's comparison: both NaN, equal infinities, or within
// 1e-9 of the tensor's scale.
void expect_close(const std::optional<double>& device, const std::optional<double>& host,
                  double scale, const std::string& what) {
  ASSERT_EQ(device.has_value(), host.has_value()) << what;
  if (!host) return;
  if (std::isnan(*host)) {
    EXPECT_TRUE(std::isnan(*device)) << what << ": " << *device;
  } else if (std::isinf(*host)) {
    EXPECT_EQ(*device, *host) << what;
  } else {
    EXPECT_NEAR(*device, *host, 1e-9 * (scale + 1)) << what;
  }
}

void expect_matches(const TensorStats& d, const TensorStats& h, const std::string& what) {
  EXPECT_EQ(d.numel, h.numel) << what;
  EXPECT_EQ(d.nan_count, h.nan_count) << what;
  EXPECT_EQ(d.inf_count, h.inf_count) << what;
  EXPECT_EQ(d.zero_count, h.zero_count) << what;
  const double n = static_cast<double>(h.numel);
  const double scale = h.abs_mean && std::isfinite(*h.abs_mean) ? *h.abs_mean * n : 0;
  expect_close(d.sum, h.sum, scale, what + " sum");
  expect_close(d.l2, h.l2, scale, what + " l2");
  expect_close(d.mean, h.mean, scale / n, what + " mean");
  expect_close(d.abs_mean, h.abs_mean, scale / n, what + " abs_mean");
  expect_close(d.std, h.std, scale / n, what + " std");
  expect_close(d.rms, h.rms, scale / n, what + " rms");
  expect_close(d.min, h.min, 0, what + " min");
  expect_close(d.max, h.max, 0, what + " max");
  expect_close(d.absmax, h.absmax, 0, what + " absmax");
}

// Emulates `blocks` blocks over t (1-D, contiguous) and compares with the host.
void check(const at::Tensor& t, int blocks, const std::string& what) {
  const std::int64_t n = t.numel();
  Partial p;
  switch (t.scalar_type()) {
    case at::kFloat:
      p = emulate(t.data_ptr<float>(), n, blocks);
      break;
    case at::kBFloat16:
      p = emulate(static_cast<const Bf16*>(t.data_ptr()), n, blocks);
      break;
    case at::kHalf:
      p = emulate(static_cast<const F16*>(t.data_ptr()), n, blocks);
      break;
    case at::kDouble:
      p = emulate(t.data_ptr<double>(), n, blocks);
      break;
    case at::kShort:
      p = emulate(t.data_ptr<std::int16_t>(), n, blocks);
      break;
    case at::kChar:
      p = emulate(t.data_ptr<std::int8_t>(), n, blocks);
      break;
    default:
      FAIL() << "no emulation for " << t.scalar_type();
  }
  expect_matches(published(p), compute_stats(t), what + " blocks=" + std::to_string(blocks));
}

enum class Data { kNormal, kWide, kOffset, kRelu };

// n values of `type`; all but kWide with 5% exact zeros.
at::Tensor make(at::ScalarType type, std::int64_t n, Data data) {
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  at::Tensor x = at::randn({n}, f64);
  switch (data) {
    case Data::kNormal:
      x = x * 3 + 0.5;
      break;
    case Data::kWide: {
      // Signs times 2^[-k, k]: sums whose terms no float run holds exactly.
      const double k = type == at::kHalf ? 14 : 30;
      x = x.sign() * at::pow(2.0, (at::rand({n}, f64) * 2 - 1) * k);
      break;
    }
    case Data::kOffset:
      x = 1000 + x * (type == at::kFloat || type == at::kDouble ? 0.01 : 8);
      break;
    case Data::kRelu:
      x = x.clamp_min(0);
      break;
  }
  if (data != Data::kWide) x.masked_fill_(at::rand({n}, f64) < 0.05, 0);
  if (at::isIntegralType(type, false)) x = (x * 10).round().clamp(-100, 100);
  return x.to(type);
}

const char* name_of(Data d) {
  switch (d) {
    case Data::kNormal:
      return "normal";
    case Data::kWide:
      return "wide";
    case Data::kOffset:
      return "offset";
    case Data::kRelu:
      break;
  }
  return "relu";
}

// Every start misalignment (one per element size step within 16 bytes),
// lengths around the vector width and the unrolled chunk, 1 and 3 blocks
// (768 threads: a chunk is 3072 vectors).
TEST(StatsVectorEmulation, MisalignedStartsAndOddLengthsMatchTheHost) {
  at::manual_seed(21);
  for (at::ScalarType type :
       {at::kFloat, at::kBFloat16, at::kHalf, at::kDouble, at::kShort, at::kChar}) {
    const int size = static_cast<int>(c10::elementSize(type));
    for (Data data : {Data::kNormal, Data::kWide, Data::kOffset, Data::kRelu}) {
      if (data == Data::kWide && at::isIntegralType(type, false)) continue;
      const at::Tensor all = make(type, 40000 + 16, data);
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(all.data_ptr()) % kVectorBytes, 0u);
      for (int offset = 0; offset < kVectorBytes / size; ++offset) {
        for (std::int64_t n : {1, 2, 3, 7, 8, 9, 17, 1000, 4097, 12289, 40000}) {
          const at::Tensor t = all.narrow(0, offset, n);
          // The vectors start on a 16-byte boundary (the device faults
          // otherwise), after fewer than one vector of elements.
          const auto address = reinterpret_cast<std::uintptr_t>(t.data_ptr());
          const Layout l = layout_of(address, n, size);
          ASSERT_LE(l.head, std::min<std::int64_t>(n, kVectorBytes / size - 1));
          if (l.vectors > 0) {
            ASSERT_EQ((address + l.head * size) % kVectorBytes, 0u);
          }
          ASSERT_EQ(l.tail_begin, l.head + l.vectors * (kVectorBytes / size));
          ASSERT_LT(n - l.tail_begin, kVectorBytes / size);
          for (int blocks : {1, 3}) {
            check(t, blocks,
                  std::string(c10::toString(type)) + " " + name_of(data) + " offset " +
                      std::to_string(offset) + " n " + std::to_string(n));
          }
        }
      }
    }
  }
}

// NaN and +-Inf in the head, the unrolled body, the remainder and the tail:
// exact counts, and NaN/Inf propagated as on the host.
TEST(StatsVectorEmulation, NanAndInfAnywhereAreCountedAsOnTheHost) {
  at::manual_seed(22);
  const double inf = std::numeric_limits<double>::infinity();
  for (at::ScalarType type : {at::kFloat, at::kBFloat16, at::kHalf, at::kDouble}) {
    const std::int64_t n = 30011;  // 3 blocks: 2 whole chunks of fp32 vectors
    for (int offset : {0, 1}) {
      const std::string name =
          std::string(c10::toString(type)) + " offset " + std::to_string(offset);
      at::Tensor t = make(type, n + 16, Data::kNormal).narrow(0, offset, n);
      t[n - 1] = inf;  // the tail, or the last vector
      check(t, 3, name + " +Inf");
      t[0] = -inf;  // head when misaligned, else the first vector
      check(t, 3, name + " +-Inf");
      t[5000] = std::nan("");
      t[29000] = std::nan("");  // past the whole chunks of 3 blocks
      check(t, 3, name + " NaN and Inf");
      t.fill_(std::nan(""));
      check(t, 3, name + " all NaN");
      t.fill_(inf);
      check(t, 1, name + " all +Inf");
    }
  }
}

// A grid the size of an H100 or H200 at full occupancy (132 SMs times 8
// blocks) over a tensor as large as cuda_stats_test.cpp's largest, and a
// long tensor on one block, whose threads run many whole chunks.
TEST(StatsVectorEmulation, FullGridsAndLongThreadsMatchTheHost) {
  at::manual_seed(23);
  for (at::ScalarType type : {at::kFloat, at::kBFloat16, at::kHalf}) {
    const std::string name = c10::toString(type);
    const at::Tensor t = make(type, 4000037, Data::kNormal);
    check(t, 132 * 8, name + " 4000037");
    check(t.narrow(0, 3, 1 << 20), 1, name + " 2^20 from element 3");
  }
}

// A base that is not even element-aligned (never a libtorch tensor, but the
// kernel must not read it as vectors): every element through the head.
TEST(StatsVectorEmulation, ElementMisalignedBaseIsReadElementByElement) {
  at::manual_seed(24);
  const std::int64_t n = 5003;
  const at::Tensor t = make(at::kFloat, n, Data::kNormal);
  std::vector<unsigned char> bytes(n * sizeof(float) + 1);
  std::memcpy(bytes.data() + 1, t.data_ptr(), n * sizeof(float));
  const auto* odd = reinterpret_cast<const float*>(bytes.data() + 1);
  const Layout l = layout_of(reinterpret_cast<std::uintptr_t>(odd), n, sizeof(float));
  EXPECT_EQ(l.head, n);
  EXPECT_EQ(l.vectors, 0);
  expect_matches(published(emulate(odd, n, 2)), compute_stats(t), "odd base");
}

// The same grid gives the same bits: the device result is deterministic as
// long as the summation order is, which this decomposition fixes.
TEST(StatsVectorEmulation, SameGridSameBits) {
  at::manual_seed(25);
  const at::Tensor t = make(at::kBFloat16, 100003, Data::kWide);
  const auto* p = static_cast<const Bf16*>(t.data_ptr());
  const Partial a = emulate(p, t.numel(), 5);
  const Partial b = emulate(p, t.numel(), 5);
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(Partial)), 0);
}

}  // namespace
}  // namespace regiontrace::stats::gpu
