// A trace file as the torch_profiler sink writes it: whole or not at all
// (a temporary file renamed into place by commit(), so a reader, a crash or
// a signal never sees half a trace under the final name), gzip-compressed
// on the way when asked: the SDK's WholeFileWriter or GzipFileWriter.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "regiontrace/sdk/gzip_file_writer.hpp"
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

  const std::string& path() const { return gzip_ ? gzip_->path() : plain_->path(); }
  std::uint64_t bytes_written() const { return bytes_; }  // before compression

 private:
  std::unique_ptr<sdk::WholeFileWriter> plain_;  // one of the two
  std::unique_ptr<sdk::GzipFileWriter> gzip_;
  std::uint64_t bytes_ = 0;
};

// Reads a file, gunzipping it when it starts with the gzip magic bytes.
std::string read_maybe_gzip(const std::string& path);

}  // namespace regiontrace::torch_profiler
