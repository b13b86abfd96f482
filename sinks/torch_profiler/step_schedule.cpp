#include "step_schedule.hpp"

namespace regiontrace::torch_profiler {

StepSchedule::StepSchedule(const ScheduleSpec& spec, const std::vector<long long>& steps_filter)
    : spec_(spec), filter_(steps_filter.begin(), steps_filter.end()) {}

bool StepSchedule::in_filter(std::int64_t step) const {
  return filter_.empty() || filter_.count(step) != 0;
}

StepDecision StepSchedule::at(bool has_step, std::int64_t step) const {
  StepDecision d;
  if (!scheduled()) {
    // One cycle for the whole run: a step the filter rejects ends the window,
    // the next step it accepts opens another one (and another file).
    const bool allowed = has_step ? in_filter(step) : filter_.empty();
    d.cycle = 0;
    d.phase = allowed ? StepPhase::kRecord : StepPhase::kOff;
    return d;
  }
  if (!has_step || step < spec_.skip_first) return d;
  const std::int64_t s = step - spec_.skip_first;
  const std::int64_t length = spec_.wait + spec_.warmup + spec_.active;
  const std::int64_t cycle = s / length;
  if (spec_.repeat > 0 && cycle >= spec_.repeat) return d;
  d.cycle = cycle;
  const std::int64_t in_cycle = s % length;
  if (in_cycle < spec_.wait || !in_filter(step)) {
    d.phase = StepPhase::kOff;
  } else if (in_cycle < spec_.wait + spec_.warmup) {
    d.phase = StepPhase::kWarmup;
  } else {
    d.phase = StepPhase::kRecord;
  }
  return d;
}

}  // namespace regiontrace::torch_profiler
