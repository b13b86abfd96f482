// Everything the sink reports at shutdown, gathered once, formatted as the
// table (stats_table.cpp) and the JSON file (stats_json.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "path_summary.hpp"

namespace regiontrace::region_stats {

struct StepSpan {
  std::int64_t step = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;  // 0 while the step is current
};

struct StatsReport {
  int rank = 0;
  long pid = 0;
  std::int64_t wall_ns = 0;  // from the sink's start to the report
  std::vector<PathSummary> regions;
  std::map<std::uint64_t, std::vector<PathSummary>> threads;  // by thread number
  // Finished threads no longer reported on their own: their numbers are in
  // `regions` only (ThreadRegistry keeps the last few finished ones whole).
  std::uint64_t threads_folded = 0;
  std::size_t max_steps = 0;
  std::uint64_t steps_seen = 0;      // set_step() calls
  std::vector<StepSpan> step_spans;  // the last max_steps, oldest first

  // The steps kept: the max_steps highest step numbers seen in any row.
  std::vector<std::int64_t> kept_steps() const;
};

StatsReport build_report(const std::vector<PathRecord>& records, std::uint64_t threads_folded = 0);

}  // namespace regiontrace::region_stats
