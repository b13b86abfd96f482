// Selection is the dispatcher's job, the same for every sink: regions (names,
// short names, globs), steps, ranks; two sinks with different selections.
#include <gtest/gtest.h>

#include "recorded_events.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

void workload() {
  RT_REGION("model_loading");
  {
    RT_REGION("inference_denoising");
    RT_REGION("blocks.0");
    mark("inside_blocks");
  }
  RT_REGION("blocks.1");
}

TEST(Selection, RegionFilterByNameShortNameAndGlob) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file, {{"sinks.recorder.regions", "inference_denoising,blocks.*"}}));
  workload();
  shutdown();
  const auto events = read_jsonl(file);
  EXPECT_EQ(region_sequence(events),
            (std::vector<std::string>{"begin profiler_region_inference_denoising", "begin blocks.0",
                                      "end blocks.0", "end profiler_region_inference_denoising",
                                      "begin blocks.1", "end blocks.1"}));
  // Paths still name the unselected outer region.
  EXPECT_EQ(events_of(events, "begin")[1]["path"],
            "profiler_region_model_loading/profiler_region_inference_denoising/blocks.0");
  // Marks reach a filtered sink only inside one of its regions.
  ASSERT_EQ(events_of(events, "mark").size(), 1u);
}

TEST(Selection, MisspelledRegionIsWarnedAboutAndIgnored) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  testing::internal::CaptureStderr();
  init(recorder_options(file, {{"sinks.recorder.regions", "inference_denoising,model_lodaing"}}));
  const std::string log = testing::internal::GetCapturedStderr();
  workload();
  shutdown();
  EXPECT_NE(log.find("unknown region `model_lodaing`"), std::string::npos) << log;
  EXPECT_NE(log.find("did you mean `profiler_region_model_loading`"), std::string::npos) << log;
  EXPECT_NE(log.find("Catalog regions: "), std::string::npos) << log;
  EXPECT_EQ(events_of(read_jsonl(file), "begin").size(), 1u);
}

// FastVideo's code registers three regions the seed does not list: their
// short names select them and are no misspelling of `training_dit` or
// `training_checkpoint_saving`.
TEST(Selection, FastVideosOwnRegionNamesAreKnown) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  testing::internal::CaptureStderr();
  init(recorder_options(file,
                        {{"sinks.recorder.regions",
                          "training_train,training_train_one_step,training_save_checkpoint"}}));
  {
    RT_REGION("profiler_region_training_train");
    RT_REGION("profiler_region_training_train_one_step");
  }
  { RT_REGION("profiler_region_training_save_checkpoint"); }
  shutdown();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("unknown region"), std::string::npos) << log;
  EXPECT_EQ(log.find("was selected"), std::string::npos) << log;
  EXPECT_EQ(events_of(read_jsonl(file), "begin").size(), 3u);
}

TEST(Selection, AFilterOfOnlyMisspeltCatalogNamesIsAStartUpError) {
  CleanEnv env;
  TempDir dir;
  testing::internal::CaptureStderr();
  try {
    init(recorder_options(dir.file("e.jsonl"),
                          {{"sinks.recorder.regions", "model_lodaing,training_stpe"}}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("every region named (model_lodaing, training_stpe) looks "
                                         "like a misspelt catalog name"),
              std::string::npos)
        << e.what();
  }
  testing::internal::GetCapturedStderr();
  EXPECT_FALSE(enabled());
}

void scheduler_step() {
  RT_REGION("scheduler_step");  // registers on the first call, after start-up
  mark("in_scheduler_step");
}

TEST(Selection, ARegionOfYourOwnIsSelectedByItsExactNameWhenItFirstRuns) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  testing::internal::CaptureStderr();
  init(recorder_options(file, {{"regions", "scheduler_step,never_reached_phase"}}));
  {
    RT_REGION("unselected_outer");
    scheduler_step();
    scheduler_step();
  }
  shutdown();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("unknown region"), std::string::npos) << log;
  EXPECT_EQ(region_sequence(read_jsonl(file)),
            (std::vector<std::string>{"begin scheduler_step", "end scheduler_step",
                                      "begin scheduler_step", "end scheduler_step"}));
  EXPECT_EQ(events_of(read_jsonl(file), "mark").size(), 2u);
  // The name no region ever had is reported once, naming where it came from.
  const std::string never = "region `never_reached_phase` was selected (`regions` (program))";
  EXPECT_NE(log.find(never), std::string::npos) << log;
  EXPECT_EQ(log.find(never), log.rfind(never)) << log;
  EXPECT_EQ(log.find("region `scheduler_step` was selected"), std::string::npos) << log;
}

TEST(Selection, NeverEnteredIsReportedAtEveryShutdownThatMissedIt) {
  CleanEnv env;
  TempDir dir;
  testing::internal::CaptureStderr();
  init(recorder_options(dir.file("e.jsonl"), {{"sinks.recorder.regions", "late_phase"}}));
  shutdown();
  init(recorder_options(dir.file("f.jsonl"), {{"sinks.recorder.regions", "late_phase,blocks.*"}}));
  { RT_REGION("blocks.7"); }
  shutdown();
  const std::string log = testing::internal::GetCapturedStderr();
  const std::string never = "region `late_phase` was selected";
  EXPECT_NE(log.find(never), std::string::npos) << log;
  EXPECT_NE(log.find(never), log.rfind(never)) << "once per shutdown: " << log;
}

