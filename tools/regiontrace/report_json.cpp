#include "regiontrace/sdk/json_writer.hpp"
#include "report_output.hpp"

namespace regiontrace::cli {
namespace {

void append_step(std::string& o, std::int64_t step) {
  if (step == kWholeRun) {
    o += "null";
  } else {
    json::append_int(o, step);
  }
}

void append_spread(std::string& o, const RankSpread& s, const char* unit) {
  o += "{\"step\":";
  append_step(o, s.step);
  o += ",\"per_rank\":{";
  bool first = true;
  for (const auto& [rank, v] : s.values) {
    if (!first) o += ',';
    first = false;
    o += '"';
    json::append_int(o, rank);
    o += "\":";
    json::append_double(o, v);
  }
  o += '}';
  for (auto [key, v] : {std::pair<const char*, double>{"min", s.min},
                        {"median", s.median},
                        {"max", s.max},
                        {"mean", s.mean},
                        {"wait", s.wait}}) {
    o += ",\"";
    o += key;
    o += unit;
    o += "\":";
    json::append_double(o, v);
  }
  o += ",\"slowest_rank\":";
  json::append_int(o, s.slowest_rank);
  o += ",\"imbalance\":";
  json::append_double(o, s.imbalance);
  o += '}';
}

void append_slower_ops(std::string& o, const Straggler& s) {
  if (!s.ops_compared) return;
  o += ",\"ops_fastest_rank\":";
  json::append_int(o, s.ops_fastest_rank);
  o += ",\"slower_ops\":[";
  for (std::size_t i = 0; i < s.slower_ops.size(); ++i) {
    const OpDelta& d = s.slower_ops[i];
    if (i > 0) o += ',';
    o += "{\"op\":";
    json::append_escaped(o, d.op);
    for (auto [key, v] : {std::pair<const char*, double>{"rank_ms", d.rank_ms},
                          {"fastest_ms", d.fastest_ms},
                          {"others_median_ms", d.others_median_ms},
                          {"added_ms", d.added_ms}}) {
      o += ",\"";
      o += key;
      o += "\":";
      json::append_double(o, v);
    }
    o += '}';
  }
  o += ']';
}

// The members every straggler has, in the region's list and the top-level one.
void append_straggler_members(std::string& o, const Straggler& s, const char* unit) {
  o += "\"rank\":";
  json::append_int(o, s.rank);
  o += ",\"slow_steps\":";
  json::append_uint(o, s.slow_steps);
  o += ",\"steps\":";
  json::append_uint(o, s.steps);
  o += ",\"median_excess";
  o += unit;
  o += "\":";
  json::append_double(o, s.median_excess);
  o += ",\"excess_over_fastest";
  o += unit;
  o += "\":";
  json::append_double(o, s.fastest_excess);
  o += ",\"fastest_rank\":";
  if (s.fastest_rank) {
    json::append_int(o, *s.fastest_rank);
  } else {
    o += "null";
  }
  append_slower_ops(o, s);
}

void append_stragglers(std::string& o, const std::vector<Straggler>& list, const char* unit) {
  o += '[';
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) o += ',';
    o += '{';
    append_straggler_members(o, list[i], unit);
    o += '}';
  }
  o += ']';
}

}  // namespace

std::string report_json(const Report& report) {
  std::string o = "{\"criteria\":{\"threshold\":";
  json::append_double(o, report.criteria.threshold);
  o += ",\"min_excess_ms\":";
  json::append_double(o, report.criteria.min_excess_ms);
  o += ",\"share\":";
  json::append_double(o, report.criteria.share);
  o += "},\"ranks\":[";
  for (std::size_t i = 0; i < report.ranks.size(); ++i) {
    if (i > 0) o += ',';
    json::append_int(o, report.ranks[i]);
  }
  o += "],\"sources\":[";
  for (std::size_t i = 0; i < report.sources.size(); ++i) {
    const auto& s = report.sources[i];
    if (i > 0) o += ',';
    o += "{\"rank\":";
    json::append_int(o, s.rank);
    o += ",\"rank_from\":";
    json::append_escaped(o, s.rank_from);
    o += ",\"source\":";
    json::append_escaped(o, s.source);
    o += ",\"sink\":";
    json::append_escaped(o, s.sink);
    o += ",\"region_spans\":";
    json::append_uint(o, s.region_spans);
    o += ",\"used\":";
    o += s.used ? "true" : "false";
    o += '}';
  }
  o += "],\"regions\":[";
  for (std::size_t i = 0; i < report.regions.size(); ++i) {
    const auto& r = report.regions[i];
    if (i > 0) o += ',';
    o += "{\"region\":";
    json::append_escaped(o, r.region);
    o += ",\"steps\":[";
    for (std::size_t k = 0; k < r.steps.size(); ++k) {
      if (k > 0) o += ',';
      append_spread(o, r.steps[k], "_ms");
    }
    o += "],\"total\":";
    append_spread(o, r.total, "_ms");
    o += ",\"stragglers\":";
    append_stragglers(o, r.stragglers, "_ms");
    o += ",\"excess_over_fastest_ms\":{";
    bool first_rank = true;
    for (const auto& [rank, ms] : r.excess_over_fastest) {
      if (!first_rank) o += ',';
      first_rank = false;
      o += '"';
      json::append_int(o, rank);
      o += "\":";
      json::append_double(o, ms);
    }
    o += "}}";
  }
  o += "],\"stragglers\":[";
  bool first = true;
  for (const auto& r : report.regions) {
    for (const auto& s : r.stragglers) {
      if (!first) o += ',';
      first = false;
      o += "{\"region\":";
      json::append_escaped(o, r.region);
      o += ',';
      append_straggler_members(o, s, "_ms");
      o += '}';
    }
  }
  o += "],\"memory\":[";
  for (std::size_t i = 0; i < report.memory.size(); ++i) {
    const auto& m = report.memory[i];
    if (i > 0) o += ',';
    o += "{\"region\":";
    json::append_escaped(o, m.region);
    o += ",\"device\":";
    json::append_escaped(o, m.device);
    o += ",\"peaks\":";
    append_spread(o, m.peaks, "_bytes");
    o += ",\"outliers\":";
    append_stragglers(o, m.outliers, "_bytes");
    o += '}';
  }
  o += "]}\n";
  return o;
}

}  // namespace regiontrace::cli
