#include "step_cut.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "dom_json_writer.hpp"
#include "event_fields.hpp"
#include "regiontrace/sdk/chrome_trace_writer.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "step_overlap.hpp"
#include "step_span.hpp"

namespace regiontrace::cli {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

std::int64_t to_ns(double us) {
  return std::llround(us * 1000.0);
}

std::string json_text(object event, std::string_view key) {
  std::string text;
  element v;
  if (!event[key].get(v)) append_json(text, v);
  return text;
}

struct SpanText {
  std::string_view name;
  std::string_view category;
  std::string pid;  // as JSON text
  std::string tid;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<std::string_view> region;
  std::optional<std::string_view> path;
  std::optional<std::int64_t> step;
};

class StepCutter {
 public:
  explicit StepCutter(const ChromeTrace& trace) : trace_(trace) {}

  std::optional<std::string> run() {
    for (element e : trace_.events()) {
      object event;
      if (e.get_object().get(event) || string_field(event, "ph") != "X") continue;
      const auto step = step_of_step_span(event);
      const auto ts = number_field(event, "ts");
      const auto dur = number_field(event, "dur");
      if (!step || !ts || !dur || *dur < 0) continue;
      steps_[json_text(event, "pid")].add(to_ns(*ts), to_ns(*ts + *dur), *step);
    }
    if (steps_.empty() || !find_region_threads()) return std::nullopt;
    writer_.begin_document();
    writer_.begin_events(std::nullopt);
    for (element e : trace_.events()) {
      object event;
      if (!e.get_object().get(event)) cut(event);
    }
    writer_.end_events();
    writer_.end_document();
    return std::move(out_);
  }

 private:
  static std::optional<std::int64_t> step_of_step_span(object event) {
    const std::string_view name = string_field(event, "name").value_or("");
    if (!is_step_span(string_field(event, "cat").value_or(""), name)) return std::nullopt;
    object args;
    if (!event["args"].get_object().get(args)) {
      if (auto step = integer_field(args, "step")) return step;
    }
    return step_of_step_name(name);
  }

  // The threads with region spans (only their spans can change a region's
  // steps), and whether a region span is not where summarize_trace's own
  // rule puts it: one that crosses a step boundary or its args.step's step.
  bool find_region_threads() {
    bool misplaced = false;
    for (element e : trace_.events()) {
      object event;
      if (e.get_object().get(event)) continue;
      const auto ph = string_field(event, "ph");
      if (ph != "X" && ph != "B") continue;
      const std::string_view category = string_field(event, "cat").value_or("");
      const std::string_view name = string_field(event, "name").value_or("");
      object args;
      const bool has_args = !event["args"].get_object().get(args);
      const bool region =
          category != "gpu_user_annotation" &&
          (category == "region" || name.find("region::") != std::string_view::npos ||
           (has_args && string_field(args, "region")));
      if (!region) continue;
      const std::string pid = json_text(event, "pid");
      region_threads_.insert(pid + "/" + json_text(event, "tid"));
      auto found = steps_.find(pid);
      if (misplaced || found == steps_.end()) continue;
      // B/E pairs are rare in these traces: cut rather than pair them here.
      const auto ts = number_field(event, "ts");
      const auto dur = number_field(event, "dur");
      if (ph == "B" || !ts || !dur) {
        misplaced = true;
        continue;
      }
      const std::int64_t start = to_ns(*ts);
      const std::int64_t end = to_ns(*ts + *dur);
      const std::optional<std::int64_t> declared =
          has_args ? integer_field(args, "step") : std::nullopt;
      std::size_t inside = 0;
      const std::size_t overlaps = found->second.for_each_overlap(
          start, end, [&](std::int64_t step, std::int64_t a, std::int64_t b) {
            if (a == start && b == end && (!declared || *declared == step)) ++inside;
          });
      misplaced = overlaps > 1 || (overlaps == 1 && inside == 0);
    }
    return misplaced;
  }

  void cut(object event) {
    const auto ph = string_field(event, "ph");
    const auto ts = number_field(event, "ts");
    if (!ph || !ts) return;
    const std::string_view category = string_field(event, "cat").value_or("");
    SpanText span{string_field(event, "name").value_or(""), category, json_text(event, "pid"),
                  json_text(event, "tid"), to_ns(*ts)};
    const bool step_span = *ph == "X" && step_of_step_span(event);
    if (!step_span && region_threads_.count(span.pid + "/" + span.tid) == 0) return;
    if (*ph == "X") {
      const auto dur = number_field(event, "dur");
      if (!dur || *dur < 0) return;
      span.end_ns = to_ns(*ts + *dur);
      if (auto step = step_of_step_span(event)) {
        span.step = step;
        write(span, span.start_ns, span.end_ns, span.step);
        return;
      }
      object args;
      if (!event["args"].get_object().get(args)) {
        span.region = string_field(args, "region");
        span.path = string_field(args, "path");
        span.step = integer_field(args, "step");
      }
      emit(span);
    } else if (*ph == "B") {
      open_[span.pid + "/" + span.tid].push_back(std::move(span));
    } else if (*ph == "E") {
      auto& stack = open_[span.pid + "/" + span.tid];
      if (stack.empty()) return;
      SpanText begin = std::move(stack.back());
      stack.pop_back();
      begin.end_ns = std::max(begin.start_ns, to_ns(*ts));
      emit(begin);
    }
  }

  void emit(const SpanText& span) {
    auto found = steps_.find(span.pid);
    if (found != steps_.end() &&
        found->second.for_each_overlap(span.start_ns, span.end_ns,
                                       [&](std::int64_t step, std::int64_t a, std::int64_t b) {
                                         write(span, a, b, step);
                                       }) > 0) {
      return;
    }
    write(span, span.start_ns, span.end_ns, span.step);
  }

  // pid and tid stay the JSON text the input had (a number or a string).
  void write(const SpanText& span, std::int64_t start_ns, std::int64_t end_ns,
             std::optional<std::int64_t> step) {
    json::Writer w(writer_.begin_event());
    w.begin_object().field("ph", "X").field("name", span.name).field("cat", span.category);
    if (!span.pid.empty()) w.key("pid").raw_value(span.pid);
    if (!span.tid.empty()) w.key("tid").raw_value(span.tid);
    std::string us;
    json::append_microseconds(us, start_ns);
    w.key("ts").raw_value(us);
    us.clear();
    json::append_microseconds(us, end_ns - start_ns);
    w.key("dur").raw_value(us);
    w.key("args").begin_object();
    if (span.region) w.field("region", *span.region);
    if (span.path) w.field("path", *span.path);
    if (step) w.field("step", *step);
    w.end_object().end_object();
    writer_.end_event();
  }

  const ChromeTrace& trace_;
  std::map<std::string, StepIntervals> steps_;  // pid (JSON text) -> its step spans
  std::set<std::string> region_threads_;        // "pid/tid"
  std::map<std::string, std::vector<SpanText>> open_;
  std::string out_;
  sdk::ChromeTraceWriter writer_{[this](std::string_view text) { out_ += text; }};
};

}  // namespace

std::optional<std::string> cut_spans_at_steps(const ChromeTrace& trace) {
  return StepCutter(trace).run();
}

}  // namespace regiontrace::cli
