// A .gz file that appears whole or not at all: text deflated as one gzip
// stream (zlib) into a WholeFileWriter, so a signal or a crash never leaves
// half a trace under the final name. Streamed: a large trace is never held a
// second time in memory. Header-only as the rest of the SDK; a sink that
// includes it links zlib (find_package(ZLIB), ZLIB::ZLIB).
//
// Not thread-safe: one thread owns a writer.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "regiontrace/sdk/whole_file_writer.hpp"

namespace regiontrace::sdk {

class GzipFileWriter {
 public:
  // `level`: zlib's 1 (fastest) to 9 (smallest). Throws std::runtime_error
  // naming `path`.
  GzipFileWriter(std::string path, int level, WholeFileOptions options = {})
      : file_(std::move(path), options) {
    // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
    if (deflateInit2(&stream_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      ended_ = true;
      throw std::runtime_error("cannot start gzip compression for `" + file_.path() + "`");
    }
  }
  ~GzipFileWriter() {
    if (!ended_) deflateEnd(&stream_);
  }
  // zlib's stream points back at itself: never copied or moved.
  GzipFileWriter(const GzipFileWriter&) = delete;
  GzipFileWriter& operator=(const GzipFileWriter&) = delete;

  void write(std::string_view text) {
    if (text.empty()) return;
    if (ended_) throw std::logic_error("write after commit to `" + file_.path() + "`");
    bytes_in_ += text.size();
    // avail_in is 32-bit: fed in pieces below 1 GiB.
    while (!text.empty() && file_.error() == 0) {
      const std::size_t n = std::min<std::size_t>(text.size(), std::size_t{1} << 30);
      stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));  // not written
      stream_.avail_in = static_cast<uInt>(n);
      deflate_into_file(Z_NO_FLUSH);
      text.remove_prefix(n);
    }
  }

  // Ends the gzip stream, then WholeFileWriter::commit(): renamed into place,
  // or std::runtime_error (std::system_error with the errno for a failed
  // write) naming the file.
  void commit() {
    if (!ended_) {
      stream_.next_in = nullptr;
      stream_.avail_in = 0;
      deflate_into_file(Z_FINISH);
      deflateEnd(&stream_);
      ended_ = true;
    }
    file_.commit();
  }

  const std::string& path() const { return file_.path(); }
  std::uint64_t bytes_in() const { return bytes_in_; }                   // before compression
  std::uint64_t bytes_written() const { return file_.bytes_written(); }  // compressed
  int error() const { return file_.error(); }

 private:
  void deflate_into_file(int flush) {
    for (;;) {
      stream_.next_out = out_.data();
      stream_.avail_out = static_cast<uInt>(out_.size());
      const int rc = deflate(&stream_, flush);
      if (rc == Z_STREAM_ERROR) {
        throw std::runtime_error("gzip compression failed for `" + file_.path() + "`");
      }
      file_.write(std::string_view(reinterpret_cast<const char*>(out_.data()),
                                   out_.size() - stream_.avail_out));
      if (flush == Z_FINISH ? rc == Z_STREAM_END : stream_.avail_out != 0) return;
    }
  }

  WholeFileWriter file_;
  z_stream stream_{};
  std::vector<unsigned char> out_ = std::vector<unsigned char>(1 << 18);
  bool ended_ = false;
  std::uint64_t bytes_in_ = 0;
};

}  // namespace regiontrace::sdk
