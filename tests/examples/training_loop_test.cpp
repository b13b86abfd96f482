// training_loop as a program: the loss goes down (training and distillation),
// checkpoints are real torch::save archives that load again, and the seed's
// training regions nest the way the seed describes them.
#include <gtest/gtest.h>

#include <regex>

#include "example_runner.hpp"
#include "test_support.hpp"
#include "trace_files.hpp"

namespace regiontrace::test {
namespace {

using json = nlohmann::json;

struct EpochLosses {
  std::vector<double> train;
  std::vector<double> validation;
};

EpochLosses parse_losses(const std::string& output) {
  EpochLosses l;
  const std::regex line(R"(epoch \d+/\d+: train loss ([0-9.]+), validation loss ([0-9.]+))");
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it) {
    l.train.push_back(std::stod((*it)[1]));
    l.validation.push_back(std::stod((*it)[2]));
  }
  return l;
}

// Three epochs of six steps unless `extra` says otherwise (options given
// twice are an error, so defaults only fill in what `extra` leaves out).
ProgramRun train(const std::string& out, const std::vector<std::string>& extra) {
  std::vector<std::string> args = extra;
  const std::vector<std::pair<std::string, std::string>> defaults = {
      {"--epochs", "3"}, {"--steps-per-epoch", "6"}, {"--batch", "4"}};
  for (const auto& [option, value] : defaults) {
    if (std::find(extra.begin(), extra.end(), option) == extra.end()) {
      args.insert(args.end(), {option, value});
    }
  }
  args.insert(args.end(), {"--output-dir", out});
  return run_program(training_loop_program(), args);
}

TEST(TrainingLoop, LossGoesDownAndCheckpointsLoadAgain) {
  TempDir dir;
  const ProgramRun r = train(dir.path(), {});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const EpochLosses l = parse_losses(r.output);
  ASSERT_EQ(l.validation.size(), 3u) << r.output;
  // Held-out data, fixed noise: the model learns, it does not memorise.
  EXPECT_LT(l.validation.back(), 0.8 * l.validation.front()) << r.output;
  EXPECT_LT(l.train.back(), l.train.front()) << r.output;
  for (int epoch = 1; epoch <= 3; ++epoch) {
    const std::string ckpt = dir.file("dit_epoch" + std::to_string(epoch) + ".pt");
    const std::string bytes = read_file(ckpt);
    ASSERT_GT(bytes.size(), 100000u) << ckpt;  // the weights, not an empty archive
    EXPECT_EQ(bytes.substr(0, 4), std::string("PK\x03\x04", 4)) << ckpt;  // torch::save's zip
    EXPECT_TRUE(
        std::filesystem::exists(dir.file("dit_epoch" + std::to_string(epoch) + "_optimizer.pt")));
  }
  // The checkpoint loads again: as the teacher of a distillation run.
  const ProgramRun d =
      train(dir.file("distill"), {"--distill", "--teacher", dir.file("dit_epoch3.pt"),
                                  "--teacher-blocks", "2", "--blocks", "1", "--epochs", "1"});
  EXPECT_EQ(d.exit_code, 0) << d.output;
  EXPECT_TRUE(std::filesystem::exists(dir.file("distill/student_epoch1.pt"))) << d.output;
}

TEST(TrainingLoop, DistillationLossGoesDown) {
  TempDir dir;
  const ProgramRun r = train(dir.path(), {"--distill", "--teacher-blocks", "2", "--blocks", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const EpochLosses l = parse_losses(r.output);
  ASSERT_EQ(l.validation.size(), 3u) << r.output;
  EXPECT_LT(l.validation.back(), 0.8 * l.validation.front()) << r.output;
}

TEST(TrainingLoop, AMismatchedTeacherCheckpointIsAnError) {
  TempDir dir;
  ASSERT_EQ(train(dir.path(), {"--epochs", "1", "--steps-per-epoch", "1"}).exit_code, 0);
  // Saved with 2 blocks, loaded as a 4-block teacher.
  const ProgramRun r = train(dir.file("d"), {"--distill", "--teacher", dir.file("dit_epoch1.pt"),
                                             "--teacher-blocks", "4"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "training_loop:")) << r.output;
}

// Region events through the test suite's recording sink.
std::vector<json> recorded_run(const TempDir& dir, const std::vector<std::string>& extra) {
  const std::string events = dir.file("events.jsonl");
  std::vector<std::string> args = small_training_args();
  args.insert(args.end(), {"--output-dir", dir.file("ckpt")});
  args.insert(args.end(), extra.begin(), extra.end());
  const ProgramRun r = run_program(training_loop_program(), args,
                                   {{"REGIONTRACE_PLUGIN_PATH", test_plugin_dir()},
                                    {"REGIONTRACE_SINKS", "recorder"},
                                    {"REGIONTRACE_RECORDER_FILE", events},
                                    {"REGIONTRACE_OUTPUT_DIR", dir.file("out")}});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return read_jsonl(events);
}

std::map<std::string, int> begin_paths(const std::vector<json>& events) {
  std::map<std::string, int> paths;
  for (const json& e : events) {
    if (e.at("event") == "begin") ++paths[e.at("path").get<std::string>()];
  }
  return paths;
}

TEST(TrainingLoop, TrainingRegionsNestAsTheSeedDescribes) {
  TempDir dir;
  const std::vector<json> events = recorded_run(dir, {});
  std::map<std::string, int> paths = begin_paths(events);
  const std::string epoch = "profiler_region_training_epoch";
  const std::string step = epoch + "/profiler_region_training_step";
  EXPECT_EQ(paths["profiler_region_model_loading"], 1);
  EXPECT_EQ(paths[epoch], 2);
  EXPECT_EQ(paths[step], 6);
  EXPECT_EQ(paths[step + "/profiler_region_training_dit"], 6);
  EXPECT_EQ(paths[step + "/profiler_region_training_dit/blocks.1"], 6);
  EXPECT_EQ(paths[step + "/profiler_region_training_backward"], 6);
  EXPECT_EQ(paths[step + "/profiler_region_training_optimizer"], 6);
  EXPECT_EQ(paths[epoch + "/profiler_region_training_validation"], 2);
  EXPECT_EQ(paths[epoch + "/profiler_region_training_validation/blocks.0"], 2);
  EXPECT_EQ(paths[epoch + "/profiler_region_training_checkpoint_saving"], 2);
  std::vector<long long> steps;
  for (const json& e : events) {
    if (e.at("event") == "step") steps.push_back(e.at("step"));
  }
  EXPECT_EQ(steps, (std::vector<long long>{0, 1, 2, 3, 4, 5}));
}

TEST(TrainingLoop, DistillationRegionsNestInsideTheStep) {
  TempDir dir;
  const std::map<std::string, int> paths = begin_paths(recorded_run(dir, {"--distill"}));
  const std::string step = "profiler_region_training_epoch/profiler_region_training_step";
  auto count = [&](const std::string& p) {
    auto it = paths.find(p);
    return it == paths.end() ? 0 : it->second;
  };
  EXPECT_EQ(count(step + "/profiler_region_distillation_teacher_forward"), 6);
  EXPECT_EQ(count(step + "/profiler_region_distillation_teacher_forward/teacher.blocks.3"), 6);
  EXPECT_EQ(count(step + "/profiler_region_distillation_student_forward"), 6);
  EXPECT_EQ(count(step + "/profiler_region_distillation_student_forward/student.blocks.1"), 6);
  EXPECT_EQ(count(step + "/profiler_region_distillation_loss"), 6);
  EXPECT_EQ(count(step + "/profiler_region_distillation_update"), 6);
  EXPECT_EQ(count(step + "/profiler_region_training_dit"),
            0);  // the plain training regions are not used
}

}  // namespace
}  // namespace regiontrace::test
