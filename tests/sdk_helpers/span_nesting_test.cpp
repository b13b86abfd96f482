// How one thread's ops and region spans nest (regiontrace/sdk/span_nesting.hpp),
// the rule the torch_profiler sink writes traces by and `regiontrace summary`
// reads them by. libtorch stamps ops on its own clock, tens of nanoseconds off
// the regions': a region is never cut by an op that crosses it.
#include "regiontrace/sdk/span_nesting.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace regiontrace::nesting {
namespace {

constexpr std::size_t kRoot = Nested::kNoParent;

Span op(std::int64_t start, std::int64_t end) {
  return {start, end, false};
}
Span region(std::int64_t start, std::int64_t end) {
  return {start, end, true};
}

// training_step { mm; training_backward { sin } }, with mm's end stamped
// 40 ns past the backward region's start (the op clock ahead): the region
// keeps its whole length, sin nests in it, mm ends where the region begins.
TEST(SpanNesting, ARegionIsNotCutByAnOpStampedEndingInsideIt) {
  const std::vector<Span> spans = {
      region(0, 100000),     // training_step
      region(50000, 90000),  // training_backward
      op(10000, 50040),      // aten::mm, ended before the backward began
      op(60000, 61000),      // aten::sin, inside the backward
  };
  const Nested n = nest(spans);
  EXPECT_EQ(n.clamped_start[1], 50000);
  EXPECT_EQ(n.clamped_end[1], 90000) << "the region was cut by the op before it";
  EXPECT_EQ(n.parent[1], 0u);
  EXPECT_EQ(n.parent[2], 0u);  // mm: a sibling of the backward, not its parent
  EXPECT_EQ(n.clamped_end[2], 50000);
  EXPECT_EQ(n.parent[3], 1u);  // sin under the backward
  EXPECT_EQ(n.self[1], 40000 - 1000);
  EXPECT_EQ(n.self[0], 100000 - 40000 - 40000);
}

// The twin: a short op that ended just before a region began keeps its
// whole duration, outside the region (it used to become a 1 ns slice in it).
TEST(SpanNesting, AShortOpJustBeforeARegionKeepsItsDuration) {
  const std::vector<Span> spans = {region(10000, 20000), op(9200, 9700), op(12000, 13000)};
  const Nested n = nest(spans);
  EXPECT_EQ(n.parent[1], kRoot);
  EXPECT_EQ(n.clamped_start[1], 9200);
  EXPECT_EQ(n.clamped_end[1], 9700);
  EXPECT_EQ(n.self[1], 500);
  EXPECT_EQ(n.parent[2], 0u);
}

// The other direction of the clocks: an op that began just after a region
// began, stamped 40 ns before it, is the region's child, its start at the
// region's; one stamped ending 40 ns after its region ended ends with it.
TEST(SpanNesting, AnOpStampedAcrossItsRegionsBoundaryNestsInIt) {
  const std::vector<Span> spans = {region(10000, 20000), op(9960, 15000), op(16000, 20040)};
  const Nested n = nest(spans);
  EXPECT_EQ(n.parent[1], 0u);
  EXPECT_EQ(n.clamped_start[1], 10000);
  EXPECT_EQ(n.clamped_end[1], 15000);
  EXPECT_EQ(n.parent[2], 0u);
  EXPECT_EQ(n.clamped_end[2], 20000);
  EXPECT_EQ(n.self[0], 10000 - 5000 - 4000);
  // And an op that began 40 ns before the region ended, ran after it: it
  // begins 1 ns after the region's end, which stays the region's.
  const Nested after = nest({region(10000, 20000), op(19960, 30000)});
  EXPECT_EQ(after.parent[1], kRoot);
  EXPECT_EQ(after.clamped_start[1], 20001);
  EXPECT_EQ(after.clamped_end[0], 20000);
  EXPECT_EQ(after.clamped_end[1], 30000);
}

// A region wholly inside an op is its child (user code under an autograd
// node), and an op wholly inside a region is the region's.
TEST(SpanNesting, WholeContainmentIsNesting) {
  const Nested n = nest({op(0, 10000), region(2000, 8000), op(3000, 4000)});
  EXPECT_EQ(n.parent[1], 0u);
  EXPECT_EQ(n.parent[2], 1u);
  EXPECT_EQ(n.clamped_start[1], 2000);
  EXPECT_EQ(n.clamped_end[1], 8000);
  EXPECT_EQ(n.self[0], 10000 - 6000);
}

// Two ops (one clock) that cross by rounding: the later is the earlier's
// child, clamped into it, as before.
TEST(SpanNesting, OpsOfOneClockAreClampedIntoTheirParent) {
  const Nested n = nest({op(0, 10000), op(5000, 10001)});
  EXPECT_EQ(n.parent[1], 0u);
  EXPECT_EQ(n.clamped_end[1], 10000);
  EXPECT_EQ(n.self[0], 5000);
}

// An op crossing two regions (the end of one, the start of the next): cut
// at both, it keeps the gap between them where it ran.
TEST(SpanNesting, AnOpBetweenTwoRegionsIsCutAtBoth) {
  const Nested n = nest({region(0, 10000), region(20000, 30000), op(9950, 20050)});
  EXPECT_EQ(n.parent[2], kRoot);
  EXPECT_EQ(n.clamped_start[2], 10001);
  EXPECT_EQ(n.clamped_end[2], 20000);
  EXPECT_EQ(n.clamped_end[0], 10000);
  EXPECT_EQ(n.clamped_start[1], 20000);
}

}  // namespace
}  // namespace regiontrace::nesting
