// Sharing libtorch's PROFILER_STATE slot with the torch profiler: the sink's
// reporter reads as "no profiler" to libtorch, a profiler started later sits
// on top of it, the sink stands aside while it runs (records say so) and
// counts exactly again once it stopped. With the torch_profiler sink (when it
// is built): both run through nested regions, both write valid files.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "memory_test_support.hpp"
#include "torch_workload.hpp"

namespace regiontrace::memory::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

TEST(MemoryWithProfiler, AProfilerStatePushedInsideNestedRegions) {
  // What the torch_profiler sink does when a selected region opens: push its
  // profiler state above whatever sits in the slot, pop it when done.
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"track_allocations", "true"}}));
  Buffer keep;
  std::int64_t seen_by_profiler = 0;
  {
    RT_REGION("outer");
    keep = Buffer(kMiB);
    // The reporter sits in the slot now and tells libtorch: no profiler.
    EXPECT_FALSE(torch_profiler_enabled());
    push_profiler_state();
    EXPECT_TRUE(torch_profiler_enabled());
    {
      RT_REGION("profiled");
      allocate_and_free(2 * kMiB);
      {
        RT_REGION("deeper");
        allocate_and_free(kMiB);
      }
    }
    seen_by_profiler = pop_profiler_state();  // the reporter is on top again
    EXPECT_FALSE(torch_profiler_enabled());
    {
      RT_REGION("after");
      allocate_and_free(3 * kMiB);
    }
  }
  run.stop();
  // While it ran, the memory events went to the profiler, not to the sink.
  EXPECT_EQ(seen_by_profiler, 2 * (2 * kMiB + kMiB));
  const MemoryOutputs out = read_outputs(dir.path());
  ASSERT_EQ(out.records.size(), 4u);
  EXPECT_TRUE(out.records_of("outer/profiled")[0].at("stood_aside").get<bool>());
  EXPECT_TRUE(out.records_of("outer/profiled/deeper")[0].at("stood_aside").get<bool>());
  // The enclosing region's figures miss what happened meanwhile: flagged too.
  EXPECT_TRUE(out.records_of("outer")[0].at("stood_aside").get<bool>());
  const json after = out.records_of("outer/after")[0];
  EXPECT_FALSE(after.at("stood_aside").get<bool>());
  EXPECT_EQ(cpu(after, "peak_bytes"), cpu(after, "entry_bytes") + 3 * kMiB);
  EXPECT_EQ(cpu(after, "exit_bytes"), cpu(after, "entry_bytes"));
  EXPECT_EQ(out.summary.at("records").at("stood_aside"), 3);
}

// A region measured only while a profiler held the slot has no figures of
// its own: the summary's table and JSON say why instead of showing zeros.
TEST(MemoryWithProfiler, WhereItStoodAsideTheSummarySaysWhyInsteadOfZeros) {
  CleanEnv env;
  TempDir dir;
  Options o = memory_options(dir.path());
  o.set("log_level", "info");  // the summary table is an info line
  SinkRun run(o);
  {
    RT_REGION("outer");
    push_profiler_state();
    {
      RT_REGION("profiled_only");
      allocate_and_free(2 * kMiB);
    }
    pop_profiler_state();
    {
      RT_REGION("measured");
      allocate_and_free(kMiB);
    }
  }
  testing::internal::CaptureStderr();
  run.stop();
  const std::string log = testing::internal::GetCapturedStderr();
  const MemoryOutputs out = read_outputs(dir.path());
  const std::string why = "stood aside: the torch profiler (Kineto) held libtorch's";

  const json* aside = out.region_summary("outer/profiled_only");
  ASSERT_NE(aside, nullptr);
  EXPECT_EQ(aside->at("stood_aside_calls"), 1);
  EXPECT_EQ(aside->at("stood_aside").get<std::string>().rfind(why, 0), 0u) << aside->dump();
  EXPECT_TRUE(aside->at("devices").empty()) << "no zeros for what was not measured";
  const json* measured = out.region_summary("outer/measured");
  ASSERT_NE(measured, nullptr);
  EXPECT_TRUE(measured->at("stood_aside").is_null());
  EXPECT_GE(measured->at("devices").at("cpu").at("highest_peak_bytes").get<std::int64_t>(), kMiB);
  EXPECT_EQ(out.summary.at("records").at("stood_aside_why").get<std::string>().rfind(why, 0), 0u);

  const std::size_t at = log.find("outer/profiled_only ");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string row = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(row.find(why), std::string::npos) << log;
  EXPECT_EQ(row.find(" 0 B"), std::string::npos) << row;
  // `outer` was measured, except while the profiler ran: figures, marked.
  EXPECT_NE(log.find("outer*  "), std::string::npos) << log;
  EXPECT_NE(log.find("* some calls miss what another profiler took"), std::string::npos) << log;
  const json* outer = out.region_summary("outer");
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->at("stood_aside_calls"), 1);
  EXPECT_FALSE(outer->at("devices").empty());
}

