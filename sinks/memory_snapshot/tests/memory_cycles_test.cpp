// Many init()/shutdown() cycles in one process. The host never deletes a
// sink (a callback on another thread may race close()), so whatever a closed
// instance still holds stays for the life of the process: it must be a small
// constant, not the live-allocation table, the region paths or the writer's
// buffers of every run.
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "memory_test_support.hpp"
#include "torch_workload.hpp"

namespace regiontrace::memory::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

// Bytes the C heap has handed out (small chunks and the ones it mmaps).
std::int64_t heap_in_use() {
  const struct mallinfo2 m = ::mallinfo2();
  return static_cast<std::int64_t>(m.uordblks + m.hblkhd);
}

// The resident set from /proc/self/statm: whatever the sink keeps, the
// table it maps itself included.
std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0;
  std::int64_t resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// One run that uses what a closed instance could keep: a few hundred region
// records (the writer's queue and files), many live allocations at once
// (spread over the tracking table's pages), several paths.
void one_cycle(const std::string& dir, bool track) {
  SinkRun run(
      memory_options(dir, {{"track_allocations", track ? "true" : "false"}, {"trace", "true"}}));
  for (int i = 0; i < 300; ++i) {
    RT_REGION("cycle_outer");
    RT_REGION("cycle_inner");
    allocate_and_free(256);
  }
  {
    RT_REGION("cycle_many_live");
    std::vector<Buffer> live(2000);
    for (Buffer& b : live) b = Buffer(64);
  }
  run.stop();
}

struct Growth {
  double heap_per_cycle = 0;
  double resident_per_cycle = 0;
};

Growth measure(bool track, int cycles) {
  TempDir dir;
  // Warm: libtorch's and the host's one-time state, the sink's pools.
  for (int i = 0; i < 3; ++i) one_cycle(dir.path(), track);
  ::malloc_trim(0);
  const std::int64_t heap0 = heap_in_use();
  const std::int64_t rss0 = resident_bytes();
  for (int i = 0; i < cycles; ++i) one_cycle(dir.path(), track);
  ::malloc_trim(0);
  Growth g;
  g.heap_per_cycle = static_cast<double>(heap_in_use() - heap0) / cycles;
  g.resident_per_cycle = static_cast<double>(resident_bytes() - rss0) / cycles;
  return g;
}

// What a closed instance may keep: the sink object and its small parts (a
// few kB), plus the host's own per-start state. Before the fix, one cycle
// kept ~800 kB (tracking off) and ~9 MB (tracking on).
constexpr double kMaxHeapPerCycle = 32 * 1024;
// The resident set also moves with the allocator's free lists and libtorch:
// a looser bound, still far below one table or path list per cycle.
constexpr double kMaxResidentPerCycle = 96 * 1024;

void expect_little_kept(bool track) {
  CleanEnv env;
  const Growth g = measure(track, 24);
  EXPECT_LT(g.heap_per_cycle, kMaxHeapPerCycle);
  EXPECT_LT(g.resident_per_cycle, kMaxResidentPerCycle);
  std::printf("heap %+.1f kB, resident %+.1f kB per init()/shutdown() cycle\n",
              g.heap_per_cycle / 1024, g.resident_per_cycle / 1024);
}

TEST(MemoryCycles, AClosedInstanceKeepsLittleMemoryWithoutTracking) {
  expect_little_kept(false);
}

TEST(MemoryCycles, AClosedInstanceKeepsLittleMemoryWithTracking) {
  expect_little_kept(true);
}

// A closed instance's pooled table goes to the next instance: what the next
// one reports must be its own, not what the previous run left behind.
TEST(MemoryCycles, TheNextInstanceStartsFromAnEmptyTable) {
  CleanEnv env;
  Buffer left_alive;
  {
    TempDir dir;
    SinkRun run(memory_options(dir.path(), {{"track_allocations", "true"}}));
    RT_REGION("first_run");
    left_alive = Buffer(64 * kKiB);
  }
  TempDir dir;
  {
    SinkRun run(memory_options(dir.path(), {{"track_allocations", "true"}}));
    {
      RT_REGION("second_run");
      allocate_and_free(kKiB);
    }
    snapshot("after the second run's region");
  }
  const MemoryOutputs out = read_outputs(dir.path());
  ASSERT_EQ(out.snapshots.size(), 1u);
  EXPECT_EQ(snapshot_region(out.snapshots[0], "first_run"), nullptr);
  EXPECT_EQ(out.summary.at("tracking").at("tracked").get<std::int64_t>(), 0);
  const std::vector<json> second = out.records_of("second_run");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].at("held_bytes").get<std::int64_t>(), 0);
}

}  // namespace
}  // namespace regiontrace::memory::test
