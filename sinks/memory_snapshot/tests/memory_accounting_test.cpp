// Per-region figures: entry, exit and peak bytes match what the workload
// allocated, nested regions have their own peaks, RSS is there, the Chrome
// trace carries the same figures as counters.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>

#include "trace_nesting_check.hpp"

#include "memory_test_support.hpp"
#include "torch_workload.hpp"

namespace regiontrace::memory::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

TEST(MemoryAccounting, EntryExitAndPeakMatchTheAllocatedSizes) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path()));
  Buffer outer_keep;
  Buffer inner_keep;
  {
    RT_REGION("outer");
    outer_keep = Buffer(1 * kMiB);
    {
      RT_REGION("inner");
      allocate_and_free(2 * kMiB);  // the peak of both regions
      inner_keep = Buffer(256 * kKiB);
    }
    allocate_and_free(512 * kKiB);
    {
      RT_REGION("sibling");
      allocate_and_free(100 * kKiB);  // its own, smaller peak
    }
  }
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  ASSERT_EQ(out.records_of("outer").size(), 1u);
  ASSERT_EQ(out.records_of("outer/inner").size(), 1u);
  ASSERT_EQ(out.records_of("outer/sibling").size(), 1u);
  const json outer = out.records_of("outer")[0];
  const json inner = out.records_of("outer/inner")[0];
  const json sibling = out.records_of("outer/sibling")[0];

  const std::int64_t e = cpu(outer, "entry_bytes");
  EXPECT_EQ(cpu(outer, "exit_bytes"), e + 1 * kMiB + 256 * kKiB);
  EXPECT_EQ(cpu(outer, "peak_bytes"), e + 3 * kMiB);
  EXPECT_EQ(cpu(inner, "entry_bytes"), e + 1 * kMiB);
  EXPECT_EQ(cpu(inner, "exit_bytes"), e + 1 * kMiB + 256 * kKiB);
  EXPECT_EQ(cpu(inner, "peak_bytes"), e + 3 * kMiB);
  EXPECT_EQ(cpu(sibling, "entry_bytes"), e + 1 * kMiB + 256 * kKiB);
  EXPECT_EQ(cpu(sibling, "exit_bytes"), e + 1 * kMiB + 256 * kKiB);
  EXPECT_EQ(cpu(sibling, "peak_bytes"), e + 1 * kMiB + 356 * kKiB);

  EXPECT_EQ(outer.at("name"), "outer");
  EXPECT_EQ(inner.at("name"), "inner");
  EXPECT_EQ(inner.at("depth"), 1);
  EXPECT_TRUE(outer.at("step").is_null());
  EXPECT_FALSE(outer.at("unwinding").get<bool>());
  EXPECT_FALSE(outer.at("stood_aside").get<bool>());
  EXPECT_GE(outer.at("duration_ns").get<std::int64_t>(),
            inner.at("duration_ns").get<std::int64_t>());
  EXPECT_GT(inner.at("duration_ns").get<std::int64_t>(), 0);
  EXPECT_GT(outer.at("rss_bytes").get<std::int64_t>(), 0);
  EXPECT_GE(outer.at("hwm_bytes").get<std::int64_t>(), outer.at("rss_bytes").get<std::int64_t>());
  // Children are written before their parents (records follow region ends).
  EXPECT_EQ(out.records.back().at("path"), "outer");

  // The summary agrees with the records.
  const json* s = out.region_summary("outer/inner");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->at("calls"), 1);
  EXPECT_EQ(s->at("devices").at("cpu").at("highest_peak_bytes"), e + 3 * kMiB);
  EXPECT_EQ(s->at("devices").at("cpu").at("largest_growth_bytes"), 256 * kKiB);
  // What inner added at its height: its peak over its own entry (1 MiB was
  // there before it), not the level.
  EXPECT_EQ(s->at("devices").at("cpu").at("largest_added_at_peak_bytes"), 2 * kMiB);
  const json* o = out.region_summary("outer");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->at("devices").at("cpu").at("largest_added_at_peak_bytes"), 3 * kMiB);
  EXPECT_GT(out.summary.at("resident").at("hwm_bytes").get<std::int64_t>(), 0);
}

TEST(MemoryAccounting, StepsAndRepeatedRegionsHaveOneRecordEach) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"rss", "false"}}));
  std::vector<Buffer> kept;
  for (int step = 0; step < 4; ++step) {
    set_step(step);
    RT_REGION("train_step");
    kept.emplace_back(64 * kKiB);
  }
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  const std::vector<json> steps = out.records_of("train_step");
  ASSERT_EQ(steps.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(steps[i].at("step"), i);
    EXPECT_EQ(cpu(steps[i], "exit_bytes") - cpu(steps[i], "entry_bytes"), 64 * kKiB);
    EXPECT_TRUE(steps[i].at("rss_bytes").is_null());  // rss: false
  }
  EXPECT_EQ(cpu(steps[3], "entry_bytes") - cpu(steps[0], "entry_bytes"), 3 * 64 * kKiB);
}

