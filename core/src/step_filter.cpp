#include "step_filter.hpp"

#include "regiontrace/sdk/events.hpp"

namespace regiontrace::detail {

bool StepFilter::contains(std::int64_t step) const {
  if (steps_.empty()) return true;
  if (step == kNoStep) return false;
  return steps_.count(step) != 0;
}

}  // namespace regiontrace::detail
