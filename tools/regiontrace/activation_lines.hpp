// The lines of an activation trace (JSON Lines, plain or gzip-compressed),
// each parsed as JSON: what load_activation_trace builds its records from.
// Memory is bounded by what the caller keeps, not by the input: a FIFO,
// /dev/zero or a one-line JSON document stops at the first line longer than
// a record could be, and inflated text beyond the input limit is refused.
#pragma once

#include <simdjson.h>
#include <zlib.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace regiontrace::cli {

class ActivationLineReader {
 public:
  using Visit = std::function<void(simdjson::dom::element)>;
  // Why a line that is no JSON was refused, when it can say (a Chrome
  // trace, say); empty for plain "malformed JSON".
  using Why = std::function<std::string(std::string_view line)>;

  explicit ActivationLineReader(std::string path) : path_(std::move(path)) {}

  // Calls `visit` with each non-blank line parsed, in order. Throws
  // std::runtime_error naming the file and line for what is not JSON Lines.
  void read(const Visit& visit, const Why& malformed);

  // The line read last (from 1); 0 before the first.
  std::uint32_t line() const { return line_; }
  // Throws std::runtime_error naming the file and the line read last.
  [[noreturn]] void fail(const std::string& why) const;

 private:
  void read_lines(gzFile in, const Visit& visit, const Why& malformed);
  [[noreturn]] void fail_long_line() const;
  void parse_line(const std::string& buffer, std::size_t pos, std::size_t length,
                  const Visit& visit, const Why& malformed);
  void parse_repaired(std::string_view line, simdjson::error_code first_error, const Visit& visit,
                      const Why& malformed);

  std::string path_;
  simdjson::dom::parser parser_;
  std::uint32_t line_ = 0;
  std::uint64_t read_bytes_ = 0;  // text read so far, inflated
};

}  // namespace regiontrace::cli
