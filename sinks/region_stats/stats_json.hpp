// region_stats_rank<r>_pid<p>.json: the report as JSON (schema in
// docs/region-stats.md; `regiontrace` tools read it).
#pragma once

#include <string>

#include "regiontrace/sdk/clock_sync.hpp"
#include "stats_report.hpp"

namespace regiontrace::region_stats {

struct JsonExtras {
  const SinkContext* context = nullptr;
  sdk::clock_sync::Pair start;
  sdk::clock_sync::Pair end;
  std::string prometheus_listen;
  std::string prometheus_textfile;
  std::vector<double> prometheus_buckets;
  // Written while the process runs (a flight recorder's file).
  bool incomplete = false;
};

std::string stats_json(const StatsReport& report, const JsonExtras& extras);

}  // namespace regiontrace::region_stats