// A custom region is only known when it first runs, so a misspelt one is
// found at shutdown: the warning names the region that ran under the
// nearest name, and no unrelated one.
TEST(Selection, NeverEnteredSuggestsTheNearestRegionThatRan) {
  CleanEnv env;
  TempDir dir;
  testing::internal::CaptureStderr();
  init(recorder_options(dir.file("e.jsonl"),
                        {{"sinks.recorder.regions", "blokcs.2,teacher_forward"}}));
  { RT_REGION("blocks.2"); }
  { RT_REGION("blocks.3"); }
  shutdown();
  const std::string log = testing::internal::GetCapturedStderr();
  const std::size_t typo = log.find("region `blokcs.2` was selected");
  ASSERT_NE(typo, std::string::npos) << log;
  const std::string line = log.substr(typo, log.find('\n', typo) - typo);
  EXPECT_NE(line.find("never entered: no region of that name ran while the sinks were on (did "
                      "you mean `blocks.2`?)"),
            std::string::npos)
      << line;
  const std::size_t teacher = log.find("region `teacher_forward` was selected");
  ASSERT_NE(teacher, std::string::npos) << log;
  EXPECT_EQ(log.find("did you mean", teacher), std::string::npos) << log;
}

// A profile that lists thousands of regions the program never runs gets
// five of them by name and one line for the rest, not a line each.
TEST(Selection, ThousandsNeverEnteredAreCountedNotListed) {
  CleanEnv env;
  TempDir dir;
  std::string regions = "entered";
  for (int i = 0; i < 5000; ++i) regions += ",phase_" + std::to_string(i);
  testing::internal::CaptureStderr();
  init(recorder_options(dir.file("e.jsonl"), {{"sinks.recorder.regions", regions}}));
  { RT_REGION("entered"); }
  shutdown();
  const std::string log = testing::internal::GetCapturedStderr();
  std::size_t named = 0;
  for (std::size_t at = log.find("was selected ("); at != std::string::npos;
       at = log.find("was selected (", at + 1)) {
    ++named;
  }
  EXPECT_EQ(named, 5u) << log;
  EXPECT_EQ(log.find("region `entered` was selected"), std::string::npos) << log;
  EXPECT_NE(log.find("4995 more selected regions were never entered either"), std::string::npos)
      << log;
}

TEST(Selection, StepFilterSelectsSteps) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file, {{"sinks.recorder.steps", "1,3-4"}}));
  for (int s = 0; s < 6; ++s) {
    set_step(s);
    RT_REGION("step_region");
  }
  shutdown();
  std::vector<int> steps;
  for (const auto& e : events_of(read_jsonl(file), "begin")) steps.push_back(e["step"]);
  EXPECT_EQ(steps, (std::vector<int>{1, 3, 4}));
}

TEST(Selection, ARegionSpanningAStepChangeStillEnds) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file, {{"sinks.recorder.steps", "0"}}));
  set_step(0);
  {
    RT_REGION("spans");
    set_step(1);
  }
  shutdown();
  EXPECT_EQ(region_sequence(read_jsonl(file)),
            (std::vector<std::string>{"begin spans", "end spans"}));
}

TEST(Selection, RankFilterKeepsTheSinkOffOnOtherRanks) {
  CleanEnv env;
  TempDir dir;
  {
    ScopedEnv rank({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
    init(recorder_options(dir.file("rank1.jsonl"), {{"sinks.recorder.ranks", "0"}}));
    EXPECT_FALSE(enabled());
    shutdown();
  }
  {
    ScopedEnv rank({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
    init(recorder_options(dir.file("rank0.jsonl"), {{"sinks.recorder.ranks", "0"}}));
    EXPECT_TRUE(enabled());
    { RT_REGION("on_rank0"); }
    shutdown();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("rank1.jsonl")));
  EXPECT_EQ(events_of(read_jsonl(dir.file("rank0.jsonl")), "start")[0]["rank"], 0);
}

TEST(Selection, TwoSinksWithDifferentFiltersInOneRun) {
  CleanEnv env;
  TempDir dir;
  const std::string a = dir.file("a.jsonl");
  const std::string b = dir.file("b.jsonl");
  init(recorder_options(a, {{"sinks.recorder.regions", "blocks.*"},
                            {"sinks.recorder2.file", b},
                            {"sinks.recorder2.regions", "model_loading"}}));
  workload();
  shutdown();
  EXPECT_EQ(region_sequence(read_jsonl(a)),
            (std::vector<std::string>{"begin blocks.0", "end blocks.0", "begin blocks.1",
                                      "end blocks.1"}));
  EXPECT_EQ(region_sequence(read_jsonl(b)),
            (std::vector<std::string>{"begin profiler_region_model_loading",
                                      "end profiler_region_model_loading"}));
}

TEST(Selection, RegionsFirstUsedAfterStartUpAreRoutedToo) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file, {{"sinks.recorder.regions", "late.*"}}));
  for (int i = 0; i < 300; ++i) {  // more than the first routing table holds
    Region r("late." + std::to_string(i));
  }
  shutdown();
  EXPECT_EQ(events_of(read_jsonl(file), "begin").size(), 300u);
}

}  // namespace
}  // namespace regiontrace::test
