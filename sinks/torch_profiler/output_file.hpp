// A file written whole or not at all: text goes to "<path>.tmp<pid>" (gzip
// compressed when asked) and is renamed to `path` by commit(), so a reader,
// a crash or a signal never sees half a trace under the final name.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace regiontrace::torch_profiler {

class OutputFile {
 public:
  // Throws std::runtime_error naming the path when it cannot be created.
  OutputFile(std::string path, bool gzip);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view text);
  // Flushes, closes and renames into place. Throws on any write error.
  void commit();

  const std::string& path() const { return path_; }
  std::uint64_t bytes_written() const { return bytes_; }  // before compression

 private:
  void close_handles();

  std::string path_;
  std::string tmp_path_;
  bool gzip_ = false;
  std::FILE* plain_ = nullptr;
  void* gz_ = nullptr;  // gzFile, kept opaque so zlib.h stays in the .cpp
  std::uint64_t bytes_ = 0;
  bool failed_ = false;
  bool committed_ = false;
};

// Reads a file, gunzipping it when it starts with the gzip magic bytes.
std::string read_maybe_gzip(const std::string& path);

}  // namespace regiontrace::torch_profiler
