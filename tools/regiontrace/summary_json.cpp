#include <algorithm>

#include "regiontrace/sdk/json_writer.hpp"
#include "summary_output.hpp"

namespace regiontrace::cli {
namespace {

void write_rows(json::Writer& w, const std::vector<SpanTotals>& rows, std::size_t top) {
  const std::size_t shown = top == 0 ? rows.size() : std::min(top, rows.size());
  w.begin_array();
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = rows[i];
    w.begin_object()
        .field("name", r.name)
        .field("category", r.category)
        .field("calls", r.calls)
        .field("total_us", r.total_us)
        .field("self_us", r.self_us)
        .field("avg_us", r.total_us / static_cast<double>(r.calls))
        .field("min_us", r.min_us)
        .field("max_us", r.max_us)
        .end_object();
  }
  w.end_array();
}

void write_steps(json::Writer& w, const std::vector<StepTotals>& steps, std::size_t top) {
  w.begin_array();
  for (const StepTotals& step : steps) {
    w.begin_object()
        .field("step", step.step)
        .field("wall_us", step.wall_us)
        .field("wall_from", step.from_step_span ? "step span" : "region spans")
        .key("regions");
    write_rows(w, step.regions, top);
    w.end_object();
  }
  w.end_array();
}

}  // namespace

std::string summary_json(const TraceSummary& s, const SummaryView& args) {
  std::string o;
  json::Writer w(o);
  w.begin_object()
      .field("trace", args.path)
      .field("incomplete", !s.unfinished.empty())
      .field("events", s.events)
      .field("spans", s.spans)
      .field("processes", s.processes)
      .field("threads", s.threads)
      .field("unmatched", s.unmatched)
      .field("wall_us", s.wall_us)
      .key("regions");
  write_rows(w, s.regions, args.top);
  w.key("ops");
  write_rows(w, s.ops, args.top);
  w.key("gpu");
  write_rows(w, s.gpu, args.top);
  if (args.by_step) {
    w.key("steps");
    write_steps(w, s.steps, args.top);
  }
  if (s.inside) {
    w.key("inside")
        .begin_object()
        .field("region", s.inside->region)
        .field("region_spans", s.inside->region_spans)
        .field("region_total_us", s.inside->region_total_us)
        .key("ops");
    write_rows(w, s.inside->ops, args.top);
    w.end_object();
  }
  w.end_object();
  o += '\n';
  return o;
}

}  // namespace regiontrace::cli
