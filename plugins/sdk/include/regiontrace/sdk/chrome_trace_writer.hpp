// A Chrome / Perfetto trace document, written front to back as it is built:
// the members before "traceEvents", the events (one a line), the members
// after them. The torch_profiler, timeline and memory_snapshot sinks and
// `regiontrace merge` write theirs with it; a third-party sink can too.
//
//   sdk::TraceFileWriter file(path, gzip);   // or any place text can go
//   sdk::ChromeTraceWriter trace([&](std::string_view s) { file.write(s); });
//   trace.begin_document().field("my_member", 1);   // after "schemaVersion"
//   trace.begin_events(base_ns);                     // ns of ts 0
//   sdk::TraceEvent e(trace.begin_event(), base_ns, "X", "cat", "name", pid, tid);
//   e.ts(t0).dur(t1 - t0);
//   e.end();
//   trace.end_event();
//   trace.end_events().field("traceName", path);      // members after the events
//   trace.end_document();
//   file.commit();
//
// The output gets whole pieces of the document: each ends after a complete
// event line or the document's end, never inside an event, so a line-oriented
// file (the memory_snapshot sink's streamed one) holds whole events even when
// the process dies. An event is written when it ends: until then
// cancel_event() takes it back (a sink with a byte budget formats an event,
// looks at its size, and keeps it or not).
//
// Not thread-safe: one thread writes a document.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::sdk {

class ChromeTraceWriter {
 public:
  using Output = std::function<void(std::string_view)>;

  // `flush_bytes`: the output gets the text once this much is waiting (0:
  // after every event, for a file that streams events as they happen).
  explicit ChromeTraceWriter(Output output, std::size_t flush_bytes = std::size_t{1} << 20)
      : output_(std::move(output)), flush_bytes_(flush_bytes), doc_(buffer_) {}
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // `{"schemaVersion":1`; the returned writer adds the members that go
  // before the events (Kineto's order puts its metadata there).
  json::Writer& begin_document() {
    doc_.begin_object().field("schemaVersion", 1);
    return doc_;
  }

  // `"displayTimeUnit":"ms","baseTimeNanoseconds":N,"traceEvents":[`.
  // `base_time_ns`: the nanoseconds of ts 0 on the trace's clock (Kineto
  // writes the epoch's; the timeline and memory traces CLOCK_MONOTONIC, with
  // the clock pairs of clock_sync.hpp beside it); nullopt where no one clock
  // is known (a merge of traces whose clocks could not be paired).
  void begin_events(std::optional<std::int64_t> base_time_ns) {
    doc_.field("displayTimeUnit", "ms");
    if (base_time_ns) doc_.field("baseTimeNanoseconds", *base_time_ns);
    doc_.key("traceEvents").begin_array();
  }

  // The separator, then the buffer to append the next event's JSON object
  // to (sdk::TraceEvent formats one); end_event() or cancel_event() follow.
  std::string& begin_event() {
    event_begin_ = buffer_.size();
    buffer_ += events_ == 0 ? "\n" : ",\n";
    return buffer_;
  }
  // Bytes the event begun last adds to the document, separator included.
  std::size_t event_bytes() const { return buffer_.size() - event_begin_; }
  void end_event() {
    ++events_;
    if (buffer_.size() >= flush_bytes_) flush();
  }
  void cancel_event() { buffer_.resize(event_begin_); }
  // An event already formatted as one JSON object.
  void add_event(std::string_view json) {
    begin_event() += json;
    end_event();
  }
  // What a separator costs: the bytes an event adds beyond its own text.
  std::size_t separator_bytes() const { return events_ == 0 ? 1 : 2; }

  // `\n]`; the returned writer adds the members that go after the events.
  json::Writer& end_events() {
    buffer_ += '\n';
    return doc_.end_array();
  }
  // The document's closing brace and newline; hands everything left over.
  void end_document() {
    doc_.end_object();
    buffer_ += '\n';
    flush();
  }

  // Text handed to the output so far.
  void flush() {
    if (buffer_.empty()) return;
    output_(buffer_);
    written_ += buffer_.size();
    buffer_.clear();
  }

  std::uint64_t events() const { return events_; }
  // The document's size so far, handed over or not.
  std::uint64_t bytes() const { return written_ + buffer_.size(); }

 private:
  Output output_;
  std::size_t flush_bytes_;
  std::string buffer_;
  json::Writer doc_;  // the top-level object; events go in between unseen
  std::size_t event_begin_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t written_ = 0;
};

}  // namespace regiontrace::sdk
