// Reads a Chrome / Perfetto trace (`.json` or `.json.gz`) one event at a time,
// never holding more than one chunk of the file and the event in hand: merge
// and report handle traces larger than memory this way.
//
// It walks the top-level object (or bare array) itself: members before
// "traceEvents" are the header, members after it the trailer; each member's
// value and each event are returned as their raw JSON text. Events are
// checked for balance, for being objects, for valid UTF-8 and for bare
// NaN/Infinity, not fully validated: callers parse what they need from them
// (EventFields, or simdjson for small parts).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace regiontrace::cli {

class TraceEventStream {
 public:
  // Throws std::runtime_error naming the path when it cannot be opened or
  // does not start like a trace.
  explicit TraceEventStream(const std::string& path);
  ~TraceEventStream();
  TraceEventStream(const TraceEventStream&) = delete;
  TraceEventStream& operator=(const TraceEventStream&) = delete;

  // The next event's text, valid until the next call; false after the last
  // one. Throws std::runtime_error naming the file and the byte offset on
  // malformed input.
  bool next(std::string_view& event);
  // Reads the rest of the file (the trailer), discarding events.
  void finish();

  const std::string& path() const { return path_; }
  // Top-level members as (key, raw JSON value): the header once constructed,
  // with the trailer added once next() returned false.
  const std::vector<std::pair<std::string, std::string>>& members() const { return members_; }
  bool array_form() const { return array_form_; }
  std::size_t events_read() const { return events_; }
  // Uncompressed bytes consumed so far.
  std::uint64_t offset() const { return consumed_ + pos_; }

 private:
  enum class State { kEvents, kTrailer, kDone };

  [[noreturn]] void fail(const std::string& what) const;
  void check_utf8(std::string_view text, const std::string& what) const;
  bool fill();  // appends more input; false at end of file
  int peek_nonspace();
  char take_nonspace();
  std::size_t value_end(std::size_t start);  // end of the JSON value at start (refilling)
  std::string read_key();
  void read_members_until_events();
  void read_trailer();

  std::string path_;
  gzFile file_ = nullptr;
  std::string buffer_;
  std::size_t pos_ = 0;
  std::uint64_t consumed_ = 0;  // bytes dropped from the front of buffer_
  bool eof_ = false;
  bool array_form_ = false;
  State state_ = State::kDone;
  bool first_event_ = true;
  std::size_t events_ = 0;
  std::vector<std::pair<std::string, std::string>> members_;
};

}  // namespace regiontrace::cli
