// A Chrome / Perfetto trace file parsed into memory (`.json` or `.json.gz`):
// either the object form {"traceEvents": [...], ...metadata} that the torch
// profiler and Kineto write, or the bare array form [event, ...].
//
// The whole document is held as a simdjson DOM, about two to three times the
// size of the uncompressed text; `summary` reads each event once. `merge` and
// `report` stream instead (trace_event_stream.hpp).
#pragma once

#include <simdjson.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace regiontrace::cli {

class ChromeTrace {
 public:
  // Throws std::runtime_error naming the path when the file is unreadable,
  // not JSON, or has no event array.
  static ChromeTrace load(const std::string& path);
  // The same from text in memory; `path` names it in messages.
  static ChromeTrace parse(const std::string& path, std::string_view text);

  const std::string& path() const { return path_; }
  simdjson::dom::array events() const { return events_; }
  // Top-level keys besides traceEvents; nullopt for the array form.
  const std::optional<simdjson::dom::object>& top_level() const { return top_level_; }

 private:
  static ChromeTrace from_text(const std::string& path, simdjson::padded_string_view text);

  std::string path_;
  std::unique_ptr<simdjson::dom::parser> parser_;  // owns the DOM the views point into
  simdjson::dom::array events_;
  std::optional<simdjson::dom::object> top_level_;
};

// Helpers to read event fields without exceptions for absent or odd values.
std::optional<std::string_view> string_field(simdjson::dom::object event, std::string_view key);
std::optional<double> number_field(simdjson::dom::object event, std::string_view key);
std::optional<std::int64_t> integer_field(simdjson::dom::object event, std::string_view key);

}  // namespace regiontrace::cli
