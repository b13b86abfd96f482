#include "record_format.hpp"

#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::memory {

void append_step(std::string& out, std::int64_t step) {
  if (step == kNoStep) {
    out += "null";
  } else {
    json::append_int(out, step);
  }
}

void append_allocated_by_device(std::string& out, std::uint32_t devices,
                                const std::int64_t (&allocated)[kMaxDevices]) {
  bool first = true;
  for_each_device(devices, [&](int d) {
    if (!first) out += ',';
    first = false;
    json::append_escaped(out, device_name(d));
    out += ":{\"allocated_bytes\":";
    json::append_int(out, allocated[d]);
    out += '}';
  });
}

void append_optional(std::string& out, std::int64_t value) {
  if (value < 0) {
    out += "null";
  } else {
    json::append_int(out, value);
  }
}

void append_tracking(std::string& out, const TrackingStats& t) {
  json::Writer w(out);
  w.begin_object()
      .field("enabled", t.enabled)
      .field("tracked", t.tracked)
      .field("max_tracked", t.max_tracked)
      .field("overflow_count", t.overflow_count)
      .field("overflow_bytes", t.overflow_bytes)
      .field("untracked_frees", t.untracked_frees)
      .end_object();
}

void append_allocator_stats(std::string& out, const cuda::AllocatorStats& s) {
  out += "{\"allocated_bytes\":";
  json::append_int(out, s.allocated_current);
  out += ",\"allocated_peak_bytes\":";
  json::append_int(out, s.allocated_peak);
  out += ",\"reserved_bytes\":";
  json::append_int(out, s.reserved_current);
  out += ",\"reserved_peak_bytes\":";
  json::append_int(out, s.reserved_peak);
  out += ",\"active_bytes\":";
  json::append_int(out, s.active_current);
  out += ",\"active_peak_bytes\":";
  json::append_int(out, s.active_peak);
  out += '}';
}

void append_region_record(std::string& out, const RegionRecord& r, const RegionPaths& paths) {
  const ClosedRegion& f = r.figures;
  out += "{\"path\":";
  json::append_escaped(out, paths.path(f.path));
  out += ",\"name\":";
  json::append_escaped(out, paths.name(f.path));
  out += ",\"step\":";
  append_step(out, f.step);
  out += ",\"thread\":";
  json::append_uint(out, r.thread_id);
  out += ",\"depth\":";
  json::append_int(out, r.depth);
  out += ",\"start_ns\":";
  json::append_int(out, f.start_ns);
  out += ",\"duration_ns\":";
  json::append_int(out, r.end_ns - f.start_ns);
  out += ",\"rss_bytes\":";
  append_optional(out, r.has_resident ? r.resident.rss_bytes : -1);
  out += ",\"hwm_bytes\":";
  append_optional(out, r.has_resident ? r.resident.hwm_bytes : -1);
  out += ",\"held_bytes\":";
  json::append_int(out, r.held_bytes);
  out += ",\"unwinding\":";
  out += r.unwinding ? "true" : "false";
  out += ",\"stood_aside\":";
  out += f.stood_aside ? "true" : "false";
  out += ",\"devices\":{";
  bool first = true;
  f.devices.for_each([&](const DeviceFigures& d) {
    if (!first) out += ',';
    first = false;
    json::append_escaped(out, device_name(d.device));
    out += ":{\"entry_bytes\":";
    json::append_int(out, d.entry);
    out += ",\"exit_bytes\":";
    json::append_int(out, d.exit);
    out += ",\"peak_bytes\":";
    json::append_int(out, d.peak);
    for (const CudaFigures& c : r.cuda) {
      if (c.device != d.device) continue;
      out += ",\"allocator\":";
      append_allocator_stats(out, c.stats);
    }
    out += '}';
  });
  out += "}}\n";
}

}  // namespace regiontrace::memory
