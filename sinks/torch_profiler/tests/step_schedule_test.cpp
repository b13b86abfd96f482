#include "step_schedule.hpp"

#include <gtest/gtest.h>

namespace regiontrace::torch_profiler {
namespace {

// torch.profiler.schedule's action for a step, written out independently.
StepPhase torch_schedule(std::int64_t step, const ScheduleSpec& s) {
  if (step < s.skip_first) return StepPhase::kOff;
  step -= s.skip_first;
  const std::int64_t n = s.wait + s.warmup + s.active;
  if (s.repeat > 0 && step / n >= s.repeat) return StepPhase::kOff;
  const std::int64_t m = step % n;
  if (m < s.wait) return StepPhase::kOff;
  if (m < s.wait + s.warmup) return StepPhase::kWarmup;
  return StepPhase::kRecord;
}

TEST(StepSchedule, FollowsTorchProfilerScheduleMeaning) {
  for (const ScheduleSpec spec : {ScheduleSpec{0, 0, 0, 1, 0}, ScheduleSpec{1, 1, 1, 2, 2},
                                  ScheduleSpec{3, 2, 0, 3, 0}, ScheduleSpec{0, 5, 2, 1, 1}}) {
    const StepSchedule schedule(spec, {});
    for (std::int64_t step = 0; step < 40; ++step) {
      EXPECT_EQ(schedule.at(true, step).phase, torch_schedule(step, spec))
          << "step " << step << " skip_first " << spec.skip_first << " wait " << spec.wait;
    }
  }
}

TEST(StepSchedule, NamesTheCycleOfEachStep) {
  const StepSchedule s(ScheduleSpec{1, 1, 1, 2, 2}, {});
  EXPECT_EQ(s.at(true, 0).cycle, -1);  // skipped
  EXPECT_EQ(s.at(true, 1).cycle, 0);   // wait
  EXPECT_EQ(s.at(true, 3).cycle, 0);
  EXPECT_EQ(s.at(true, 4).cycle, 0);
  EXPECT_EQ(s.at(true, 5).cycle, 1);
  EXPECT_EQ(s.at(true, 8).cycle, 1);
  EXPECT_EQ(s.at(true, 9).cycle, -1);  // after the last repeat
  EXPECT_EQ(s.at(true, 9).phase, StepPhase::kOff);
}

TEST(StepSchedule, WithoutScheduleEveryStepRecordsInOneCycle) {
  const StepSchedule s(ScheduleSpec{}, {});
  EXPECT_FALSE(s.scheduled());
  EXPECT_EQ(s.at(false, 0).phase, StepPhase::kRecord);  // set_step() never called
  EXPECT_EQ(s.at(true, 7).phase, StepPhase::kRecord);
  EXPECT_EQ(s.at(true, 7).cycle, 0);
}

TEST(StepSchedule, StepsFilterLimitsRecordedSteps) {
  const StepSchedule plain(ScheduleSpec{}, {2, 3});
  EXPECT_EQ(plain.at(true, 1).phase, StepPhase::kOff);
  EXPECT_EQ(plain.at(true, 2).phase, StepPhase::kRecord);
  EXPECT_EQ(plain.at(true, 4).phase, StepPhase::kOff);
  EXPECT_EQ(plain.at(false, 0).phase, StepPhase::kOff);  // no step, but steps asked for
  const StepSchedule scheduled(ScheduleSpec{0, 0, 0, 4, 0}, {1});
  EXPECT_EQ(scheduled.at(true, 0).phase, StepPhase::kOff);
  EXPECT_EQ(scheduled.at(true, 1).phase, StepPhase::kRecord);
  EXPECT_EQ(scheduled.at(true, 2).phase, StepPhase::kOff);
}

TEST(StepSchedule, WithScheduleNoStepMeansNothingRecorded) {
  const StepSchedule s(ScheduleSpec{0, 0, 0, 2, 0}, {});
  EXPECT_EQ(s.at(false, 0).phase, StepPhase::kOff);
  EXPECT_EQ(s.at(true, -3).phase, StepPhase::kOff);
}

}  // namespace
}  // namespace regiontrace::torch_profiler
