#include "background_writer.hpp"

namespace regiontrace::torch_profiler {

BackgroundWriter::~BackgroundWriter() {
  finish();
}

void BackgroundWriter::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!finished_) {
      jobs_.push_back(std::move(job));
      if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
      wake_.notify_one();
      return;
    }
  }
  job();
}

void BackgroundWriter::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void BackgroundWriter::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace regiontrace::torch_profiler
