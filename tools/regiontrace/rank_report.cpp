#include "rank_report.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "trace_identity.hpp"

namespace regiontrace::cli {
namespace {

RankSpread spread(std::int64_t step, std::map<std::int64_t, double> values) {
  RankSpread s;
  s.step = step;
  s.values = std::move(values);
  if (s.values.empty()) return s;
  std::vector<double> sorted;
  double sum = 0;
  bool first = true;
  for (const auto& [rank, v] : s.values) {
    sorted.push_back(v);
    sum += v;
    if (first || v > s.max) {
      s.max = v;
      s.slowest_rank = rank;
    }
    first = false;
  }
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.min = sorted.front();
  s.median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  s.mean = sum / static_cast<double>(n);
  s.imbalance = s.mean > 0 ? s.max / s.mean : 1.0;
  for (double v : sorted) s.wait += s.max - v;
  return s;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Ranks above the median by more than the criteria in more than `share` of rows.
std::vector<Straggler> find_stragglers(const std::vector<RankSpread>& rows, const ReportCriteria& c,
                                       double min_excess) {
  struct Slow {
    std::vector<double> over_median;
    std::vector<double> over_fastest;
    std::set<std::int64_t> fastest;  // the fastest rank of each slow step
  };
  std::map<std::int64_t, std::size_t> present;
  std::map<std::int64_t, Slow> slow;
  for (const RankSpread& row : rows) {
    if (row.values.size() < 2) continue;
    for (const auto& [rank, v] : row.values) {
      ++present[rank];
      const double over = v - row.median;
      if (over > c.threshold * row.median && over > min_excess) {
        Slow& s = slow[rank];
        s.over_median.push_back(over);
        s.over_fastest.push_back(v - row.min);
        for (const auto& [other, w] : row.values) {
          if (w == row.min) {
            s.fastest.insert(other);
            break;
          }
        }
      }
    }
  }
  std::vector<Straggler> out;
  for (auto& [rank, s] : slow) {
    const std::size_t steps = present[rank];
    if (static_cast<double>(s.over_median.size()) > c.share * static_cast<double>(steps)) {
      Straggler st;
      st.rank = rank;
      st.slow_steps = s.over_median.size();
      st.steps = steps;
      st.median_excess = median_of(s.over_median);
      st.fastest_excess = median_of(s.over_fastest);
      if (s.fastest.size() == 1) st.fastest_rank = *s.fastest.begin();
      out.push_back(std::move(st));
    }
  }
  return out;
}

std::map<std::int64_t, double> excess_over_fastest(const std::vector<RankSpread>& rows) {
  std::map<std::int64_t, std::vector<double>> over;
  for (const RankSpread& row : rows) {
    if (row.values.size() < 2) continue;
    for (const auto& [rank, v] : row.values) over[rank].push_back(v - row.min);
  }
  std::map<std::int64_t, double> out;
  for (auto& [rank, values] : over) out[rank] = median_of(std::move(values));
  return out;
}

// "0-3,8" (Linux's CPU list, as clock_sync::cpu_list() writes it) into
// `cpus`; false on anything else.
bool add_cpu_list(const std::string& text, std::set<long>& cpus) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(at, end - at);
    char* rest = nullptr;
    const long first = std::strtol(part.c_str(), &rest, 10);
    long last = first;
    if (rest == part.c_str()) return false;
    if (*rest == '-') last = std::strtol(rest + 1, &rest, 10);
    if (*rest != '\0' || last < first || last - first > 1 << 16) return false;
    for (long cpu = first; cpu <= last; ++cpu) cpus.insert(cpu);
    at = end + 1;
  }
  return !cpus.empty();
}

std::vector<Oversubscription> oversubscribed_hosts(
    const std::vector<RankRegionTimes>& traces, const std::map<std::int64_t, std::size_t>& chosen) {
  struct Host {
    std::vector<std::int64_t> ranks;
    std::set<long> cpus;
    bool known = true;
  };
  std::map<std::string, Host> hosts;
  for (const auto& [rank, index] : chosen) {
    const RankRegionTimes& t = traces[index];
    if (t.host.empty()) continue;
    Host& h = hosts[t.host];
    h.ranks.push_back(rank);
    if (!add_cpu_list(t.cpus, h.cpus)) h.known = false;
  }
  std::vector<Oversubscription> out;
  for (auto& [name, h] : hosts) {
    if (h.known && h.ranks.size() > h.cpus.size()) {
      out.push_back({name, std::move(h.ranks), h.cpus.size()});
    }
  }
  return out;
}

// The overview's stacks, from the trace that counts for each rank.
std::vector<StepBreakdown> step_breakdown(const std::vector<RankRegionTimes>& traces,
                                          const std::map<std::int64_t, std::size_t>& chosen) {
  std::map<std::int64_t, StepBreakdown> steps;
  for (const auto& [rank, index] : chosen) {
    const RankRegionTimes& t = traces[index];
    for (const auto& [step, regions] : t.self_ms) steps[step].self_ms[rank] = regions;
    for (const auto& [step, ms] : t.step_ms) steps[step].step_ms[rank] = ms;
  }
  std::vector<StepBreakdown> out;
  for (auto& [step, b] : steps) {
    b.step = step;
    out.push_back(std::move(b));
  }
  return out;
}

// Which rank each trace is; of several traces of one rank (torch_profiler
// and timeline of one run), the one with most region spans counts, and of
// two with as many, one with step spans (a memory trace has the same region
// spans as the torch trace beside it, but no steps to stack them in).
// Returns rank -> index of the trace that counts.
std::map<std::int64_t, std::size_t> choose_sources(const std::vector<RankRegionTimes>& traces,
                                                   Report& report) {
  std::map<std::int64_t, std::size_t> chosen;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    ReportSource s;
    s.trace = i;
    s.source = traces[i].source;
    s.sink = traces[i].sink;
    s.region_spans = traces[i].region_spans;
    if (traces[i].rank) {
      s.rank = *traces[i].rank;
      s.rank_from = traces[i].rank_from;
    } else if (auto named = rank_from_file_name(s.source)) {
      s.rank = *named;
      s.rank_from = "file name";
    } else {
      s.rank = static_cast<std::int64_t>(i);
      s.rank_from = "position";
    }
    auto [it, fresh] = chosen.emplace(s.rank, i);
    const RankRegionTimes& held = traces[it->second];
    const bool better = traces[i].region_spans > held.region_spans ||
                        (traces[i].region_spans == held.region_spans &&
                         !traces[i].step_ms.empty() && held.step_ms.empty());
    if (!fresh && better) {
      report.sources[it->second].used = false;
      it->second = i;
    } else if (!fresh) {
      s.used = false;
    }
    report.sources.push_back(std::move(s));
  }
  // Inputs in rank order (rank 2 before rank 10), as every table has them.
  std::stable_sort(report.sources.begin(), report.sources.end(),
                   [](const ReportSource& a, const ReportSource& b) { return a.rank < b.rank; });
  return chosen;
}

