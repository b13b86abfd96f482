#include "op_slowdown.hpp"
#include "regiontrace/sdk/trace_time.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "trace_event_reader.hpp"

namespace regiontrace::cli {
namespace {

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

Intervals merged(Intervals spans) {
  std::sort(spans.begin(), spans.end());
  Intervals out;
  for (const auto& s : spans) {
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

bool inside(const Intervals& spans, std::int64_t t) {
  auto it = std::upper_bound(spans.begin(), spans.end(), t,
                             [](std::int64_t x, const auto& s) { return x < s.first; });
  return it != spans.begin() && t < std::prev(it)->second;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double value_of(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? 0.0 : it->second;
}

}  // namespace

std::map<std::string, std::map<std::string, double>> op_ms_inside(
    const RankRegionTimes& trace, const std::set<std::string>& regions) {
  // thread -> (region, its spans on the thread)
  std::map<std::string, std::vector<std::pair<std::string, Intervals>>> by_thread;
  for (const std::string& region : regions) {
    auto found = trace.spans.find(region);
    if (found == trace.spans.end()) continue;
    for (const auto& [thread, spans] : found->second) {
      by_thread[thread].emplace_back(region, merged(spans));
    }
  }
  std::map<std::string, std::map<std::string, double>> out;
  if (by_thread.empty()) return out;
  // A second pass over the trace, for the few regions with stragglers:
  // keeping every op of every rank from the first would cost memory in
  // proportion to the traces.
  TraceEventReader reader(trace.source);
  TraceEvent e;
  std::string thread;
  while (reader.next(e)) {
    if (e.category != "cpu_op" || e.phase != "X") continue;
    thread.assign(e.pid.empty() ? std::string_view("0") : e.pid);
    thread += '/';
    thread.append(e.tid.empty() ? std::string_view("0") : e.tid);
    auto found = by_thread.find(thread);
    if (found == by_thread.end() || !e.ts_ns || !e.dur_ns || *e.dur_ns < 0) continue;
    for (const auto& [region, spans] : found->second) {
      if (inside(spans, *e.ts_ns)) {
        out[region][std::string(e.name)] += sdk::units::to_ms(*e.dur_ns);
      }
    }
  }
  return out;
}

std::vector<OpDelta> slower_ops(const std::map<std::string, double>& slow,
                                const std::map<std::string, double>& fastest,
                                const std::vector<const std::map<std::string, double>*>& others,
                                std::size_t top) {
  std::vector<OpDelta> out;
  for (const auto& [op, ms] : slow) {
    std::vector<double> values;
    for (const auto* other : others) values.push_back(value_of(*other, op));
    OpDelta d{op, ms, value_of(fastest, op), median(std::move(values)), 0};
    d.added_ms = d.rank_ms - d.others_median_ms;
    // Below a microsecond is the stamps' rounding, not a slower op.
    if (d.added_ms > 1e-3) out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](const OpDelta& a, const OpDelta& b) {
    if (a.added_ms != b.added_ms) return a.added_ms > b.added_ms;
    return a.op < b.op;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

void add_slower_ops(Report& report, const std::vector<RankRegionTimes>& traces, std::size_t top) {
  std::map<std::int64_t, std::size_t> torch;  // rank -> index of its torch trace
  for (const ReportSource& source : report.sources) {
    const std::size_t i = source.trace;
    if (i >= traces.size() || traces[i].cpu_ops == 0) continue;
    auto [it, fresh] = torch.emplace(source.rank, i);
    if (!fresh && traces[i].cpu_ops > traces[it->second].cpu_ops) it->second = i;
  }
  std::set<std::string> regions;
  for (const auto& r : report.regions) {
    if (!r.stragglers.empty()) regions.insert(r.region);
  }
  if (regions.empty() || torch.size() < 2) return;
  // rank -> region -> op -> ms; read only when a straggler asks for it.
  std::map<std::int64_t, std::map<std::string, std::map<std::string, double>>> ops;
  for (const auto& [rank, index] : torch) ops[rank] = op_ms_inside(traces[index], regions);
  static const std::map<std::string, double> kNone;
  auto in_region = [&](std::int64_t rank, const std::string& region) {
    const auto& by_region = ops[rank];
    auto it = by_region.find(region);
    return it == by_region.end() ? &kNone : &it->second;
  };
  for (auto& r : report.regions) {
    for (auto& s : r.stragglers) {
      auto slow = torch.find(s.rank);
      if (slow == torch.end() || traces[slow->second].spans.count(r.region) == 0) continue;
      std::vector<const std::map<std::string, double>*> others;
      const std::map<std::string, double>* fastest = nullptr;
      double fastest_ms = std::numeric_limits<double>::infinity();
      for (const auto& [rank, index] : torch) {
        auto total = r.total.values.find(rank);
        if (rank == s.rank || total == r.total.values.end()) continue;
        others.push_back(in_region(rank, r.region));
        if (total->second < fastest_ms) {
          fastest_ms = total->second;
          fastest = others.back();
          s.ops_fastest_rank = rank;
        }
      }
      if (others.empty()) continue;
      s.ops_compared = true;
      s.slower_ops = slower_ops(*in_region(s.rank, r.region), *fastest, others, top);
    }
  }
}

}  // namespace regiontrace::cli
