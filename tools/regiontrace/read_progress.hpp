// A progress line on the terminal while `merge`, `report` or `summary` read
// a large input: reading a trace of a few hundred MB takes seconds, and a
// silent terminal looks hung. Nothing when stderr is not a terminal (a
// pipe, a log file, a test), so output that is read by programs is the
// same with or without it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace regiontrace::cli {

class ReadProgress {
 public:
  // Shows a line only when stderr is a terminal and `total` bytes reach
  // REGIONTRACE_PROGRESS_MIN_MB (default 100).
  ReadProgress(const std::string& path, std::uint64_t total);
  ~ReadProgress();  // clears the line it drew
  ReadProgress(const ReadProgress&) = delete;
  ReadProgress& operator=(const ReadProgress&) = delete;

  // `bytes` more of the input were read; redraws at most 5 times a second.
  void advance(std::uint64_t bytes) {
    if (!shown_) return;
    done_ += bytes;
    draw(false);
  }

 private:
  void draw(bool force);

  std::string name_;
  std::uint64_t total_ = 0;
  std::uint64_t done_ = 0;
  bool shown_ = false;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

// The threshold in bytes (REGIONTRACE_PROGRESS_MIN_MB, default 100 MB).
std::uint64_t progress_min_bytes();

}  // namespace regiontrace::cli
