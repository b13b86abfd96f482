#include "chrome_trace_reader.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "gzip_io.hpp"
#include "json_number_repair.hpp"

namespace regiontrace::cli {

using simdjson::dom::element_type;

namespace {

// Every event is an object: `[1,2,3]` is JSON, not a trace.
void require_objects(const std::string& path, simdjson::dom::array events) {
  std::size_t index = 0;
  for (simdjson::dom::element event : events) {
    if (event.type() != element_type::OBJECT) {
      throw std::runtime_error(path + ": event " + std::to_string(index) +
                               " is not an object: not a Chrome trace (its events are objects "
                               "such as {\"name\":..., \"ph\":\"X\", \"ts\":...})");
    }
    ++index;
  }
}

}  // namespace

ChromeTrace ChromeTrace::load(const std::string& path) {
  const PaddedText text = read_text_file(path);
  return from_text(path, text.padded(0, text.size()));
}

ChromeTrace ChromeTrace::parse(const std::string& path, std::string_view text) {
  const simdjson::padded_string padded(text);
  return from_text(path, padded);
}

ChromeTrace ChromeTrace::from_text(const std::string& path, simdjson::padded_string_view text) {
  ChromeTrace trace;
  trace.path_ = path;
  trace.parser_ = std::make_unique<simdjson::dom::parser>();
  simdjson::dom::element root;
  if (auto error = trace.parser_->parse(text).get(root)) {
    // Valid JSON simdjson cannot hold (integers beyond 64 bits) or Python's
    // bare NaN: parsed again repaired, when repairing changes anything.
    const std::string_view original(text.data(), text.size());
    const std::string repaired_text = repair_json_numbers(original);
    // The DOM copies what it keeps: the repaired text may go after parsing.
    const simdjson::padded_string repaired(repaired_text);
    if (repaired_text == original || trace.parser_->parse(repaired).get(root)) {
      throw std::runtime_error(path + ": not valid JSON (" + simdjson::error_message(error) + ")");
    }
  }
  if (root.type() == element_type::ARRAY) {
    trace.events_ = root.get_array().value_unsafe();
    require_objects(path, trace.events_);
    return trace;
  }
  simdjson::dom::array events;
  if (root.type() == element_type::OBJECT) {
    int members = 0;
    const simdjson::dom::object top = root.get_object().value_unsafe();
    for (const simdjson::dom::key_value_pair member : top) {
      members += member.key == "traceEvents" ? 1 : 0;
    }
    // merge and report (trace_event_stream.cpp) refuse the same: readers
    // take one or the other.
    if (members > 1) throw std::runtime_error(path + ": a second \"traceEvents\" member");
  }
  if (root.type() != element_type::OBJECT || root["traceEvents"].get_array().get(events)) {
    throw std::runtime_error(path +
                             ": not a Chrome trace (expected an object with a \"traceEvents\" "
                             "array, or an array of events)");
  }
  require_objects(path, events);
  trace.events_ = events;
  trace.top_level_ = root.get_object().value_unsafe();
  return trace;
}

std::optional<std::string_view> string_field(simdjson::dom::object event, std::string_view key) {
  std::string_view value;
  if (event[key].get_string().get(value)) return std::nullopt;
  return value;
}

std::optional<double> number_field(simdjson::dom::object event, std::string_view key) {
  simdjson::dom::element value;
  if (event[key].get(value)) return std::nullopt;
  switch (value.type()) {
    case element_type::DOUBLE:
      return double(value);
    case element_type::INT64:
      return double(int64_t(value));
    case element_type::UINT64:
      return double(uint64_t(value));
    default:
      return std::nullopt;
  }
}

std::optional<std::int64_t> integer_field(simdjson::dom::object event, std::string_view key) {
  simdjson::dom::element value;
  if (event[key].get(value)) return std::nullopt;
  switch (value.type()) {
    case element_type::INT64:
      return int64_t(value);
    case element_type::UINT64: {
      const std::uint64_t u = value;
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return std::nullopt;
      return static_cast<std::int64_t>(u);
    }
    case element_type::DOUBLE: {
      // Whole numbers in int64's range only: converting one outside it is undefined.
      const double d = value;
      if (std::floor(d) != d || !(d >= -0x1p63 && d < 0x1p63)) return std::nullopt;
      return static_cast<std::int64_t>(d);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace regiontrace::cli
