// Region's inline code reads the library's clock itself while the TSC is
// inside the clock's current segment (detail::clock_ns_inline), and calls
// the library otherwise. Both must be one clock: spans stamped inline and
// events stamped in the library nest only if their readings interleave in
// order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>

#include "regiontrace/regiontrace.hpp"
#include "regiontrace/sdk/clock.hpp"

namespace {

using regiontrace::detail::clock_ns;
using regiontrace::detail::clock_ns_inline;
using regiontrace::detail::g_clock_segment;
using regiontrace::sdk::clock::monotonic_ns;

TEST(InlineClock, ReadsTheLibraryClocksSegmentWhereTheTscIsUsed) {
  clock_ns();  // calibrates
  EXPECT_EQ(g_clock_segment.load() != nullptr, regiontrace::sdk::clock::tsc_usable());
}

TEST(InlineClock, InterleavesWithTheLibrarysReadingsInOrderAndNearMonotonic) {
  std::int64_t last = clock_ns();
  std::int64_t worst = 0;
  // Long enough to pass the clock's first re-calibration points (1, 2, 4 ms
  // after it started), where the inline read gives way to the library.
  const std::int64_t until = monotonic_ns() + 20000000;
  long reads = 0;
  while (monotonic_ns() < until) {
    const std::int64_t before = monotonic_ns();
    const std::int64_t a = clock_ns_inline();
    const std::int64_t b = clock_ns();
    const std::int64_t c = clock_ns_inline();
    const std::int64_t after = monotonic_ns();
    ASSERT_LE(last, a) << "after " << reads << " reads";
    ASSERT_LE(a, b);
    ASSERT_LE(b, c);
    last = c;
    worst = std::max({worst, before - a, c - after});
    reads += 3;
    if (reads % 3000 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // The calibrated clock's bound against CLOCK_MONOTONIC (sdk clock_test).
  EXPECT_LT(worst, 50000);
  EXPECT_GT(reads, 3000);
}

}  // namespace
