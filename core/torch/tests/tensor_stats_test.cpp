// compute_stats against libtorch's own reductions in float64, for every
// dtype, strided views, empty and 0-dim tensors, NaN and Inf.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "regiontrace/tensor_stats.hpp"

namespace regiontrace {
namespace {

double item(const at::Tensor& t) {
  return t.item<double>();
}

// Equal, both NaN, or within `tol` of each other.
void expect_near_or_same(const std::optional<double>& actual, double expected, double tol,
                         const std::string& what) {
  ASSERT_TRUE(actual.has_value()) << what;
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(*actual)) << what << ": " << *actual;
  } else if (std::isinf(expected)) {
    EXPECT_EQ(*actual, expected) << what;
  } else {
    EXPECT_NEAR(*actual, expected, tol) << what;
  }
}

// Every statistic against the float64 reduction libtorch computes.
void expect_matches_torch(const at::Tensor& t, const std::string& what) {
  const TensorStats s = compute_stats(t);
  ASSERT_TRUE(s.error.empty()) << what << ": " << s.error;
  const at::Tensor x = t.to(at::kDouble);
  const double n = static_cast<double>(x.numel());
  EXPECT_EQ(s.numel, x.numel()) << what;
  EXPECT_EQ(s.shape, std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end())) << what;
  EXPECT_EQ(s.device, "cpu");
  EXPECT_EQ(s.nan_count, x.isnan().sum().item<std::int64_t>()) << what;
  EXPECT_EQ(s.inf_count, x.isinf().sum().item<std::int64_t>()) << what;
  EXPECT_EQ(s.zero_count, x.eq(0).sum().item<std::int64_t>()) << what;
  // Sums of n terms in double: tolerance relative to Σ|x|.
  const double abs_sum = x.abs().nan_to_num(0, 0, 0).sum().item<double>();
  const double tol = 1e-12 * (abs_sum + 1);
  expect_near_or_same(s.sum, item(x.sum()), tol, what + " sum");
  expect_near_or_same(s.l2, item(x.norm()), 1e-12 * (item(x.norm()) + 1), what + " l2");
  if (n == 0) {
    EXPECT_FALSE(s.mean || s.abs_mean || s.min || s.max || s.absmax || s.std || s.rms) << what;
    return;
  }
  expect_near_or_same(s.mean, item(x.mean()), tol / n, what + " mean");
  expect_near_or_same(s.abs_mean, item(x.abs().mean()), tol / n, what + " abs_mean");
  expect_near_or_same(s.min, item(x.min()), 0, what + " min");
  expect_near_or_same(s.max, item(x.max()), 0, what + " max");
  expect_near_or_same(s.absmax, item(x.abs().max()), 0, what + " absmax");
  const double rms = item(x.pow(2).mean().sqrt());
  expect_near_or_same(s.rms, rms, 1e-12 * (rms + 1), what + " rms");
  if (n < 2) {
    EXPECT_FALSE(s.std.has_value()) << what << " std of one element";
  } else {
    const double std = item(x.std());
    expect_near_or_same(s.std, std, 1e-9 * (std + 1e-300), what + " std");
  }
}

at::Tensor random_of(at::ScalarType type, at::IntArrayRef shape) {
  if (type == at::kBool) return at::rand(shape) > 0.5;
  if (type == at::kByte) return at::randint(0, 256, shape, at::kByte);
  if (at::isIntegralType(type, /*includeBool=*/false)) {
    return at::randint(-100, 100, shape, at::TensorOptions().dtype(type));
  }
  // Some exact zeros, and a mean away from zero.
  at::Tensor t = at::randn(shape, at::kDouble) * 3 + 0.5;
  t.masked_fill_(at::rand(shape) < 0.05, 0);
  return t.to(type);
}

const at::ScalarType kAllTypes[] = {at::kDouble, at::kFloat, at::kHalf, at::kBFloat16, at::kByte,
                                    at::kChar,   at::kShort, at::kInt,  at::kLong,     at::kBool};

TEST(TensorStats, EveryDtypeMatchesTorchInFloat64) {
  at::manual_seed(1);
  for (at::ScalarType type : kAllTypes) {
    // One block, several blocks (split over the thread pool), odd tails.
    for (std::int64_t n : {1, 7, 1000, 16384, 70001}) {
      expect_matches_torch(random_of(type, {n}),
                           std::string(c10::toString(type)) + "[" + std::to_string(n) + "]");
    }
  }
}

