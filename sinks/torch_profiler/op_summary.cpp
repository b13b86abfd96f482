#include "op_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/text_format.hpp"
#include "regiontrace/sdk/text_table.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "slice_times.hpp"

namespace regiontrace::torch_profiler {
namespace {

namespace json = regiontrace::json;
namespace units = sdk::units;

template <typename Key>
std::vector<OpStats> sorted(std::map<Key, OpStats>& table, bool by_self) {
  std::vector<OpStats> v;
  v.reserve(table.size());
  for (auto& [k, s] : table) v.push_back(std::move(s));
  std::stable_sort(v.begin(), v.end(), [by_self](const OpStats& a, const OpStats& b) {
    return by_self ? a.self_ns > b.self_ns : a.total_ns > b.total_ns;
  });
  return v;
}

using sdk::text::fixed;

using Align = sdk::text::Table::Align;

void table(std::string& out, const std::string& title, const std::vector<OpStats>& rows,
           std::int64_t total_self, bool shapes, std::size_t max_rows) {
  sdk::text::Table t;
  t.add_column({"Name", Align::kLeft, 0, 56, /*cut=*/true})
      .add_column({"Calls", Align::kRight, 7})
      .add_column({"Self ms", Align::kRight, 10})
      .add_column({"Self %", Align::kRight, 7})
      .add_column({"Total ms", Align::kRight, 10})
      .add_column({"Avg us", Align::kRight, 9})
      .add_column({"FLOPs", Align::kRight, 14});
  if (shapes) t.add_column({"Input shapes"});
  for (std::size_t i = 0; i < rows.size() && i < max_rows; ++i) {
    const OpStats& r = rows[i];
    const double pct = total_self > 0 ? 100.0 * static_cast<double>(r.self_ns) / total_self : 0.0;
    t.add_row({r.name, std::to_string(r.calls), fixed(units::to_ms(r.self_ns), 3),
               fixed(pct, 1) + "%", fixed(units::to_ms(r.total_ns), 3),
               fixed(r.calls ? units::to_us(r.total_ns) / static_cast<double>(r.calls) : 0.0, 2),
               std::to_string(r.flops), r.input_shapes});
  }
  out += title + "\n";
  out += t.text("");
  if (rows.size() > max_rows) {
    out += "... " + std::to_string(rows.size() - max_rows) +
           " more rows in the .summary.json next to this file\n";
  }
  out += "\n";
}

void stats_json(json::Writer& w, const std::vector<OpStats>& rows, bool shapes) {
  w.begin_array();
  for (const OpStats& r : rows) {
    w.begin_object().field("name", r.name);
    if (shapes) w.field("input_shapes", r.input_shapes);
    w.field("calls", r.calls)
        .field("self_us", units::to_us(r.self_ns))
        .field("total_us", units::to_us(r.total_ns))
        .field("avg_us", r.calls ? units::to_us(r.total_ns) / static_cast<double>(r.calls) : 0.0)
        .field("flops", r.flops)
        .end_object();
  }
  w.end_array();
}

std::string steps_text(const TraceData& data) {
  if (!data.has_steps) return "no steps";
  if (data.first_step == data.last_step) return "step " + std::to_string(data.first_step);
  return "steps " + std::to_string(data.first_step) + "-" + std::to_string(data.last_step);
}

}  // namespace

std::string input_shapes_text(const OpRecord& op) {
  std::string s = "[";
  for (std::size_t i = 0; i < op.shapes.size(); ++i) {
    if (i) s += ", ";
    s += '[';
    for (std::size_t j = 0; j < op.shapes[i].size(); ++j) {
      if (j) s += ", ";
      s += std::to_string(op.shapes[i][j]);
    }
    s += ']';
  }
  return s + "]";
}

OpSummary summarize(const TraceData& data) {
  OpSummary s;
  // The times the trace shows (slice_times.hpp): `regiontrace summary` of
  // the written trace computes the same numbers, totals included.
  const SliceTimes times = slice_times(data);
  const std::vector<std::int64_t>& self = times.op_self;
  std::map<std::string, OpStats> ops;
  std::map<std::pair<std::string, std::string>, OpStats> shapes;
  std::map<std::string, OpStats> device;
  for (std::size_t i = 0; i < data.ops.size(); ++i) {
    const OpRecord& op = data.ops[i];
    if (op.kind == OpRecord::Kind::kMemory) continue;
    if (op.kind == OpRecord::Kind::kDevice) {
      if (!is_device_work(op)) continue;
      OpStats& d = device[op.name];
      d.name = op.name;
      ++d.calls;
      d.self_ns += self[i];
      d.total_ns += (times.op_end[i] - times.op_start[i]);
      continue;
    }
    auto add = [&](OpStats& st) {
      ++st.calls;
      st.self_ns += self[i];
      st.total_ns += (times.op_end[i] - times.op_start[i]);
      st.flops += op.flops;
    };
    OpStats& st = ops[op.name];
    st.name = op.name;
    add(st);
    if (data.record_shapes) {
      const std::string key = input_shapes_text(op);
      OpStats& sh = shapes[{op.name, key}];
      sh.name = op.name;
      sh.input_shapes = key;
      add(sh);
    }
    ++s.op_calls;
    s.self_ns += self[i];
  }
  s.by_op = sorted(ops, true);
  s.by_shape = sorted(shapes, true);
  s.device = sorted(device, false);
  std::map<std::string, RegionStats> regions;
  for (std::size_t i = 0; i < data.spans.size(); ++i) {
    const RegionSpan& span = data.spans[i];
    RegionStats& r = regions[data.region_name(span.region)];
    r.name = data.region_name(span.region);
    ++r.count;
    r.total_ns += times.span_end[i] - times.span_start[i];
  }
  for (auto& [name, r] : regions) s.regions.push_back(r);
  std::stable_sort(
      s.regions.begin(), s.regions.end(),
      [](const RegionStats& a, const RegionStats& b) { return a.total_ns > b.total_ns; });
  return s;
}

std::string summary_text(const OpSummary& summary, const TraceData& data,
                         const std::string& trace_file, std::size_t max_rows) {
  std::string out = "torch_profiler op summary: rank " + std::to_string(data.rank) + ", pid " +
                    std::to_string(data.pid) + ", " + steps_text(data) + "\n";
  out += "trace: " + trace_file + "\n";
  out += std::to_string(summary.op_calls) + " op calls, " +
         fixed(units::to_ms(summary.self_ns), 3) + " ms of op self time\n";
  if (!data.cap_reason.empty()) {
    out += "collection stopped early (" + data.cap_reason +
           "): " + std::to_string(data.ops_refused) + " op calls after that were not recorded\n";
  }
  out += "\n";
  table(out, "Ops by self time", summary.by_op, summary.self_ns, false, max_rows);
  if (data.record_shapes) {
    table(out, "Ops by input shapes, by self time", summary.by_shape, summary.self_ns, true,
          max_rows);
  }
  if (!summary.device.empty()) {
    table(out, "Device activity by time", summary.device, 0, false, max_rows);
  }
  if (!summary.regions.empty()) {
    sdk::text::Table t;
    t.add_column({"Name", Align::kLeft, 56, 56, /*cut=*/true})
        .add_column({"Count", Align::kRight, 7})
        .add_column({"Total", Align::kRight, 13});
    for (const RegionStats& r : summary.regions) {
      t.add_row({data.prefix + ".region::" + r.name, std::to_string(r.count),
                 fixed(units::to_ms(r.total_ns), 3) + " ms"});
    }
    out += "Regions\n";
    out += t.text("");
  }
  return out;
}

std::string summary_json(const OpSummary& summary, const TraceData& data,
                         const std::string& trace_file) {
  std::string out;
  json::Writer w(out);
  w.begin_object().field("rank", data.rank).field("pid", data.pid).field("trace", trace_file);
  if (data.has_steps) {
    w.key("steps")
        .begin_object()
        .field("first", data.first_step)
        .field("last", data.last_step)
        .end_object();
  }
  w.field("op_calls", summary.op_calls).field("self_us", units::to_us(summary.self_ns));
  w.key("ops");
  stats_json(w, summary.by_op, false);
  if (data.record_shapes) {
    w.key("by_input_shapes");
    stats_json(w, summary.by_shape, true);
  }
  w.key("device");
  stats_json(w, summary.device, false);
  w.key("regions").begin_array();
  for (const RegionStats& r : summary.regions) {
    w.begin_object()
        .field("name", r.name)
        .field("count", r.count)
        .field("total_us", units::to_us(r.total_ns))
        .end_object();
  }
  w.end_array().end_object();
  out += '\n';
  return out;
}

}  // namespace regiontrace::torch_profiler
