// Whole-file input and streamed output for the trace tools, with gzip on
// either side: traces arrive as `.json`, `.json.gz`, `.jsonl` or `.jsonl.gz`.
// Input is recognised as gzip by its magic bytes, not its name, so a renamed
// file still reads; output is compressed when its name ends in `.gz`.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "regiontrace/sdk/trace_file_writer.hpp"

namespace regiontrace::cli {

class ReadProgress;

// The bytes of a file followed by simdjson's padding, so simdjson can parse it
// (or any slice of it) in place without copying.
class PaddedText {
 public:
  PaddedText() = default;
  explicit PaddedText(std::string bytes);

  std::string_view text() const { return {buffer_.data(), size_}; }
  std::size_t size() const { return size_; }
  // A slice of the text that simdjson may read past, up to the padding.
  simdjson::padded_string_view padded(std::size_t offset, std::size_t length) const;

 private:
  std::string buffer_;  // size_ bytes of text, then SIMDJSON_PADDING zero bytes
  std::size_t size_ = 0;
};

// Reads `path` whole, inflating it when it is gzip. Throws std::runtime_error
// naming the path when it cannot be read, is not a regular file, is a
// damaged gzip stream or holds more than max_input_bytes() of text.
PaddedText read_text_file(const std::string& path);

// Opens an input for reading, refusing what is not a regular file (a FIFO
// with no writer, a device, a folder) before anything could block on it.
// Returns the descriptor (close-on-exec); throws std::runtime_error naming
// the path.
int open_input_file(const std::string& path);

// An input file read in chunks, inflated when it is gzip (by its magic
// bytes), by the rules read_text_file() has: concatenated members are one
// stream, and anything else after a member (trailing garbage) or a member
// cut short is "damaged or truncated gzip data". merge and report read
// this way, summary and diff whole: the same files pass and fail.
class DecodedInput {
 public:
  // Throws std::runtime_error naming the path (open_input_file's checks).
  explicit DecodedInput(const std::string& path);
  ~DecodedInput();
  DecodedInput(const DecodedInput&) = delete;
  DecodedInput& operator=(const DecodedInput&) = delete;

  // Up to `size` bytes of text into `out`; 0 at the end. Throws
  // std::runtime_error naming the path on damaged gzip data or a read error.
  std::size_t read(char* out, std::size_t size);

 private:
  bool refill();  // more raw bytes; false at end of file

  std::string path_;
  int fd_ = -1;
  bool gzip_ = false;
  bool at_end_ = false;      // of the raw file
  bool stream_end_ = false;  // a gzip member ended and no byte followed yet
  std::string raw_;
  std::size_t raw_pos_ = 0;
  struct Inflater;
  Inflater* inflater_ = nullptr;
  std::unique_ptr<ReadProgress> progress_;  // a line on the terminal for a large input
};

// The most text one input may hold once inflated: REGIONTRACE_MAX_INPUT_MB
// (default 4096 MiB), so that a small gzip bomb is refused with a message
// instead of exhausting memory.
std::uint64_t max_input_bytes();
// The message for an input past max_input_bytes().
std::string input_too_large(const std::string& path);

bool has_gz_suffix(const std::string& path);

// `-` (standard output) or an existing path that is no regular file
// (/dev/stdout, a FIFO, a terminal): written in place. There is nothing to
// rename over such a path, and renaming over /dev/stdout would replace the
// link with a plain file.
bool is_stream_output(const std::string& path);

// Writes text to a file, through zlib when the path ends in `.gz`: the
// SDK's TraceFileWriter, so the bytes go to a temporary
// file beside it, which close() renames into place; close() reports errors
// (disk full). Destroyed without a successful close() (an error, an
// exception), it removes the temporary file and leaves an existing file of
// that name untouched. A stream output (is_stream_output) is written as it
// goes, uncompressed; a `.gz` name that is a stream is refused.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Callers append to buffer() and call maybe_flush() now and then.
  std::string& buffer() { return buffer_; }
  void maybe_flush();
  // Whole pieces from a writer with a buffer of its own.
  void write(std::string_view text);
  void close();

 private:
  void flush();
  void write_through(std::string_view text);

  std::string path_;
  std::string buffer_;
  std::optional<sdk::TraceFileWriter> file_;  // a regular file's
  int stream_fd_ = -1;                        // a stream's
  bool owns_stream_fd_ = false;
};

}  // namespace regiontrace::cli
