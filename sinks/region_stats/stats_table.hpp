// The table printed at shutdown: one row per region path, merged across
// threads, with count, total, self, mean, min, max and p50/p90/p99.
#pragma once

#include <cstdint>
#include <string>

#include "region_stats_settings.hpp"
#include "stats_report.hpp"

namespace regiontrace::region_stats {

std::string stats_table(const StatsReport& report, TablePaths paths);

}  // namespace regiontrace::region_stats
