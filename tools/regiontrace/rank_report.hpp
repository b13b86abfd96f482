// The figures of `regiontrace report`: per region and step, each rank's time,
// their spread, the slowest rank and what the others wait for it; the ranks
// that are slow in most steps (stragglers); the same for memory peaks. In the
// spirit of Holistic Trace Analysis' temporal breakdown and straggler
// detection, from regiontrace's own outputs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
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

// An op that took longer on a slow rank inside the region (op_slowdown.hpp).
struct OpDelta {
  std::string op;
  double rank_ms = 0;           // on the slow rank
  double fastest_ms = 0;        // on the fastest other rank
  double others_median_ms = 0;  // median over the other ranks
  double added_ms = 0;          // rank_ms - others_median_ms
};

struct Straggler {
  std::int64_t rank = 0;
  std::size_t slow_steps = 0;
  std::size_t steps = 0;
  double median_excess = 0;  // over the slow steps, ms (bytes for memory)
  // Over the same steps, above each step's fastest rank: with two ranks the
  // median sits halfway between them, and median_excess is half the gap.
  double fastest_excess = 0;
  std::optional<std::int64_t> fastest_rank;  // when one rank was fastest in all those steps
  // Set when this rank and another have torch traces (cpu_op events).
  bool ops_compared = false;
  std::int64_t ops_fastest_rank = 0;  // the other rank with least time in the region
  std::vector<OpDelta> slower_ops;    // most added time first
};

struct RegionReport {
  std::string region;
  std::vector<RankSpread> steps;  // step order; one kWholeRun row without steps
  RankSpread total;               // values summed over steps
  std::vector<Straggler> stragglers;
  // rank -> median over its steps of (its time - the step's fastest rank's).
  std::map<std::int64_t, double> excess_over_fastest;
};

struct MemoryReport {
  std::string region;
  std::string device;
  RankSpread peaks;                 // bytes
  std::vector<Straggler> outliers;  // ranks above the median by more than the threshold
};

// One step as the HTML overview stacks it, per rank: its regions' own time
// on the rank's busiest thread (RankRegionTimes::self_ms) and its step span.
struct StepBreakdown {
  std::int64_t step = kWholeRun;
  std::map<std::int64_t, std::map<std::string, double>> self_ms;  // rank -> region -> ms
  std::map<std::int64_t, double> step_ms;  // rank -> its step span's ms, where it has one
};

// A counter track of one rank (memory traces' allocated and resident bytes).
struct CounterTrack {
  std::int64_t rank = 0;
  std::string name;         // "<counter> (<arg>)"
  bool wall_clock = false;  // times on the wall clock, else from the trace's start
  std::vector<std::pair<std::int64_t, double>> samples;  // (ns, value), time order
};

struct ReportSource {
  std::size_t trace = 0;  // its index in build_report()'s traces
  std::int64_t rank = 0;
  std::string rank_from;
  std::string source;
  std::string sink;
  std::size_t region_spans = 0;
  bool used = true;  // false: another trace of the rank had more region spans
};

// Ranks that ran on one host with fewer CPUs (the union of their affinity
// masks) than ranks: they took turns on the CPUs, so their times, and who
// looks like a straggler, show the scheduler rather than the work.
struct Oversubscription {
  std::string host;
  std::vector<std::int64_t> ranks;
  std::size_t cpus = 0;
};

struct Report {
  ReportCriteria criteria;
  std::vector<Oversubscription> oversubscribed;
  std::vector<ReportSource> sources;  // by rank
  std::vector<std::int64_t> ranks;
  std::vector<RegionReport> regions;  // slowest (largest total max) first
  std::vector<MemoryReport> memory;
  // For the HTML page; text and JSON leave them out.
  std::vector<StepBreakdown> breakdown;  // step order
  // rank -> the [first, last] steps of its torch_profiler collection windows
  // (every trace of the rank, used or not): steps the profiler slowed.
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> profiled;
  std::vector<CounterTrack> counters;  // by rank, then name

  bool is_profiled(std::int64_t rank, std::int64_t step) const;
};

Report build_report(const std::vector<RankRegionTimes>& traces,
                    const std::vector<RankMemoryPeaks>& memory, const ReportCriteria& criteria);

}  // namespace regiontrace::cli
