// A file written whole, plain or gzip-compressed as asked (a trace the user
// named `.json` or `.json.gz`): WholeFileWriter or BackgroundGzipWriter behind
// one interface, so a writer does not branch on compression at every call.
// Compressed text is handed over in blocks of 1 MiB and deflated on a thread
// of its own while the caller formats the next. Header-only; link zlib
// (ZLIB::ZLIB).
//
// Not thread-safe: one thread owns a writer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "regiontrace/sdk/background_gzip_writer.hpp"
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
    if (gzip_) {
      block_.append(text);
      if (block_.size() >= kBlockBytes) gzip_->take(block_);
    } else {
      plain_->write(text);
    }
    if (progress_ && bytes_in_ >= next_check_) check_progress();
  }

  // A long write says how far it got: `report(bytes_in, seconds)` is called
  // from write() once `after_s` seconds passed since this call, then at
  // most every `every_s`. The clock is read once per 4 MiB written, so a
  // short write pays nothing.
  void on_progress(std::function<void(std::uint64_t, double)> report, double after_s = 1.0,
                   double every_s = 2.0) {
    progress_ = std::move(report);
    started_ = std::chrono::steady_clock::now();
    next_report_s_ = after_s;
    every_s_ = every_s;
    next_check_ = bytes_in_ + kProgressCheckBytes;
  }
  // Renames into place, or throws naming the file (WholeFileWriter::commit).
  void commit() {
    if (gzip_) {
      gzip_->take(block_);
      gzip_->commit();
    } else {
      plain_->commit();
    }
  }

  const std::string& path() const { return gzip_ ? gzip_->path() : plain_->path(); }
  std::uint64_t bytes_in() const { return bytes_in_; }  // before compression
  // The errno of the first failed write, 0 while none failed.
  int error() const { return gzip_ ? gzip_->error() : plain_->error(); }

 private:
  static constexpr std::uint64_t kProgressCheckBytes = 4u << 20;
  static constexpr std::size_t kBlockBytes = 1u << 20;

  void check_progress() {
    next_check_ = bytes_in_ + kProgressCheckBytes;
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    if (s < next_report_s_) return;
    next_report_s_ = s + every_s_;
    progress_(bytes_in_, s);
  }

  std::optional<WholeFileWriter> plain_;  // one of the two
  std::optional<BackgroundGzipWriter> gzip_;
  std::string block_;  // gzip: what the next take() hands over
  std::uint64_t bytes_in_ = 0;
  std::function<void(std::uint64_t, double)> progress_;
  std::chrono::steady_clock::time_point started_;
  double next_report_s_ = 0;
  double every_s_ = 0;
  std::uint64_t next_check_ = 0;
};

}  // namespace regiontrace::sdk
