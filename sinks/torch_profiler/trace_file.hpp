// A trace file as the torch_profiler sink writes it: whole or not at all
// (the SDK's WholeFileWriter: a temporary file renamed into place by
// commit(), so a reader, a crash or a signal never sees half a trace under
// the final name), gzip-compressed on the way when asked. Compression is
// streamed through zlib's deflate, so a large trace is never held in memory
// a second time. What this adds to the SDK is the compression only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "regiontrace/sdk/whole_file_writer.hpp"

namespace regiontrace::torch_profiler {

class TraceFile {
 public:
  // Throws std::runtime_error naming the path when it cannot be created.
  TraceFile(std::string path, bool gzip);
  ~TraceFile();  // the temporary file is removed unless committed
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  void write(std::string_view text);
  // Ends the gzip stream, renames into place. Throws naming the file.
  void commit();

  const std::string& path() const { return file_.path(); }
  std::uint64_t bytes_written() const { return bytes_; }  // before compression

 private:
  struct Deflate;  // zlib's stream, kept out of this header
  void deflate_into_file(int flush);

  sdk::WholeFileWriter file_;
  std::unique_ptr<Deflate> deflate_;  // null: plain
  std::uint64_t bytes_ = 0;
};

// Reads a file, gunzipping it when it starts with the gzip magic bytes.
std::string read_maybe_gzip(const std::string& path);

}  // namespace regiontrace::torch_profiler
