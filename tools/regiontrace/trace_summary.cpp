#include "trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "dom_json_writer.hpp"
#include "json_number_repair.hpp"
#include "regiontrace/sdk/span_nesting.hpp"
#include "step_span.hpp"
#include "trace_event_stream.hpp"
#include "trace_identity.hpp"

namespace regiontrace::cli {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

enum class Group : std::uint8_t { kRegion, kOp, kGpu };

constexpr std::int64_t kNoStep = INT64_MIN;
constexpr std::uint32_t kNoPath = UINT32_MAX;

// Times in integer nanoseconds: the sink writes microseconds with three
// decimals from integer nanoseconds, so this reads them back exactly and
// sums them as the sink's own summary does.
struct Span {
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;
  std::uint32_t name = 0;  // index into SpanCollector::name_info_
  bool region = false;
  std::int64_t self_ns = 0;
  std::int64_t step = kNoStep;   // args.step
  std::uint32_t path = kNoPath;  // args.path, index into SpanCollector::paths_
};

// What a span's args say by the conventions (region spans only).
struct SpanArgs {
  std::optional<std::string_view> region;
  std::optional<std::string_view> path;
  std::int64_t step = kNoStep;
};

struct StepSpan {
  std::int64_t ts_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t step = 0;
};

std::int64_t to_ns(double us) {
  return std::llround(us * 1000.0);
}

constexpr std::string_view kRegionMarker = "region::";

class SpanCollector {
 public:
  explicit SpanCollector(const SummaryOptions& options) : options_(options) {}

  TraceSummary run(const ChromeTrace& trace) {
    for (element e : trace.events()) {
      object event;
      if (e.get_object().get(event)) continue;
      ++summary_.events;
      collect(event);
    }
    return finish();
  }

  // One event at a time: memory holds the spans (their times and name
  // indices), never the document.
  TraceSummary run(TraceEventStream& stream) {
    simdjson::dom::parser parser;
    std::string_view text;
    while (stream.next(text)) {
      element e;
      if (parser.parse(text.data(), text.size()).get(e)) {
        // The stream accepted it, repaired: numbers simdjson cannot hold.
        const std::string repaired = repair_json_numbers(text);
        if (parser.parse(repaired).get(e)) continue;
      }
      object event;
      if (e.get_object().get(event)) {
        throw std::runtime_error(stream.path() + ": event " + std::to_string(summary_.events) +
                                 " is not an object: not a Chrome trace (its events are objects "
                                 "such as {\"name\":..., \"ph\":\"X\", \"ts\":...})");
      }
      ++summary_.events;
      collect(event);
    }
    return finish();
  }

 private:
  TraceSummary finish() {
    for (auto& [thread, stack] : open_) summary_.unmatched += stack.size();
    summary_.processes = pids_.size();
    summary_.threads = threads_.size();
    if (!seen_time_) summary_.first_us = summary_.last_us = 0;
    for (auto& spans : threads_) nest(spans);
    aggregate();
    for (const auto& info : name_info_) {
      if (info.group == Group::kRegion) summary_.region_names.push_back(info.name);
    }
    std::sort(summary_.region_names.begin(), summary_.region_names.end());
    if (options_.by_step) by_step();
    if (!options_.inside.empty()) inside();
    return std::move(summary_);
  }

  struct Open {
    double ts;
    std::string name;
    std::string category;
  };

  std::size_t thread_of(object event) {
    std::string pid;
    std::string tid;
    element v;
    if (!event["pid"].get(v)) append_json(pid, v);
    if (!event["tid"].get(v)) append_json(tid, v);
    pids_.insert(pid);
    auto [it, added] = thread_index_.emplace(pid + "/" + tid, threads_.size());
    if (added) {
      threads_.emplace_back();
      thread_pid_.push_back(pid);
    }
    return it->second;
  }

  void see_time(double begin, double end) {
    if (!seen_time_) {
      summary_.first_us = begin;
      summary_.last_us = end;
      seen_time_ = true;
    }
    summary_.first_us = std::min(summary_.first_us, begin);
    summary_.last_us = std::max(summary_.last_us, end);
  }

  void collect(object event) {
    const auto ph = string_field(event, "ph");
    if (!ph || *ph == "M") return;
    const auto ts = number_field(event, "ts");
    if (ts) see_time(*ts, *ts);
    if (*ph == "X") {
      const auto dur = number_field(event, "dur");
      if (!ts || !dur || *dur < 0) return;
      SpanArgs args;
      object a;
      if (!event["args"].get_object().get(a)) {
        args.region = string_field(a, "region");
        args.path = string_field(a, "path");
        if (auto step = integer_field(a, "step")) args.step = *step;
      }
      add_span(thread_of(event), *ts, *dur, string_field(event, "name").value_or(""),
               string_field(event, "cat").value_or(""), args);
    } else if (*ph == "B" && ts) {
      open_[thread_of(event)].push_back({*ts, std::string(string_field(event, "name").value_or("")),
                                         std::string(string_field(event, "cat").value_or(""))});
    } else if (*ph == "E" && ts) {
      auto& stack = open_[thread_of(event)];
      if (stack.empty()) {
        ++summary_.unmatched;
        return;
      }
      const Open begin = std::move(stack.back());
      stack.pop_back();
      add_span(thread_of(event), begin.ts, std::max(0.0, *ts - begin.ts), begin.name,
               begin.category, SpanArgs{});
    }
  }

