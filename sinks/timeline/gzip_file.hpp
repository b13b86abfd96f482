// A .json.gz that appears whole or not at all (the SDK's GzipFileWriter: a
// temporary file renamed into place by commit(), so a signal or a crash
// never leaves half a trace under the final name). Level 1: the trace is written at exit, where
// time matters more than the last 20% of size. Compression runs on a thread of its own while the
// caller formats the next block (three quarters of the time is zlib's): take() hands a block over
// and returns an empty buffer to fill.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "regiontrace/sdk/gzip_file_writer.hpp"

namespace regiontrace::timeline {

class GzipFile {
 public:
  // Throws std::runtime_error naming the path.
  explicit GzipFile(std::string path);
  ~GzipFile();
  GzipFile(const GzipFile&) = delete;
  GzipFile& operator=(const GzipFile&) = delete;

  // Hands `text` to the compressing thread and leaves it empty (with
  // capacity) for the next block. Throws the compressing thread's error,
  // or std::system_error once a write to the file has failed.
  void take(std::string& text);
  // Ends the stream, renames into place. Throws naming the file; a failed
  // write as std::system_error with its errno.
  void commit();
  std::uint64_t bytes_in() const { return bytes_; }

 private:
  void compress_loop();
  void wait_idle(std::unique_lock<std::mutex>& lock);

  sdk::GzipFileWriter gzip_;  // the compressing thread's while busy_
  std::uint64_t bytes_ = 0;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::string pending_;  // the block being compressed
  bool busy_ = false;
  bool stop_ = false;
  std::string error_;
  std::thread thread_;
};

}  // namespace regiontrace::timeline