TEST(TensorStats, StridedViewsMatchTorch) {
  at::manual_seed(2);
  for (at::ScalarType type : {at::kFloat, at::kBFloat16, at::kHalf, at::kLong, at::kBool}) {
    const std::string name = c10::toString(type);
    const at::Tensor base = random_of(type, {37, 64, 9});
    expect_matches_torch(base.transpose(0, 2), name + " transposed");  // dense, permuted
    expect_matches_torch(base.slice(1, 3, 60, 2), name + " every other column");
    expect_matches_torch(base.select(2, 4), name + " one channel");
    expect_matches_torch(base.permute({1, 2, 0}).slice(0, 1, 50, 3), name + " permuted, sliced");
    expect_matches_torch(base.select(0, 5).unsqueeze(0).expand({40, 64, 9}), name + " expanded");
    expect_matches_torch(random_of(type, {4, 6, 20, 20}).contiguous(at::MemoryFormat::ChannelsLast),
                         name + " channels last");
  }
}

TEST(TensorStats, EmptyTensorsHaveNullStatistics) {
  const TensorStats s = compute_stats(at::empty({0, 3}));
  EXPECT_TRUE(s.error.empty());
  EXPECT_EQ(s.numel, 0);
  EXPECT_EQ(s.shape, (std::vector<std::int64_t>{0, 3}));
  ASSERT_TRUE(s.sum && s.l2);
  EXPECT_EQ(*s.sum, 0.0);
  EXPECT_EQ(*s.l2, 0.0);
  EXPECT_FALSE(s.mean || s.abs_mean || s.min || s.max || s.absmax || s.std || s.rms);
  EXPECT_EQ(s.nan_count + s.inf_count + s.zero_count, 0);
  expect_matches_torch(at::empty({0}, at::kBFloat16), "empty bf16");
}

TEST(TensorStats, ZeroDimTensorsHaveNoStd) {
  const at::Tensor t = at::scalar_tensor(-2.5, at::kFloat);
  const TensorStats s = compute_stats(t);
  EXPECT_EQ(s.numel, 1);
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(*s.sum, -2.5);
  EXPECT_EQ(*s.mean, -2.5);
  EXPECT_EQ(*s.min, -2.5);
  EXPECT_EQ(*s.absmax, 2.5);
  EXPECT_FALSE(s.std.has_value());
  expect_matches_torch(at::scalar_tensor(7, at::kLong), "0-dim long");
}

TEST(TensorStats, NanAndInfPropagateAsInTorch) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  at::manual_seed(3);
  for (at::ScalarType type : {at::kDouble, at::kFloat, at::kHalf, at::kBFloat16}) {
    const std::string name = c10::toString(type);
    at::Tensor with_nan = at::randn({40000}, at::kDouble);
    with_nan[17] = nan;
    with_nan[30000] = nan;
    expect_matches_torch(with_nan.to(type), name + " with NaN");
    at::Tensor with_inf = at::randn({40000}, at::kDouble);
    with_inf[5] = inf;
    expect_matches_torch(with_inf.to(type), name + " with +Inf");
    with_inf[39999] = -inf;
    expect_matches_torch(with_inf.to(type), name + " with +Inf and -Inf");
    const TensorStats s = compute_stats(with_inf.to(type));
    EXPECT_EQ(s.inf_count, 2);
    EXPECT_EQ(*s.max, inf);
    EXPECT_EQ(*s.min, -inf);
    EXPECT_TRUE(std::isnan(*s.sum));
    EXPECT_TRUE(std::isnan(*s.std));
  }
  const TensorStats s = compute_stats(at::full({3}, nan));
  EXPECT_EQ(s.nan_count, 3);
  EXPECT_TRUE(std::isnan(*s.min) && std::isnan(*s.max) && std::isnan(*s.mean));
}

