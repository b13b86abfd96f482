#include "leak_detector.hpp"

#include <gtest/gtest.h>

namespace regiontrace::memory {
namespace {

std::vector<HeldPoint> series(std::initializer_list<std::int64_t> held) {
  std::vector<HeldPoint> out;
  std::int64_t step = 0;
  for (std::int64_t h : held) out.push_back({step++, h});
  return out;
}

const LeakCriteria kCriteria{3, 100};

TEST(LeakDetector, SteadyGrowthIsASuspect) {
  const LeakVerdict v = evaluate_leak(series({100, 200, 300, 400}), kCriteria);
  EXPECT_TRUE(v.suspect);
  EXPECT_EQ(v.growth_bytes, 300);
}

TEST(LeakDetector, FlatOrShrinkingIsNot) {
  EXPECT_FALSE(evaluate_leak(series({500, 500, 500, 500}), kCriteria).suspect);
  EXPECT_FALSE(evaluate_leak(series({500, 400, 300, 200}), kCriteria).suspect);
}

TEST(LeakDetector, WarmUpThatLevelsOffIsNot) {
  EXPECT_FALSE(evaluate_leak(series({0, 1000, 2000, 2000, 2000, 2000, 2000}), kCriteria).suspect);
}

TEST(LeakDetector, NeedsEnoughStepsAndEnoughBytes) {
  EXPECT_FALSE(evaluate_leak(series({100, 300}), kCriteria).suspect);
  EXPECT_FALSE(evaluate_leak(series({100, 120, 140, 160}), kCriteria).suspect);  // +60 < 100
}

TEST(LeakDetector, OccasionalDipsStillCount) {
  EXPECT_TRUE(evaluate_leak(series({0, 100, 90, 200, 300, 290, 400}), kCriteria).suspect);
}

TEST(HeldSeries, LastExitInAStepWins) {
  HeldSeries s;
  s.add(1, 10);
  s.add(1, 30);
  s.add(2, 40);
  ASSERT_EQ(s.points().size(), 2u);
  EXPECT_EQ(s.points()[0].held_bytes, 30);
}

TEST(HeldSeries, ThinsOutButKeepsFirstAndNewest) {
  HeldSeries s(16);
  for (int step = 0; step < 1000; ++step) s.add(step, step * 10);
  EXPECT_LE(s.points().size(), 16u);
  EXPECT_EQ(s.points().front().step, 0);
  EXPECT_EQ(s.points().back().step, 999);
  EXPECT_TRUE(evaluate_leak(s.points(), kCriteria).suspect);
}

}  // namespace
}  // namespace regiontrace::memory
