#include "device_windows.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace regiontrace::torch_profiler {
namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;

bool is_runtime_call(const OpRecord& op) {
  if (op.kind != OpRecord::Kind::kCpuOp) return false;
  const std::string_view c = trace_category(op);
  return c == "cuda_runtime" || c == "cuda_driver";
}

// Per OS thread, when it collected: from each enable marker to the next
// disable; one left open lasts to the end of the trace.
std::map<std::uint64_t, std::vector<Interval>> windows_of(const TraceData& data) {
  std::vector<CollectionMarker> markers = data.markers;
  std::stable_sort(
      markers.begin(), markers.end(),
      [](const CollectionMarker& a, const CollectionMarker& b) { return a.time_ns < b.time_ns; });
  constexpr std::int64_t kOpen = std::numeric_limits<std::int64_t>::max();
  std::map<std::uint64_t, std::vector<Interval>> out;
  for (const CollectionMarker& m : markers) {
    std::vector<Interval>& w = out[m.thread];
    if (m.enable) {
      if (w.empty() || w.back().second != kOpen) w.push_back({m.time_ns, kOpen});
    } else if (!w.empty() && w.back().second == kOpen) {
      w.back().second = m.time_ns;
    }
  }
  return out;
}

bool inside(const std::vector<Interval>& windows, std::int64_t t) {
  return std::any_of(windows.begin(), windows.end(),
                     [t](const Interval& w) { return w.first <= t && t <= w.second; });
}

}  // namespace

DeviceFilterStats keep_device_activity_in_windows(TraceData& data) {
  DeviceFilterStats stats;
  const bool any = std::any_of(data.ops.begin(), data.ops.end(), [](const OpRecord& op) {
    return op.kind == OpRecord::Kind::kDevice || is_runtime_call(op);
  });
  if (!any) return stats;

  const auto windows = windows_of(data);
  std::vector<Interval> all_windows;
  for (const auto& [thread, w] : windows) all_windows.insert(all_windows.end(), w.begin(), w.end());
  // Host ops are recorded only inside windows: their ids stand for them.
  std::unordered_set<std::uint64_t> recorded_ops;
  for (const OpRecord& op : data.ops) {
    if (op.kind == OpRecord::Kind::kCpuOp && !is_runtime_call(op) && op.external_id != 0) {
      recorded_ops.insert(op.external_id);
    }
  }
  std::unordered_set<std::uint64_t> launched;  // correlation ids of kept runtime calls
  std::vector<bool> keep(data.ops.size(), true);
  for (std::size_t i = 0; i < data.ops.size(); ++i) {
    const OpRecord& op = data.ops[i];
    if (!is_runtime_call(op)) continue;
    const auto w = windows.find(op.thread);
    const bool in = (op.external_id != 0 && recorded_ops.count(op.external_id) != 0) ||
                    (w != windows.end() && inside(w->second, op.start_ns));
    keep[i] = in;
    if (in && op.correlation_id != 0) launched.insert(op.correlation_id);
    if (!in) ++stats.runtime_calls_left_out;
  }
  for (std::size_t i = 0; i < data.ops.size(); ++i) {
    const OpRecord& op = data.ops[i];
    if (op.kind != OpRecord::Kind::kDevice) continue;
    bool in;
    if (op.correlation_id != 0) {
      in = launched.count(op.correlation_id) != 0;
    } else if (op.external_id != 0) {
      in = recorded_ops.count(op.external_id) != 0;
    } else {
      // Nothing links it (a device-side annotation): kept when it overlaps a window.
      const std::int64_t end = op.start_ns + op.duration_ns;
      in = std::any_of(all_windows.begin(), all_windows.end(), [&](const Interval& w) {
        return op.start_ns <= w.second && end >= w.first;
      });
    }
    keep[i] = in;
    if (!in) ++stats.device_records_left_out;
  }
  std::size_t k = 0;
  for (std::size_t i = 0; i < data.ops.size(); ++i) {
    if (!keep[i]) continue;
    if (k != i) data.ops[k] = std::move(data.ops[i]);  // never onto itself: that empties it
    ++k;
  }
  data.ops.resize(k);
  return stats;
}

}  // namespace regiontrace::torch_profiler