TEST(MemoryWithProfiler, TheReporterLeavesTheSlotOnceTheSinkIsGone) {
  CleanEnv env;
  TempDir dir;
  std::thread worker([&] {
    SinkRun run(memory_options(dir.path()));
    {
      RT_REGION("work");
      allocate_and_free(kKiB);
    }
    // libtorch starts its own profilers only on a thread whose slot is
    // empty: while the sink runs, the reporter sits there.
    EXPECT_THROW(start_application_profiler(/*profile_memory=*/false), std::exception);
    run.stop();
    // Inert now: it takes itself out at the thread's next allocation.
    allocate_and_free(kKiB);
    start_application_profiler(/*profile_memory=*/true);
    allocate_and_free(kKiB);
    EXPECT_GT(stop_application_profiler(), 0u);
  });
  worker.join();
  EXPECT_EQ(read_outputs(dir.path()).records.size(), 1u);
}

TEST(MemoryWithProfiler, ProfilersRunningBeforeTheRegionsOnOtherThreads) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path()));
  std::thread kineto([] {
    start_application_profiler(/*profile_memory=*/false);
    {
      RT_REGION("kineto_profiled");
      allocate_and_free(kKiB);
    }
    stop_application_profiler();
    {
      RT_REGION("kineto_after");
      allocate_and_free(5 * kKiB);
    }
  });
  kineto.join();
  std::thread legacy([] {
    start_legacy_profiler();
    {
      RT_REGION("legacy_profiled");
      allocate_and_free(kKiB);
    }
    stop_legacy_profiler();
    {
      RT_REGION("legacy_after");
      allocate_and_free(7 * kKiB);
    }
  });
  legacy.join();
  run.stop();
  const MemoryOutputs out = read_outputs(dir.path());
  ASSERT_EQ(out.records.size(), 4u);
  EXPECT_TRUE(out.records_of("kineto_profiled")[0].at("stood_aside").get<bool>());
  EXPECT_TRUE(out.records_of("legacy_profiled")[0].at("stood_aside").get<bool>());
  const json k = out.records_of("kineto_after")[0];
  const json l = out.records_of("legacy_after")[0];
  EXPECT_FALSE(k.at("stood_aside").get<bool>());
  EXPECT_FALSE(l.at("stood_aside").get<bool>());
  EXPECT_EQ(cpu(k, "peak_bytes") - cpu(k, "entry_bytes"), 5 * kKiB);
  EXPECT_EQ(cpu(l, "peak_bytes") - cpu(l, "entry_bytes"), 7 * kKiB);
}

#ifdef REGIONTRACE_MEMORY_TEST_WITH_TORCH_PROFILER
// Both sinks through nested regions, on two threads, over steps.
struct BothSinks {
  explicit BothSinks(const std::string& dir) {
    Options o = memory_options(dir, {{"track_allocations", "true"}});
    o.set("sinks.torch_profiler.enabled", "true");
    o.set("sinks.torch_profiler.gzip", "false");
    o.set("sinks.torch_profiler.profile_memory", "true");
    SinkRun run(o);
    for (int step = 0; step < 3; ++step) {
      set_step(step);
      RT_REGION("pipeline");
      {
        RT_REGION("denoise");
        for (int block = 0; block < 3; ++block) {
          RT_REGION("block");
          allocate_and_free(64 * kKiB);
          kept.emplace_back(kKiB);
        }
      }
      std::thread side([] {
        RT_REGION("side_thread");
        allocate_and_free(kKiB);
      });
      side.join();
    }
    run.stop();
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("memory_", 0) == 0 || name.rfind("regiontrace_config", 0) == 0) continue;
      profiler_files.push_back(e.path().string());
    }
  }
  std::vector<Buffer> kept;
  std::vector<std::string> profiler_files;  // what the torch_profiler sink wrote
};

