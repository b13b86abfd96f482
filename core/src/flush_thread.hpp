// The host's flight-recorder clock: a thread that, every flush_interval_s,
// asks the dispatcher to put what the kInterestPeriodicFlush sinks recorded
// on disk (Dispatcher::flush_flight_recorders). A process killed by SIGKILL
// or ended by _exit() runs nothing at its end; what reached the disk by the
// last tick is what its files keep.
//
// The thread blocks every signal: the host's SIGINT/SIGTERM handling runs
// on its own watcher thread, which stops this one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace regiontrace::detail {

class FlushThread {
 public:
  // Starts ticking every `interval`; a running one is stopped first.
  void start(std::chrono::nanoseconds interval, std::function<void()> tick);
  // Waits for a tick under way, then ends the thread. Idempotent.
  void stop();
  // In a forked child: the thread stayed in the parent, and its lock may
  // have been held there.
  void forget_after_fork();

 private:
  void run(std::chrono::nanoseconds interval);

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::function<void()> tick_;
  std::thread thread_;
};

}  // namespace regiontrace::detail
