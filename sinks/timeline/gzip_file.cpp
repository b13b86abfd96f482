#include "gzip_file.hpp"

#include <stdexcept>
#include <system_error>

namespace regiontrace::timeline {

GzipFile::GzipFile(std::string path) : gzip_(std::move(path), 1) {}

GzipFile::~GzipFile() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GzipFile::compress_loop() {
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
    lock.lock();
    if (!failure.empty() && error_.empty()) error_ = failure;
    busy_ = false;
    changed_.notify_all();
  }
}

void GzipFile::wait_idle(std::unique_lock<std::mutex>& lock) {
  changed_.wait(lock, [this] { return !busy_; });
  if (!error_.empty()) throw std::runtime_error(error_);
  // Idle: the compressing thread does not touch the file now. A full disk
  // stops the trace here rather than after formatting all of it.
  if (gzip_.error() != 0) {
    throw std::system_error(gzip_.error(), std::generic_category(),
                            "cannot write `" + gzip_.path() + "`");
  }
}

void GzipFile::take(std::string& text) {
  if (text.empty()) return;
  if (!thread_.joinable()) thread_ = std::thread([this] { compress_loop(); });
  std::unique_lock<std::mutex> lock(mutex_);
  wait_idle(lock);
  bytes_ += text.size();
  pending_.swap(text);
  text.clear();
  busy_ = true;
  changed_.notify_all();
}

void GzipFile::commit() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    wait_idle(lock);
  }
  gzip_.commit();
}

}  // namespace regiontrace::timeline
