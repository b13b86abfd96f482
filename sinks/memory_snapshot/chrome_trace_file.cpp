#include "chrome_trace_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "memory_record_json.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/trace_event.hpp"

namespace regiontrace::memory {

void ChromeTraceFile::open(const std::string& path, const SinkContext& context) {
  final_path_ = path;
  file_.open(path + kPartialSuffix);
  context_ = context;
  clock_start_ = sdk::clock_sync::read();
  base_ns_ = clock_start_.monotonic_ns;
  pid_ = context.pid();
  // Every event is handed on as it ends: the file streams.
  trace_.emplace([this](std::string_view text) { write(text); }, 0);
  json::Writer& doc = trace_->begin_document();
  doc.key("otherData").begin_object();
  doc.field("producer", "regiontrace memory_snapshot").field("rank", context.rank()).end_object();
  trace_->begin_events(base_ns_);
  sdk::append_metadata_event(trace_->begin_event(), "process_name", pid_, 0,
                             "rank " + std::to_string(context.rank()) + " memory");
  trace_->end_event();
}

void ChromeTraceFile::add_region(const RegionRecord& r, const RegionPaths& paths) {
  if (!file_.is_open() || closed_) return;
  const ClosedRegion& f = r.figures;
  {
    sdk::TraceEvent e(trace_->begin_event(), base_ns_, "X", "region", paths.name(f.path), pid_,
                      r.thread_id);
    e.ts(f.start_ns).dur(r.end_ns - f.start_ns);
    json::Writer& args = e.args();
    args.field("path", paths.path(f.path)).key("step").raw_value(formatted(append_step, f.step));
    args.field("held_bytes", r.held_bytes);
    f.devices.for_each([&](const DeviceFigures& d) {
      const std::string dev = device_name(d.device);
      args.field(dev + " entry_bytes", d.entry)
          .field(dev + " exit_bytes", d.exit)
          .field(dev + " peak_bytes", d.peak);
    });
    e.end();
    trace_->end_event();
  }
  // One counter sample at entry and one at exit, each device a series.
  for (int at_exit = 0; at_exit < 2; ++at_exit) {
    sdk::TraceEvent e(trace_->begin_event(), base_ns_, "C", "", "libtorch allocated bytes", pid_,
                      0);
    e.ts(at_exit ? r.end_ns : f.start_ns);
    json::Writer& args = e.args();
    f.devices.for_each([&](const DeviceFigures& d) {
      args.field(device_name(d.device), at_exit ? d.exit : d.entry);
    });
    e.end();
    trace_->end_event();
  }
  if (r.has_resident && r.resident.rss_bytes >= 0) {
    sdk::TraceEvent e(trace_->begin_event(), base_ns_, "C", "", "resident bytes", pid_, 0);
    e.ts(r.end_ns);
    json::Writer& args = e.args();
    args.field("rss", r.resident.rss_bytes);
    if (r.resident.hwm_bytes >= 0) args.field("hwm", r.resident.hwm_bytes);
    e.end();
    trace_->end_event();
  }
}

void ChromeTraceFile::add_snapshot(const SnapshotJob& job, const std::string& file_name) {
  if (!file_.is_open() || closed_) return;
  sdk::TraceEvent e(trace_->begin_event(), base_ns_, "i", "memory", "snapshot: " + job.reason, pid_,
                    job.thread_id);
  e.ts(job.time_ns).field("s", "p");
  e.args().field("file", file_name).field("trigger", job.trigger);
  e.end();
  trace_->end_event();
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
  json::Writer& tail = trace_->end_events();
  tail.key("regiontrace").begin_object();
  sdk::clock_sync::write_trace_members(tail, context_, "memory_snapshot", clock_start_,
                                       sdk::clock_sync::read());
  tail.end_object();
  trace_->end_document();
  file_.close();
  // Only a trace that got its closing brackets takes the final name; one cut
  // short by a write error stays `.partial` (its events are whole lines).
  if (!file_.failed() && std::rename(file_.path().c_str(), final_path_.c_str()) != 0) {
    rename_error_ =
        "cannot rename `" + file_.path() + "` to `" + final_path_ + "`: " + std::strerror(errno);
  }
}

}  // namespace regiontrace::memory
