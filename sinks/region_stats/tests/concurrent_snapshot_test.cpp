// Readers (a scrape, shutdown) copy the numbers while threads record: the
// copies are consistent enough to be monotonic and the final one is exact.
// Also built under ThreadSanitizer (see docs/region-stats.md).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "path_summary.hpp"
#include "thread_stats_registry.hpp"

namespace regiontrace::region_stats {
namespace {

void run_regions(ThreadStats& s, std::uint64_t thread_id, int n) {
  RegionEvent outer;
  outer.id = 1;
  outer.name = "outer";
  outer.path = "outer";
  outer.thread_id = thread_id;
  RegionEvent inner = outer;
  inner.id = 2;
  inner.name = "inner";
  inner.path = "outer/inner";
  inner.depth = 1;
  for (int i = 0; i < n; ++i) {
    const std::int64_t t = 1000 + i * 100;
    outer.step = inner.step = i / 50;
    outer.time_ns = t;
    s.begin(outer);
    inner.time_ns = t + 10;
    s.begin(inner);
    inner.begin_time_ns = t + 10;
    inner.time_ns = t + 30;
    s.end(inner);
    outer.begin_time_ns = t;
    outer.time_ns = t + 50;
    s.end(outer);
  }
}

TEST(ConcurrentSnapshot, ReadersSeeGrowingCountsAndTheFinalCopyIsExact) {
  constexpr int kThreads = 4;
  constexpr int kRegions = 20000;
  ThreadRegistry registry({20, 40}, 10);
  std::atomic<int> running{kThreads};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      run_regions(registry.for_thread(static_cast<std::uint64_t>(t + 1)),
                  static_cast<std::uint64_t>(t + 1), kRegions);
      running.fetch_sub(1);
    });
  }
  std::uint64_t last = 0;
  while (running.load() > 0) {
    for (const PathSummary& p : merge_by_path(registry.snapshot())) {
      if (p.path != "outer") continue;
      EXPECT_GE(p.totals.count, last);
      last = p.totals.count;
    }
  }
  for (std::thread& w : writers) w.join();
  const std::vector<PathSummary> all = merge_by_path(registry.snapshot());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].path, "outer");
  EXPECT_EQ(all[0].threads, static_cast<std::size_t>(kThreads));
  EXPECT_EQ(all[0].totals.count, static_cast<std::uint64_t>(kThreads * kRegions));
  EXPECT_EQ(all[0].totals.total_ns, 50LL * kThreads * kRegions);
  EXPECT_EQ(all[0].totals.self_ns, 30LL * kThreads * kRegions);
  EXPECT_EQ(all[1].bound_counts, (std::vector<std::uint64_t>{kThreads * kRegions, 0, 0}));
  EXPECT_EQ(all[0].bound_counts, (std::vector<std::uint64_t>{0, 0, kThreads * kRegions}));
  // Steps of 50 regions each; the last 10 kept.
  ASSERT_EQ(all[0].steps.size(), 10u);
  EXPECT_EQ(all[0].steps.rbegin()->first, kRegions / 50 - 1);
  EXPECT_EQ(all[0].steps.rbegin()->second.count, static_cast<std::uint64_t>(kThreads * 50));
  EXPECT_EQ(registry.thread_count(), static_cast<std::size_t>(kThreads));
}

}  // namespace
}  // namespace regiontrace::region_stats
