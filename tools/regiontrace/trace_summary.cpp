#include "trace_summary.hpp"
#include "regiontrace/sdk/trace_time.hpp"

#include <algorithm>
#include <map>

#include "step_cut.hpp"

namespace regiontrace::cli {
namespace {

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

// A row's figures summed in integer nanoseconds, as the sinks' own summaries
// sum them, and turned into microseconds once.
struct NsTotals {
  std::uint64_t calls = 0;
  std::int64_t total_ns = 0;
  std::int64_t self_ns = 0;
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;

  void add(const Span& s) {
    min_ns = calls == 0 ? s.dur_ns : std::min(min_ns, s.dur_ns);
    max_ns = calls == 0 ? s.dur_ns : std::max(max_ns, s.dur_ns);
    ++calls;
    total_ns += s.dur_ns;
    self_ns += s.self_ns;
  }
};

SpanTotals totals_of(const SpanName& name, const NsTotals& t) {
  SpanTotals row;
  row.name = name.name;
  row.category = name.category;
  row.calls = t.calls;
  row.total_us = sdk::units::to_us(t.total_ns);
  row.self_us = sdk::units::to_us(t.self_ns);
  row.min_us = sdk::units::to_us(t.min_ns);
  row.max_us = sdk::units::to_us(t.max_ns);
  return row;
}

std::vector<SpanTotals> rows_of(const TraceSpans& trace,
                                const std::map<std::uint32_t, NsTotals>& totals) {
  std::vector<SpanTotals> rows;
  for (const auto& [name, t] : totals) rows.push_back(totals_of(trace.names[name], t));
  return rows;
}

void aggregate(const TraceSpans& trace, TraceSummary& out) {
  std::vector<NsTotals> totals(trace.names.size());
  for (const auto& spans : trace.threads) {
    for (const Span& s : spans) totals[s.name].add(s);
  }
  for (std::size_t i = 0; i < totals.size(); ++i) {
    SpanTotals row = totals_of(trace.names[i], totals[i]);
    switch (trace.names[i].group) {
      case SpanGroup::kRegion:
        out.regions.push_back(std::move(row));
        break;
      case SpanGroup::kOp:
        out.ops.push_back(std::move(row));
        break;
      case SpanGroup::kGpu:
        out.gpu.push_back(std::move(row));
        break;
    }
  }
}

// Each step's regions from `threads` (the trace's, or their pieces cut at
// step boundaries) and its wall time from the step spans.
std::vector<StepTotals> step_totals(const TraceSpans& trace,
                                    const std::vector<std::vector<Span>>& threads) {
  struct Acc {
    std::map<std::uint32_t, NsTotals> regions;
    std::int64_t first = INT64_MAX;
    std::int64_t last = INT64_MIN;
    std::map<std::string, std::int64_t> step_span_ns;  // pid -> the step span's length
  };
  std::map<std::int64_t, Acc> steps;
  for (const auto& [pid, list] : trace.step_spans) {
    for (const StepSpan& st : list) steps[st.step].step_span_ns[pid] += st.end_ns - st.ts_ns;
  }
  for (std::size_t t = 0; t < threads.size(); ++t) {
    for (const Span& s : threads[t]) {
      if (!s.region) continue;
      const std::int64_t step = step_of(trace, t, s);
      if (step == kNoStep) continue;
      Acc& acc = steps[step];
      acc.regions[s.name].add(s);
      acc.first = std::min(acc.first, s.ts_ns);
      acc.last = std::max(acc.last, s.ts_ns + s.dur_ns);
    }
  }
  std::vector<StepTotals> out;
  for (auto& [step, acc] : steps) {
    StepTotals row;
    row.step = step;
    if (!acc.step_span_ns.empty()) {
      // Processes run a step side by side: the longest one is its wall time.
      std::int64_t longest = 0;
      for (const auto& [pid, ns] : acc.step_span_ns) longest = std::max(longest, ns);
      row.wall_us = sdk::units::to_us(longest);
      row.from_step_span = true;
    } else if (acc.last >= acc.first) {
      row.wall_us = sdk::units::to_us(acc.last - acc.first);
    }
    row.regions = rows_of(trace, acc.regions);
    out.push_back(std::move(row));
  }
  return out;
}

bool matches(const TraceSpans& trace, const Span& s, const std::string& region) {
  return trace.names[s.name].name == region || (s.path != kNoPath && trace.paths[s.path] == region);
}

// `region`'s spans on one thread as disjoint intervals (a region that
// recurses counts once).
Intervals region_intervals(const TraceSpans& trace, const std::vector<Span>& spans,
                           const std::string& region, std::size_t& count) {
  Intervals within;
  for (const Span& s : spans) {
    if (!s.region || !matches(trace, s, region)) continue;
    ++count;
    within.emplace_back(s.ts_ns, s.ts_ns + s.dur_ns);
  }
  std::sort(within.begin(), within.end());
  Intervals merged;
  for (const auto& w : within) {
    if (!merged.empty() && w.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, w.second);
    } else {
      merged.push_back(w);
    }
  }
  return merged;
}

bool starts_inside(const Intervals& merged, std::int64_t t) {
  auto it = std::upper_bound(merged.begin(), merged.end(), t,
                             [](std::int64_t x, const auto& m) { return x < m.first; });
  return it != merged.begin() && t < std::prev(it)->second;
}

}  // namespace

std::optional<InsideTotals> inside_totals(const TraceSpans& trace, const std::string& region) {
  InsideTotals out;
  out.region = region;
  std::map<std::uint32_t, NsTotals> ops;
  std::int64_t region_ns = 0;
  for (const auto& spans : trace.threads) {
    const Intervals merged = region_intervals(trace, spans, region, out.region_spans);
    if (merged.empty()) continue;
    for (const auto& m : merged) region_ns += m.second - m.first;
    for (const Span& s : spans) {
      if (s.region || trace.names[s.name].group != SpanGroup::kOp) continue;
      if (starts_inside(merged, s.ts_ns)) ops[s.name].add(s);
    }
  }
  if (out.region_spans == 0) return std::nullopt;
  out.region_total_us = sdk::units::to_us(region_ns);
  out.ops = rows_of(trace, ops);
  return out;
}

TraceSummary summarize_spans(const TraceSpans& trace, const SummaryOptions& options) {
  TraceSummary out;
  out.events = trace.events;
  out.spans = trace.spans;
  out.processes = trace.processes;
  out.threads = trace.threads.size();
  out.unmatched = trace.unmatched;
  out.wall_us = sdk::units::to_us(trace.last_ns - trace.first_ns);
  out.unfinished = trace.unfinished;
  aggregate(trace, out);
  for (const SpanName& name : trace.names) {
    if (name.group == SpanGroup::kRegion) out.region_names.push_back(name.name);
  }
  std::sort(out.region_names.begin(), out.region_names.end());
  if (options.by_step) {
    const auto cut = cut_spans_at_steps(trace);
    out.steps = step_totals(trace, cut ? *cut : trace.threads);
  }
  if (!options.inside.empty()) out.inside = inside_totals(trace, options.inside);
  return out;
}

}  // namespace regiontrace::cli
