#include "path_summary.hpp"

#include <algorithm>
#include <unordered_map>

namespace regiontrace::region_stats {
namespace {

void add_record(PathSummary& s, const PathRecord& r) {
  if (s.threads == 0) {
    s.path = r.path;
    s.name = r.name;
    s.depth = r.depth;
    s.bound_counts.assign(r.bound_counts.size(), 0);
  }
  s.threads += r.threads;
  s.totals.merge(r.totals);
  s.histogram.merge(r.histogram);
  for (std::size_t i = 0; i < r.bound_counts.size() && i < s.bound_counts.size(); ++i) {
    s.bound_counts[i] += r.bound_counts[i];
  }
  for (const StepTotals& st : r.steps) s.steps[st.step].merge(st.totals);
}

void sort_by_total(std::vector<PathSummary>& v) {
  std::stable_sort(v.begin(), v.end(), [](const PathSummary& a, const PathSummary& b) {
    if (a.totals.total_ns != b.totals.total_ns) return a.totals.total_ns > b.totals.total_ns;
    return a.path < b.path;
  });
}

}  // namespace

std::vector<PathSummary> merge_by_path(const std::vector<PathRecord>& records) {
  std::vector<PathSummary> out;
  std::unordered_map<std::string, std::size_t> index;
  for (const PathRecord& r : records) {
    auto [it, fresh] = index.emplace(r.path, out.size());
    if (fresh) out.emplace_back();
    add_record(out[it->second], r);
  }
  sort_by_total(out);
  return out;
}

std::vector<PathSummary> per_record(const std::vector<PathRecord>& records) {
  std::vector<PathSummary> out;
  out.reserve(records.size());
  for (const PathRecord& r : records) {
    out.emplace_back();
    add_record(out.back(), r);
  }
  sort_by_total(out);
  return out;
}

}  // namespace regiontrace::region_stats
