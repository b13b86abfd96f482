#include "rank_region_times.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <vector>

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

}  // namespace

RankRegionTimes read_rank_region_times(const std::string& path) {
  RankRegionTimes out;
  out.source = path;
  TraceEventStream stream(path);
  EventFields e;
  EventFields args;
  std::vector<Span> spans;
  std::map<std::string, StepIntervals> steps;  // pid -> step spans
  std::string_view text;
  std::size_t elements = 0;
  std::size_t events = 0;  // elements with a phase: Chrome trace events
  while (stream.next(text)) {
    ++elements;
    if (!e.parse(text)) continue;
    const auto phase = e.string("ph");
    if (phase) ++events;
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
  const TraceIdentity id = identify_trace(path, stream.members());
  out.rank = id.rank;
  out.rank_from = id.rank_from;
  out.sink = id.sink;
  out.unfinished = unfinished_note(path, id);
  out.host = id.host;
  out.cpus = id.cpus;
  return out;
}

}  // namespace regiontrace::cli
