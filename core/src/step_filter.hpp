// Which steps a sink selected. Empty selects every step, and events before
// the first set_step().
#pragma once

#include <cstdint>
#include <set>
#include <vector>

namespace regiontrace::detail {

class StepFilter {
 public:
  StepFilter() = default;
  explicit StepFilter(const std::vector<long long>& steps) : steps_(steps.begin(), steps.end()) {}

  bool everything() const { return steps_.empty(); }
  bool contains(std::int64_t step) const;

 private:
  std::set<std::int64_t> steps_;
};

}  // namespace regiontrace::detail
