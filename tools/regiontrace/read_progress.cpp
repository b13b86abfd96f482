#include "read_progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace regiontrace::cli {

std::uint64_t progress_min_bytes() {
  const char* text = std::getenv("REGIONTRACE_PROGRESS_MIN_MB");
  if (text != nullptr && *text != '\0') {
    char* end = nullptr;
    const double mb = std::strtod(text, &end);
    if (end != text && *end == '\0' && mb >= 0) return static_cast<std::uint64_t>(mb * 1e6);
  }
  return 100'000'000;
}

ReadProgress::ReadProgress(const std::string& path, std::uint64_t total)
    : name_(std::filesystem::path(path).filename().string()), total_(total) {
  shown_ = total > 0 && total >= progress_min_bytes() && ::isatty(STDERR_FILENO) == 1;
  if (shown_) draw(true);
}

ReadProgress::~ReadProgress() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

void ReadProgress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  const double done = static_cast<double>(done_ < total_ ? done_ : total_);
  std::fprintf(stderr, "\r\033[Kregiontrace: reading %s: %3.0f%% (%.0f of %.0f MB)", name_.c_str(),
               100.0 * done / static_cast<double>(total_), done / 1e6,
               static_cast<double>(total_) / 1e6);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace regiontrace::cli
