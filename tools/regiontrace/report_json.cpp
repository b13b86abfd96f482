#include <string>

#include "regiontrace/sdk/json_writer.hpp"
#include "report_output.hpp"

namespace regiontrace::cli {
namespace {

void write_step(json::Writer& w, std::int64_t step) {
  if (step == kWholeRun) {
    w.value(nullptr);
  } else {
    w.value(step);
  }
}

// {"<rank>": value, ...}: JSON keys are strings.
template <typename Map>
void write_per_rank(json::Writer& w, const Map& values) {
  w.begin_object();
  for (const auto& [rank, v] : values) w.field(std::to_string(rank), v);
  w.end_object();
}

void write_spread(json::Writer& w, const RankSpread& s, const std::string& unit) {
  w.begin_object().key("step");
  write_step(w, s.step);
  w.key("per_rank");
  write_per_rank(w, s.values);
  w.field("min" + unit, s.min)
      .field("median" + unit, s.median)
      .field("max" + unit, s.max)
      .field("mean" + unit, s.mean)
      .field("wait" + unit, s.wait)
      .field("slowest_rank", s.slowest_rank)
      .field("imbalance", s.imbalance)
      .end_object();
}

void write_slower_ops(json::Writer& w, const Straggler& s) {
  if (!s.ops_compared) return;
  w.field("ops_fastest_rank", s.ops_fastest_rank).key("slower_ops").begin_array();
  for (const OpDelta& d : s.slower_ops) {
    w.begin_object()
        .field("op", d.op)
        .field("rank_ms", d.rank_ms)
        .field("fastest_ms", d.fastest_ms)
        .field("others_median_ms", d.others_median_ms)
        .field("added_ms", d.added_ms)
        .end_object();
  }
  w.end_array();
}

// The members every straggler has, in the region's list and the top-level one.
void write_straggler_members(json::Writer& w, const Straggler& s, const std::string& unit) {
  w.field("rank", s.rank)
      .field("slow_steps", s.slow_steps)
      .field("steps", s.steps)
      .field("median_excess" + unit, s.median_excess)
      .field("excess_over_fastest" + unit, s.fastest_excess)
      .key("fastest_rank");
  if (s.fastest_rank) {
    w.value(*s.fastest_rank);
  } else {
    w.value(nullptr);
  }
  write_slower_ops(w, s);
}

void write_stragglers(json::Writer& w, const std::vector<Straggler>& list,
                      const std::string& unit) {
  w.begin_array();
  for (const Straggler& s : list) {
    w.begin_object();
    write_straggler_members(w, s, unit);
    w.end_object();
  }
  w.end_array();
}

}  // namespace

std::string report_json(const Report& report) {
  std::string o;
  json::Writer w(o);
  w.begin_object()
      .key("criteria")
      .begin_object()
      .field("threshold", report.criteria.threshold)
      .field("min_excess_ms", report.criteria.min_excess_ms)
      .field("share", report.criteria.share)
      .end_object()
      .key("ranks")
      .begin_array();
  for (const auto rank : report.ranks) w.value(rank);
  w.end_array().key("oversubscribed").begin_array();
  for (const auto& o : report.oversubscribed) {
    w.begin_object().field("host", o.host).field("cpus", o.cpus).key("ranks").begin_array();
    for (const auto rank : o.ranks) w.value(rank);
    w.end_array().end_object();
  }
  w.end_array().key("sources").begin_array();
  for (const auto& s : report.sources) {
    w.begin_object()
        .field("rank", s.rank)
        .field("rank_from", s.rank_from)
        .field("source", s.source)
        .field("sink", s.sink)
        .field("region_spans", s.region_spans)
        .field("used", s.used)
        .end_object();
  }
  w.end_array().key("regions").begin_array();
  for (const auto& r : report.regions) {
    w.begin_object().field("region", r.region).key("steps").begin_array();
    for (const RankSpread& step : r.steps) write_spread(w, step, "_ms");
    w.end_array().key("total");
    write_spread(w, r.total, "_ms");
    w.key("stragglers");
    write_stragglers(w, r.stragglers, "_ms");
    w.key("excess_over_fastest_ms");
    write_per_rank(w, r.excess_over_fastest);
    w.end_object();
  }
  w.end_array().key("stragglers").begin_array();
  for (const auto& r : report.regions) {
    for (const auto& s : r.stragglers) {
      w.begin_object().field("region", r.region);
      write_straggler_members(w, s, "_ms");
      w.end_object();
    }
  }
  w.end_array().key("memory").begin_array();
  for (const auto& m : report.memory) {
    w.begin_object().field("region", m.region).field("device", m.device).key("peaks");
    write_spread(w, m.peaks, "_bytes");
    w.key("outliers");
    write_stragglers(w, m.outliers, "_bytes");
    w.end_object();
  }
  w.end_array().end_object();
  return o + "\n";
}

}  // namespace regiontrace::cli
