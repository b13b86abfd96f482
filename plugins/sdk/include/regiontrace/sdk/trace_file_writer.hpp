// A file written whole, plain or gzip-compressed as asked (a trace the user
// named `.json` or `.json.gz`): WholeFileWriter or GzipFileWriter behind one
// interface, so a writer does not branch on compression at every call.
// Header-only; link zlib (ZLIB::ZLIB).
//
// Not thread-safe: one thread owns a writer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "regiontrace/sdk/gzip_file_writer.hpp"
#include "regiontrace/sdk/whole_file_writer.hpp"

namespace regiontrace::sdk {

class TraceFileWriter {
 public:
  // `level`: zlib's, when `gzip`. Throws std::runtime_error naming `path`.
  TraceFileWriter(std::string path, bool gzip, int level = 6) {
    if (gzip) {
      gzip_.emplace(std::move(path), level);
    } else {
      plain_.emplace(std::move(path));
    }
  }
  TraceFileWriter(const TraceFileWriter&) = delete;
  TraceFileWriter& operator=(const TraceFileWriter&) = delete;

  void write(std::string_view text) {
    bytes_in_ += text.size();
    gzip_ ? gzip_->write(text) : plain_->write(text);
  }
  // Renames into place, or throws naming the file (WholeFileWriter::commit).
  void commit() { gzip_ ? gzip_->commit() : plain_->commit(); }

  const std::string& path() const { return gzip_ ? gzip_->path() : plain_->path(); }
  std::uint64_t bytes_in() const { return bytes_in_; }  // before compression
  // The errno of the first failed write, 0 while none failed.
  int error() const { return gzip_ ? gzip_->error() : plain_->error(); }

 private:
  std::optional<WholeFileWriter> plain_;  // one of the two
  std::optional<GzipFileWriter> gzip_;
  std::uint64_t bytes_in_ = 0;
};

}  // namespace regiontrace::sdk
