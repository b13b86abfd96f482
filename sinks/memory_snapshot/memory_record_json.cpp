#include "memory_record_json.hpp"

#include <charconv>
#include <cstring>

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

namespace {

// Writes into room made ahead (room()): a record is the writer thread's
// main work (one per region instance), and appending piece by piece to a
// std::string checks capacity and measures literals at every step.
class Cursor {
 public:
  explicit Cursor(std::string& out) : out_(out), p_(out.data() + out.size()) {}
  // Makes room for `n` more bytes past the cursor.
  void room(std::size_t n) {
    const std::size_t pos = static_cast<std::size_t>(p_ - out_.data());
    if (out_.size() < pos + n) out_.resize(pos + n);
    p_ = out_.data() + pos;
  }
  // Drops the room not written.
  void finish() { out_.resize(static_cast<std::size_t>(p_ - out_.data())); }
  template <std::size_t N>
  void lit(const char (&s)[N]) {
    std::memcpy(p_, s, N - 1);
    p_ += N - 1;
  }
  void str(const std::string& s) {
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void num(std::int64_t v) { p_ = std::to_chars(p_, p_ + kMaxDigits, v).ptr; }
  void num(std::uint64_t v) { p_ = std::to_chars(p_, p_ + kMaxDigits, v).ptr; }
  void boolean(bool b) {
    if (b) {
      lit("true");
    } else {
      lit("false");
    }
  }
  // As append_optional().
  void optional(std::int64_t v) {
    if (v < 0) {
      lit("null");
    } else {
      num(v);
    }
  }
  // As json::append_escaped(device_name(d)): device names need no escaping.
  void device(int d) {
    if (d == kCpuDevice) {
      lit("\"cpu\"");
    } else {
      lit("\"cuda:");
      num(static_cast<std::int64_t>(cuda_index(d)));
      lit("\"");
    }
  }
  static constexpr std::size_t kMaxDigits = 20;  // -9223372036854775808

 private:
  std::string& out_;
  char* p_;
};

// Upper bounds of what a record's parts write, literals and numbers: the
// fixed part (apart from the path and name strings), a device, a device's
// allocator statistics. The last device leaves room for the closing "}}\n".
constexpr std::size_t kRecordFixed = 512;
constexpr std::size_t kPerDevice = 160;
constexpr std::size_t kPerAllocatorStats = 320;

}  // namespace

void append_region_record(std::string& out, const RegionRecord& r, const RegionPaths& paths) {
  const ClosedRegion& f = r.figures;
  const std::string& path = paths.path_json(f.path);
  const std::string& name = paths.name_json(f.path);
  Cursor c(out);
  c.room(kRecordFixed + path.size() + name.size());
  c.lit("{\"path\":");
  c.str(path);
  c.lit(",\"name\":");
  c.str(name);
  c.lit(",\"step\":");
  if (f.step == kNoStep) {
    c.lit("null");
  } else {
    c.num(f.step);
  }
  c.lit(",\"thread\":");
  c.num(r.thread_id);
  c.lit(",\"depth\":");
  c.num(static_cast<std::int64_t>(r.depth));
  c.lit(",\"start_ns\":");
  c.num(f.start_ns);
  c.lit(",\"duration_ns\":");
  c.num(r.end_ns - f.start_ns);
  c.lit(",\"rss_bytes\":");
  c.optional(r.has_resident ? r.resident.rss_bytes : -1);
  c.lit(",\"hwm_bytes\":");
  c.optional(r.has_resident ? r.resident.hwm_bytes : -1);
  c.lit(",\"held_bytes\":");
  c.num(r.held_bytes);
  c.lit(",\"unwinding\":");
  c.boolean(r.unwinding);
  c.lit(",\"stood_aside\":");
  c.boolean(f.stood_aside);
  c.lit(",\"devices\":{");
  bool first = true;
  f.devices.for_each([&](const DeviceFigures& d) {
    c.room(kPerDevice);
    if (!first) c.lit(",");
    first = false;
    c.device(d.device);
    c.lit(":{\"entry_bytes\":");
    c.num(d.entry);
    c.lit(",\"exit_bytes\":");
    c.num(d.exit);
    c.lit(",\"peak_bytes\":");
    c.num(d.peak);
    for (const CudaFigures& cf : r.cuda) {
      if (cf.device != d.device) continue;
      const cuda::AllocatorStats& st = cf.stats;
      c.room(kPerAllocatorStats);
      c.lit(",\"allocator\":{\"allocated_bytes\":");
      c.num(st.allocated_current);
      c.lit(",\"allocated_peak_bytes\":");
      c.num(st.allocated_peak);
      c.lit(",\"reserved_bytes\":");
      c.num(st.reserved_current);
      c.lit(",\"reserved_peak_bytes\":");
      c.num(st.reserved_peak);
      c.lit(",\"active_bytes\":");
      c.num(st.active_current);
      c.lit(",\"active_peak_bytes\":");
      c.num(st.active_peak);
      c.lit("}");
    }
    c.lit("}");
  });
  c.lit("}}\n");
  c.finish();
}

}  // namespace regiontrace::memory
