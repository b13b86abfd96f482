#include "log_histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace regiontrace::region_stats {
namespace {

TEST(LogHistogram, EveryValueLiesInItsBucketAndBucketsAreNarrow) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(0, 41.9);
  for (int i = 0; i < 200000; ++i) {
    const auto v = static_cast<std::int64_t>(std::pow(2.0, exponent(rng)));
    const std::size_t b = LogBuckets::index_of(v);
    ASSERT_LT(b, LogBuckets::kCount);
    const std::int64_t lo = LogBuckets::lower_bound(b);
    const std::int64_t hi = LogBuckets::upper_bound(b);
    ASSERT_LE(lo, v);
    ASSERT_LT(v, hi);
    // Half a bucket, relative to any value in it, is the documented error.
    ASSERT_LE(static_cast<double>(hi - lo) / 2, LogBuckets::kRelativeError * v + 0.5) << v;
  }
  EXPECT_EQ(LogBuckets::index_of(0), 0u);
  EXPECT_EQ(LogBuckets::index_of(127), 127u);
  EXPECT_EQ(LogBuckets::index_of(LogBuckets::kMaxTrackableNs * 4), LogBuckets::kCount - 1);
  // Consecutive buckets tile the range with no gap.
  for (std::size_t b = 0; b + 1 < LogBuckets::kCount; ++b) {
    ASSERT_EQ(LogBuckets::upper_bound(b), LogBuckets::lower_bound(b + 1)) << b;
  }
}

std::int64_t exact_percentile(std::vector<std::int64_t> sorted, double q) {
  std::sort(sorted.begin(), sorted.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

TEST(LogHistogram, PercentilesMatchSortedValuesWithinTheStatedRelativeError) {
  std::mt19937_64 rng(11);
  // Log-normal around 2 ms (a region's typical spread) and a wide log-uniform mix.
  std::lognormal_distribution<double> around_2ms(std::log(2e6), 0.6);
  std::uniform_real_distribution<double> wide(0, 36);
  for (int shape = 0; shape < 2; ++shape) {
    std::vector<std::int64_t> values;
    HistogramCounts h;
    for (int i = 0; i < 100000; ++i) {
      const auto v =
          static_cast<std::int64_t>(shape == 0 ? around_2ms(rng) : std::pow(2.0, wide(rng)));
      values.push_back(v);
      h.add(v);
    }
    const std::int64_t lo = *std::min_element(values.begin(), values.end());
    const std::int64_t hi = *std::max_element(values.begin(), values.end());
    for (double q : {0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
      const std::int64_t exact = exact_percentile(values, q);
      const std::int64_t got = h.percentile(q, lo, hi);
      EXPECT_LE(std::abs(static_cast<double>(got - exact)),
                LogBuckets::kRelativeError * static_cast<double>(exact) + 0.5)
          << "shape " << shape << " q " << q << " exact " << exact << " got " << got;
    }
  }
}

TEST(LogHistogram, SmallValuesAreExactAndEmptyIsZero) {
  HistogramCounts h;
  EXPECT_EQ(h.percentile(0.5, 0, 0), 0);
  for (std::int64_t v : {3, 5, 7, 9, 100}) h.add(v);
  EXPECT_EQ(h.percentile(0.5, 3, 100), 7);
  EXPECT_EQ(h.percentile(1.0, 3, 100), 100);
  EXPECT_EQ(h.percentile(0.2, 3, 100), 3);
}

TEST(LogHistogram, ValuesPastTheRangeAreClampedToTheExactMaximum) {
  HistogramCounts h;
  const std::int64_t huge = LogBuckets::kMaxTrackableNs * 3;
  h.add(huge);
  EXPECT_EQ(h.percentile(0.5, huge, huge), huge);
}

TEST(LogHistogram, LiveAndMergedCountsAddUp) {
  LiveHistogram live;
  HistogramCounts a;
  HistogramCounts all;
  // Every range: exact values, lazily added chunks, past the last bucket.
  for (std::int64_t v = 1; v < LogBuckets::kMaxTrackableNs * 8; v = v * 3 + 1) {
    live.record(v);
    all.add(v);
  }
  live.add_to(a);
  EXPECT_EQ(a.counts(), all.counts());
  HistogramCounts b;
  b.add(42, 2);
  a.merge(b);
  EXPECT_EQ(a.total(), all.total() + 2);
}

}  // namespace
}  // namespace regiontrace::region_stats
