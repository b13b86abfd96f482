// Many threads allocating at once, and allocations libtorch makes on a worker
// on behalf of a region (at::launch hands the worker the caller's state).
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "memory_test_support.hpp"
#include "torch_workload.hpp"

namespace regiontrace::memory::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

TEST(MemoryThreads, ManyThreadsAllocatingAtOnceAreAccountedPerRegion) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"track_allocations", "true"}, {"rss", "false"}}));
  constexpr int kThreads = 8;
  constexpr int kIterations = 40;
  std::vector<std::vector<Buffer>> kept(kThreads);
  snapshot("before the threads");
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &kept] {
      const std::string name = "worker" + std::to_string(t);
      for (int i = 0; i < kIterations; ++i) {
        Region outer(name);
        {
          RT_REGION("inner");
          allocate_and_free((t + 1) * 10 * kKiB);
          if (i % 10 == 0) kept[t].emplace_back((t + 1) * kKiB);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  snapshot("after the threads");
  run.stop();

  const MemoryOutputs out = read_outputs(dir.path());
  EXPECT_EQ(out.records.size(), static_cast<std::size_t>(2 * kThreads * kIterations));
  EXPECT_EQ(out.summary.at("records").at("dropped"), 0);
  ASSERT_EQ(out.snapshots.size(), 2u);
  // The running CPU figure lost no event to the race (tracked events count
  // it under the table's lock): exactly what the threads kept.
  std::int64_t kept_bytes = 0;
  for (int t = 0; t < kThreads; ++t) kept_bytes += (kIterations / 10) * (t + 1) * kKiB;
  const auto cpu_allocated = [](const json& snapshot) {
    return snapshot.at("devices").at("cpu").at("allocated_bytes").get<std::int64_t>();
  };
  EXPECT_EQ(cpu_allocated(out.snapshots[1]) - cpu_allocated(out.snapshots[0]), kept_bytes);
  for (int t = 0; t < kThreads; ++t) {
    const std::string path = "worker" + std::to_string(t) + "/inner";
    const std::vector<json> inner = out.records_of(path);
    ASSERT_EQ(inner.size(), static_cast<std::size_t>(kIterations)) << path;
    std::set<std::uint64_t> thread_ids;
    for (const json& r : inner) {
      thread_ids.insert(r.at("thread").get<std::uint64_t>());
      const json& c = r.at("devices").at("cpu");
      // The figures are process-wide and other threads allocate and free
      // meanwhile; still, the peak covers this region's own temporary and
      // both ends.
      EXPECT_GE(c.at("peak_bytes").get<std::int64_t>(), (t + 1) * 10 * kKiB) << path;
      EXPECT_GE(c.at("peak_bytes"), c.at("exit_bytes"));
      EXPECT_GE(c.at("peak_bytes"), c.at("entry_bytes"));
    }
    EXPECT_EQ(thread_ids.size(), 1u);
    // Attribution is exact whatever the interleaving.
    const json* g = snapshot_region(out.snapshots[1], path);
    ASSERT_NE(g, nullptr) << path;
    EXPECT_EQ(g->at("bytes"), (kIterations / 10) * (t + 1) * kKiB) << path;
    EXPECT_EQ(g->at("count"), kIterations / 10) << path;
  }
  EXPECT_EQ(out.snapshots[1].at("tracking").at("overflow_count"), 0);
}

TEST(MemoryThreads, WorkOnAnInterOpWorkerCountsForTheCallersRegion) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"track_allocations", "true"}}));
  Buffer from_worker;
  {
    RT_REGION("launcher");
    from_worker = allocate_in_launch(96 * kKiB);
  }
  snapshot("after launch");
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  ASSERT_EQ(out.records_of("launcher").size(), 1u);
  const json c = out.records_of("launcher")[0].at("devices").at("cpu");
  EXPECT_EQ(c.at("exit_bytes").get<std::int64_t>() - c.at("entry_bytes").get<std::int64_t>(),
            96 * kKiB);
  EXPECT_EQ(c.at("peak_bytes"), c.at("exit_bytes"));
  ASSERT_EQ(out.snapshots.size(), 1u);
  const json* g = snapshot_region(out.snapshots[0], "launcher");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->at("bytes"), 96 * kKiB);
}

}  // namespace
}  // namespace regiontrace::memory::test
