// The figures of `regiontrace report`: per region and step, each rank's time,
// their spread, the slowest rank and what the others wait for it; the ranks
// that are slow in most steps (stragglers); the same for memory peaks. In the
// spirit of Holistic Trace Analysis' temporal breakdown and straggler
// detection, from regiontrace's own outputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memory_peaks.hpp"
#include "rank_region_times.hpp"

namespace regiontrace::cli {

struct ReportCriteria {
  double threshold = 0.10;     // slower than the median by more than this share of it ...
  double min_excess_ms = 1.0;  // ... and by more than this many ms ...
  double share = 0.5;          // ... in more than this share of the steps
};

// One region in one step (or summed over steps): a value per rank.
struct RankSpread {
  std::int64_t step = kWholeRun;
  std::map<std::int64_t, double> values;  // rank -> ms (bytes for memory)
  double min = 0;
  double median = 0;
  double max = 0;
  double mean = 0;
  std::int64_t slowest_rank = 0;
  double imbalance = 1;  // max / mean
  double wait = 0;       // sum over ranks of (max - value): what the others wait
};

struct Straggler {
  std::int64_t rank = 0;
  std::size_t slow_steps = 0;
  std::size_t steps = 0;
  double median_excess = 0;  // over the slow steps, ms (bytes for memory)
};

struct RegionReport {
  std::string region;
  std::vector<RankSpread> steps;  // step order; one kWholeRun row without steps
  RankSpread total;               // values summed over steps
  std::vector<Straggler> stragglers;
};

struct MemoryReport {
  std::string region;
  std::string device;
  RankSpread peaks;                 // bytes
  std::vector<Straggler> outliers;  // ranks above the median by more than the threshold
};

struct ReportSource {
  std::int64_t rank = 0;
  std::string rank_from;
  std::string source;
  std::string sink;
  std::size_t region_spans = 0;
  bool used = true;  // false: another trace of the rank had more region spans
};

struct Report {
  ReportCriteria criteria;
  std::vector<ReportSource> sources;
  std::vector<std::int64_t> ranks;
  std::vector<RegionReport> regions;  // slowest (largest total max) first
  std::vector<MemoryReport> memory;
};

Report build_report(std::vector<RankRegionTimes> traces, const std::vector<RankMemoryPeaks>& memory,
                    const ReportCriteria& criteria);

}  // namespace regiontrace::cli
