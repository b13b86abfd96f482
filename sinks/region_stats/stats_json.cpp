#include "stats_json.hpp"

#include <map>

namespace regiontrace::region_stats {
namespace {

void totals_fields(json::Writer& w, const RegionTotals& t) {
  w.field("count", t.count)
      .field("total_ns", t.total_ns)
      .field("self_ns", t.self_ns)
      .field("mean_ns", t.mean_ns())
      .field("min_ns", t.min_or_zero())
      .field("max_ns", t.max_ns);
}

void region_object(json::Writer& w, const PathSummary& p, bool with_threads) {
  w.begin_object().field("path", p.path).field("name", p.name).field("depth", p.depth);
  if (with_threads) w.field("threads", static_cast<std::uint64_t>(p.threads));
  totals_fields(w, p.totals);
  w.field("p50_ns", p.percentile(0.5))
      .field("p90_ns", p.percentile(0.9))
      .field("p99_ns", p.percentile(0.99));
  w.end_object();
}

}  // namespace

std::string stats_json(const StatsReport& report, const JsonExtras& extras) {
  std::string out;
  json::Writer w(out);
  w.begin_object()
      .field("schemaVersion", 1)
      .field("sink", "region_stats")
      .field("rank", report.rank)
      .field("pid", static_cast<std::int64_t>(report.pid))
      .field("wall_ns", report.wall_ns);
  if (extras.incomplete) w.field("incomplete", true);
  w.key("histogram")
      .begin_object()
      .field("kind", "log-linear")
      .field("relative_error", LogBuckets::kRelativeError)
      .field("max_trackable_ns", LogBuckets::kMaxTrackableNs)
      .end_object();
  w.key("regions").begin_array();
  for (const PathSummary& p : report.regions) region_object(w, p, true);
  w.end_array();
  // Threads that ended long ago are only in "regions" (memory stays bounded
  // however many threads a run makes); how many, here.
  w.field("threads_folded", report.threads_folded);
  w.key("threads").begin_array();
  for (const auto& [id, regions] : report.threads) {
    w.begin_object().field("thread_id", id).key("regions").begin_array();
    for (const PathSummary& p : regions) region_object(w, p, false);
    w.end_array().end_object();
  }
  w.end_array();

  std::map<std::int64_t, const StepSpan*> spans;
  for (const StepSpan& s : report.step_spans) spans[s.step] = &s;
  w.key("steps")
      .begin_object()
      .field("max_steps", static_cast<std::uint64_t>(report.max_steps))
      .field("steps_seen", report.steps_seen);
  w.key("kept").begin_array();
  for (std::int64_t step : report.kept_steps()) {
    w.begin_object().field("step", step);
    auto span = spans.find(step);
    if (span != spans.end() && span->second->end_ns != 0) {
      w.field("wall_ns", span->second->end_ns - span->second->begin_ns);
    }
    w.key("regions").begin_array();
    for (const PathSummary& p : report.regions) {
      auto it = p.steps.find(step);
      if (it == p.steps.end()) continue;
      w.begin_object().field("path", p.path).field("name", p.name).field("depth", p.depth);
      totals_fields(w, it->second);
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();

  w.key("prometheus").begin_object();
  w.field("listen", extras.prometheus_listen).field("textfile", extras.prometheus_textfile);
  w.key("buckets_s").begin_array();
  for (double b : extras.prometheus_buckets) w.value(b);
  w.end_array().end_object();
  w.end_object();

  if (extras.context != nullptr) {
    std::string meta;
    sdk::clock_sync::append_trace_metadata(meta, *extras.context, "region_stats", extras.start,
                                           extras.end);
    out.insert(1, meta + ",");
  }
  out += '\n';
  return out;
}

}  // namespace regiontrace::region_stats
