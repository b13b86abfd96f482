// Which steps the torch_profiler sink collects: the common `steps` filter
// combined with torch.profiler's schedule (skip_first, wait, warmup, active,
// repeat), evaluated on the step numbers given to regiontrace::set_step().
//
// torch.profiler's meaning, with s = step - skip_first and a cycle of
// wait + warmup + active steps: steps before skip_first are skipped; in each
// cycle the first `wait` steps are idle, the next `warmup` steps run the
// profiler but throw its results away, the last `active` steps are recorded;
// `repeat` cycles (0: no limit). active = 0 means no schedule: every step the
// filter lets through is recorded.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

namespace regiontrace::torch_profiler {

struct ScheduleSpec {
  std::int64_t skip_first = 0;
  std::int64_t wait = 0;
  std::int64_t warmup = 0;
  std::int64_t active = 0;  // 0: no schedule
  std::int64_t repeat = 0;  // 0: cycles without end
};

enum class StepPhase : std::uint8_t { kOff, kWarmup, kRecord };

struct StepDecision {
  StepPhase phase = StepPhase::kOff;
  // The cycle the step belongs to: a trace file per cycle. -1 when the step is
  // outside every cycle (before skip_first, after the last repeat).
  std::int64_t cycle = -1;

  bool collecting() const { return phase != StepPhase::kOff; }
};

class StepSchedule {
 public:
  StepSchedule() = default;
  StepSchedule(const ScheduleSpec& spec, const std::vector<long long>& steps_filter);

  // `has_step` false: the application never called set_step().
  StepDecision at(bool has_step, std::int64_t step) const;

  bool scheduled() const { return spec_.active > 0; }
  const ScheduleSpec& spec() const { return spec_; }

 private:
  bool in_filter(std::int64_t step) const;

  ScheduleSpec spec_;
  std::set<std::int64_t> filter_;  // empty: every step
};

}  // namespace regiontrace::torch_profiler
