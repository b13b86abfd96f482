// The README's two workflows, run as a user runs them: the parity demo (two
// runs, one with a deliberately wrong block, and `regiontrace diff`) and the
// seed's environment variables alone profiling the pipeline.
#include <gtest/gtest.h>

#include "example_runner.hpp"
#include "sink_output_checks.hpp"
#include "test_support.hpp"
#include "trace_files.hpp"

namespace regiontrace::test {
namespace {

using json = nlohmann::json;

// Runs video_pipeline small under parity.yaml; returns its activation JSONL.
std::string parity_run(const TempDir& dir, const std::string& name,
                       const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--blocks",     "6",
                                   "--steps",      "2",
                                   "--frames",     "2",
                                   "--height",     "32",
                                   "--width",      "32",
                                   "--profile",    profile_path("parity"),
                                   "--trace-dir",  dir.file(name),
                                   "--output-dir", dir.file(name)};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProgramRun r = run_program(video_pipeline_program(), args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> files = files_under(dir.file(name), [](const std::string& n) {
    return n.rfind("activations", 0) == 0 && ends_with(n, ".jsonl");
  });
  EXPECT_EQ(files.size(), 1u) << r.output;
  return files.empty() ? std::string() : files.front();
}

class ParityDemo : public testing::Test {
 protected:
  void SetUp() override {
    if (regiontrace_program().empty()) GTEST_SKIP() << "the regiontrace CLI is not built";
    const std::vector<std::string> missing = missing_sinks({"activation_trace"});
    if (!missing.empty())
      GTEST_SKIP() << "sink plugin not built: " << sink_plugin_file("activation_trace");
  }
  TempDir dir_;
};

TEST_F(ParityDemo, DiffNamesThePerturbedBlockFirst) {
  const std::string reference = parity_run(dir_, "reference", {});
  const std::string perturbed = parity_run(dir_, "perturbed", {"--perturb-block", "3"});
  ASSERT_FALSE(reference.empty());
  ASSERT_FALSE(perturbed.empty());

  // The README's third line, as text: it names blocks.3.
  const ProgramRun text = run_program(regiontrace_program(), {"diff", perturbed, reference});
  EXPECT_EQ(text.exit_code, 1) << text.output;
  EXPECT_TRUE(contains(text.output, "blocks.3")) << text.output;

  const ProgramRun r = run_program(regiontrace_program(), {"diff", "--json", perturbed, reference});
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const json report = json::parse(r.output);
  EXPECT_FALSE(report.at("equal").get<bool>());
  const json& first = report.at("first_divergence");
  ASSERT_TRUE(first.is_object()) << r.output;
  EXPECT_EQ(first.at("module"), "blocks.3") << r.output;
  EXPECT_EQ(first.at("tensor"), "out");
  EXPECT_EQ(first.at("step"), 0);
  // Same records on both sides: only values differ.
  EXPECT_EQ(report["totals"]["only_in_a"], 0);
  EXPECT_EQ(report["totals"]["only_in_b"], 0);

  // 0.1% off: the records carry no dtype, so fp32's tolerance applies and
  // finds it by default, in the same place; bf16's would let it pass.
  const std::string slight =
      parity_run(dir_, "slight", {"--perturb-block", "3", "--perturb-scale", "1e-3"});
  const ProgramRun found =
      run_program(regiontrace_program(), {"diff", "--json", slight, reference});
  ASSERT_EQ(found.exit_code, 1) << found.output;
  EXPECT_EQ(json::parse(found.output)["first_divergence"].at("module"), "blocks.3") << found.output;
  EXPECT_EQ(
      run_program(regiontrace_program(), {"diff", "--dtype", "bf16", slight, reference}).exit_code,
      0);
}

TEST_F(ParityDemo, TwoRunsWithTheSameSeedAreEqual) {
  const std::string a = parity_run(dir_, "a", {});
  const std::string b = parity_run(dir_, "b", {});
  const ProgramRun r = run_program(regiontrace_program(), {"diff", "--json", a, b});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = json::parse(r.output);
  EXPECT_TRUE(report.at("equal").get<bool>());
  // Blocks x steps block outputs plus the observed tensors, all matched.
  EXPECT_GE(report["totals"]["matched_records"].get<int>(), 6 * 2);
  EXPECT_EQ(report["totals"]["divergent_records"], 0);
}

// The seed's variables alone, no profile: FASTVIDEO_TORCH_PROFILER_DIR turns
// the torch profiler on with the seed's `fastvideo` names.
TEST(SeedVariables, ProfileTheDenoisingLoopWithTheSeedsNames) {
  if (!missing_sinks({"torch_profiler"}).empty()) {
    GTEST_SKIP() << "sink plugin not built: " << sink_plugin_file("torch_profiler");
  }
  TempDir dir;
  const std::string traces = dir.file("traces");  // absolute, as the seed requires
  std::vector<std::string> args = small_video_args();
  args.insert(args.end(), {"--output-dir", dir.file("video")});
  const ProgramRun r = run_program(video_pipeline_program(), args,
                                   {{"FASTVIDEO_TORCH_PROFILER_DIR", traces},
                                    {"FASTVIDEO_TORCH_PROFILE_REGIONS", "inference_denoising"}});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // FastVideo's folder: <host>_<pid>.<ns>.pt.trace.json.gz and
  // summary_rank0.txt/.json, nothing else.
  const std::vector<std::string> all = files_under(traces, [](const std::string&) { return true; });
  ASSERT_EQ(all.size(), 3u) << r.output;
  const std::vector<std::string> files =
      files_under(traces, [](const std::string& n) { return ends_with(n, ".pt.trace.json.gz"); });
  ASSERT_EQ(files.size(), 1u) << r.output;
  EXPECT_EQ(
      files_under(traces, [](const std::string& n) { return n.rfind("summary_rank0.", 0) == 0; })
          .size(),
      2u);
  const json trace = read_json_maybe_gz(files[0]);
  const auto spans = events_named(trace, "fastvideo.region::profiler_region_inference_denoising");
  ASSERT_EQ(spans.size(), 1u) << files[0];
  EXPECT_EQ(spans[0].at("ph"), "X");
  const auto enable = events_named(trace, "fastvideo.profiler.enable_collection");
  const auto disable = events_named(trace, "fastvideo.profiler.disable_collection");
  ASSERT_FALSE(enable.empty());
  ASSERT_FALSE(disable.empty());
  EXPECT_EQ(enable[0].at("ph"), "i");
  // Collection is on exactly while the region is open: the markers bracket it.
  const double begin = spans[0].at("ts").get<double>();
  const double end = begin + spans[0].at("dur").get<double>();
  EXPECT_LE(enable[0].at("ts").get<double>(), begin + 1.0);
  EXPECT_GE(disable.back().at("ts").get<double>(), end - 1.0);
  // Only the selected region: no other phase of the pipeline is in the trace.
  for (const char* other :
       {"model_loading", "inference_pre_denoising", "inference_post_denoising"}) {
    EXPECT_TRUE(
        events_named(trace, std::string("fastvideo.region::profiler_region_") + other).empty())
        << other;
  }
}

TEST(SeedVariables, RelativeProfilerDirIsRefusedAtStartup) {
  TempDir dir;
  const ProgramRun r =
      run_program(video_pipeline_program(), small_video_args(),
                  {{"FASTVIDEO_TORCH_PROFILER_DIR", "relative/traces"}}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "FASTVIDEO_TORCH_PROFILER_DIR")) << r.output;
  EXPECT_TRUE(contains(r.output, "absolute")) << r.output;
}

}  // namespace
}  // namespace regiontrace::test
