// What only a whole process shows: the seed's environment variables alone
// turning the sink on, the trace written at normal exit and on SIGTERM or
// SIGINT, two ranks writing side by side. Each case runs the workload
// program (workload.cpp), a fresh process configured by its environment.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "test_support.hpp"
#include "trace_reading.hpp"

namespace regiontrace::torch_profiler::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::run_command;
using regiontrace::test::TempDir;

TEST(TorchProfilerProcess, SeedVariablesAloneTurnItOnAndMisspellingsAreIgnored) {
  CleanEnv env;
  TempDir dir;
  const auto r = run_command(
      "FASTVIDEO_TORCH_PROFILER_DIR=" + dir.path() +
      " FASTVIDEO_TORCH_PROFILE_REGIONS=profiler_region_training_step,profiler_region_traning_dit"
      " FASTVIDEO_TORCH_PROFILER_RECORD_SHAPES=1 " +
      workload_program() + " loop 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The misspelled entry is named in a warning and ignored.
  EXPECT_NE(r.output.find("profiler_region_traning_dit"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("warning"), std::string::npos) << r.output;

  const std::vector<std::string> files = trace_files(dir.path());
  ASSERT_EQ(files.size(), 1u) << r.output;
  const json t = load_trace(files[0]);
  const std::vector<json> spans = region_spans(t, "fastvideo");
  ASSERT_EQ(spans.size(), 3u);
  for (const json& s : spans)
    EXPECT_EQ(s["name"], "fastvideo.region::profiler_region_training_step");
  EXPECT_EQ(markers(t, true, "fastvideo").size(), 3u);
  EXPECT_EQ(markers(t, false, "fastvideo").size(), 3u);
  // mm and sin ran inside training_step (sin in a nested, unselected region);
  // cos outside every region, tan in an unselected one.
  EXPECT_EQ(cpu_ops(t, "aten::mm").size(), 3u);
  EXPECT_EQ(cpu_ops(t, "aten::sin").size(), 3u);
  EXPECT_TRUE(cpu_ops(t, "aten::cos").empty());
  EXPECT_TRUE(cpu_ops(t, "aten::tan").empty());
  EXPECT_TRUE(cpu_ops(t, "aten::mm")[0]["args"].contains("Input Dims"));
}

class TorchProfilerSignal : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchProfilerSignal, LeavesAWholeTrace) {
  CleanEnv env;
  TempDir dir;
  const std::string ready = dir.file("ready");
  // Started in the background; signalled once it runs ops inside its region.
  // Started in the background (with SIGINT back to its default, which sh
  // ignores for background jobs), signalled once it runs ops inside its
  // region; killed after 60 s should the signal not end it.
  const auto r = run_command(
      "REGIONTRACE_SINKS=torch_profiler REGIONTRACE_REGIONS=profiler_region_training_step "
      "REGIONTRACE_OUTPUT_DIR=" +
      dir.path() + " env --default-signal=INT " + workload_program() + " forever " + ready +
      " & pid=$!; ( sleep 60; kill -9 $pid ) >/dev/null 2>&1 & guard=$!; " +
      "for i in $(seq 600); do [ -f " + ready + " ] && break; sleep 0.05; done; kill -" +
      GetParam() + " $pid; wait $pid; echo \"exit=$?\"; kill $guard");
  const std::string expected_exit = std::string(GetParam()) == "TERM" ? "exit=143" : "exit=130";
  EXPECT_NE(r.output.find(expected_exit), std::string::npos) << r.output;
  const std::vector<std::string> files = trace_files(dir.path());
  ASSERT_EQ(files.size(), 1u) << r.output;
  const json t = load_trace(files[0]);  // parses: whole
  const std::vector<json> spans = region_spans(t);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0]["args"]["open_at_end"], true);
  EXPECT_GE(cpu_ops(t, "aten::mm").size(), 20u);
  for (const json& op : cpu_ops(t)) EXPECT_TRUE(within(op, spans[0])) << op.dump();
  ASSERT_EQ(markers(t, false).size(), 1u);
  EXPECT_EQ(markers(t, false)[0]["args"]["reason"], "close");
}