  void add_span(std::size_t thread, double ts, double dur, std::string_view name,
                std::string_view category, const SpanArgs& args) {
    if (category == "gpu_user_annotation") return;
    see_time(ts, ts + dur);
    if (is_step_span(category, name)) {
      const std::int64_t step =
          args.step != kNoStep ? args.step : step_of_step_name(name).value_or(kNoStep);
      if (step != kNoStep) {
        step_spans_[thread_pid_[thread]].push_back({to_ns(ts), to_ns(ts + dur), step});
        return;
      }
    }
    const Group group = group_of(name, category, args);
    std::string key;
    if (group != Group::kRegion) {
      key = std::string(name);
    } else if (args.region) {
      key = std::string(*args.region);
    } else if (name.find(kRegionMarker) != std::string_view::npos) {
      key = std::string(name.substr(name.find(kRegionMarker) + kRegionMarker.size()));
    } else {
      key = std::string(name);
    }
    key.insert(0, 1, static_cast<char>('0' + static_cast<int>(group)));
    auto [it, added] = name_index_.emplace(key, static_cast<std::uint32_t>(name_info_.size()));
    if (added) name_info_.push_back({key.substr(1), std::string(category), group});
    ++summary_.spans;
    Span span{to_ns(ts), to_ns(dur), it->second, group == Group::kRegion, 0, args.step, kNoPath};
    if (args.path) {
      auto [p, fresh] =
          path_index_.emplace(std::string(*args.path), static_cast<std::uint32_t>(paths_.size()));
      if (fresh) paths_.push_back(p->first);
      span.path = p->second;
    }
    threads_[thread].push_back(span);
  }

  static Group group_of(std::string_view name, std::string_view category, const SpanArgs& args) {
    if (category == "kernel" || category.rfind("gpu_", 0) == 0) return Group::kGpu;
    if (args.region || category == "region") return Group::kRegion;
    if (name.find(kRegionMarker) != std::string_view::npos) return Group::kRegion;
    return Group::kOp;
  }

  // The step a span ran in: its own, else the step span of its process around it.
  std::int64_t step_of(std::size_t thread, const Span& s) const {
    if (s.step != kNoStep) return s.step;
    auto found = step_spans_.find(thread_pid_[thread]);
    if (found == step_spans_.end()) return kNoStep;
    for (const StepSpan& st : found->second) {
      if (s.ts_ns >= st.ts_ns && s.ts_ns < st.end_ns) return st.step;
    }
    return kNoStep;
  }

  static void add_to(SpanTotals& t, std::int64_t dur_ns, std::int64_t self_ns) {
    if (t.calls == 0) t.min_us = t.max_us = dur_ns / 1e3;
    ++t.calls;
    t.total_us += dur_ns / 1e3;
    t.self_us += self_ns / 1e3;
    t.min_us = std::min(t.min_us, dur_ns / 1e3);
    t.max_us = std::max(t.max_us, dur_ns / 1e3);
  }

  void by_step() {
    struct Acc {
      std::map<std::uint32_t, SpanTotals> regions;
      std::int64_t first = INT64_MAX;
      std::int64_t last = INT64_MIN;
      std::map<std::string, std::int64_t> step_span_ns;  // pid -> the step span's length
    };
    std::map<std::int64_t, Acc> steps;
    for (const auto& [pid, list] : step_spans_) {
      for (const StepSpan& st : list) steps[st.step].step_span_ns[pid] += st.end_ns - st.ts_ns;
    }
    for (std::size_t t = 0; t < threads_.size(); ++t) {
      for (const Span& s : threads_[t]) {
        if (!s.region) continue;
        const std::int64_t step = step_of(t, s);
        if (step == kNoStep) continue;
        Acc& acc = steps[step];
        SpanTotals& row = acc.regions[s.name];
        row.name = name_info_[s.name].name;
        row.category = name_info_[s.name].category;
        add_to(row, s.dur_ns, s.self_ns);
        acc.first = std::min(acc.first, s.ts_ns);
        acc.last = std::max(acc.last, s.ts_ns + s.dur_ns);
      }
    }
    for (auto& [step, acc] : steps) {
      StepTotals out;
      out.step = step;
      if (!acc.step_span_ns.empty()) {
        // Processes run a step side by side: the longest one is its wall time.
        std::int64_t longest = 0;
        for (const auto& [pid, ns] : acc.step_span_ns) longest = std::max(longest, ns);
        out.wall_us = longest / 1e3;
        out.from_step_span = true;
      } else if (acc.last >= acc.first) {
        out.wall_us = (acc.last - acc.first) / 1e3;
      }
      for (auto& [index, row] : acc.regions) out.regions.push_back(std::move(row));
      summary_.steps.push_back(std::move(out));
    }
  }

