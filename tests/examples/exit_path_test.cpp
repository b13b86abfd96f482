// Normal exit without regiontrace::shutdown(): training_loop never calls it,
// so every sink is closed by the exit handler, with output still pending
// (the last schedule window, records in the writer's queue). glibc's
// MALLOC_PERTURB_ fills freed memory with a pattern, so a close path that
// touches an object static destruction already freed crashes or corrupts
// the heap in every run instead of in some.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "example_runner.hpp"
#include "sink_output_checks.hpp"
#include "test_support.hpp"
#include "trace_files.hpp"

namespace regiontrace::test {
namespace {

using json = nlohmann::json;

constexpr int kRuns = 3;

// What glibc and the sanitizers print when the heap is misused.
void expect_clean_exit(const ProgramRun& r) {
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* sign : {"corrupted", "double free", "free():", "malloc", "Segmentation",
                           "AddressSanitizer", "runtime error:"}) {
    EXPECT_FALSE(contains(r.output, sign)) << sign << " in:\n" << r.output;
  }
}

ProgramRun train_without_shutdown(const std::string& dir, const std::string& profile_yaml,
                                  std::map<std::string, std::string> env = {}) {
  write_file(dir + "/profile.yaml", profile_yaml);
  std::vector<std::string> args = small_training_args();
  for (const std::string& a :
       {std::string("--profile"), dir + "/profile.yaml", std::string("--trace-dir"), dir + "/out",
        std::string("--output-dir"), dir + "/ckpt"}) {
    args.push_back(a);
  }
  env["MALLOC_PERTURB_"] = "165";
  return run_program(training_loop_program(), args, env);
}

// regiontrace's names and FastVideo's (<host>_<pid>.<ns>.pt.trace.json.gz).
std::vector<std::string> torch_traces(const std::string& dir) {
  return files_under(dir, [](const std::string& n) { return ends_with(n, ".pt.trace.json.gz"); });
}

// Issue 13's configuration: windows of one step after one idle step, so the
// window of the last step (5) is still open when the program returns.
TEST(ExitPath, TorchProfilerWritesTheWindowOpenAtExit) {
  if (!missing_sinks({"torch_profiler"}).empty()) GTEST_SKIP() << "torch_profiler not built";
  for (int run = 0; run < kRuns; ++run) {
    TempDir dir;
    const ProgramRun r =
        train_without_shutdown(dir.path(),
                               "sinks:\n  torch_profiler:\n    regions: [training_step]\n"
                               "    active: 1\n    wait: 1\n    repeat: 0\n");
    expect_clean_exit(r);
    const std::vector<std::string> traces = torch_traces(dir.file("out"));
    ASSERT_EQ(traces.size(), 3u) << join_words(traces) << "\n" << r.output;  // steps 1, 3, 5
    const std::regex step5(".*torch_trace_rank0_pid[0-9]+\\.5\\.pt\\.trace\\.json\\.gz$");
    const auto last = std::find_if(traces.begin(), traces.end(), [&](const std::string& t) {
      return std::regex_match(t, step5);
    });
    ASSERT_NE(last, traces.end()) << join_words(traces);
    const json t = read_json_maybe_gz(*last);
    const std::vector<json> spans =
        events_named(t, "regiontrace.region::profiler_region_training_step");
    ASSERT_EQ(spans.size(), 1u) << *last;
    EXPECT_EQ(spans[0]["args"]["step"], 5);
    // The window was closed by the exit handler: its disable marker says so.
    const std::vector<json> off = events_named(t, "regiontrace.profiler.disable_collection");
    ASSERT_FALSE(off.empty()) << *last;
    EXPECT_GT(read_json_maybe_gz(op_summary_base(*last) + ".summary.json")
                  .at("op_calls")
                  .get<long long>(),
              0);
  }
}

// Op-level tracing installs a RecordFunction callback that the exit handler
// removes; the last records wait in the writer's queue.
TEST(ExitPath, ActivationTraceWithOpsFlushesAtExit) {
  if (!missing_sinks({"activation_trace"}).empty()) GTEST_SKIP() << "activation_trace not built";
  for (int run = 0; run < kRuns; ++run) {
    TempDir dir;
    const ProgramRun r = train_without_shutdown(
        dir.path(),
        "sinks:\n  activation_trace:\n    regions: [training_step]\n    ops: true\n"
        "    op_filter: '^aten::(mm|addmm)$'\n");
    expect_clean_exit(r);
    const std::vector<std::string> files =
        files_under(dir.file("out"), [](const std::string& n) { return ends_with(n, ".jsonl"); });
    ASSERT_EQ(files.size(), 1u) << r.output;
    std::set<long long> steps;
    bool summary = false;
    for (const json& rec : read_jsonl(files[0])) {  // whole lines only, or this throws
      if (rec.contains("summary")) {
        summary = true;
        continue;
      }
      if (rec.at("step").is_number()) steps.insert(rec["step"].get<long long>());
    }
    EXPECT_TRUE(summary) << files[0];
    EXPECT_EQ(steps, (std::set<long long>{0, 1, 2, 3, 4, 5})) << files[0];
  }
}

TEST(ExitPath, MemorySnapshotWritesItsSummaryAtExit) {
  if (!missing_sinks({"memory_snapshot"}).empty()) GTEST_SKIP() << "memory_snapshot not built";
  for (int run = 0; run < kRuns; ++run) {
    TempDir dir;
    const ProgramRun r = train_without_shutdown(dir.path(), "sinks:\n  memory_snapshot: {}\n");
    expect_clean_exit(r);
    check_memory_snapshot_output(dir.file("out"), small_training_shape());
  }
}

TEST(ExitPath, NvtxClosesAtExit) {
  if (!missing_sinks({"nvtx"}).empty() || std::string(REGIONTRACE_NVTX_INJECTION).empty()) {
    GTEST_SKIP() << "nvtx or its recording injection not built";
  }
  for (int run = 0; run < kRuns; ++run) {
    TempDir dir;
    std::filesystem::create_directories(dir.file("nvtx"));
    const ProgramRun r =
        train_without_shutdown(dir.path(), "sinks:\n  nvtx: {}\n",
                               {{"NVTX_INJECTION64_PATH", REGIONTRACE_NVTX_INJECTION},
                                {"NVTX_RECORD_FILE", dir.file("nvtx") + "/calls_%p.jsonl"}});
    expect_clean_exit(r);
    check_nvtx_records(dir.file("nvtx"), small_training_shape(), "regiontrace");
  }
}

// Every sink at once, and the README's seed-variable example.
TEST(ExitPath, AllSinksTogetherAndTheReadmeExample) {
  if (!missing_sinks({"torch_profiler", "activation_trace", "memory_snapshot"}).empty()) {
    GTEST_SKIP() << "a sink is not built";
  }
  for (int run = 0; run < kRuns; ++run) {
    TempDir dir;
    const ProgramRun r = train_without_shutdown(
        dir.path(),
        "sinks:\n  torch_profiler:\n    regions: [training_step]\n    active: 1\n    wait: 1\n"
        "  activation_trace:\n    regions: [training_step]\n    ops: true\n"
        "    op_filter: '^aten::mm$'\n"
        "  memory_snapshot:\n    regions: [training_step]\n");
    expect_clean_exit(r);
    EXPECT_EQ(torch_traces(dir.file("out")).size(), 3u) << r.output;

    TempDir seed;
    std::vector<std::string> args = small_video_args();
    const ProgramRun v = run_program(video_pipeline_program(), args,
                                     {{"FASTVIDEO_TORCH_PROFILER_DIR", seed.path()},
                                      {"FASTVIDEO_TORCH_PROFILE_REGIONS", "inference_denoising"},
                                      {"MALLOC_PERTURB_", "165"}},
                                     seed.path());
    expect_clean_exit(v);
    EXPECT_EQ(torch_traces(seed.path()).size(), 1u) << v.output;
  }
}

}  // namespace
}  // namespace regiontrace::test
