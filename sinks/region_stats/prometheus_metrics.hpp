// The live metrics, in Prometheus' data model: one histogram of region
// durations and two counters, labelled by region name, path and rank.
// Bucket counts are exact (counted per configured bound as regions end),
// not derived from the percentile histogram.
#pragma once

#include <prometheus/metric_family.h>

#include <string>
#include <vector>

#include "path_summary.hpp"

namespace regiontrace::region_stats {

std::vector<prometheus::MetricFamily> metric_families(const std::vector<PathSummary>& regions,
                                                      const std::vector<double>& bounds_s,
                                                      int rank);
// The text exposition format (what /metrics serves and the textfile holds).
std::string exposition_text(const std::vector<prometheus::MetricFamily>& families);

}  // namespace regiontrace::region_stats
