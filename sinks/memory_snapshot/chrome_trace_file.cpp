#include "chrome_trace_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "record_format.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/trace_time.hpp"

namespace regiontrace::memory {

void ChromeTraceFile::append_ts(std::string& out, std::int64_t monotonic_ns) const {
  json::append_microseconds(out, monotonic_ns - base_ns_);
}

void ChromeTraceFile::open(const std::string& path, const SinkContext& context) {
  final_path_ = path;
  file_.open(path + kPartialSuffix);
  context_ = context;
  clock_start_ = sdk::clock_sync::read();
  base_ns_ = clock_start_.monotonic_ns;
  pid_ = std::to_string(context.pid());
  std::string out = "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":";
  json::append_int(out, base_ns_);
  out += ",\"otherData\":{\"producer\":\"regiontrace memory_snapshot\",\"rank\":";
  json::append_int(out, context.rank());
  out += "},\"traceEvents\":[\n";
  out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid_ +
         ",\"tid\":0,\"args\":{\"name\":\"rank " + std::to_string(context.rank()) + " memory\"}}";
  first_ = false;
  write(out);
}

void ChromeTraceFile::begin_event(std::string& out) {
  out += first_ ? "" : ",\n";
  first_ = false;
}

void ChromeTraceFile::append_counter(std::string& out, const char* name, std::int64_t time_ns) {
  begin_event(out);
  out += "{\"ph\":\"C\",\"name\":\"";
  out += name;
  out += "\",\"pid\":" + pid_ + ",\"tid\":0,\"ts\":";
  append_ts(out, time_ns);
  out += ",\"args\":{";
}

void ChromeTraceFile::add_region(const RegionRecord& r, const RegionPaths& paths) {
  if (!file_.is_open() || closed_) return;
  const ClosedRegion& f = r.figures;
  std::string out;
  begin_event(out);
  out += "{\"ph\":\"X\",\"cat\":\"region\",\"name\":";
  json::append_escaped(out, paths.name(f.path));
  out += ",\"pid\":" + pid_ + ",\"tid\":";
  json::append_uint(out, r.thread_id);
  out += ",\"ts\":";
  append_ts(out, f.start_ns);
  out += ",\"dur\":";
  json::append_microseconds(out, r.end_ns - f.start_ns);
  out += ",\"args\":{\"path\":";
  json::append_escaped(out, paths.path(f.path));
  out += ",\"step\":";
  append_step(out, f.step);
  out += ",\"held_bytes\":";
  json::append_int(out, r.held_bytes);
  f.devices.for_each([&](const DeviceFigures& d) {
    const std::string dev = device_name(d.device);
    out += ",\"" + dev + " entry_bytes\":";
    json::append_int(out, d.entry);
    out += ",\"" + dev + " exit_bytes\":";
    json::append_int(out, d.exit);
    out += ",\"" + dev + " peak_bytes\":";
    json::append_int(out, d.peak);
  });
  out += "}}";
  // One counter sample at entry and one at exit, each device a series.
  for (int at_exit = 0; at_exit < 2; ++at_exit) {
    append_counter(out, "libtorch allocated bytes", at_exit ? r.end_ns : f.start_ns);
    bool first = true;
    f.devices.for_each([&](const DeviceFigures& d) {
      if (!first) out += ',';
      first = false;
      json::append_escaped(out, device_name(d.device));
      out += ':';
      json::append_int(out, at_exit ? d.exit : d.entry);
    });
    out += "}}";
  }
  if (r.has_resident && r.resident.rss_bytes >= 0) {
    append_counter(out, "resident bytes", r.end_ns);
    out += "\"rss\":";
    json::append_int(out, r.resident.rss_bytes);
    if (r.resident.hwm_bytes >= 0) {
      out += ",\"hwm\":";
      json::append_int(out, r.resident.hwm_bytes);
    }
    out += "}}";
  }
  write(out);
}

void ChromeTraceFile::add_snapshot(const SnapshotJob& job, const std::string& file_name) {
  if (!file_.is_open() || closed_) return;
  std::string out;
  begin_event(out);
  out += "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"memory\",\"name\":";
  json::append_escaped(out, "snapshot: " + job.reason);
  out += ",\"pid\":" + pid_ + ",\"tid\":";
  json::append_uint(out, job.thread_id);
  out += ",\"ts\":";
  append_ts(out, job.time_ns);
  out += ",\"args\":{\"file\":";
  json::append_escaped(out, file_name);
  out += ",\"trigger\":";
  json::append_escaped(out, job.trigger);
  out += "}}";
  write(out);
}

void ChromeTraceFile::write(std::string_view text) {
  partial_ += text;
  const std::size_t end = partial_.rfind('\n');
  if (end == std::string::npos) return;
  file_.append(std::string_view(partial_).substr(0, end + 1));
  partial_.erase(0, end + 1);
}

void ChromeTraceFile::close() {
  if (!file_.is_open() || closed_) return;
  closed_ = true;
  std::string tail = "\n],";
  sdk::clock_sync::append_trace_metadata(tail, context_, "memory_snapshot", clock_start_,
                                         sdk::clock_sync::read());
  tail += "}\n";
  write(tail);
  file_.close();
  // Only a trace that got its closing brackets takes the final name; one cut
  // short by a write error stays `.partial` (its events are whole lines).
  if (!file_.failed() && std::rename(file_.path().c_str(), final_path_.c_str()) != 0) {
    rename_error_ =
        "cannot rename `" + file_.path() + "` to `" + final_path_ + "`: " + std::strerror(errno);
  }
}

}  // namespace regiontrace::memory
