// One Chrome / Perfetto trace event as every trace reader of the CLI sees it
// (summary, its --by-step cut, report): the members they use, with times in
// integer nanoseconds read exactly from the microsecond text
// (sdk::units::parse_us), so that sums and step boundaries match the
// sinks' own integer arithmetic instead of drifting through doubles.
//
// TraceEventReader streams the file (TraceEventStream): memory holds one
// event, never the document.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "event_fields.hpp"
#include "trace_event_stream.hpp"

namespace regiontrace::cli {

// Views into the event's text (or the reader's buffers), valid until the
// reader's next call.
struct TraceEvent {
  std::string_view phase;     // "X", "B", "E", "C", "M", ...; empty when absent
  std::string_view name;      // decoded; empty when absent
  std::string_view category;  // decoded; empty when absent
  // pid and tid as the JSON text the trace has (a number or a string):
  // they only tell threads apart. Empty when absent.
  std::string_view pid;
  std::string_view tid;
  std::optional<std::int64_t> ts_ns;
  std::optional<std::int64_t> dur_ns;
  std::string_view args;  // the args member's JSON text; empty when absent
};

// What a span's args say by the conventions every regiontrace sink follows;
// parsed apart from the event because most events (ops) need none of it.
struct SpanArgs {
  std::optional<std::string> region;  // decoded, when a string
  std::optional<std::string> path;    // decoded, when a string
  std::optional<std::int64_t> step;   // when an integer
};
SpanArgs span_args(std::string_view args_text);

class TraceEventReader {
 public:
  // Throws std::runtime_error as TraceEventStream does; `allow_non_finite`
  // as there.
  explicit TraceEventReader(const std::string& path, bool allow_non_finite = false);

  // The next event; false after the last one. An event whose members cannot
  // be split (the stream has checked it is JSON) comes back with no phase.
  bool next(TraceEvent& event);

  const std::string& path() const { return stream_.path(); }
  // The top-level members (TraceEventStream::members), complete once next()
  // returned false.
  const std::vector<std::pair<std::string, std::string>>& members() const {
    return stream_.members();
  }

 private:
  std::string_view decoded(std::optional<std::string_view> escaped, std::string& buffer);

  TraceEventStream stream_;
  EventFields fields_;
  std::string name_;
  std::string category_;
};

}  // namespace regiontrace::cli
