// A file the writer thread appends to, remembering the first failure (disk
// full, ...) instead of throwing from a thread nobody can catch on.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace regiontrace::memory {

class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Throws std::runtime_error naming the path when it cannot be created.
  void open(const std::string& path);
  bool is_open() const { return file_ != nullptr; }
  const std::string& path() const { return path_; }

  void write(std::string_view text);
  void flush();
  void close();

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  // Writes a whole file at once (snapshots, the summary): to `path`.tmp, then
  // renamed, so a reader never sees half of one. Returns "" or the error.
  static std::string write_whole(const std::string& path, std::string_view text);

 private:
  void fail(const char* what);
  std::FILE* file_ = nullptr;
  std::string path_;
  std::string error_;
};

}  // namespace regiontrace::memory
