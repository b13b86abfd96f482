#include "trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "dom_json_writer.hpp"
#include "regiontrace/sdk/span_nesting.hpp"

namespace regiontrace::cli {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

enum class Group : std::uint8_t { kRegion, kOp, kGpu };

// Times in integer nanoseconds: the sink writes microseconds with three
// decimals from integer nanoseconds, so this reads them back exactly and
// sums them as the sink's own summary does.
struct Span {
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;
  std::uint32_t name = 0;  // index into SpanCollector::name_info_
  bool region = false;
  std::int64_t self_ns = 0;
};

std::int64_t to_ns(double us) {
  return std::llround(us * 1000.0);
}

constexpr std::string_view kRegionMarker = ".region::";

class SpanCollector {
 public:
  TraceSummary run(const ChromeTrace& trace) {
    for (element e : trace.events()) {
      object event;
      if (e.get_object().get(event)) continue;
      ++summary_.events;
      collect(event);
    }
    for (auto& [thread, stack] : open_) summary_.unmatched += stack.size();
    summary_.processes = pids_.size();
    summary_.threads = threads_.size();
    if (!seen_time_) summary_.first_us = summary_.last_us = 0;
    for (auto& spans : threads_) nest(spans);
    aggregate();
    return std::move(summary_);
  }

 private:
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
    if (added) threads_.emplace_back();
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
      add_span(thread_of(event), *ts, *dur, string_field(event, "name").value_or(""),
               string_field(event, "cat").value_or(""));
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
               begin.category);
    }
  }

  void add_span(std::size_t thread, double ts, double dur, std::string_view name,
                std::string_view category) {
    if (category == "gpu_user_annotation") return;
    see_time(ts, ts + dur);
    const Group group = group_of(name, category);
    std::string key =
        name.find(kRegionMarker) != std::string_view::npos && group == Group::kRegion
            ? std::string(name.substr(name.find(kRegionMarker) + kRegionMarker.size()))
            : std::string(name);
    key.insert(0, 1, static_cast<char>('0' + static_cast<int>(group)));
    auto [it, added] = name_index_.emplace(key, static_cast<std::uint32_t>(name_info_.size()));
    if (added) name_info_.push_back({key.substr(1), std::string(category), group});
    ++summary_.spans;
    threads_[thread].push_back({to_ns(ts), to_ns(dur), it->second, group == Group::kRegion, 0});
  }

  static Group group_of(std::string_view name, std::string_view category) {
    if (category == "kernel" || category.rfind("gpu_", 0) == 0) return Group::kGpu;
    if (name.find(kRegionMarker) != std::string_view::npos) return Group::kRegion;
    return Group::kOp;
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

  TraceSummary summary_;
  bool seen_time_ = false;
  std::set<std::string> pids_;
  std::unordered_map<std::string, std::size_t> thread_index_;
  std::vector<std::vector<Span>> threads_;
  std::map<std::size_t, std::vector<Open>> open_;
  std::unordered_map<std::string, std::uint32_t> name_index_;  // group digit + name
  std::vector<NameInfo> name_info_;
};

}  // namespace

TraceSummary summarize_trace(const ChromeTrace& trace) {
  return SpanCollector().run(trace);
}

}  // namespace regiontrace::cli
