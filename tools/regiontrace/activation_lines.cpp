#include "activation_lines.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "gzip_io.hpp"
#include "json_number_repair.hpp"

namespace regiontrace::cli {
namespace {

// Records are a few hundred bytes; a longer line is some other document (a
// one-line Chrome trace, binary data) and is refused rather than buffered.
constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

bool is_blank(std::string_view s) {
  return s.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

void ActivationLineReader::read(const Visit& visit, const Why& malformed) {
  const int fd = open_input_file(path_);
  gzFile in = gzdopen(fd, "rb");
  if (in == nullptr) {
    close(fd);
    throw std::runtime_error(path_ + ": cannot open: " + std::strerror(errno));
  }
  try {
    read_lines(in, visit, malformed);
  } catch (...) {
    gzclose(in);
    throw;
  }
  gzclose(in);
}

void ActivationLineReader::fail(const std::string& why) const {
  throw std::runtime_error(path_ + ":" + std::to_string(line_) + ": " + why);
}

// Reads through zlib (plain files pass through unchanged) in chunks, so
// memory is bounded by the records kept, not by the input: a FIFO,
// /dev/zero or a one-line JSON document stops at the first line longer than
// kMaxLineBytes instead of filling memory.
void ActivationLineReader::read_lines(gzFile in, const Visit& visit, const Why& malformed) {
  // Lines are parsed in place: simdjson may read SIMDJSON_PADDING bytes past
  // a line's end, which the buffer always holds.
  std::string buffer(kMaxLineBytes + kChunkBytes + simdjson::SIMDJSON_PADDING, '\0');
  std::size_t filled = 0;
  bool at_end = false;
  while (!at_end || filled > 0) {
    if (!at_end) {
      const int n = gzread(in, buffer.data() + filled, static_cast<unsigned>(kChunkBytes));
      if (n < 0) {
        int code = 0;
        const char* message = gzerror(in, &code);
        throw std::runtime_error(
            path_ + ": cannot read: " + (code == Z_ERRNO ? std::strerror(errno) : message));
      }
      filled += static_cast<std::size_t>(n);
      at_end = n == 0;
      // The records kept grow with the text: a gzip bomb of short lines
      // is refused at the limit instead of filling memory.
      read_bytes_ += static_cast<std::uint64_t>(n);
      if (read_bytes_ > max_input_bytes()) throw std::runtime_error(input_too_large(path_));
    }
    std::size_t pos = 0;
    while (pos < filled) {
      std::size_t length = std::string_view(buffer.data() + pos, filled - pos).find('\n');
      if (length == std::string_view::npos) {
        if (!at_end) break;  // the rest of this line comes with the next chunk
        length = filled - pos;
      }
      ++line_;
      if (length > kMaxLineBytes) fail_long_line();
      parse_line(buffer, pos, length, visit, malformed);
      pos += length + 1;
    }
    if (pos >= filled) {
      filled = 0;
      continue;
    }
    if (filled - pos > kMaxLineBytes) {
      ++line_;
      fail_long_line();
    }
    std::memmove(buffer.data(), buffer.data() + pos, filled - pos);
    filled -= pos;
  }
}

void ActivationLineReader::fail_long_line() const {
  fail("line longer than " + std::to_string(kMaxLineBytes >> 20) +
       " MiB: not an activation trace (a record is one short JSON object per line)");
}

void ActivationLineReader::parse_line(const std::string& buffer, std::size_t pos,
                                      std::size_t length, const Visit& visit,
                                      const Why& malformed) {
  const std::string_view text(buffer.data() + pos, length);
  if (is_blank(text)) return;
  if (text.find('\0') != std::string_view::npos) fail("binary data: not an activation trace");
  auto parsed =
      parser_.parse(simdjson::padded_string_view(text.data(), text.size(), buffer.size() - pos));
  if (parsed.error()) {
    parse_repaired(text, parsed.error(), visit, malformed);
  } else {
    visit(parsed.value_unsafe());
  }
}

void ActivationLineReader::parse_repaired(std::string_view line, simdjson::error_code first_error,
                                          const Visit& visit, const Why& malformed) {
  const simdjson::padded_string repaired(repair_json_numbers(line));
  auto parsed = parser_.parse(repaired);
  if (parsed.error()) {
    const std::string why = malformed(line);
    if (!why.empty()) fail(why);
    fail(std::string("malformed JSON (") + simdjson::error_message(first_error) + ")");
  }
  visit(parsed.value_unsafe());
}

}  // namespace regiontrace::cli
