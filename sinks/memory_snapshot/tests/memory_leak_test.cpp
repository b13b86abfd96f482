// Growth detection and live-allocation snapshots: a region that keeps a
// tensor per step is flagged, with its per-step held bytes, and no other
// region is; the snapshot lists what it holds, by step.
#include <gtest/gtest.h>

#include "memory_test_support.hpp"
#include "torch_workload.hpp"

namespace regiontrace::memory::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

constexpr int kSteps = 6;
constexpr std::int64_t kLeak = 64 * kKiB;

// One training-like step: forward makes activations that backward frees (a
// region whose output outlives it, but not the step), an optimizer that
// creates its state in step 0 only (growth that levels off), temporaries
// everywhere, and `leaky`, which keeps one tensor per step.
void run_steps(std::vector<Buffer>& leaked, Buffer& optimizer_state) {
  for (int step = 0; step < kSteps; ++step) {
    set_step(step);
    RT_REGION("train_step");
    Buffer activations;
    {
      RT_REGION("forward");
      allocate_and_free(300 * kKiB);
      activations = Buffer(512 * kKiB);
    }
    {
      RT_REGION("backward");
      allocate_and_free(200 * kKiB);
      activations.reset();
    }
    {
      RT_REGION("optimizer");
      if (step == 0) optimizer_state = Buffer(2 * kMiB);
      allocate_and_free(128 * kKiB);
    }
    {
      RT_REGION("leaky");
      allocate_and_free(kLeak);
      leaked.emplace_back(kLeak);
    }
  }
}

TEST(MemoryLeaks, TheLeakingRegionIsFlaggedAndNoOther) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"track_allocations", "true"},
                                          {"leak_min_steps", "3"},
                                          {"leak_min_bytes", std::to_string(kLeak)}}));
  std::vector<Buffer> leaked;
  Buffer optimizer_state;
  run_steps(leaked, optimizer_state);
  snapshot("after the loop");
  run.stop();

  const MemoryOutputs out = read_outputs(dir.path());
  EXPECT_EQ(out.leak_suspect_paths(), std::vector<std::string>{"train_step/leaky"});
  EXPECT_EQ(out.summary.at("leak_detection").at("method"), "tracked");
  const json& suspect = out.summary.at("leak_suspects").at(0);
  EXPECT_EQ(suspect.at("growth_bytes"), (kSteps - 1) * kLeak);
  ASSERT_EQ(suspect.at("per_step").size(), static_cast<std::size_t>(kSteps));
  for (int i = 0; i < kSteps; ++i) {
    EXPECT_EQ(suspect.at("per_step")[i].at("step"), i);
    EXPECT_EQ(suspect.at("per_step")[i].at("held_bytes"), (i + 1) * kLeak);
  }
  // The records carry the same held bytes.
  const std::vector<json> leaky = out.records_of("train_step/leaky");
  ASSERT_EQ(leaky.size(), static_cast<std::size_t>(kSteps));
  EXPECT_EQ(leaky.back().at("held_bytes"), kSteps * kLeak);
  EXPECT_EQ(out.records_of("train_step/forward").back().at("held_bytes"), 512 * kKiB);
  EXPECT_EQ(out.records_of("train_step/optimizer").back().at("held_bytes"), 2 * kMiB);
  EXPECT_EQ(out.records_of("train_step").back().at("held_bytes"), 0);

  // The snapshot says who owns what is alive.
  ASSERT_EQ(out.snapshots.size(), 1u);
  const json& snap = out.snapshots[0];
  EXPECT_EQ(snap.at("trigger"), "request");
  EXPECT_EQ(snap.at("reason"), "after the loop");
  EXPECT_TRUE(snap.at("tracking").at("enabled").get<bool>());
  EXPECT_EQ(snap.at("tracking").at("overflow_count"), 0);
  const json* g = snapshot_region(snap, "train_step/leaky");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->at("bytes"), kSteps * kLeak);
  EXPECT_EQ(g->at("count"), kSteps);
  EXPECT_EQ(g->at("devices").at("cpu"), kSteps * kLeak);
  ASSERT_EQ(g->at("by_step").size(), static_cast<std::size_t>(kSteps));
  for (int i = 0; i < kSteps; ++i) {
    EXPECT_EQ(g->at("by_step")[i].at("step"), i);
    EXPECT_EQ(g->at("by_step")[i].at("bytes"), kLeak);
  }
  ASSERT_EQ(g->at("largest").size(), static_cast<std::size_t>(kSteps));
  EXPECT_EQ(g->at("largest")[0].at("bytes"), kLeak);
  EXPECT_EQ(g->at("largest")[0].at("device"), "cpu");
  const json* opt = snapshot_region(snap, "train_step/optimizer");
  ASSERT_NE(opt, nullptr);
  EXPECT_EQ(opt->at("bytes"), 2 * kMiB);
  EXPECT_EQ(snapshot_region(snap, "train_step/forward"), nullptr);  // freed by backward
  EXPECT_EQ(snapshot_region(snap, "train_step"), nullptr);
  // Largest first.
  EXPECT_EQ(snap.at("regions")[0].at("path"), "train_step/optimizer");
  EXPECT_GE(snap.at("live_bytes").get<std::int64_t>(), kSteps * kLeak + 2 * kMiB);
}

TEST(MemoryLeaks, WithoutTrackingTheNetGrowthFlagsTheLeak) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"leak_min_bytes", std::to_string(kLeak)}}));
  std::vector<Buffer> leaked;
  for (int step = 0; step < kSteps; ++step) {
    set_step(step);
    RT_REGION("train_step");
    {
      RT_REGION("work");
      allocate_and_free(kMiB);
    }
    {
      RT_REGION("leaky");
      leaked.emplace_back(kLeak);
    }
  }
  snapshot("untracked");
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  EXPECT_EQ(out.summary.at("leak_detection").at("method"), "net");
  EXPECT_EQ(out.leak_suspect_paths(), std::vector<std::string>{"train_step/leaky"});
  ASSERT_EQ(out.snapshots.size(), 1u);
  EXPECT_FALSE(out.snapshots[0].at("tracking").at("enabled").get<bool>());
  EXPECT_TRUE(out.snapshots[0].at("regions").empty());
}

TEST(MemoryLeaks, TrackingIsBoundedAndTheOverflowCounted) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"track_allocations", "true"}, {"max_tracked", "10"}}));
  std::vector<Buffer> kept;
  {
    RT_REGION("many");
    for (int i = 0; i < 25; ++i) kept.emplace_back(kKiB);
  }
  snapshot("full");
  kept.clear();
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  ASSERT_EQ(out.snapshots.size(), 1u);
  const json& t = out.snapshots[0].at("tracking");
  EXPECT_EQ(t.at("tracked"), 10);
  EXPECT_EQ(t.at("max_tracked"), 10);
  EXPECT_EQ(t.at("overflow_count"), 15);
  EXPECT_EQ(t.at("overflow_bytes"), 15 * kKiB);
  EXPECT_EQ(snapshot_region(out.snapshots[0], "many")->at("count"), 10);
  // The 15 untracked ones were freed: counted, not attributed.
  EXPECT_EQ(out.summary.at("tracking").at("untracked_frees"), 15);
  EXPECT_EQ(out.summary.at("tracking").at("tracked"), 0);
}

}  // namespace
}  // namespace regiontrace::memory::test
