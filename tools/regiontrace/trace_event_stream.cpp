#include "trace_event_stream.hpp"

#include <array>
#include <cerrno>
#include <cstring>

#include <simdjson.h>
#include <stdexcept>

#include "event_fields.hpp"
#include "gzip_io.hpp"
#include "json_number_repair.hpp"

#include <unistd.h>

namespace regiontrace::cli {
namespace {

constexpr std::size_t kChunk = 1 << 20;
// One event may be as large as this; the buffer never grows beyond it plus a
// chunk, which bounds the memory a stream holds.
constexpr std::size_t kMaxValue = 256u << 20;

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The bytes a scan for a value's end stops at: quotes and brackets, and the
// first letters of NaN and Infinity, which only those can have outside a
// string (true, false and null are lower case).
constexpr std::array<bool, 256> kStructural = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {'"', '{', '}', '[', ']', 'N', 'I'}) t[c] = true;
  return t;
}();

// Copied through, a bare NaN would make merge's output invalid JSON, and a
// time that is no number cannot be placed.
const char* const kNotFinite =
    "a bare NaN or Infinity, which is not JSON (Python's json.dumps writes it for a "
    "non-finite float): give the value as a string or a number";

}  // namespace

TraceEventStream::TraceEventStream(const std::string& path, bool allow_non_finite)
    : path_(path), allow_non_finite_(allow_non_finite) {
  // A device or pipe (`/dev/zero`) would be read without end: traces are
  // files (open_input_file refuses them).
  input_ = std::make_unique<DecodedInput>(path);
  buffer_.reserve(2 * kChunk);
  {
    const int first = peek_nonspace();
    if (first == '[') {
      ++pos_;
      array_form_ = true;
      state_ = State::kEvents;
    } else if (first == '{') {
      ++pos_;
      read_members_until_events();
    } else {
      fail(
          "not a Chrome trace (expected an object with a \"traceEvents\" array, or an array "
          "of events)");
    }
  }
}

TraceEventStream::~TraceEventStream() = default;

void TraceEventStream::check_json(std::string_view text, const std::string& what) {
  // Events are read as fields (EventFields), which take more than JSON:
  // simdjson decides (with the number repair), so summary, report and merge
  // refuse the same text, and a merged file holds nothing Python's json
  // refuses.
  if (!simdjson::validate_utf8(text.data(), text.size())) fail(what + " is not valid UTF-8");
  simdjson::dom::element parsed;
  const simdjson::error_code error = parser_.parse(text.data(), text.size()).get(parsed);
  if (error == simdjson::SUCCESS) return;
  const std::string repaired = repair_json_numbers(text);
  if (repaired != text && parser_.parse(repaired).get(parsed) == simdjson::SUCCESS) return;
  fail(what + " is not well-formed JSON (" + simdjson::error_message(error) + ")");
}

void TraceEventStream::fail(const std::string& what) const {
  throw std::runtime_error(path_ + ": " + what + " (at byte " + std::to_string(offset()) + ")");
}

bool TraceEventStream::fill() {
  if (eof_) return false;
  // Drop what was consumed so the buffer holds only the value in hand.
  if (pos_ > 0 && pos_ >= buffer_.size() / 2) {
    buffer_.erase(0, pos_);
    consumed_ += pos_;
    pos_ = 0;
  }
  const std::size_t old = buffer_.size();
  buffer_.resize(old + kChunk);
  std::size_t n = 0;
  try {
    n = input_->read(&buffer_[old], kChunk);
  } catch (const std::exception& e) {
    buffer_.resize(old);
    fail(e.what());
  }
  buffer_.resize(old + n);
  if (n == 0) eof_ = true;
  return n > 0;
}

int TraceEventStream::peek_nonspace() {
  for (;;) {
    while (pos_ < buffer_.size() && is_space(buffer_[pos_])) ++pos_;
    if (pos_ < buffer_.size()) return static_cast<unsigned char>(buffer_[pos_]);
    if (!fill()) return -1;
  }
}

char TraceEventStream::take_nonspace() {
  const int c = peek_nonspace();
  if (c < 0) fail("unexpected end of file: the trace was cut short");
  ++pos_;
  return static_cast<char>(c);
}