TEST(TensorStats, Bf16EdgeDataMatchesTorch) {
  // The bf16 loop without a shift, and what sends data back to the shifted
  // one: exponents over the whole range, one sign only, a large mean (seen
  // in the first elements, or only after them), signed zeros, odd tails.
  at::manual_seed(6);
  const std::int64_t n = 40000 + 17;
  const at::Tensor u = at::rand({n}, at::kDouble) * 2 - 1;
  const at::Tensor wide = u * at::pow(2.0, at::randint(-130, 125, {n}, at::kDouble));
  expect_matches_torch(wide.to(at::kBFloat16), "bf16 wide exponents");
  expect_matches_torch(wide.abs().to(at::kBFloat16), "bf16 wide exponents, positive");
  expect_matches_torch((-wide.abs()).to(at::kBFloat16), "bf16 wide exponents, negative");
  expect_matches_torch((at::randn({n}, at::kDouble) + 300).to(at::kBFloat16), "bf16 large mean");
  at::Tensor late = at::randn({n}, at::kDouble) * 0.01 + 50;
  late.slice(0, 0, 64).normal_();  // the sample looks centred, the rest is not
  expect_matches_torch(late.to(at::kBFloat16), "bf16 large mean after the sample");
  expect_matches_torch(at::full({n}, 3.5, at::kBFloat16), "bf16 constant");
  at::Tensor zeros = at::zeros({n}, at::kDouble);
  zeros.slice(0, 0, n, 3).fill_(-0.0);
  expect_matches_torch(zeros.to(at::kBFloat16), "bf16 signed zeros");
  zeros[n - 1] = -1e-40;  // a subnormal, the last element
  expect_matches_torch(zeros.to(at::kBFloat16), "bf16 zeros and a subnormal");
}

TEST(TensorStats, LargeMeanSmallSpreadKeepsPrecision) {
  at::manual_seed(4);
  const at::Tensor x = at::randn({200000}, at::kDouble) * 1e-3 + 1e6;
  const TensorStats s = compute_stats(x);
  const double std = x.std().item<double>();
  EXPECT_NEAR(*s.std, std, 1e-6 * std);
  EXPECT_NEAR(*s.mean, x.mean().item<double>(), 1e-9);
}

TEST(TensorStats, ComplexHasNoNumericStatisticsButAHash) {
  const at::Tensor c = at::randn({4}, at::kComplexFloat);
  const TensorStats s = compute_stats(c, StatsOptions{true, true});
  EXPECT_NE(s.error.find("complex"), std::string::npos) << s.error;
  EXPECT_FALSE(s.sum.has_value());
  EXPECT_EQ(s.dtype, "torch.complex64");
  EXPECT_EQ(s.numel, 4);
  EXPECT_TRUE(s.hash.has_value());
}

TEST(TensorStats, DtypeNamesAreSpelledAsInPython) {
  EXPECT_EQ(dtype_name(at::zeros({1}, at::kBFloat16)), "torch.bfloat16");
  EXPECT_EQ(dtype_name(at::zeros({1}, at::kFloat)), "torch.float32");
  EXPECT_EQ(dtype_name(at::zeros({1}, at::kHalf)), "torch.float16");
  EXPECT_EQ(dtype_name(at::zeros({1}, at::kLong)), "torch.int64");
  EXPECT_EQ(dtype_name(at::zeros({1}, at::kBool)), "torch.bool");
  EXPECT_EQ(dtype_name(at::zeros({1}, at::kByte)), "torch.uint8");
}

TEST(TensorStats, HashFollowsValuesNotLayout) {
  at::manual_seed(5);
  const StatsOptions only_hash{false, true};
  const at::Tensor a = at::randn({64, 33});
  const at::Tensor same_values_other_strides = a.t().contiguous().t();
  ASSERT_FALSE(same_values_other_strides.is_contiguous());
  const std::uint64_t h = *compute_stats(a, only_hash).hash;
  EXPECT_EQ(*compute_stats(same_values_other_strides, only_hash).hash, h);
  EXPECT_EQ(*compute_stats(a.clone(), only_hash).hash, h);
  at::Tensor b = a.clone();
  b[63][32] = std::nextafter(b[63][32].item<float>(), 1e9f);  // one ulp, one element
  EXPECT_NE(*compute_stats(b, only_hash).hash, h);
  EXPECT_NE(*compute_stats(a.t(), only_hash).hash, h);  // other order of the same bytes
  // -0.0 and 0.0: equal values, different bits.
  EXPECT_NE(*compute_stats(at::full({8}, -0.0), only_hash).hash,
            *compute_stats(at::full({8}, 0.0), only_hash).hash);
  // Large enough for several hash blocks, split over threads.
  const at::Tensor big = at::randn({1 << 20});
  EXPECT_EQ(*compute_stats(big, only_hash).hash, *compute_stats(big.clone(), only_hash).hash);
  EXPECT_FALSE(compute_stats(a, only_hash).sum.has_value());
}

}  // namespace
}  // namespace regiontrace
