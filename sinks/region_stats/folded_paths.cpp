#include "folded_paths.hpp"

#include <algorithm>

namespace regiontrace::region_stats {

void FoldedPaths::fold(const std::vector<PathRecord>& thread) {
  ++threads_;
  for (const PathRecord& r : thread) {
    auto [it, fresh] = by_path_.try_emplace(r.path);
    PathRecord& f = it->second;
    if (fresh) {
      f = r;
      f.thread_id = kFoldedThreads;
      continue;
    }
    f.threads += r.threads;
    f.totals.merge(r.totals);
    f.histogram.merge(r.histogram);
    for (std::size_t i = 0; i < r.bound_counts.size() && i < f.bound_counts.size(); ++i) {
      f.bound_counts[i] += r.bound_counts[i];
    }
    std::map<std::int64_t, RegionTotals> steps;
    for (const StepTotals& s : f.steps) steps[s.step].merge(s.totals);
    for (const StepTotals& s : r.steps) steps[s.step].merge(s.totals);
    while (steps.size() > max_steps_) steps.erase(steps.begin());
    f.steps.clear();
    for (const auto& [step, totals] : steps) f.steps.push_back({step, totals});
  }
}

void FoldedPaths::append_to(std::vector<PathRecord>& out) const {
  for (const auto& [path, r] : by_path_) out.push_back(r);
}

}  // namespace regiontrace::region_stats
