// Finds the calling thread's ThreadStats by the host's small thread number
// without a lock: a fixed table of atomic pointers for the first kSlots
// threads, a locked map past that. Readers walk every thread under the lock.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "thread_stats.hpp"

namespace regiontrace::region_stats {

class ThreadRegistry {
 public:
  ThreadRegistry(std::vector<std::int64_t> bounds_ns, std::size_t max_steps);
  ThreadStats& for_thread(std::uint64_t thread_id) {
    if (thread_id < kSlots) {
      ThreadStats* s = slots_[thread_id].load(std::memory_order_acquire);
      if (s != nullptr) return *s;
    }
    return create(thread_id);
  }
  // Every node of every thread, copied out.
  std::vector<PathRecord> snapshot() const;
  std::size_t thread_count() const;

 private:
  static constexpr std::size_t kSlots = 4096;
  ThreadStats& create(std::uint64_t thread_id);

  const std::vector<std::int64_t> bounds_ns_;
  const std::size_t max_steps_;
  std::unique_ptr<std::array<std::atomic<ThreadStats*>, kSlots>> slots_storage_;
  std::array<std::atomic<ThreadStats*>, kSlots>& slots_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::unique_ptr<ThreadStats>> threads_;
};

}  // namespace regiontrace::region_stats
