#include "trace_event_reader.hpp"

#include <charconv>
#include <cmath>

namespace regiontrace::cli {
namespace {

// An integer, or a whole number written as 3.0 or 3e0 (as summary has always
// taken args.step); nullopt for anything else.
std::optional<std::int64_t> integer(std::optional<std::string_view> text) {
  if (!text) return std::nullopt;
  const char* const first = text->data();
  const char* const last = first + text->size();
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(first, last, value);
  if (ec == std::errc() && end == last) return value;
  double d = 0;
  auto [dend, dec] = std::from_chars(first, last, d);
  // Whole numbers in int64's range only: converting one outside it is undefined.
  if (dec != std::errc() || dend != last || std::floor(d) != d || !(d >= -0x1p63 && d < 0x1p63)) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(d);
}

std::optional<std::int64_t> nanoseconds(std::optional<std::string_view> text) {
  if (!text) return std::nullopt;
  return sdk::units::parse_us(*text);
}

}  // namespace

SpanArgs span_args(std::string_view args_text) {
  SpanArgs out;
  EventFields args;
  if (args_text.empty() || !args.parse(args_text)) return out;
  out.region = args.text("region");
  out.path = args.text("path");
  out.step = integer(args.raw("step"));
  return out;
}

TraceEventReader::TraceEventReader(const std::string& path, bool allow_non_finite)
    : stream_(path, allow_non_finite) {}

// Most names have no escape: they stay views into the event's text.
std::string_view TraceEventReader::decoded(std::optional<std::string_view> escaped,
                                           std::string& buffer) {
  if (!escaped) return {};
  if (escaped->find('\\') == std::string_view::npos) return *escaped;
  buffer = decode_json_string(*escaped).value_or(std::string());
  return buffer;
}

bool TraceEventReader::next(TraceEvent& event) {
  std::string_view text;
  if (!stream_.next(text)) return false;
  event = TraceEvent{};
  if (!fields_.parse(text)) return true;
  event.phase = fields_.string("ph").value_or("");
  event.name = decoded(fields_.string("name"), name_);
  event.category = decoded(fields_.string("cat"), category_);
  event.pid = fields_.raw("pid").value_or("");
  event.tid = fields_.raw("tid").value_or("");
  event.ts_ns = nanoseconds(fields_.raw("ts"));
  event.dur_ns = nanoseconds(fields_.raw("dur"));
  event.args = fields_.raw("args").value_or("");
  return true;
}

}  // namespace regiontrace::cli
