// One thread of the sink's own that writes traces, so formatting and
// compressing a large trace never runs on the application's thread. Jobs run
// in the order they were posted.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace regiontrace::torch_profiler {

class BackgroundWriter {
 public:
  BackgroundWriter() = default;
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Starts the thread on first use. A job must not throw.
  void post(std::function<void()> job);
  // Runs what was posted, then stops the thread. Posting afterwards runs the
  // job on the caller's thread.
  void finish();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::thread thread_;
  bool stopping_ = false;
  bool finished_ = false;
};

}  // namespace regiontrace::torch_profiler