TEST(MemoryWithProfiler, TogetherWithTheTorchProfilerSinkNothingBreaks) {
  CleanEnv env;
  TempDir dir;
  const BothSinks run(dir.path());
  const MemoryOutputs out = read_outputs(dir.path());
  EXPECT_EQ(out.records_of("pipeline/denoise/block").size(), 9u);
  EXPECT_EQ(out.records_of("pipeline").size(), 3u);
  EXPECT_EQ(out.records_of("side_thread").size(), 3u);
  EXPECT_EQ(out.summary.at("records").at("written"), 18);
  for (const std::string& f : run.profiler_files) {
    if (std::filesystem::path(f).extension() == ".json") {
      EXPECT_NO_THROW(regiontrace::test::read_json(f)) << f;
    }
  }
}

// The case: both sinks on one region filter. Whichever is built
// first, the profiler holds the slot for the whole region, so the memory
// summary says why it has no figures there, never "peak 0 B".
TEST(MemoryWithProfiler, SameRegionsForBothSinksInEitherOrder) {
  for (const bool memory_first : {true, false}) {
    CleanEnv env;
    TempDir dir;
    // Sinks are built in the order the profile names them.
    const std::string profile = dir.file("both.yaml");
    regiontrace::test::write_file(
        profile, memory_first ? "sinks:\n  memory_snapshot: {}\n  torch_profiler: {gzip: false}\n"
                              : "sinks:\n  torch_profiler: {gzip: false}\n  memory_snapshot: {}\n");
    Options o = memory_options(dir.path());
    o.profiles = {profile};
    o.set("regions", "denoise");
    {
      SinkRun run(o);
      RT_REGION("pipeline");
      for (int i = 0; i < 2; ++i) {
        RT_REGION("denoise");
        allocate_and_free(256 * kKiB);
      }
    }
    const MemoryOutputs out = read_outputs(dir.path());
    const json* denoise = out.region_summary("pipeline/denoise");
    ASSERT_NE(denoise, nullptr) << out.summary.dump();
    EXPECT_EQ(denoise->at("calls"), 2);
    EXPECT_EQ(denoise->at("stood_aside")
                  .get<std::string>()
                  .rfind("stood aside: the torch profiler (Kineto)", 0),
              0u)
        << "memory first: " << memory_first << " " << denoise->dump();
    EXPECT_TRUE(denoise->at("devices").empty()) << denoise->dump();
  }
}

// The torch_profiler sink collects where the memory sink's reporter sits:
// the reporter is a profiler state that says "disabled", which a profiler
// may push its own state above (the memory sink then stands aside there).
TEST(MemoryWithProfiler, TogetherWithTheTorchProfilerSinkBothCollect) {
  CleanEnv env;
  TempDir dir;
  const BothSinks run(dir.path());
  int traces = 0;
  std::string listing;
  for (const std::string& f : run.profiler_files) {
    listing += std::filesystem::path(f).filename().string() + " ";
    const std::string name = std::filesystem::path(f).filename().string();
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0 &&
        name.find(".summary.") == std::string::npos) {
      ++traces;
      const json trace = regiontrace::test::read_json(f);
      EXPECT_FALSE(trace.at("traceEvents").empty()) << f;
    }
  }
  EXPECT_GT(traces, 0) << "the torch_profiler sink wrote: " << listing;
  // Where the profiler collected, the memory sink stood aside and says so.
  const MemoryOutputs out = read_outputs(dir.path());
  EXPECT_GT(out.summary.at("records").at("stood_aside").get<int>(), 0);
}
#endif

}  // namespace
}  // namespace regiontrace::memory::test
