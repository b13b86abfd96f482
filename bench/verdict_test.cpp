// Every kind of benchmark verdict can fail: a regression planted in the
// figure a bench judges (a cost over its target, a throughput under it, a
// ratio past its bound, a figure that could not be read) prints MISS, and
// the same verdict on the healthy figure prints ok. The benches build their
// verdict lines only through format_verdict(), so these are their checks.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "ratio_reporter.hpp"

namespace regiontrace::bench {
namespace {

using Goal = Verdict::Goal;

std::string ending(const Verdict& v) {
  const std::string line = format_verdict(v);
  return line.substr(line.rfind("| ") + 2);
}

Verdict judged(Goal goal, double figure, double target, double baseline = 0) {
  Verdict v;
  v.name = "planted";
  v.min = figure;
  v.goal = goal;
  v.target = target;
  if (baseline > 0) {
    v.baseline = "baseline";
    v.baseline_min = baseline;
  }
  return v;
}

TEST(Verdict, ACostOverItsTargetIsAMiss) {
  EXPECT_EQ(ending(judged(Goal::kAtMost, 9.9, 10)), "ok");
  EXPECT_EQ(ending(judged(Goal::kAtMost, 10.1, 10)), "MISS");
}

TEST(Verdict, AThroughputUnderItsTargetIsAMiss) {
  EXPECT_EQ(ending(judged(Goal::kAtLeast, 5.1, 5)), "ok");
  EXPECT_EQ(ending(judged(Goal::kAtLeast, 4.9, 5)), "MISS");
}

TEST(Verdict, ARatioPastItsBoundIsAMiss) {
  EXPECT_EQ(ending(judged(Goal::kRatioAtMost, 1.0, 1.05, 1.0)), "ok");
  EXPECT_EQ(ending(judged(Goal::kRatioAtMost, 1.2, 1.05, 1.0)), "MISS");
  EXPECT_EQ(ending(judged(Goal::kRatioAtLeast, 2.0, 1.5, 1.0)), "ok");
  EXPECT_EQ(ending(judged(Goal::kRatioAtLeast, 1.2, 1.5, 1.0)), "MISS");
}

// What a bench could not measure is no pass: an unreadable count (the
// timeline bench's dropped pairs), a missing baseline, a NaN.
TEST(Verdict, AFigureThatCouldNotBeReadIsAMiss) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(ending(judged(Goal::kAtMost, inf, 0)), "MISS");
  EXPECT_EQ(ending(judged(Goal::kAtMost, nan, 10)), "MISS");
  EXPECT_EQ(ending(judged(Goal::kAtLeast, nan, 5)), "MISS");
  EXPECT_EQ(ending(judged(Goal::kRatioAtMost, 1.0, 1.05)), "MISS");  // no baseline ran
  EXPECT_EQ(ending(judged(Goal::kRatioAtLeast, 1.0, 0.5)), "MISS");
}

TEST(Verdict, AReportedFigureIsNotJudged) {
  EXPECT_EQ(ending(judged(Goal::kNone, 1e9, 0)), "-");
}

}  // namespace
}  // namespace regiontrace::bench
