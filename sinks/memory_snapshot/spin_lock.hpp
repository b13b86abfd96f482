// A lock for critical sections of a few dozen instructions taken on every
// libtorch allocation (the live-allocation table's): cheaper than a
// mutex uncontended, and it yields instead of burning a core when the
// holder was preempted.
#pragma once

#include <atomic>
#include <thread>

namespace regiontrace::memory {

class SpinLock {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() {
    locked_.store(false, std::memory_order_release);
  }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace regiontrace::memory