// Scans from `start` (a value's first byte) to the byte after it, reading
// more input when the value runs past the buffer. Numbers, true, false and
// null end at the next delimiter.
std::size_t TraceEventStream::value_end(std::size_t start) {
  for (;;) {
    std::size_t i = start;
    int depth = 0;
    bool complete = false;
    const char* data = buffer_.data();
    const std::size_t size = buffer_.size();
    const char first = data[i];
    if (first == '{' || first == '[' || first == '"') {
      const auto* bytes = reinterpret_cast<const unsigned char*>(data);
      while (i < size) {
        while (i < size && !kStructural[bytes[i]]) ++i;
        if (i >= size) break;
        const char c = data[i];
        if (c == 'N' || c == 'I') {
          if (!allow_non_finite_) fail(kNotFinite);
          ++i;
          continue;
        }
        if (c == '"') {
          const std::size_t end = json_string_end(data, i, size);
          if (end == 0) {
            i = size;
            break;
          }
          i = end;
          if (depth == 0) {
            complete = true;
            break;
          }
          continue;
        }
        if (c == '{' || c == '[') {
          ++depth;
        } else if (--depth == 0) {
          ++i;
          complete = true;
          break;
        } else if (depth < 0) {
          fail("unbalanced brackets");
        }
        ++i;
      }
    } else {
      if (!allow_non_finite_ &&
          (first == 'N' || first == 'I' || (first == '-' && i + 1 < size && data[i + 1] == 'I'))) {
        fail(kNotFinite);
      }
      while (i < size && !is_space(data[i]) && data[i] != ',' && data[i] != '}' && data[i] != ']') {
        ++i;
      }
      complete = i < size;
      if (i == start && complete) fail(std::string("unexpected '") + data[i] + "'");
    }
    if (complete) return i;
    // Keep the value's offset across the refill, which may move the front.
    const std::size_t relative = start - pos_;
    if (size - pos_ > kMaxValue) {
      fail("a value larger than " + std::to_string(kMaxValue >> 20) + " MiB");
    }
    if (!fill()) {
      if (first != '{' && first != '[' && first != '"' && i > start) return i;
      fail("unexpected end of file: the trace was cut short");
    }
    start = pos_ + relative;
  }
}

std::string TraceEventStream::read_key() {
  if (take_nonspace() != '"') fail("expected a key (a string) in the top-level object");
  --pos_;
  const std::size_t end = value_end(pos_);
  check_json(std::string_view(buffer_).substr(pos_, end - pos_), "a top-level key");
  std::string key = buffer_.substr(pos_ + 1, end - pos_ - 2);
  pos_ = end;
  if (take_nonspace() != ':') fail("expected ':' after key \"" + key + "\"");
  return key;
}

void TraceEventStream::read_members_until_events() {
  if (peek_nonspace() == '}') {
    ++pos_;
    fail("not a Chrome trace (no \"traceEvents\" array)");
  }
  for (;;) {
    std::string key = read_key();
    if (peek_nonspace() < 0) fail("unexpected end of file after key \"" + key + "\"");
    if (key == "traceEvents") {
      if (buffer_[pos_] != '[') fail("\"traceEvents\" is not an array");
      ++pos_;
      state_ = State::kEvents;
      return;
    }
    const std::size_t end = value_end(pos_);
    check_json(std::string_view(buffer_).substr(pos_, end - pos_), "member \"" + key + "\"");
    members_.emplace_back(std::move(key), buffer_.substr(pos_, end - pos_));
    pos_ = end;
    const char c = take_nonspace();
    if (c == '}') fail("not a Chrome trace (no \"traceEvents\" array)");
    if (c != ',') fail("expected ',' or '}' between top-level members");
  }
}

void TraceEventStream::read_trailer() {
  for (;;) {
    const char c = take_nonspace();
    if (c == '}') break;
    if (c != ',') fail("expected ',' or '}' after the event array");
    std::string key = read_key();
    if (peek_nonspace() < 0) fail("unexpected end of file after key \"" + key + "\"");
    // Readers take one or the other: the trace is ambiguous.
    if (key == "traceEvents") fail("a second \"traceEvents\" member");
    const std::size_t end = value_end(pos_);
    check_json(std::string_view(buffer_).substr(pos_, end - pos_), "member \"" + key + "\"");
    members_.emplace_back(std::move(key), buffer_.substr(pos_, end - pos_));
    pos_ = end;
  }
  if (peek_nonspace() >= 0) fail("text after the end of the trace");
  state_ = State::kDone;
}

bool TraceEventStream::next(std::string_view& event) {
  if (state_ != State::kEvents) return false;
  int c = peek_nonspace();
  if (c < 0) fail("unexpected end of file: the trace was cut short");
  if (!first_event_) {
    if (c == ',') {
      ++pos_;
      c = peek_nonspace();
    } else if (c != ']') {
      fail("expected ',' or ']' between events");
    }
  }
  if (c == ']') {
    ++pos_;
    if (array_form_) {
      if (peek_nonspace() >= 0) fail("text after the end of the trace");
      state_ = State::kDone;
    } else {
      state_ = State::kTrailer;
      read_trailer();
    }
    return false;
  }
  if (c < 0) fail("unexpected end of file: the trace was cut short");
  if (c != '{') {
    fail("event " + std::to_string(events_) +
         " is not an object: not a Chrome trace (its events are objects such as "
         "{\"name\":..., \"ph\":\"X\", \"ts\":...})");
  }
  first_event_ = false;
  const std::size_t end = value_end(pos_);
  event = std::string_view(buffer_.data() + pos_, end - pos_);
  check_json(event, "event " + std::to_string(events_));
  pos_ = end;
  ++events_;
  return true;
}

}  // namespace regiontrace::cli
