// The fused device reduction against the host loop on the same values: the
// floating types, integers, strided and permuted views, views starting
// anywhere in a 16-byte vector, NaN and Inf, a tensor large enough to use
// every block of the grid, and the same bits run after run.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "cuda_skip.hpp"
#include "regiontrace/tensor_stats.hpp"

namespace regiontrace {
namespace {

// Both unset, both NaN, equal infinities, or within a tolerance relative to
// the tensor's scale (|x| summed), which is what accumulation order changes.
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

void expect_device_matches_host(const at::Tensor& on_device, const std::string& what) {
  const StatsOptions all{true, true};
  const TensorStats d = compute_stats(on_device, all);
  const TensorStats h = compute_stats(on_device.cpu(), all);
  ASSERT_TRUE(d.error.empty()) << what << ": " << d.error;
  EXPECT_EQ(d.device, "cuda:" + std::to_string(on_device.device().index())) << what;
  EXPECT_EQ(d.numel, h.numel) << what;
  EXPECT_EQ(d.dtype, h.dtype) << what;
  EXPECT_EQ(d.nan_count, h.nan_count) << what;
  EXPECT_EQ(d.inf_count, h.inf_count) << what;
  EXPECT_EQ(d.zero_count, h.zero_count) << what;
  ASSERT_TRUE(d.hash && h.hash) << what << ": " << d.hash_error << h.hash_error;
  EXPECT_EQ(*d.hash, *h.hash) << what << ": the bytes in logical order";
  const double n = static_cast<double>(h.numel);
  const double scale = h.abs_mean && std::isfinite(*h.abs_mean) ? *h.abs_mean * n : 0;
  expect_close(d.sum, h.sum, scale, what + " sum");
  expect_close(d.l2, h.l2, scale, what + " l2");
  expect_close(d.mean, h.mean, scale / std::max(n, 1.0), what + " mean");
  expect_close(d.abs_mean, h.abs_mean, scale / std::max(n, 1.0), what + " abs_mean");
  expect_close(d.std, h.std, scale / std::max(n, 1.0), what + " std");
  expect_close(d.rms, h.rms, scale / std::max(n, 1.0), what + " rms");
  expect_close(d.min, h.min, 0, what + " min");
  expect_close(d.max, h.max, 0, what + " max");
  expect_close(d.absmax, h.absmax, 0, what + " absmax");
}

at::Tensor values_of(at::ScalarType type, std::int64_t n) {
  const auto on_gpu = at::TensorOptions().device(at::kCUDA);
  if (type == at::kBool) return at::rand({n}, on_gpu) > 0.5;
  if (at::isIntegralType(type, /*includeBool=*/false)) {
    const std::int64_t lo = type == at::kByte ? 0 : -100;
    return at::randint(lo, lo + 200, {n}, on_gpu.dtype(type));
  }
  at::Tensor t = at::randn({n}, on_gpu.dtype(at::kDouble)) * 3 + 0.5;
  t.masked_fill_(at::rand({n}, on_gpu) < 0.05, 0);  // exact zeros to count
  return t.to(type);
}

TEST(CudaStats, EveryDtypeMatchesTheHost) {
  REGIONTRACE_REQUIRE_CUDA();
  at::manual_seed(11);
  for (at::ScalarType type : {at::kDouble, at::kFloat, at::kHalf, at::kBFloat16, at::kByte,
                              at::kChar, at::kShort, at::kInt, at::kLong, at::kBool}) {
    // One element, one block, several blocks, more elements than the grid
    // has threads (the grid-stride loop), odd tails.
    for (std::int64_t n : {1, 1000, 300001, 4000037}) {
      expect_device_matches_host(values_of(type, n),
                                 std::string(c10::toString(type)) + "[" + std::to_string(n) + "]");
    }
  }
}

TEST(CudaStats, NanAndInfAreCountedAndPropagateAsOnTheHost) {
  REGIONTRACE_REQUIRE_CUDA();
  for (at::ScalarType type : {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble}) {
    const std::string name = c10::toString(type);
    at::Tensor t = values_of(type, 100003);
    t[17] = std::numeric_limits<double>::infinity();
    t[99999] = -std::numeric_limits<double>::infinity();
    expect_device_matches_host(t, name + " with +-Inf");
    t[5000] = std::nan("");
    t[5001] = std::nan("");
    expect_device_matches_host(t, name + " with NaN and Inf");
    const TensorStats s = compute_stats(t);
    EXPECT_EQ(s.nan_count, 2) << name;
    EXPECT_EQ(s.inf_count, 2) << name;
    EXPECT_TRUE(std::isnan(*s.max)) << name;
  }
}

TEST(CudaStats, StridedAndPermutedViewsMatchTheHost) {
  REGIONTRACE_REQUIRE_CUDA();
  at::manual_seed(12);
  for (at::ScalarType type : {at::kFloat, at::kBFloat16, at::kHalf, at::kLong}) {
    const std::string name = c10::toString(type);
    const at::Tensor base = values_of(type, 37 * 64 * 9).view({37, 64, 9});
    expect_device_matches_host(base.permute({2, 0, 1}), name + " permuted (read in place)");
    expect_device_matches_host(base.slice(1, 3, 60, 4), name + " every 4th column (copied)");
    expect_device_matches_host(base.select(2, 4), name + " one channel");
    expect_device_matches_host(base.expand({2, 37, 64, 9}), name + " broadcast (stride 0)");
  }
}

// Views starting anywhere in a 16-byte vector: the kernel reads a scalar head
// up to the first boundary, whole vectors, then a scalar tail.
TEST(CudaStats, MisalignedStartsAndOddLengthsMatchTheHost) {
  REGIONTRACE_REQUIRE_CUDA();
  at::manual_seed(14);
  for (at::ScalarType type : {at::kFloat, at::kBFloat16, at::kHalf, at::kDouble, at::kChar}) {
    const at::Tensor all = values_of(type, 300001 + 16);
    const int per_vector = 16 / static_cast<int>(c10::elementSize(type));
    for (int offset = 0; offset < per_vector; ++offset) {
      for (std::int64_t n : {1, 3, 7, 9, 17, 1023, 300001}) {
        expect_device_matches_host(all.narrow(0, offset, n),
                                   std::string(c10::toString(type)) + " from element " +
                                       std::to_string(offset) + " [" + std::to_string(n) + "]");
      }
    }
    if (!at::isFloatingType(type)) continue;
    at::Tensor t = all.narrow(0, 1, 300001).clone().narrow(0, 1, 300000);
    t[0] = std::nan("");  // in the scalar head
    t[299999] = std::numeric_limits<double>::infinity();
    expect_device_matches_host(t, std::string(c10::toString(type)) + " NaN in the head");
  }
}

// The grid, each block's tree and the combining order are fixed: the same
// bits every run.
TEST(CudaStats, RepeatedRunsGiveTheSameBits) {
  REGIONTRACE_REQUIRE_CUDA();
  at::manual_seed(15);
  for (at::ScalarType type : {at::kFloat, at::kBFloat16, at::kHalf}) {
    const at::Tensor t = values_of(type, 16 << 20);
    const TensorStats a = compute_stats(t);
    for (int run = 0; run < 3; ++run) {
      const TensorStats b = compute_stats(t);
      const std::string name = c10::toString(type);
      EXPECT_EQ(*a.sum, *b.sum) << name;
      EXPECT_EQ(*a.std, *b.std) << name;
      EXPECT_EQ(*a.l2, *b.l2) << name;
      EXPECT_EQ(*a.abs_mean, *b.abs_mean) << name;
      EXPECT_EQ(a.zero_count, b.zero_count) << name;
    }
  }
}

TEST(CudaStats, ManyBlocksMatchFloat64ReductionsOnTheDevice) {
  REGIONTRACE_REQUIRE_CUDA();
  at::manual_seed(13);
  for (at::ScalarType type : {at::kFloat, at::kBFloat16, at::kHalf}) {
    const at::Tensor t = at::randn({64 << 20}, at::TensorOptions().device(at::kCUDA)).to(type);
    const at::Tensor x = t.to(at::kDouble);
    const TensorStats s = compute_stats(t);
    const double abs_sum = x.abs().sum().item<double>();
    const std::string name = c10::toString(type);
    EXPECT_NEAR(*s.sum, x.sum().item<double>(), 1e-9 * abs_sum) << name;
    EXPECT_NEAR(*s.std, x.std().item<double>(), 1e-9) << name;
    EXPECT_EQ(*s.min, x.min().item<double>()) << name;
    EXPECT_EQ(*s.max, x.max().item<double>()) << name;
  }
}

}  // namespace
}  // namespace regiontrace
