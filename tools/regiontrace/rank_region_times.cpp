#include "rank_region_times.hpp"
#include "regiontrace/sdk/trace_time.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <vector>

#include "counter_envelope.hpp"
#include "event_fields.hpp"
#include "step_overlap.hpp"
#include "step_span.hpp"
#include "trace_event_reader.hpp"
#include "trace_identity.hpp"

namespace regiontrace::cli {
namespace {

constexpr std::string_view kRegionMarker = "region::";

struct RegionSpan {
  std::string pid;
  std::string thread;  // "pid/tid"
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;
  std::string region;
  std::optional<std::int64_t> step;
};

// The region a complete event stands for, if it is a region span; names
// decoded, shown and compared as the text they are (`q"uote`, not its JSON
// escape), as summary shows them.
std::optional<std::string> region_of(const TraceEvent& e, const SpanArgs& args) {
  if (e.category == "gpu_user_annotation") return std::nullopt;  // Kineto's GPU-side copy
  if (args.region) return args.region;
  const auto at = e.name.find(kRegionMarker);
  if (at != std::string_view::npos) return std::string(e.name.substr(at + kRegionMarker.size()));
  if (e.category == "region") return std::string(e.name);
  return std::nullopt;
}

// Each region's own time on the thread with most region time, per step
// (RankRegionTimes::self_ms). Spans on a thread nest: sweeping them in start
// order (the longer first at equal starts) with a stack of open spans gives
// each instant to the innermost one. A span that overruns its parent is cut
// at the parent's end.
void add_self_times(const std::vector<RegionSpan>& spans,
                    std::map<std::string, StepIntervals>& steps, RankRegionTimes& out) {
  std::map<std::string, std::int64_t> busy;  // thread -> ns in spans
  for (const RegionSpan& s : spans) busy[s.thread] += s.dur_ns;
  if (busy.empty()) return;
  const std::string thread =
      std::max_element(busy.begin(), busy.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->first;
  std::vector<const RegionSpan*> order;
  for (const RegionSpan& s : spans) {
    if (s.thread == thread) order.push_back(&s);
  }
  std::stable_sort(order.begin(), order.end(), [](const RegionSpan* a, const RegionSpan* b) {
    return a->ts_ns != b->ts_ns ? a->ts_ns < b->ts_ns : a->dur_ns > b->dur_ns;
  });
  auto credit = [&](const RegionSpan& s, std::int64_t a, std::int64_t b) {
    if (b <= a) return;
    auto found = steps.find(s.pid);
    // With step spans, time between them belongs to no step: left out, so
    // that a step's regions never add up to more than its span.
    if (found != steps.end()) {
      found->second.for_each_overlap(a, b, [&](std::int64_t step, std::int64_t x, std::int64_t y) {
        out.self_ms[step][s.region] += sdk::units::to_ms(y - x);
      });
      return;
    }
    out.self_ms[s.step.value_or(kWholeRun)][s.region] += sdk::units::to_ms(b - a);
  };
  struct Open {
    std::int64_t end;
    const RegionSpan* span;
  };
  std::vector<Open> open;
  std::int64_t cursor = 0;
  auto close_until = [&](std::int64_t t) {
    while (!open.empty() && open.back().end <= t) {
      credit(*open.back().span, cursor, open.back().end);
      cursor = std::max(cursor, open.back().end);
      open.pop_back();
    }
  };
  for (const RegionSpan* s : order) {
    close_until(s->ts_ns);
    if (!open.empty()) credit(*open.back().span, cursor, s->ts_ns);
    cursor = s->ts_ns;
    std::int64_t end = s->ts_ns + s->dur_ns;
    if (!open.empty()) end = std::min(end, open.back().end);
    open.push_back({end, s});
  }
  close_until(INT64_MAX);
}

std::optional<std::int64_t> integer(std::optional<std::string_view> text) {
  if (!text) return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

// regiontrace.steps {"first", "last"} of the trace's members, when present.
std::optional<std::pair<std::int64_t, std::int64_t>> window_steps(
    const std::vector<std::pair<std::string, std::string>>& members) {
  for (const auto& [key, value] : members) {
    if (key != "regiontrace") continue;
    EventFields member;
    EventFields steps;
    if (!member.parse(value) || !steps.parse(member.raw("steps").value_or(""))) return std::nullopt;
    const auto first = integer(steps.raw("first"));
    const auto last = integer(steps.raw("last"));
    if (first && last && *first <= *last) return std::make_pair(*first, *last);
  }
  return std::nullopt;
}

// What one pass over a rank's events keeps: its region spans, step spans and
// counter samples.
struct RankEvents {
  std::vector<RegionSpan> spans;
  std::map<std::string, StepIntervals> steps;  // pid -> step spans
  std::map<std::string, CounterEnvelope> counters;
  std::size_t elements = 0;
  std::size_t events = 0;  // elements with a phase: Chrome trace events
};

void add_counter(const TraceEvent& e, RankEvents& in) {
  EventFields args;
  if (!e.ts_ns || !args.parse(e.args.empty() ? std::string_view("{}") : e.args)) return;
  const std::string name = e.name.empty() ? std::string("counter") : std::string(e.name);
  for (const EventField& f : args.fields()) {
    const auto value = args.number(f.key);
    if (!value) continue;
    in.counters.try_emplace(name + " (" + std::string(f.key) + ")", kCounterSamples)
        .first->second.add(*e.ts_ns, *value);
  }
}

void add_span(const TraceEvent& e, RankEvents& in, RankRegionTimes& out) {
  if (!e.ts_ns || !e.dur_ns || *e.dur_ns < 0) return;
  const std::int64_t ts = *e.ts_ns;
  const std::int64_t dur = *e.dur_ns;
  if (e.category == "cpu_op") ++out.cpu_ops;
  // Cheap test first: most events are ops, which are no region spans.
  const bool maybe_region = e.category == "user_annotation" || e.category == "region" ||
                            e.category == "step" ||
                            e.name.find(kRegionMarker) != std::string_view::npos;
  if (!maybe_region) return;
  const SpanArgs args = span_args(e.args);
  const std::string pid(e.pid.empty() ? std::string_view("0") : e.pid);
  if (is_step_span(e.category, e.name)) {
    const auto step = args.step ? args.step : step_of_step_name(e.name);
    if (step) {
      in.steps[pid].add(ts, ts + dur, *step);
      out.step_ms[*step] += sdk::units::to_ms(dur);
    }
    return;
  }
  auto region = region_of(e, args);
  if (!region) return;
  std::string thread = pid + "/" + std::string(e.tid.empty() ? std::string_view("0") : e.tid);
  in.spans.push_back({pid, std::move(thread), ts, dur, std::move(*region), args.step});
}

RankEvents read_events(TraceEventReader& reader, RankRegionTimes& out) {
  RankEvents in;
  TraceEvent e;
  while (reader.next(e)) {
    ++in.elements;
    if (e.phase.empty()) continue;
    ++in.events;
    if (e.phase == "C") {
      add_counter(e, in);
    } else if (e.phase == "X") {
      add_span(e, in, out);
    }
  }
  // A JSON list of other records (FastVideo's summary_rank<r>.json) is no
  // trace, though a trace may be a bare list of events.
  if (in.elements > 0 && in.events == 0) {
    throw std::runtime_error(reader.path() +
                             ": not a Chrome trace (a list of records without \"ph\")");
  }
  return in;
}

// Each region's time per step: step spans tell when each step ran; args.step
// only which step was current when the span began, so they decide when there
// are any.
void add_region_times(RankEvents& in, RankRegionTimes& out) {
  out.region_spans = in.spans.size();
  for (const RegionSpan& s : in.spans) {
    out.spans[s.region][s.thread].emplace_back(s.ts_ns, s.ts_ns + s.dur_ns);
    auto& by_step = out.ms[s.region];
    auto found = in.steps.find(s.pid);
    if (found != in.steps.end() &&
        found->second.for_each_overlap(s.ts_ns, s.ts_ns + s.dur_ns,
                                       [&](std::int64_t step, std::int64_t a, std::int64_t b) {
                                         by_step[step] += sdk::units::to_ms(b - a);
                                       }) > 0) {
      continue;
    }
    by_step[s.step.value_or(kWholeRun)] += sdk::units::to_ms(s.dur_ns);
  }
}

void add_identity(const TraceEventReader& reader, RankRegionTimes& out) {
  const TraceIdentity id = identify_trace(reader.path(), reader.members());
  out.rank = id.rank;
  out.rank_from = id.rank_from;
  out.sink = id.sink;
  out.unfinished = unfinished_note(reader.path(), id);
  out.host = id.host;
  out.cpus = id.cpus;
  if (id.sink == "torch_profiler") out.window_steps = window_steps(reader.members());
  // Ranks' counters side by side need one clock: the wall clock, when the
  // trace says how to reach it.
  out.counter_wall_clock = id.knows_wall_clock() && !out.counters.empty();
  const std::int64_t offset = out.counter_wall_clock ? id.wall_offset_ns() : 0;
  for (auto& [name, samples] : out.counters) {
    for (auto& sample : samples) {
      if (__builtin_add_overflow(sample.first, offset, &sample.first)) sample.first = INT64_MAX;
    }
  }
}

}  // namespace

RankRegionTimes read_rank_region_times(const std::string& path) {
  RankRegionTimes out;
  out.source = path;
  TraceEventReader reader(path);
  RankEvents in = read_events(reader, out);
  add_region_times(in, out);
  add_self_times(in.spans, in.steps, out);
  for (const auto& [name, envelope] : in.counters) out.counters[name] = envelope.samples();
  add_identity(reader, out);
  return out;
}

}  // namespace regiontrace::cli