TEST(MemoryAccounting, FiguresStayExactAcrossShutdownAndInitAgain) {
  CleanEnv env;
  for (int round = 0; round < 3; ++round) {
    TempDir dir;
    SinkRun run(memory_options(dir.path()));
    { RT_REGION("first"); }     // from here on, this thread is heard
    Buffer outside(32 * kKiB);  // outside every region: still counted
    {
      RT_REGION("again");
      allocate_and_free(3 * kMiB);
      outside.reset();
    }
    run.stop();
    const MemoryOutputs out = read_outputs(dir.path());
    ASSERT_EQ(out.records_of("again").size(), 1u) << "round " << round;
    const json r = out.records_of("again")[0];
    EXPECT_EQ(cpu(r, "peak_bytes"), cpu(r, "entry_bytes") + 3 * kMiB) << "round " << round;
    EXPECT_EQ(cpu(r, "exit_bytes"), cpu(r, "entry_bytes") - 32 * kKiB) << "round " << round;
    EXPECT_FALSE(r.at("stood_aside").get<bool>());
  }
}

TEST(MemoryAccounting, ChromeTraceHasSpansAndCounterTracks) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path()));
  Buffer keep;
  {
    RT_REGION("traced");
    keep = Buffer(kMiB);
  }
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  ASSERT_TRUE(out.trace.is_object());
  ASSERT_EQ(out.records.size(), 1u);
  const json& r = out.records[0];
  int spans = 0;
  std::vector<std::int64_t> allocated;
  bool resident = false;
  for (const json& e : out.trace.at("traceEvents")) {
    if (e.at("ph") == "X") {
      ++spans;
      EXPECT_EQ(e.at("name"), "traced");
      EXPECT_EQ(e.at("args").at("path"), "traced");
      // After the monotonic base, which the sink read when it started.
      EXPECT_GE(e.at("ts").get<double>(), 0.0);
    }
    if (e.at("ph") == "C" && e.at("name") == "libtorch allocated bytes") {
      allocated.push_back(e.at("args").at("cpu").get<std::int64_t>());
    }
    if (e.at("ph") == "C" && e.at("name") == "resident bytes") resident = true;
  }
  EXPECT_EQ(spans, 1);
  EXPECT_EQ(allocated, (std::vector<std::int64_t>{cpu(r, "entry_bytes"), cpu(r, "exit_bytes")}));
  EXPECT_TRUE(resident);
}

// The trace's clock metadata: the monotonic base is the start pair's
// reading, every span lies between the start and end pairs, and nested
// regions nest in the written microseconds (TempDir checks that too).
TEST(MemoryAccounting, ChromeTraceCarriesClockSyncAndNestedSpans) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path()));
  for (int i = 0; i < 50; ++i) {
    RT_REGION("outer");
    {
      RT_REGION("inner");
      allocate_and_free(kKiB);
    }
  }
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  const json& t = out.trace;
  EXPECT_EQ(t.at("schemaVersion"), 1);
  EXPECT_EQ(t.at("displayTimeUnit"), "ms");
  const json& m = t.at("regiontrace");
  EXPECT_EQ(m.at("sink"), "memory_snapshot");
  EXPECT_EQ(m.at("rank"), 0);
  EXPECT_EQ(m.at("world_size"), 1);
  EXPECT_EQ(m.at("pid"), static_cast<long>(getpid()));
  const std::int64_t base = t.at("baseTimeNanoseconds").get<std::int64_t>();
  const std::int64_t start = m.at("clockSync").at("start").at("monotonic_ns").get<std::int64_t>();
  const std::int64_t end = m.at("clockSync").at("end").at("monotonic_ns").get<std::int64_t>();
  EXPECT_EQ(base, start);
  EXPECT_GT(m.at("clockSync").at("start").at("realtime_ns").get<std::int64_t>(), start);
  int spans = 0;
  std::int64_t first = end;
  const auto ns = [](const json& us) {
    return static_cast<std::int64_t>(std::llround(us.get<double>() * 1000));
  };
  for (const json& e : t.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ++spans;
    first = std::min(first, base + ns(e.at("ts")));
    EXPECT_LE(base + ns(e.at("ts")) + ns(e.at("dur")), end);
  }
  EXPECT_EQ(spans, 100);
  EXPECT_LE(start, first);
  EXPECT_EQ(regiontrace::test::check_trace_nesting(t).violation_count, 0);
}

TEST(MemoryAccounting, RssReadingsCanBeReused) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"rss_interval_us", "60000000"}}));
  std::vector<Buffer> kept;
  for (int i = 0; i < 5; ++i) {
    RT_REGION("often");
    kept.emplace_back(4 * kMiB);
  }
  run.stop();
  const std::vector<json> records = read_outputs(dir.path()).records_of("often");
  ASSERT_EQ(records.size(), 5u);
  for (const json& r : records) {
    EXPECT_EQ(r.at("rss_bytes"), records[0].at("rss_bytes"));
    EXPECT_EQ(r.at("hwm_bytes"), records[0].at("hwm_bytes"));
  }
}

TEST(MemoryAccounting, NoTraceWhenSwitchedOff) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"trace", "false"}}));
  { RT_REGION("untraced"); }
  run.stop();
  EXPECT_TRUE(regiontrace::test::list_files(dir.path(), "memory_trace").empty());
  EXPECT_EQ(read_outputs(dir.path()).records.size(), 1u);
}

}  // namespace
}  // namespace regiontrace::memory::test
