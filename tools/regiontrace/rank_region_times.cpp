#include "rank_region_times.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <vector>

#include "counter_envelope.hpp"
#include "event_fields.hpp"
#include "step_overlap.hpp"
#include "step_span.hpp"
#include "trace_event_stream.hpp"
#include "trace_identity.hpp"

namespace regiontrace::cli {
namespace {

constexpr std::string_view kRegionMarker = "region::";

struct Span {
  std::string pid;
  std::string thread;  // "pid/tid"
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;
  std::string region;
  std::optional<std::int64_t> step;
};

std::optional<std::int64_t> integer(std::optional<std::string_view> text) {
  if (!text) return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

// The region a complete event stands for, if it is a region span.
std::optional<std::string> region_of(const EventFields& e, const EventFields& args) {
  const auto cat = e.string("cat").value_or("");
  if (cat == "gpu_user_annotation") return std::nullopt;  // Kineto's GPU-side copy
  // Names decoded: shown and compared as the text they are (`q"uote`, not
  // its JSON escape), as summary shows them.
  if (args.raw("region")) return args.text("region");
  const std::string name = e.text("name").value_or("");
  const auto at = name.find(kRegionMarker);
  if (at != std::string::npos) return name.substr(at + kRegionMarker.size());
  if (cat == "region") return name;
  return std::nullopt;
}

// Each region's own time on the thread with most region time, per step
// (RankRegionTimes::self_ms). Spans on a thread nest: sweeping them in start
// order (the longer first at equal starts) with a stack of open spans gives
// each instant to the innermost one. A span that overruns its parent is cut
// at the parent's end.
void add_self_times(const std::vector<Span>& spans, std::map<std::string, StepIntervals>& steps,
                    RankRegionTimes& out) {
  std::map<std::string, std::int64_t> busy;  // thread -> ns in spans
  for (const Span& s : spans) busy[s.thread] += s.dur_ns;
  if (busy.empty()) return;
  const std::string thread =
      std::max_element(busy.begin(), busy.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->first;
  std::vector<const Span*> order;
  for (const Span& s : spans) {
    if (s.thread == thread) order.push_back(&s);
  }
  std::stable_sort(order.begin(), order.end(), [](const Span* a, const Span* b) {
    return a->ts_ns != b->ts_ns ? a->ts_ns < b->ts_ns : a->dur_ns > b->dur_ns;
  });
  auto credit = [&](const Span& s, std::int64_t a, std::int64_t b) {
    if (b <= a) return;
    auto found = steps.find(s.pid);
    // With step spans, time between them belongs to no step: left out, so
    // that a step's regions never add up to more than its span.
    if (found != steps.end()) {
      found->second.for_each_overlap(a, b, [&](std::int64_t step, std::int64_t x, std::int64_t y) {
        out.self_ms[step][s.region] += static_cast<double>(y - x) / 1e6;
      });
      return;
    }
    out.self_ms[s.step.value_or(kWholeRun)][s.region] += static_cast<double>(b - a) / 1e6;
  };
  struct Open {
    std::int64_t end;
    const Span* span;
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
  for (const Span* s : order) {
    close_until(s->ts_ns);
    if (!open.empty()) credit(*open.back().span, cursor, s->ts_ns);
    cursor = s->ts_ns;
    std::int64_t end = s->ts_ns + s->dur_ns;
    if (!open.empty()) end = std::min(end, open.back().end);
    open.push_back({end, s});
  }
  close_until(INT64_MAX);
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

}  // namespace

RankRegionTimes read_rank_region_times(const std::string& path) {
  RankRegionTimes out;
  out.source = path;
  TraceEventStream stream(path);
  EventFields e;
  EventFields args;
  std::vector<Span> spans;
  std::map<std::string, StepIntervals> steps;  // pid -> step spans
  std::map<std::string, CounterEnvelope> counters;
  std::string_view text;
  std::size_t elements = 0;
  std::size_t events = 0;  // elements with a phase: Chrome trace events
  while (stream.next(text)) {
    ++elements;
    if (!e.parse(text)) continue;
    const auto phase = e.string("ph");
    if (phase) ++events;
    if (phase == std::optional<std::string_view>("C")) {
      const auto ts_ns = microseconds_text_to_ns(e.raw("ts").value_or(""));
      if (!ts_ns || !args.parse(e.raw("args").value_or("{}"))) continue;
      const std::string name = e.text("name").value_or("counter");
      for (const EventField& f : args.fields()) {
        const auto value = args.number(f.key);
        if (!value) continue;
        counters.try_emplace(name + " (" + std::string(f.key) + ")", kCounterSamples)
            .first->second.add(*ts_ns, *value);
      }
      continue;
    }
    if (phase != std::optional<std::string_view>("X")) continue;
    const auto ts = e.raw("ts");
    const auto dur = e.raw("dur");
    if (!ts || !dur) continue;
    const auto ts_ns = microseconds_text_to_ns(*ts);
    const auto dur_ns = microseconds_text_to_ns(*dur);
    if (!ts_ns || !dur_ns || *dur_ns < 0) continue;
    const auto cat = e.string("cat").value_or("");
    if (cat == "cpu_op") ++out.cpu_ops;
    const auto name = e.string("name").value_or("");
    // Cheap test first: most events are ops, which are no region spans.
    const bool maybe_region = cat == "user_annotation" || cat == "region" || cat == "step" ||
                              name.find(kRegionMarker) != std::string_view::npos;
    if (!maybe_region) continue;
    args.parse(e.raw("args").value_or("{}"));
    const std::string pid(e.raw("pid").value_or("0"));
    if (is_step_span(cat, name)) {
      auto step = integer(args.raw("step"));
      if (!step) step = step_of_step_name(name);
      if (step) {
        steps[pid].add(*ts_ns, *ts_ns + *dur_ns, *step);
        out.step_ms[*step] += static_cast<double>(*dur_ns) / 1e6;
      }
      continue;
    }
    auto region = region_of(e, args);
    if (!region) continue;
    std::string thread = pid + "/" + std::string(e.raw("tid").value_or("0"));
    spans.push_back(
        {pid, std::move(thread), *ts_ns, *dur_ns, std::move(*region), integer(args.raw("step"))});
  }
  // A JSON list of other records (FastVideo's summary_rank<r>.json) is no
  // trace, though a trace may be a bare list of events.
  if (elements > 0 && events == 0) {
    throw std::runtime_error(path + ": not a Chrome trace (a list of records without \"ph\")");
  }
  out.region_spans = spans.size();
  for (const Span& s : spans) {
    out.spans[s.region][s.thread].emplace_back(s.ts_ns, s.ts_ns + s.dur_ns);
    auto& by_step = out.ms[s.region];
    // Step spans tell when each step ran; args.step only which step was
    // current when the span began, so they decide when there are any.
    auto found = steps.find(s.pid);
    if (found != steps.end() &&
        found->second.for_each_overlap(s.ts_ns, s.ts_ns + s.dur_ns,
                                       [&](std::int64_t step, std::int64_t a, std::int64_t b) {
                                         by_step[step] += static_cast<double>(b - a) / 1e6;
                                       }) > 0) {
      continue;
    }
    by_step[s.step.value_or(kWholeRun)] += static_cast<double>(s.dur_ns) / 1e6;
  }
  add_self_times(spans, steps, out);
  const TraceIdentity id = identify_trace(path, stream.members());
  out.rank = id.rank;
  out.rank_from = id.rank_from;
  out.sink = id.sink;
  out.unfinished = unfinished_note(path, id);
  out.host = id.host;
  out.cpus = id.cpus;
  if (id.sink == "torch_profiler") out.window_steps = window_steps(stream.members());
  // Ranks' counters side by side need one clock: the wall clock, when the
  // trace says how to reach it.
  out.counter_wall_clock = id.knows_wall_clock() && !counters.empty();
  const std::int64_t offset = out.counter_wall_clock ? id.wall_offset_ns() : 0;
  for (const auto& [name, envelope] : counters) {
    auto& samples = out.counters[name];
    samples = envelope.samples();
    for (auto& sample : samples) {
      if (__builtin_add_overflow(sample.first, offset, &sample.first)) sample.first = INT64_MAX;
    }
  }
  return out;
}

}  // namespace regiontrace::cli