INSTANTIATE_TEST_SUITE_P(Signals, TorchProfilerSignal, ::testing::Values("TERM", "INT"));

TEST(TorchProfilerProcess, TwoRanksWriteSideBySide) {
  CleanEnv env;
  TempDir dir;
  const std::string common =
      "REGIONTRACE_SINKS=torch_profiler "
      "REGIONTRACE_REGIONS=profiler_region_training_step "
      "REGIONTRACE_OUTPUT_DIR=" +
      dir.path() + " WORLD_SIZE=2 ";
  const auto r = run_command("RANK=0 LOCAL_RANK=0 " + common + workload_program() +
                             " loop 4 & RANK=1 LOCAL_RANK=1 " + common + workload_program() +
                             " loop 2 & wait");
  const std::vector<std::string> files = trace_files(dir.path());
  ASSERT_EQ(files.size(), 2u) << r.output;
  std::set<int> ranks;
  for (const std::string& f : files) {
    const json t = load_trace(f);
    const int rank = t["regiontrace"]["rank"];
    ranks.insert(rank);
    EXPECT_NE(f.find("_rank" + std::to_string(rank) + "_pid"), std::string::npos) << f;
    EXPECT_EQ(t["regiontrace"]["world_size"], 2);
    // Each rank's own loop: 4 steps on rank 0, 2 on rank 1.
    EXPECT_EQ(region_spans(t).size(), rank == 0 ? 4u : 2u);
    for (const json& e : t["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "process_name") {
        EXPECT_EQ(e["args"]["name"].get<std::string>().rfind("rank " + std::to_string(rank), 0),
                  0u);
      }
    }
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1}));
}

// init(), shutdown(), init(), then a normal exit with the second run's trace
// still to write: the exit handler closes the sink, and everything it uses
// (the taken trace names, libtorch's callback registry) must still exist.
// MALLOC_PERTURB_ makes a use of freed memory fail in every run.
TEST(TorchProfilerProcess, InitShutdownInitThenExitWritesBothTraces) {
  CleanEnv env;
  for (int run = 0; run < 3; ++run) {
    TempDir dir;
    const auto r = run_command(
        "MALLOC_PERTURB_=165 REGIONTRACE_SINKS=torch_profiler,memory_snapshot "
        "REGIONTRACE_REGIONS=profiler_region_training_step "
        "REGIONTRACE_OUTPUT_DIR=" +
        dir.path() + " " + workload_program() + " reinit 3");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("corrupted"), std::string::npos) << r.output;
    const std::vector<std::string> files = trace_files(dir.path());
    ASSERT_EQ(files.size(), 2u) << r.output;
    std::multiset<long long> steps;
    for (const std::string& f : files) {
      for (const json& s : region_spans(load_trace(f)))
        steps.insert(s["args"]["step"].get<long long>());
    }
    EXPECT_EQ(steps, (std::multiset<long long>{0, 1, 2})) << r.output;
  }
}

// Threads racing through the lazy start find the sinks started by the
// winner: only an explicit init() is told "keeping the running ones".
TEST(TorchProfilerProcess, RacingLazyStartsLogNothingButAnExplicitInitDoes) {
  CleanEnv env;
  for (const std::string then : {"", " init", "", ""}) {
    TempDir dir;
    const auto r = run_command(
        "REGIONTRACE_LOG_LEVEL=info REGIONTRACE_SINKS=torch_profiler "
        "REGIONTRACE_REGIONS=profiler_region_training_step REGIONTRACE_OUTPUT_DIR=" +
        dir.path() + " " + workload_program() + " race 16" + then);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const bool said = r.output.find("keeping the running ones") != std::string::npos;
    EXPECT_EQ(said, !then.empty()) << r.output;
    const std::vector<std::string> files = trace_files(dir.path());
    ASSERT_EQ(files.size(), 1u) << r.output;
    EXPECT_EQ(region_spans(load_trace(files[0])).size(), 16u);
  }
}

}  // namespace
}  // namespace regiontrace::torch_profiler::test
