// A GzipFileWriter whose compression runs on a thread of its own while the
// caller formats the next block: traces are written at the end of a run,
// where the program waits, and three quarters of writing one is zlib's. On
// two cores the two halves overlap. take() hands a block over and returns
// an empty buffer to fill; the thread starts with the first block, so a
// small file never starts one. Header-only as the rest of the SDK; link
// zlib.
//
// Not thread-safe: one thread owns a writer (the compressing thread is its
// own business).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "regiontrace/sdk/gzip_file_writer.hpp"

namespace regiontrace::sdk {

class BackgroundGzipWriter {
 public:
  // `level`: zlib's 1 (fastest) to 9. Throws std::runtime_error naming the path.
  BackgroundGzipWriter(std::string path, int level, WholeFileOptions options = {})
      : gzip_(std::move(path), level, options) {}
  ~BackgroundGzipWriter() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  BackgroundGzipWriter(const BackgroundGzipWriter&) = delete;
  BackgroundGzipWriter& operator=(const BackgroundGzipWriter&) = delete;

  // Hands `text` to the compressing thread and leaves it empty (with
  // capacity) for the next block. Throws the compressing thread's error, or
  // std::system_error once a write to the file has failed.
  void take(std::string& text) {
    if (text.empty()) return;
    if (!thread_.joinable()) thread_ = std::thread([this] { compress_loop(); });
    std::unique_lock<std::mutex> lock(mutex_);
    wait_idle(lock);
    bytes_in_ += text.size();
    pending_.swap(text);
    text.clear();
    busy_ = true;
    changed_.notify_all();
  }
  // Ends the stream and renames into place (GzipFileWriter::commit). Throws
  // naming the file; a failed write as std::system_error with its errno.
  void commit() {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wait_idle(lock);
    }
    gzip_.commit();
  }

  const std::string& path() const { return gzip_.path(); }
  std::uint64_t bytes_in() const { return bytes_in_; }  // handed over, before compression
  // The errno of the first failed write, 0 while none failed (as of the
  // last block the thread finished).
  int error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return file_error_;
  }

 private:
  void compress_loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return busy_ || stop_; });
      if (!busy_) return;
      lock.unlock();
      std::string failure;
      try {
        gzip_.write(pending_);
      } catch (const std::exception& e) {
        failure = e.what();
      }
      const int file_error = gzip_.error();
      lock.lock();
      if (!failure.empty() && error_.empty()) error_ = failure;
      file_error_ = file_error;
      busy_ = false;
      changed_.notify_all();
    }
  }

  void wait_idle(std::unique_lock<std::mutex>& lock) {
    changed_.wait(lock, [this] { return !busy_; });
    if (!error_.empty()) throw std::runtime_error(error_);
    // A full disk stops the writer here rather than after formatting all of it.
    if (file_error_ != 0) {
      throw std::system_error(file_error_, std::generic_category(),
                              "cannot write `" + gzip_.path() + "`");
    }
  }

  GzipFileWriter gzip_;  // the compressing thread's while busy_
  std::uint64_t bytes_in_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::string pending_;  // the block being compressed
  bool busy_ = false;
  bool stop_ = false;
  std::string error_;
  int file_error_ = 0;
  std::thread thread_;
};

}  // namespace regiontrace::sdk