// Each region's spread across ranks, per step and for the run, largest first.
void add_regions(const std::vector<RankRegionTimes>& traces,
                 const std::map<std::int64_t, std::size_t>& chosen, Report& report) {
  const ReportCriteria& criteria = report.criteria;
  std::map<std::string, std::map<std::int64_t, std::map<std::int64_t, double>>> by_region;
  for (const auto& [rank, index] : chosen) {
    const RankRegionTimes& t = traces[index];
    for (const auto& [region, steps] : t.ms) {
      for (const auto& [step, ms] : steps) by_region[region][step][rank] = ms;
    }
    // Step spans: the step's wall time, as the pseudo-region "(step)".
    for (const auto& [step, ms] : t.step_ms) by_region["(step)"][step][rank] = ms;
  }
  for (auto& [region, steps] : by_region) {
    RegionReport r;
    r.region = region;
    std::map<std::int64_t, double> totals;
    for (auto& [step, values] : steps) {
      for (const auto& [rank, ms] : values) totals[rank] += ms;
      r.steps.push_back(spread(step, std::move(values)));
    }
    r.total = spread(kWholeRun, std::move(totals));
    r.total.wait = 0;
    for (const auto& row : r.steps) r.total.wait += row.wait;
    r.stragglers = find_stragglers(r.steps, criteria, criteria.min_excess_ms);
    r.excess_over_fastest = excess_over_fastest(r.steps);
    report.regions.push_back(std::move(r));
  }
  std::stable_sort(
      report.regions.begin(), report.regions.end(),
      [](const RegionReport& a, const RegionReport& b) { return a.total.max > b.total.max; });
}

// Each region's memory peak per device across ranks, largest first.
void add_memory(const std::vector<RankMemoryPeaks>& memory, Report& report) {
  std::map<std::pair<std::string, std::string>, std::map<std::int64_t, double>> peaks;
  for (const RankMemoryPeaks& m : memory) {
    for (const auto& [key, bytes] : m.peak_bytes) {
      double& slot = peaks[key][m.rank];
      slot = std::max(slot, static_cast<double>(bytes));
    }
  }
  for (auto& [key, values] : peaks) {
    MemoryReport m;
    m.region = key.first;
    m.device = key.second;
    m.peaks = spread(kWholeRun, std::move(values));
    m.outliers = find_stragglers({m.peaks}, report.criteria, 0.0);
    report.memory.push_back(std::move(m));
  }
  std::stable_sort(
      report.memory.begin(), report.memory.end(),
      [](const MemoryReport& a, const MemoryReport& b) { return a.peaks.max > b.peaks.max; });
}

}  // namespace

bool Report::is_profiled(std::int64_t rank, std::int64_t step) const {
  auto found = profiled.find(rank);
  if (found == profiled.end()) return false;
  for (const auto& [first, last] : found->second) {
    if (step >= first && step <= last) return true;
  }
  return false;
}

Report build_report(const std::vector<RankRegionTimes>& traces,
                    const std::vector<RankMemoryPeaks>& memory, const ReportCriteria& criteria) {
  Report report;
  report.criteria = criteria;
  const std::map<std::int64_t, std::size_t> chosen = choose_sources(traces, report);
  report.oversubscribed = oversubscribed_hosts(traces, chosen);
  report.breakdown = step_breakdown(traces, chosen);
  for (const ReportSource& s : report.sources) {
    const RankRegionTimes& t = traces[s.trace];
    if (t.window_steps) report.profiled[s.rank].push_back(*t.window_steps);
    for (const auto& [name, samples] : t.counters) {
      report.counters.push_back({s.rank, name, t.counter_wall_clock, samples});
    }
  }
  add_regions(traces, chosen, report);
  add_memory(memory, report);
  std::set<std::int64_t> ranks;
  for (const auto& [rank, index] : chosen) ranks.insert(rank);
  for (const RankMemoryPeaks& m : memory) ranks.insert(m.rank);
  report.ranks.assign(ranks.begin(), ranks.end());
  return report;
}

}  // namespace regiontrace::cli