  void inside() {
    const std::string& wanted = options_.inside;
    InsideTotals out;
    out.region = wanted;
    std::map<std::uint32_t, SpanTotals> ops;
    for (const auto& spans : threads_) {
      // The region's spans on this thread, as disjoint intervals (a region
      // that recurses counts once).
      std::vector<std::pair<std::int64_t, std::int64_t>> within;
      for (const Span& s : spans) {
        if (!s.region) continue;
        const bool match =
            name_info_[s.name].name == wanted || (s.path != kNoPath && paths_[s.path] == wanted);
        if (!match) continue;
        ++out.region_spans;
        within.emplace_back(s.ts_ns, s.ts_ns + s.dur_ns);
      }
      if (within.empty()) continue;
      std::sort(within.begin(), within.end());
      std::vector<std::pair<std::int64_t, std::int64_t>> merged;
      for (const auto& w : within) {
        if (!merged.empty() && w.first <= merged.back().second) {
          merged.back().second = std::max(merged.back().second, w.second);
        } else {
          merged.push_back(w);
        }
      }
      for (const auto& m : merged) out.region_total_us += (m.second - m.first) / 1e3;
      for (const Span& s : spans) {
        if (s.region || name_info_[s.name].group != Group::kOp) continue;
        auto it = std::upper_bound(merged.begin(), merged.end(), s.ts_ns,
                                   [](std::int64_t t, const auto& m) { return t < m.first; });
        if (it == merged.begin() || s.ts_ns >= std::prev(it)->second) continue;
        SpanTotals& row = ops[s.name];
        row.name = name_info_[s.name].name;
        row.category = name_info_[s.name].category;
        add_to(row, s.dur_ns, s.self_ns);
      }
    }
    if (out.region_spans == 0) return;
    for (auto& [index, row] : ops) out.ops.push_back(std::move(row));
    summary_.inside = std::move(out);
  }

  // The nesting rule and self time the torch_profiler sink's summary uses.
  static void nest(std::vector<Span>& spans) {
    std::vector<nesting::Span> in;
    in.reserve(spans.size());
    for (const Span& s : spans) in.push_back({s.ts_ns, s.ts_ns + s.dur_ns, s.region});
    const nesting::Nested n = nesting::nest(in);
    for (std::size_t i = 0; i < spans.size(); ++i) spans[i].self_ns = n.self[i];
  }

  void aggregate() {
    std::vector<SpanTotals> totals(name_info_.size());
    std::vector<std::int64_t> total_ns(name_info_.size(), 0);
    std::vector<std::int64_t> self_ns(name_info_.size(), 0);
    for (std::size_t i = 0; i < name_info_.size(); ++i) {
      totals[i].name = name_info_[i].name;
      totals[i].category = name_info_[i].category;
      totals[i].min_us = std::numeric_limits<double>::infinity();
    }
    for (const auto& spans : threads_) {
      for (const Span& s : spans) {
        SpanTotals& t = totals[s.name];
        ++t.calls;
        total_ns[s.name] += s.dur_ns;
        self_ns[s.name] += s.self_ns;
        t.min_us = std::min(t.min_us, s.dur_ns / 1e3);
        t.max_us = std::max(t.max_us, s.dur_ns / 1e3);
      }
    }
    for (std::size_t i = 0; i < totals.size(); ++i) {
      totals[i].total_us = total_ns[i] / 1e3;
      totals[i].self_us = self_ns[i] / 1e3;
    }
    for (std::size_t i = 0; i < totals.size(); ++i) {
      switch (name_info_[i].group) {
        case Group::kRegion:
          summary_.regions.push_back(std::move(totals[i]));
          break;
        case Group::kOp:
          summary_.ops.push_back(std::move(totals[i]));
          break;
        case Group::kGpu:
          summary_.gpu.push_back(std::move(totals[i]));
          break;
      }
    }
  }

  struct NameInfo {
    std::string name;
    std::string category;
    Group group;
  };

  const SummaryOptions& options_;
  TraceSummary summary_;
  bool seen_time_ = false;
  std::vector<std::string> thread_pid_;                      // thread index -> pid (JSON text)
  std::map<std::string, std::vector<StepSpan>> step_spans_;  // pid -> step spans
  std::unordered_map<std::string, std::uint32_t> path_index_;
  std::vector<std::string> paths_;
  std::set<std::string> pids_;
  std::unordered_map<std::string, std::size_t> thread_index_;
  std::vector<std::vector<Span>> threads_;
  std::map<std::size_t, std::vector<Open>> open_;
  std::unordered_map<std::string, std::uint32_t> name_index_;  // group digit + name
  std::vector<NameInfo> name_info_;
};

}  // namespace

TraceSummary summarize_trace(const ChromeTrace& trace, const SummaryOptions& options) {
  return SpanCollector(options).run(trace);
}

TraceSummary summarize_trace_file(const std::string& path, const SummaryOptions& options) {
  TraceEventStream stream(path, /*allow_non_finite=*/true);
  TraceSummary summary = SpanCollector(options).run(stream);
  summary.unfinished = unfinished_note(path, identify_trace(path, stream.members()));
  return summary;
}

}  // namespace regiontrace::cli
