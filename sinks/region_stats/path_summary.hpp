// Region statistics merged across threads, per path: what the table, the
// JSON and the metrics report.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "log_histogram.hpp"
#include "region_totals.hpp"
#include "thread_stats.hpp"

namespace regiontrace::region_stats {

struct PathSummary {
  std::string path;
  std::string name;
  int depth = 0;
  std::size_t threads = 0;
  RegionTotals totals;
  HistogramCounts histogram;
  std::vector<std::uint64_t> bound_counts;
  std::map<std::int64_t, RegionTotals> steps;

  std::int64_t percentile(double q) const {
    return histogram.percentile(q, totals.min_or_zero(), totals.max_ns);
  }
};

// One summary per distinct path, sorted by total time (largest first).
std::vector<PathSummary> merge_by_path(const std::vector<PathRecord>& records);
// One summary per record (a thread's own numbers), same sort.
std::vector<PathSummary> per_record(const std::vector<PathRecord>& records);

}  // namespace regiontrace::region_stats
