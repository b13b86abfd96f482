// A .json.gz that appears whole or not at all: zlib's deflate streamed into
// the SDK's WholeFileWriter (a temporary file renamed into place by
// commit()), so a signal or a crash never leaves half a trace under the
// final name. Level 1: the trace is written at exit, where time matters
// more than the last 20% of size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "regiontrace/sdk/whole_file_writer.hpp"

namespace regiontrace::timeline {

class GzipFile {
 public:
  // Throws std::runtime_error naming the path.
  explicit GzipFile(std::string path);
  ~GzipFile();
  GzipFile(const GzipFile&) = delete;
  GzipFile& operator=(const GzipFile&) = delete;

  void write(std::string_view text);
  // Ends the stream, renames into place. Throws naming the file.
  void commit();
  std::uint64_t bytes_in() const { return bytes_; }

 private:
  struct Deflate;
  void deflate_into_file(int flush);

  sdk::WholeFileWriter file_;
  std::unique_ptr<Deflate> deflate_;
  std::uint64_t bytes_ = 0;
};

}  // namespace regiontrace::timeline
