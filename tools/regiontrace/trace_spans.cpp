#include "trace_spans.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "regiontrace/sdk/span_nesting.hpp"
#include "step_span.hpp"
#include "trace_event_reader.hpp"
#include "trace_identity.hpp"

namespace regiontrace::cli {
namespace {

constexpr std::string_view kRegionMarker = "region::";

SpanGroup group_of(std::string_view name, std::string_view category, const SpanArgs& args) {
  if (category == "kernel" || category.rfind("gpu_", 0) == 0) return SpanGroup::kGpu;
  if (args.region || category == "region") return SpanGroup::kRegion;
  if (name.find(kRegionMarker) != std::string_view::npos) return SpanGroup::kRegion;
  return SpanGroup::kOp;
}

// What a span is reported as: a region by its region's name, else its own.
std::string_view key_of(std::string_view name, SpanGroup group, const SpanArgs& args) {
  if (group != SpanGroup::kRegion) return name;
  if (args.region) return *args.region;
  const auto at = name.find(kRegionMarker);
  if (at != std::string_view::npos) return name.substr(at + kRegionMarker.size());
  return name;
}

class SpanCollector {
 public:
  TraceSpans run(TraceEventReader& reader) {
    TraceEvent event;
    while (reader.next(event)) {
      ++out_.events;
      collect(event);
    }
    for (auto& [thread, stack] : open_) out_.unmatched += stack.size();
    out_.processes = pids_.size();
    if (!seen_time_) out_.first_ns = out_.last_ns = 0;
    for (auto& spans : out_.threads) nest_spans(spans);
    return std::move(out_);
  }

 private:
  struct Open {
    std::int64_t ts_ns;
    std::string name;
    std::string category;
  };

  std::size_t thread_of(const TraceEvent& event) {
    const std::string pid(event.pid);
    pids_.insert(pid);
    std::string key = pid;
    key += '/';
    key += event.tid;
    auto [it, added] = thread_index_.emplace(std::move(key), out_.threads.size());
    if (added) {
      out_.threads.emplace_back();
      out_.thread_pid.push_back(pid);
    }
    return it->second;
  }

  void see_time(std::int64_t begin, std::int64_t end) {
    if (!seen_time_) {
      out_.first_ns = begin;
      out_.last_ns = end;
      seen_time_ = true;
    }
    out_.first_ns = std::min(out_.first_ns, begin);
    out_.last_ns = std::max(out_.last_ns, end);
  }

  void collect(const TraceEvent& event) {
    if (event.phase.empty() || event.phase == "M") return;
    const auto ts = event.ts_ns;
    if (ts) see_time(*ts, *ts);
    if (event.phase == "X") {
      if (!ts || !event.dur_ns || *event.dur_ns < 0) return;
      add_span(thread_of(event), *ts, *event.dur_ns, event.name, event.category,
               span_args(event.args), false);
    } else if (event.phase == "B" && ts) {
      open_[thread_of(event)].push_back(
          {*ts, std::string(event.name), std::string(event.category)});
    } else if (event.phase == "E" && ts) {
      auto& stack = open_[thread_of(event)];
      if (stack.empty()) {
        ++out_.unmatched;
        return;
      }
      const Open begin = std::move(stack.back());
      stack.pop_back();
      add_span(thread_of(event), begin.ts_ns, std::max<std::int64_t>(0, *ts - begin.ts_ns),
               begin.name, begin.category, SpanArgs{}, true);
    }
  }

  void add_span(std::size_t thread, std::int64_t ts, std::int64_t dur, std::string_view name,
                std::string_view category, const SpanArgs& args, bool paired) {
    if (category == "gpu_user_annotation") return;
    see_time(ts, ts + dur);
    const std::int64_t step = args.step.value_or(kNoStep);
    if (is_step_span(category, name)) {
      const std::int64_t of_step =
          step != kNoStep ? step : step_of_step_name(name).value_or(kNoStep);
      if (of_step != kNoStep) {
        out_.step_spans[out_.thread_pid[thread]].push_back({ts, ts + dur, of_step});
        return;
      }
    }
    const SpanGroup group = group_of(name, category, args);
    std::string key(key_of(name, group, args));
    key.insert(0, 1, static_cast<char>('0' + static_cast<int>(group)));
    auto [it, added] = name_index_.emplace(key, static_cast<std::uint32_t>(out_.names.size()));
    if (added) out_.names.push_back({key.substr(1), std::string(category), group});
    ++out_.spans;
    Span span;
    span.ts_ns = ts;
    span.dur_ns = dur;
    span.step = step;
    span.name = it->second;
    span.region = group == SpanGroup::kRegion;
    span.paired = paired;
    if (args.path) {
      auto [p, fresh] =
          path_index_.emplace(*args.path, static_cast<std::uint32_t>(out_.paths.size()));
      if (fresh) out_.paths.push_back(p->first);
      span.path = p->second;
    }
    out_.threads[thread].push_back(span);
  }

  TraceSpans out_;
  bool seen_time_ = false;
  std::set<std::string> pids_;
  std::unordered_map<std::string, std::size_t> thread_index_;  // "pid/tid"
  std::map<std::size_t, std::vector<Open>> open_;
  std::unordered_map<std::string, std::uint32_t> name_index_;  // group digit + name
  std::unordered_map<std::string, std::uint32_t> path_index_;
};

}  // namespace

TraceSpans read_trace_spans(const std::string& path) {
  TraceEventReader reader(path, /*allow_non_finite=*/true);
  TraceSpans spans = SpanCollector().run(reader);
  spans.unfinished = unfinished_note(path, identify_trace(path, reader.members()));
  return spans;
}

void nest_spans(std::vector<Span>& spans) {
  std::vector<nesting::Span> in;
  in.reserve(spans.size());
  for (const Span& s : spans) in.push_back({s.ts_ns, s.ts_ns + s.dur_ns, s.region});
  const nesting::Nested n = nesting::nest(in);
  for (std::size_t i = 0; i < spans.size(); ++i) spans[i].self_ns = n.self[i];
}

std::int64_t step_of(const TraceSpans& trace, std::size_t thread, const Span& span) {
  if (span.step != kNoStep) return span.step;
  auto found = trace.step_spans.find(trace.thread_pid[thread]);
  if (found == trace.step_spans.end()) return kNoStep;
  for (const StepSpan& st : found->second) {
    if (span.ts_ns >= st.ts_ns && span.ts_ns < st.end_ns) return st.step;
  }
  return kNoStep;
}

}  // namespace regiontrace::cli
