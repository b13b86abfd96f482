// Nested peaks, exclusive net growth and path caching, driven by hand
// (no libtorch): what the reporter would do on allocation events.
#include "thread_accounting.hpp"

#include <gtest/gtest.h>

namespace regiontrace::memory {
namespace {

DeviceFigures at(const ClosedRegion& r, int device) {
  const DeviceFigures* f = r.devices.find(device);
  EXPECT_NE(f, nullptr) << "device " << device;
  return f != nullptr ? *f : DeviceFigures{};
}

struct Fixture {
  MemoryCounters counters;
  RegionPaths paths{64};
  ThreadAccounting acc{1, 1};
  // What the sink does with a CPU allocation event.
  void alloc(std::int64_t bytes, int device = kCpuDevice) {
    const std::int64_t now = counters.add(device, bytes);
    if (bytes > 0) acc.note_peak(device, now);
  }
};

TEST(ThreadAccounting, NestedRegionsHaveTheirOwnPeaks) {
  Fixture f;
  f.alloc(1000);  // before any region
  f.acc.open(1, 2, 0, 0, f.counters, false);
  EXPECT_EQ(f.acc.current_path.load(), 2);
  f.alloc(500);
  f.acc.open(2, 3, 0, 0, f.counters, false);
  f.alloc(4000);
  f.alloc(-4000);
  ClosedRegion inner;
  ASSERT_TRUE(f.acc.close(2, f.counters, false, &inner));
  EXPECT_EQ(f.acc.current_path.load(), 2);
  f.acc.open(3, 4, 0, 0, f.counters, false);
  f.alloc(100);
  f.alloc(-100);
  ClosedRegion sibling;
  ASSERT_TRUE(f.acc.close(3, f.counters, false, &sibling));
  f.alloc(-500);
  ClosedRegion outer;
  ASSERT_TRUE(f.acc.close(1, f.counters, false, &outer));
  EXPECT_EQ(f.acc.current_path.load(), RegionPaths::kOutside);

  EXPECT_EQ(at(inner, kCpuDevice).entry, 1500);
  EXPECT_EQ(at(inner, kCpuDevice).peak, 5500);
  EXPECT_EQ(at(inner, kCpuDevice).exit, 1500);
  EXPECT_EQ(at(sibling, kCpuDevice).peak, 1600);
  EXPECT_EQ(at(outer, kCpuDevice).entry, 1000);
  EXPECT_EQ(at(outer, kCpuDevice).peak, 5500);
  EXPECT_EQ(at(outer, kCpuDevice).exit, 1000);
  EXPECT_EQ(outer.devices.size(), 1u);
}

TEST(ThreadAccounting, ExclusiveNetLeavesOutNestedRegions) {
  Fixture f;
  f.acc.open(1, 2, 0, 0, f.counters, false);
  f.alloc(300);
  f.acc.open(2, 3, 0, 0, f.counters, false);
  f.alloc(700);
  ClosedRegion inner;
  f.acc.close(2, f.counters, false, &inner);
  ClosedRegion outer;
  f.acc.close(1, f.counters, false, &outer);
  EXPECT_EQ(inner.exclusive_net, 700);
  EXPECT_EQ(outer.exclusive_net, 300);
}

TEST(ThreadAccounting, ADeviceFirstSeenInsideARegionStartsAtZero) {
  Fixture f;
  f.acc.open(1, 2, 0, 0, f.counters, false);
  const int cuda0 = cuda_device(0);
  f.counters.set(cuda0, 8000);
  f.acc.note_peak(cuda0, 8000);
  f.counters.set(cuda0, 6000);
  ClosedRegion r;
  f.acc.close(1, f.counters, false, &r);
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].device, kCpuDevice);
  EXPECT_EQ(r.devices[1].device, cuda0);
  EXPECT_EQ(at(r, cuda0).entry, 0);
  EXPECT_EQ(at(r, cuda0).peak, 8000);
  EXPECT_EQ(at(r, cuda0).exit, 6000);
}

TEST(ThreadAccounting, ManyDevicesSpillOutOfTheInlineList) {
  Fixture f;
  for (int i = 0; i < 5; ++i) f.counters.set(cuda_device(i), 100 * (i + 1));
  f.acc.open(1, 2, 0, 0, f.counters, false);
  f.counters.set(cuda_device(4), 900);
  ClosedRegion r;
  ASSERT_TRUE(f.acc.close(1, f.counters, false, &r));
  ASSERT_EQ(r.devices.size(), 6u);
  EXPECT_EQ(r.devices[5].device, cuda_device(4));
  EXPECT_EQ(at(r, cuda_device(4)).entry, 500);
  EXPECT_EQ(at(r, cuda_device(4)).exit, 900);
  EXPECT_EQ(at(r, cuda_device(2)).exit, 300);
  EXPECT_EQ(r.exclusive_net, 400);
}

TEST(ThreadAccounting, StandingAsideMarksTheEnclosingRegionsToo) {
  Fixture f;
  f.acc.open(1, 2, 0, 0, f.counters, false);
  f.acc.open(2, 3, 0, 0, f.counters, true);
  ClosedRegion inner;
  ClosedRegion outer;
  f.acc.close(2, f.counters, false, &inner);
  f.acc.close(1, f.counters, false, &outer);
  EXPECT_TRUE(inner.stood_aside);
  EXPECT_TRUE(outer.stood_aside);
  // Nothing was heard in either: no figures of their own.
  EXPECT_TRUE(inner.unmeasured);
  EXPECT_TRUE(outer.unmeasured);
}

TEST(ThreadAccounting, AStoodAsideRegionThatHeardEventsIsMeasuredInPart) {
  Fixture f;
  f.acc.open(1, 2, 0, 0, f.counters, false);
  f.acc.note_heard();  // an allocation before the profiler took the slot
  f.acc.open(2, 3, 0, 0, f.counters, true);
  ClosedRegion inner;
  ClosedRegion outer;
  f.acc.close(2, f.counters, true, &inner);
  f.acc.close(1, f.counters, false, &outer);
  EXPECT_TRUE(inner.unmeasured);
  EXPECT_TRUE(outer.stood_aside);
  EXPECT_FALSE(outer.unmeasured);
}

TEST(ThreadAccounting, AnEndWithoutItsBeginIsIgnored) {
  Fixture f;
  ClosedRegion r;
  EXPECT_FALSE(f.acc.close(9, f.counters, false, &r));
}

TEST(ThreadAccounting, PathsAreInternedOnceAndCached) {
  Fixture f;
  const int a = f.acc.cached_path("outer/inner", "inner", f.paths);
  EXPECT_EQ(f.acc.cached_path("outer/inner", "inner", f.paths), a);
  EXPECT_NE(f.acc.cached_path("outer", "outer", f.paths), a);
  EXPECT_EQ(f.paths.path(a), "outer/inner");
  EXPECT_EQ(f.paths.name(a), "inner");
  ThreadAccounting other(1, 2);
  EXPECT_EQ(other.cached_path("outer/inner", "inner", f.paths), a);
}

TEST(RegionPaths, BeyondCapacityPathsShareTheOverflowEntry) {
  RegionPaths paths(4);
  EXPECT_EQ(paths.intern("a", "a"), 2);
  EXPECT_EQ(paths.intern("b", "b"), 3);
  EXPECT_EQ(paths.intern("c", "c"), RegionPaths::kOverflow);
  EXPECT_TRUE(paths.overflowed());
  EXPECT_EQ(paths.intern("a", "a"), 2);
}

}  // namespace
}  // namespace regiontrace::memory
