#include "stats_report.hpp"

#include "folded_paths.hpp"

#include <set>

namespace regiontrace::region_stats {

std::vector<std::int64_t> StatsReport::kept_steps() const {
  std::set<std::int64_t> all;
  for (const PathSummary& p : regions) {
    for (const auto& [step, totals] : p.steps) all.insert(step);
  }
  for (const StepSpan& s : step_spans) all.insert(s.step);
  std::vector<std::int64_t> out(all.begin(), all.end());
  if (out.size() > max_steps) out.erase(out.begin(), out.end() - static_cast<long>(max_steps));
  return out;
}

StatsReport build_report(const std::vector<PathRecord>& records, std::uint64_t threads_folded) {
  StatsReport r;
  r.regions = merge_by_path(records);
  r.threads_folded = threads_folded;
  std::map<std::uint64_t, std::vector<PathRecord>> by_thread;
  for (const PathRecord& rec : records) {
    if (rec.thread_id != kFoldedThreads) by_thread[rec.thread_id].push_back(rec);
  }
  for (const auto& [id, recs] : by_thread) r.threads[id] = per_record(recs);
  return r;
}

}  // namespace regiontrace::region_stats
