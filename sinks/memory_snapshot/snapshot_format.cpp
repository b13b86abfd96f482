#include "snapshot_format.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "memory_record_json.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::memory {
namespace {

struct StepTotal {
  std::int64_t bytes = 0;
  std::int64_t count = 0;
};

struct RegionGroup {
  int path = 0;
  std::int64_t bytes = 0;
  std::int64_t count = 0;
  std::int64_t device_bytes[kMaxDevices] = {};
  std::uint32_t devices = 0;
  std::map<std::int64_t, StepTotal> by_step;
  std::vector<const LiveAllocation*> allocations;
};

std::string hex_address(std::uintptr_t a) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(a));
  return buf;
}

void append_group(json::Writer& w, RegionGroup& g, const RegionPaths& paths,
                  std::int64_t max_allocations) {
  w.begin_object()
      .field("path", paths.path(g.path))
      .field("name", paths.name(g.path))
      .field("bytes", g.bytes)
      .field("count", g.count)
      .key("devices")
      .begin_object();
  for_each_device(g.devices, [&](int d) { w.field(device_name(d), g.device_bytes[d]); });
  w.end_object().key("by_step").begin_array();
  for (const auto& [step, total] : g.by_step) {
    w.begin_object()
        .key("step")
        .raw_value(formatted(append_step, step))
        .field("bytes", total.bytes)
        .field("count", total.count)
        .end_object();
  }
  w.end_array().key("largest").begin_array();
  const std::size_t n =
      std::min<std::size_t>(g.allocations.size(), static_cast<std::size_t>(max_allocations));
  std::partial_sort(g.allocations.begin(), g.allocations.begin() + static_cast<std::ptrdiff_t>(n),
                    g.allocations.end(), [](const LiveAllocation* a, const LiveAllocation* b) {
                      return a->bytes != b->bytes ? a->bytes > b->bytes : a->address < b->address;
                    });
  for (std::size_t i = 0; i < n; ++i) {
    const LiveAllocation& a = *g.allocations[i];
    w.begin_object()
        .field("address", hex_address(a.address))
        .field("bytes", a.bytes)
        .key("step")
        .raw_value(formatted(append_step, a.step))
        .field("device", device_name(a.device))
        .end_object();
  }
  w.end_array().end_object();
}

}  // namespace

std::string format_snapshot(const SnapshotJob& job, const RegionPaths& paths,
                            const SnapshotContext& context) {
  std::vector<RegionGroup> groups(static_cast<std::size_t>(paths.size()));
  for (std::size_t i = 0; i < groups.size(); ++i) groups[i].path = static_cast<int>(i);
  std::int64_t live_bytes = 0;
  for (const LiveAllocation& a : job.live) {
    if (a.path < 0 || static_cast<std::size_t>(a.path) >= groups.size()) continue;
    RegionGroup& g = groups[static_cast<std::size_t>(a.path)];
    g.bytes += a.bytes;
    g.count += 1;
    g.device_bytes[a.device] += a.bytes;
    g.devices |= 1u << a.device;
    StepTotal& s = g.by_step[a.step];
    s.bytes += a.bytes;
    s.count += 1;
    g.allocations.push_back(&a);
    live_bytes += a.bytes;
  }
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [](const RegionGroup& g) { return g.count == 0; }),
               groups.end());
  std::sort(groups.begin(), groups.end(), [](const RegionGroup& a, const RegionGroup& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.path < b.path;
  });

  std::string out;
  json::Writer w(out);
  w.begin_object()
      .field("sequence", job.sequence)
      .field("trigger", job.trigger)
      .field("reason", job.reason)
      .field("path", job.path)
      .key("step")
      .raw_value(formatted(append_step, job.step))
      .field("time_ns", job.time_ns)
      .field("thread", job.thread_id)
      .field("rank", context.rank)
      .field("pid", context.pid)
      .key("rss_bytes")
      .raw_value(formatted(append_optional, job.resident.rss_bytes))
      .key("hwm_bytes")
      .raw_value(formatted(append_optional, job.resident.hwm_bytes))
      .key("devices")
      .raw_value("{" + formatted(append_allocated_by_device, job.devices, job.allocated) + "}")
      .key("tracking")
      .raw_value(formatted(append_tracking, job.tracking))
      .field("live_bytes", live_bytes)
      .field("live_count", static_cast<std::int64_t>(job.live.size()))
      .key("cuda_snapshot");
  if (context.cuda_pickle_file.empty()) {
    w.value(nullptr);
  } else {
    w.value(context.cuda_pickle_file);
  }
  if (!job.cuda_error.empty()) w.field("cuda_error", job.cuda_error);
  w.key("regions").begin_array();
  // One region a line: each is written apart and starts with the newline
  // that follows the comma the writer puts between them.
  std::string region;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    region.assign(i == 0 ? "" : "\n");
    json::Writer r(region);
    append_group(r, groups[i], paths, context.max_allocations);
    w.raw_value(region);
  }
  w.end_array().end_object();
  out += '\n';
  return out;
}

}  // namespace regiontrace::memory
