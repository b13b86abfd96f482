// Reads a Chrome / Perfetto trace (`.json` or `.json.gz`) one event at a time,
// never holding more than one chunk of the file and the event in hand:
// summary, merge and report handle traces larger than memory this way.
//
// It walks the top-level object (or bare array) itself: members before
// "traceEvents" are the header, members after it the trailer; each member's
// value and each event are returned as their raw JSON text, each checked by
// simdjson (with its number repair): what one command refuses, the others
// refuse too, with the byte offset, and a merged file is valid JSON. Callers
// parse what they need (TraceEventReader's records, EventFields, or
// simdjson for small parts).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gzip_io.hpp"

namespace regiontrace::cli {

class TraceEventStream {
 public:
  // Throws std::runtime_error naming the path when it cannot be opened or
  // does not start like a trace. `allow_non_finite`: a bare NaN or Infinity
  // (Python's json.dumps) passes, read as no number, for a caller that
  // copies nothing out (summary); merge and report refuse it.
  explicit TraceEventStream(const std::string& path, bool allow_non_finite = false);
  ~TraceEventStream();
  TraceEventStream(const TraceEventStream&) = delete;
  TraceEventStream& operator=(const TraceEventStream&) = delete;

  // The next event's text, valid until the next call; false after the last
  // one. Throws std::runtime_error naming the file and the byte offset on
  // malformed input.
  bool next(std::string_view& event);

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
  void check_json(std::string_view text, const std::string& what);
  bool fill();  // appends more input; false at end of file
  int peek_nonspace();
  char take_nonspace();
  std::size_t value_end(std::size_t start);  // end of the JSON value at start (refilling)
  std::string read_key();
  void read_members_until_events();
  void read_trailer();

  std::string path_;
  bool allow_non_finite_ = false;
  std::unique_ptr<DecodedInput> input_;
  std::string buffer_;
  std::size_t pos_ = 0;
  std::uint64_t consumed_ = 0;  // bytes dropped from the front of buffer_
  bool eof_ = false;
  bool array_form_ = false;
  State state_ = State::kDone;
  bool first_event_ = true;
  std::size_t events_ = 0;
  std::vector<std::pair<std::string, std::string>> members_;
  simdjson::dom::parser parser_;  // checks each event and member
};

}  // namespace regiontrace::cli
