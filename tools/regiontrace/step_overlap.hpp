// A span's time in each step: its overlap with each step span
// (`ProfilerStep#N`, step_span.hpp) of its process. A span that
// crosses a step boundary is split there, so no step is credited with time
// that ran in another (issue 35: a 40 ms span went whole into a 21 ms step).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace regiontrace::cli {

class StepIntervals {
 public:
  void add(std::int64_t start_ns, std::int64_t end_ns, std::int64_t step) {
    steps_.push_back({start_ns, std::max(start_ns, end_ns), step});
    ready_ = false;
  }
  bool empty() const { return steps_.empty(); }

  // Calls `visit(step, begin_ns, end_ns)` for each step span [start, end)
  // overlaps, in time order; returns how many. A span of no duration is in
  // the step span that holds its start.
  template <class Visit>
  std::size_t for_each_overlap(std::int64_t start_ns, std::int64_t end_ns, Visit&& visit) {
    prepare();
    // Step spans may overlap (several threads call set_step): the first
    // candidate is the first whose running maximum end passes the start.
    auto at = std::upper_bound(max_end_.begin(), max_end_.end(), start_ns);
    const bool point = end_ns <= start_ns;
    std::size_t n = 0;
    for (auto i = static_cast<std::size_t>(at - max_end_.begin()); i < steps_.size(); ++i) {
      const Interval& s = steps_[i];
      if (point ? s.start > start_ns : s.start >= end_ns) break;
      const std::int64_t begin = std::max(start_ns, s.start);
      const std::int64_t end = point ? begin : std::min(end_ns, s.end);
      if (point ? s.end > start_ns : end > begin) {
        visit(s.step, begin, end);
        ++n;
      }
    }
    return n;
  }

 private:
  struct Interval {
    std::int64_t start;
    std::int64_t end;
    std::int64_t step;
  };

  void prepare() {
    if (ready_) return;
    std::sort(steps_.begin(), steps_.end(),
              [](const Interval& a, const Interval& b) { return a.start < b.start; });
    max_end_.resize(steps_.size());
    std::int64_t running = INT64_MIN;
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      running = std::max(running, steps_[i].end);
      max_end_[i] = running;
    }
    ready_ = true;
  }

  std::vector<Interval> steps_;
  std::vector<std::int64_t> max_end_;  // running maximum of end, in start order
  bool ready_ = false;
};

}  // namespace regiontrace::cli
