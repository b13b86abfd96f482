// The SDK's calibrated clock: its readings are CLOCK_MONOTONIC nanoseconds
// within a bound (50 us) whether they come from the TSC or not, they never
// step back on a thread (also across re-calibrations), and the monotonic
// fallback is clock_gettime itself.
#include "regiontrace/sdk/clock.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using regiontrace::sdk::clock::CalibratedClock;
using regiontrace::sdk::clock::monotonic_ns;

constexpr std::int64_t kBoundNs = 50000;

// The largest distance between the clock and clock_gettime, each reading
// bracketed by two clock_gettime calls (the bracket's width is not the
// clock's error, so it is taken off).
std::int64_t worst_distance(CalibratedClock& clock, int samples) {
  std::int64_t worst = 0;
  for (int i = 0; i < samples; ++i) {
    const std::int64_t before = monotonic_ns();
    const std::int64_t t = clock.now_ns();
    const std::int64_t after = monotonic_ns();
    std::int64_t d = 0;
    if (t < before) d = before - t;
    if (t > after) d = t - after;
    worst = std::max(worst, d);
  }
  return worst;
}

TEST(CalibratedClock, ReadsMonotonicNanosecondsWithinTheBound) {
  CalibratedClock clock;
  EXPECT_LT(worst_distance(clock, 10000), kBoundNs);
  // Across several re-calibration points (1 ms, 2 ms, 4 ms, ... after start).
  for (int round = 0; round < 8; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5 << (round % 4)));
    EXPECT_LT(worst_distance(clock, 2000), kBoundNs) << "round " << round;
  }
}

TEST(CalibratedClock, UsesTheTscWhereTheMachineHasAnInvariantOne) {
  CalibratedClock clock;
  EXPECT_EQ(clock.uses_tsc(), regiontrace::sdk::clock::tsc_usable());
  if (clock.uses_tsc()) {
    // A real TSC runs between 100 MHz and 10 GHz.
    EXPECT_GT(clock.tsc_hz(), 1e8);
    EXPECT_LT(clock.tsc_hz(), 1e10);
  }
}

TEST(CalibratedClock, NeverStepsBackOnAThreadAcrossRecalibrations) {
  CalibratedClock clock;
  std::vector<std::thread> threads;
  std::vector<std::int64_t> backward(4, 0);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&clock, &backward, k] {
      std::int64_t last = clock.now_ns();
      const std::int64_t stop = monotonic_ns() + 40000000;  // 40 ms: several check points
      while (monotonic_ns() < stop) {
        const std::int64_t t = clock.now_ns();
        if (t < last) ++backward[k];
        last = t;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int k = 0; k < 4; ++k) EXPECT_EQ(backward[k], 0) << "thread " << k;
  EXPECT_LT(worst_distance(clock, 2000), kBoundNs);
}

TEST(CalibratedClock, MonotonicSourceIsClockGettime) {
  CalibratedClock clock(CalibratedClock::Source::kMonotonic);
  EXPECT_FALSE(clock.uses_tsc());
  EXPECT_EQ(clock.tsc_hz(), 0.0);
  const std::int64_t before = monotonic_ns();
  const std::int64_t t = clock.now_ns();
  const std::int64_t after = monotonic_ns();
  EXPECT_LE(before, t);
  EXPECT_LE(t, after);
}

TEST(CalibratedClock, EnvironmentForcesTheMonotonicSource) {
  ::setenv("REGIONTRACE_CLOCK", "monotonic", 1);
  CalibratedClock clock;
  const bool tsc = clock.uses_tsc();
  ::unsetenv("REGIONTRACE_CLOCK");
  EXPECT_FALSE(tsc);
}

TEST(CalibratedClock, ProcessClockAgreesWithClockGettime) {
  const std::int64_t before = monotonic_ns();
  const std::int64_t t = regiontrace::sdk::clock::now_ns();
  const std::int64_t after = monotonic_ns();
  EXPECT_GT(t, before - kBoundNs);
  EXPECT_LT(t, after + kBoundNs);
}

}  // namespace

// The inline read multiplies in 64 bits; over every reading a segment can
// serve (a little before its anchor up to its longest interval, at TSC rates
// from 100 MHz to 6 GHz and slopes down to half the tick), it must equal
// the 128-bit product exactly.
TEST(ClockSegment, SixtyFourBitReadingsEqualTheWideProductOverASegmentsRange) {
  using regiontrace::sdk::clock::Segment;
  std::uint64_t state = 88172645463325252ull;  // xorshift: the same cases every run
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  constexpr double kMaxSegmentNs = 2.5e8;  // clock.hpp's kMaxIntervalNs
  for (const double ghz : {0.1, 1.0, 2.3, 3.7, 6.0}) {
    for (const double slope_share : {0.5, 0.9, 1.0}) {
      Segment s;
      s.anchor_tsc = next() >> 2;
      s.anchor_ns = static_cast<std::int64_t>(next() >> 8);
      s.mult = static_cast<std::uint64_t>(slope_share / ghz * 4294967296.0);
      const auto span_ticks = static_cast<std::uint64_t>(kMaxSegmentNs * ghz);
      for (int i = 0; i < 20000; ++i) {
        const std::uint64_t t = s.anchor_tsc - 100000 + next() % (span_ticks + 100000);
        ASSERT_EQ(s.value_at(t), s.value_at_wide(t)) << ghz << " GHz, tick " << t;
      }
      ASSERT_EQ(s.value_at(s.anchor_tsc + span_ticks), s.value_at_wide(s.anchor_tsc + span_ticks));
    }
  }
}
