#include "snapshot_format.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "record_format.hpp"
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

void append_group(std::string& out, RegionGroup& g, const RegionPaths& paths,
                  std::int64_t max_allocations) {
  out += "{\"path\":";
  json::append_escaped(out, paths.path(g.path));
  out += ",\"name\":";
  json::append_escaped(out, paths.name(g.path));
  out += ",\"bytes\":";
  json::append_int(out, g.bytes);
  out += ",\"count\":";
  json::append_int(out, g.count);
  out += ",\"devices\":{";
  bool first = true;
  for_each_device(g.devices, [&](int d) {
    if (!first) out += ',';
    first = false;
    json::append_escaped(out, device_name(d));
    out += ':';
    json::append_int(out, g.device_bytes[d]);
  });
  out += "},\"by_step\":[";
  first = true;
  for (const auto& [step, total] : g.by_step) {
    if (!first) out += ',';
    first = false;
    out += "{\"step\":";
    append_step(out, step);
    out += ",\"bytes\":";
    json::append_int(out, total.bytes);
    out += ",\"count\":";
    json::append_int(out, total.count);
    out += '}';
  }
  out += "],\"largest\":[";
  const std::size_t n =
      std::min<std::size_t>(g.allocations.size(), static_cast<std::size_t>(max_allocations));
  std::partial_sort(g.allocations.begin(), g.allocations.begin() + static_cast<std::ptrdiff_t>(n),
                    g.allocations.end(), [](const LiveAllocation* a, const LiveAllocation* b) {
                      return a->bytes != b->bytes ? a->bytes > b->bytes : a->address < b->address;
                    });
  for (std::size_t i = 0; i < n; ++i) {
    const LiveAllocation& a = *g.allocations[i];
    if (i != 0) out += ',';
    out += "{\"address\":\"" + hex_address(a.address) + "\",\"bytes\":";
    json::append_int(out, a.bytes);
    out += ",\"step\":";
    append_step(out, a.step);
    out += ",\"device\":";
    json::append_escaped(out, device_name(a.device));
    out += '}';
  }
  out += "]}";
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

  std::string out = "{\"sequence\":";
  json::append_int(out, job.sequence);
  out += ",\"trigger\":";
  json::append_escaped(out, job.trigger);
  out += ",\"reason\":";
  json::append_escaped(out, job.reason);
  out += ",\"path\":";
  json::append_escaped(out, job.path);
  out += ",\"step\":";
  append_step(out, job.step);
  out += ",\"time_ns\":";
  json::append_int(out, job.time_ns);
  out += ",\"thread\":";
  json::append_uint(out, job.thread_id);
  out += ",\"rank\":";
  json::append_int(out, context.rank);
  out += ",\"pid\":";
  json::append_int(out, context.pid);
  out += ",\"rss_bytes\":";
  append_optional(out, job.resident.rss_bytes);
  out += ",\"hwm_bytes\":";
  append_optional(out, job.resident.hwm_bytes);
  out += ",\"devices\":{";
  append_allocated_by_device(out, job.devices, job.allocated);
  out += "},\"tracking\":";
  append_tracking(out, job.tracking);
  out += ",\"live_bytes\":";
  json::append_int(out, live_bytes);
  out += ",\"live_count\":";
  json::append_int(out, static_cast<std::int64_t>(job.live.size()));
  out += ",\"cuda_snapshot\":";
  if (context.cuda_pickle_file.empty()) {
    out += "null";
  } else {
    json::append_escaped(out, context.cuda_pickle_file);
  }
  if (!job.cuda_error.empty()) {
    out += ",\"cuda_error\":";
    json::append_escaped(out, job.cuda_error);
  }
  out += ",\"regions\":[";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (i != 0) out += ",\n";
    append_group(out, groups[i], paths, context.max_allocations);
  }
  out += "]}\n";
  return out;
}

}  // namespace regiontrace::memory
