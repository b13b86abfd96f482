// The top-level members of one trace event's JSON text, as views into it,
// found without building a DOM: merge rewrites a few of them (pid, tid, ts,
// ids) and copies the rest through byte for byte, which is what lets it
// stream gigabytes quickly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "regiontrace/sdk/trace_time.hpp"

namespace regiontrace::cli {

struct EventField {
  std::string_view key;    // as written, without quotes (escapes kept)
  std::string_view value;  // raw JSON text
};

class EventFields {
 public:
  // Splits `event` (an object's text, as TraceEventStream returns it).
  // Returns false when it is not a well-formed object at the top level.
  bool parse(std::string_view event);

  const std::vector<EventField>& fields() const { return fields_; }
  std::optional<std::string_view> raw(std::string_view key) const;
  // A string member's value without quotes (escapes kept: the keys merge
  // and report compare against have none); nullopt when absent or not a string.
  std::optional<std::string_view> string(std::string_view key) const;
  // A string member's value decoded (escapes resolved, \\u as UTF-8), for
  // what is shown or compared as text: region names. nullopt when absent,
  // not a string, or not a valid JSON string.
  std::optional<std::string> text(std::string_view key) const;
  std::optional<double> number(std::string_view key) const;

 private:
  std::vector<EventField> fields_;
};

// The JSON string body `escaped` (without its quotes) decoded; nullopt when
// an escape is malformed.
std::optional<std::string> decode_json_string(std::string_view escaped);

// The index after the closing quote of the string whose opening quote is at
// `open`, or 0 when the text ends first.
std::size_t json_string_end(const char* text, std::size_t open, std::size_t size);

// A JSON number's microsecond text as integer nanoseconds: sdk::units::parse_us
// (regiontrace/sdk/trace_time.hpp), the one parser sinks and the CLI share.

}  // namespace regiontrace::cli
