#include "fastvideo_layout.hpp"
#include "regiontrace/sdk/trace_time.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <regex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "op_summary.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "slice_times.hpp"

namespace regiontrace::torch_profiler {
namespace {

// A CPU op or region span on its thread, with the device time charged to it.
struct Slice {
  std::uint64_t thread = 0;
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::size_t row = 0;
  std::int64_t self_device_ns = 0;
  std::int64_t device_ns = 0;  // self plus everything nested in it
};

struct Row {
  std::string name;
  std::string shapes;
  std::int64_t count = 0;
  std::int64_t self_device_ns = 0;
  std::int64_t device_ns = 0;
};

// Adds each slice's device time to the slice it nests in, innermost first.
void add_nested_device_time(std::vector<Slice>& slices) {
  std::vector<std::size_t> order(slices.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Slice& x = slices[a];
    const Slice& y = slices[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.start != y.start) return x.start < y.start;
    return x.end > y.end;  // the enclosing one first
  });
  std::vector<std::size_t> open;
  auto close_top = [&] {
    const std::size_t done = open.back();
    open.pop_back();
    if (!open.empty()) slices[open.back()].device_ns += slices[done].device_ns;
  };
  for (std::size_t i : order) {
    Slice& s = slices[i];
    s.device_ns += s.self_device_ns;
    while (!open.empty() &&
           (slices[open.back()].thread != s.thread || s.start >= slices[open.back()].end)) {
      close_top();
    }
    open.push_back(i);
  }
  while (!open.empty()) close_top();
}

}  // namespace

std::string fastvideo_trace_base(const std::string& dir, long pid, int attempt) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count() +
                  attempt;
  std::string base = dir;
  if (!base.empty() && base.back() != '/') base += '/';
  return base + sdk::clock_sync::host_name() + "_" + std::to_string(pid) + "." + std::to_string(ns);
}

std::string fastvideo_summary_stem(const std::string& dir, int rank) {
  std::string stem = dir;
  if (!stem.empty() && stem.back() != '/') stem += '/';
  return stem + "summary_rank" + std::to_string(rank);
}

bool is_own_fastvideo_trace(const std::string& file_name, long pid) {
  const std::string worker = sdk::clock_sync::host_name() + "_" + std::to_string(pid) + ".";
  if (file_name.rfind(worker, 0) != 0) return false;
  // Never destroyed: keep_last runs from the host's exit handler too.
  static const std::regex* rest = new std::regex(R"([0-9]+\.pt\.trace\.json(\.gz)?)");
  return std::regex_match(file_name.substr(worker.size()), *rest);
}

std::string fastvideo_summary_json(const TraceData& data) {
  const SliceTimes times = slice_times(data);
  std::vector<Row> rows;
  std::map<std::pair<std::string, std::string>, std::size_t> row_of;
  std::vector<Slice> slices;
  std::unordered_map<std::uint64_t, std::size_t> slice_of_op;  // external id -> slice

  // Rows in order of first appearance, as key_averages lists them.
  struct Entry {
    std::int64_t start;
    bool is_span;
    std::size_t index;
  };
  std::vector<Entry> entries;
  for (std::size_t i = 0; i < data.ops.size(); ++i) {
    if (data.ops[i].kind == OpRecord::Kind::kCpuOp)
      entries.push_back({times.op_start[i], false, i});
  }
  for (std::size_t i = 0; i < data.spans.size(); ++i) {
    entries.push_back({times.span_start[i], true, i});
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.start < b.start; });
  for (const Entry& e : entries) {
    Slice s;
    std::pair<std::string, std::string> key;
    if (e.is_span) {
      const RegionSpan& span = data.spans[e.index];
      key = {data.span_name(span.region), "[]"};
      s = {span.thread, times.span_start[e.index], times.span_end[e.index]};
    } else {
      const OpRecord& op = data.ops[e.index];
      key = {op.name, op.has_shapes ? input_shapes_text(op) : "[]"};
      s = {op.thread, times.op_start[e.index], times.op_end[e.index]};
      if (op.external_id != 0) slice_of_op[op.external_id] = slices.size();
    }
    auto [it, added] = row_of.emplace(key, rows.size());
    if (added) rows.push_back({key.first, key.second});
    ++rows[it->second].count;
    s.row = it->second;
    slices.push_back(s);
  }
  // A kernel (or copy) counts for the op that launched it.
  for (const OpRecord& op : data.ops) {
    if (op.kind != OpRecord::Kind::kDevice || !is_device_work(op) || op.external_id == 0) continue;
    const auto found = slice_of_op.find(op.external_id);
    if (found != slice_of_op.end()) slices[found->second].self_device_ns += op.duration_ns;
  }
  add_nested_device_time(slices);
  for (const Slice& s : slices) {
    rows[s.row].self_device_ns += s.self_device_ns;
    rows[s.row].device_ns += s.device_ns;
  }

  std::string out;
  json::Writer w(out);
  w.begin_array();
  for (const Row& r : rows) {
    w.begin_object()
        .field("name", r.name)
        .field("shapes", r.shapes)
        .field("self_device_us", sdk::units::to_us(r.self_device_ns))
        .field("device_us", sdk::units::to_us(r.device_ns))
        .field("count", r.count)
        .end_object();
  }
  w.end_array();
  return out + "\n";
}

}  // namespace regiontrace::torch_profiler
