// video_pipeline as a program: it makes a real video, deterministically, and
// its regions, steps, module regions and observed tensors reach a sink.
#include <gtest/gtest.h>

#include <set>

#include "example_runner.hpp"
#include "gif_reader.hpp"
#include "test_support.hpp"
#include "trace_files.hpp"

namespace regiontrace::test {
namespace {

using json = nlohmann::json;

std::vector<std::string> args_with(std::vector<std::string> args,
                                   const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(VideoPipeline, WritesTheAnimatedGifItReports) {
  TempDir dir;
  const ProgramRun r = run_program(
      video_pipeline_program(), {"--blocks", "2", "--steps", "2", "--frames", "5", "--height", "32",
                                 "--width", "48", "--gif-scale", "1", "--output", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string gif = dir.file("video.gif");
  EXPECT_TRUE(contains(r.output, "video: " + gif)) << r.output;
  const DecodedGif g = decode_gif_file(gif);
  EXPECT_EQ(g.width, 48);
  EXPECT_EQ(g.height, 32);
  EXPECT_TRUE(g.loops);
  ASSERT_EQ(g.frames_rgb.size(), 5u);
  // A video: frames differ from each other, and each has texture, not one colour.
  const std::set<std::vector<std::uint8_t>> distinct(g.frames_rgb.begin(), g.frames_rgb.end());
  EXPECT_EQ(distinct.size(), 5u);
  for (const auto& frame : g.frames_rgb) {
    const std::set<std::uint8_t> values(frame.begin(), frame.end());
    EXPECT_GT(values.size(), 16u);
  }
}

TEST(VideoPipeline, SameSeedSameVideoOtherSeedOtherVideo) {
  TempDir dir;
  auto run = [&](const std::string& name, const std::string& seed) {
    const ProgramRun r =
        run_program(video_pipeline_program(),
                    {"--blocks", "2", "--steps", "2", "--frames", "2", "--height", "32", "--width",
                     "32", "--seed", seed, "--output-dir", dir.file(name)});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return read_file(dir.file(name) + "/video.gif");
  };
  const std::string a = run("a", "7");
  const std::string b = run("b", "7");
  const std::string c = run("c", "8");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(VideoPipeline, RefusesBadSizesWithAMessage) {
  TempDir dir;
  ProgramRun r =
      run_program(video_pipeline_program(), {"--height", "40", "--output-dir", dir.path()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "multiples of 16")) << r.output;
  r = run_program(video_pipeline_program(), {"--blocks", "3", "--perturb-block", "3"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "only 3 blocks")) << r.output;
}

// Issue 13: a GIF it could not write ended in std::terminate (exit 134).
TEST(VideoPipeline, AnOutputItCannotWriteIsAMessageNotAnAbort) {
  TempDir dir;
  write_file(dir.file("taken"), "a file where the output folder should go");
  const ProgramRun r = run_program(
      video_pipeline_program(),
      {"--steps", "1", "--frames", "1", "--blocks", "1", "--output-dir", dir.file("taken/out")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "video_pipeline: ")) << r.output;
  EXPECT_TRUE(contains(r.output, dir.file("taken"))) << r.output;
  EXPECT_FALSE(contains(r.output, "terminate called")) << r.output;
}

TEST(VideoPipeline, ABadProfileStopsItBeforeAnyWork) {
  TempDir dir;
  const std::string missing = dir.file("no_such_profile.yaml");
  const ProgramRun r = run_program(video_pipeline_program(),
                                   {"--profile", missing, "--output-dir", dir.file("out")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, missing)) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/video.gif")));
}

// Through the test suite's recording sink: every event, in order.
TEST(VideoPipeline, RegionsStepsBlocksAndTensorsReachASink) {
  TempDir dir;
  const std::string events = dir.file("events.jsonl");
  const ProgramRun r = run_program(
      video_pipeline_program(), args_with(small_video_args(), {"--output-dir", dir.file("video")}),
      {{"REGIONTRACE_PLUGIN_PATH", test_plugin_dir()},
       {"REGIONTRACE_SINKS", "recorder"},
       {"REGIONTRACE_RECORDER_FILE", events},
       {"REGIONTRACE_RECORDER_TENSORS", "true"},
       {"REGIONTRACE_OUTPUT_DIR", dir.file("out")}});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> phases;
  std::vector<long long> steps;
  std::map<long long, std::vector<std::string>> blocks_per_step;
  std::map<std::string, int> tensors;  // "module/label" -> count
  for (const json& e : read_jsonl(events)) {
    const std::string kind = e.at("event");
    if (kind == "begin" && e.at("depth") == 0) phases.push_back(e.at("name"));
    if (kind == "step") steps.push_back(e.at("step"));
    if (kind == "begin" && e.at("depth") == 1) {
      const std::string name = e.at("name");
      EXPECT_EQ(e.at("path").get<std::string>(), "profiler_region_inference_denoising/" + name);
      blocks_per_step[e.at("step").get<long long>()].push_back(name);
    }
    if (kind == "tensor")
      ++tensors[e.at("module").get<std::string>() + "/" + e.at("label").get<std::string>()];
  }
  EXPECT_EQ(phases, (std::vector<std::string>{"profiler_region_model_loading",
                                              "profiler_region_inference_pre_denoising",
                                              "profiler_region_inference_denoising",
                                              "profiler_region_inference_post_denoising"}));
  EXPECT_EQ(steps, (std::vector<long long>{0, 1, 2, 3}));
  ASSERT_EQ(blocks_per_step.size(), 4u);
  for (const auto& [step, blocks] : blocks_per_step) {
    EXPECT_EQ(blocks, (std::vector<std::string>{"blocks.0", "blocks.1", "blocks.2", "blocks.3"}))
        << "step " << step;
  }
  EXPECT_EQ(tensors["blocks.2/out"], 4);
  EXPECT_EQ(tensors["profiler_region_inference_denoising/latents"], 4);
  EXPECT_EQ(tensors["profiler_region_inference_pre_denoising/text_embeddings"], 1);
  EXPECT_EQ(tensors["profiler_region_inference_post_denoising/video"], 1);
}

}  // namespace
}  // namespace regiontrace::test
