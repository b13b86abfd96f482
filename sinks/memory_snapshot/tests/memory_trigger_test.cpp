// Snapshot triggers: a region left by an exception, the exit of named
// regions, every N steps, on demand; max_snapshots bounds them.
#include <gtest/gtest.h>

#include <stdexcept>

#include "memory_test_support.hpp"
#include "torch_workload.hpp"

namespace regiontrace::memory::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

void fail_deep_inside(std::vector<Buffer>& kept) {
  RT_REGION("denoise");
  kept.emplace_back(128 * kKiB);
  {
    RT_REGION("block");
    kept.emplace_back(64 * kKiB);
    throw std::runtime_error("simulated failure");
  }
}

TEST(MemoryTriggers, ARegionLeftByAnExceptionWritesOneSnapshot) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"track_allocations", "true"}}));
  std::vector<Buffer> kept;
  set_step(7);
  {
    RT_REGION("pipeline");
    try {
      fail_deep_inside(kept);
    } catch (const std::runtime_error&) {
    }
    { RT_REGION("after"); }
  }
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  // One exception unwinding through two regions: one snapshot, at the innermost.
  ASSERT_EQ(out.snapshots.size(), 1u);
  const json& s = out.snapshots[0];
  EXPECT_EQ(s.at("trigger"), "exception");
  EXPECT_EQ(s.at("path"), "pipeline/denoise/block");
  EXPECT_NE(s.at("reason").get<std::string>().find("pipeline/denoise/block"), std::string::npos);
  EXPECT_EQ(s.at("step"), 7);
  EXPECT_EQ(snapshot_region(s, "pipeline/denoise/block")->at("bytes"), 64 * kKiB);
  EXPECT_EQ(snapshot_region(s, "pipeline/denoise")->at("bytes"), 128 * kKiB);
  EXPECT_EQ(out.records_of("pipeline/denoise/block").at(0).at("unwinding"), true);
  EXPECT_EQ(out.records_of("pipeline/denoise").at(0).at("unwinding"), true);
  EXPECT_EQ(out.records_of("pipeline").at(0).at("unwinding"), false);
  EXPECT_EQ(out.summary.at("snapshots").at("written").at(0).at("file"), out.snapshot_files[0]);
  EXPECT_EQ(out.region_summary("pipeline/denoise")->at("unwound"), 1);
}

TEST(MemoryTriggers, TwoSeparateExceptionsWriteTwoSnapshots) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path()));
  std::vector<Buffer> kept;
  {
    RT_REGION("pipeline");
    for (int i = 0; i < 2; ++i) {
      try {
        fail_deep_inside(kept);
      } catch (const std::runtime_error&) {
      }
    }
  }
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  ASSERT_EQ(out.snapshots.size(), 2u);
  EXPECT_EQ(out.snapshots[0].at("sequence"), 1);
  EXPECT_EQ(out.snapshots[1].at("sequence"), 2);
  EXPECT_EQ(out.snapshots[1].at("trigger"), "exception");
}

TEST(MemoryTriggers, ExceptionSnapshotsCanBeSwitchedOff) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"snapshot_on_exception", "false"}}));
  std::vector<Buffer> kept;
  try {
    fail_deep_inside(kept);
  } catch (const std::runtime_error&) {
  }
  run.stop();
  EXPECT_TRUE(read_outputs(dir.path()).snapshots.empty());
}

TEST(MemoryTriggers, ExitOfNamedRegionsAndEveryNStepsAndOnDemand) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"snapshot_on_exit", "validation"},
                                          {"snapshot_every_steps", "2"},
                                          {"track_allocations", "true"}}));
  std::vector<Buffer> kept;
  for (int step = 0; step < 4; ++step) {
    set_step(step);  // steps 0 and 2 take a snapshot
    RT_REGION("train_step");
    kept.emplace_back(kKiB);
  }
  {
    RT_REGION("validation");
    snapshot("inside validation");
  }
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  ASSERT_EQ(out.snapshots.size(), 4u);
  EXPECT_EQ(out.snapshots[0].at("trigger"), "steps");
  EXPECT_EQ(out.snapshots[0].at("step"), 0);
  EXPECT_EQ(out.snapshots[1].at("trigger"), "steps");
  EXPECT_EQ(out.snapshots[1].at("step"), 2);
  EXPECT_EQ(snapshot_region(out.snapshots[1], "train_step")->at("bytes"), 2 * kKiB);
  EXPECT_EQ(out.snapshots[2].at("trigger"), "request");
  EXPECT_EQ(out.snapshots[2].at("reason"), "inside validation");
  EXPECT_EQ(out.snapshots[2].at("path"), "validation");
  EXPECT_EQ(out.snapshots[3].at("trigger"), "exit");
  EXPECT_EQ(out.snapshots[3].at("path"), "validation");
  EXPECT_EQ(snapshot_region(out.snapshots[3], "train_step")->at("bytes"), 4 * kKiB);
  // The trace marks them.
  int instants = 0;
  for (const json& e : out.trace.at("traceEvents")) instants += e.at("ph") == "i";
  EXPECT_EQ(instants, 4);
}

TEST(MemoryTriggers, MaxSnapshotsBoundsTheCount) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"max_snapshots", "2"}}));
  for (int i = 0; i < 5; ++i) snapshot("again");
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  EXPECT_EQ(out.snapshots.size(), 2u);
  EXPECT_EQ(out.summary.at("snapshots").at("written").size(), 2u);
  EXPECT_EQ(out.summary.at("snapshots").at("skipped"), 3);
}

}  // namespace
}  // namespace regiontrace::memory::test
