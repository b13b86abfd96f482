#include "chrome_trace_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <time.h>

#include "record_format.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::memory {
namespace {

void append_us(std::string& out, std::int64_t ns) {
  json::append_double(out, static_cast<double>(ns) / 1000.0);
}

std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

void ChromeTraceFile::append_ts(std::string& out, std::int64_t monotonic_ns) const {
  append_us(out, monotonic_ns + realtime_offset_ns_);
}

void ChromeTraceFile::open(const std::string& path, long pid, int rank) {
  final_path_ = path;
  file_.open(path + kPartialSuffix);
  realtime_offset_ns_ = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
  pid_ = std::to_string(pid);
  std::string out =
      "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"regiontrace "
      "memory_snapshot\",\"clock\":\"CLOCK_REALTIME\",\"rank\":";
  json::append_int(out, rank);
  out += "},\"traceEvents\":[\n";
  out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid_ +
         ",\"tid\":0,\"args\":{\"name\":\"rank " + std::to_string(rank) + " memory\"}}";
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
  append_us(out, r.end_ns - f.start_ns);
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
  write("\n]}\n");
  file_.close();
  // Only a trace that got its closing brackets takes the final name; one cut
  // short by a write error stays `.partial` (its events are whole lines).
  if (!file_.failed() && std::rename(file_.path().c_str(), final_path_.c_str()) != 0) {
    rename_error_ =
        "cannot rename `" + file_.path() + "` to `" + final_path_ + "`: " + std::strerror(errno);
  }
}

}  // namespace regiontrace::memory
