// Finds the calling thread's ThreadStats by the host's thread number without
// a lock (the SDK's thread table). Readers walk every thread under the lock.
//
// Memory stays bounded under thread churn (a pool that makes a thread per
// task): when a thread that recorded exits, its statistics leave the live
// table. The last kKeptFinished finished threads keep their own numbers for
// the per-thread report; older ones are folded into per-path totals of
// their paths (FoldedPaths), which the merged numbers include, so a path's
// count, total and percentiles never lose a finished thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "folded_paths.hpp"
#include "thread_stats.hpp"

namespace regiontrace::region_stats {

class ThreadRegistry {
 public:
  static constexpr std::size_t kKeptFinished = 16;

  ThreadRegistry(std::vector<std::int64_t> bounds_ns, std::size_t max_steps);
  ~ThreadRegistry();
  ThreadRegistry(const ThreadRegistry&) = delete;
  ThreadRegistry& operator=(const ThreadRegistry&) = delete;

  ThreadStats& for_thread(std::uint64_t thread_id) {
    ThreadStats* s = table_.find(thread_id);
    return s != nullptr ? *s : create(thread_id);
  }
  // The thread that recorded as `thread_id` has ended: called on that
  // thread as it exits (for_thread registered the hook), never while it
  // records.
  void finish(std::uint64_t thread_id);

  // Every node of every live and kept finished thread, copied out, then the
  // folded totals (thread_id kFoldedThreads, `threads` how many they hold).
  // `folded_threads`: how many finished threads the folded totals hold.
  std::vector<PathRecord> snapshot(std::uint64_t* folded_threads = nullptr) const;
  // Threads in the per-thread report: live and kept finished ones.
  std::size_t thread_count() const;
  // Finished threads whose numbers are only in their paths' totals.
  std::uint64_t folded_threads() const;

 private:
  ThreadStats& create(std::uint64_t thread_id);

  const std::vector<std::int64_t> bounds_ns_;
  const std::size_t max_steps_;
  const std::uint64_t serial_;  // tells this registry to the exit hooks
  // Live threads. The host's thread numbers (below 2^23) all fit.
  sdk::ThreadTable<ThreadStats> table_;
  mutable std::mutex mutex_;  // what follows, and a thread's creation and finish
  std::deque<std::vector<PathRecord>> finished_;  // the last kKeptFinished, oldest first
  std::set<std::uint64_t> ended_;                 // thread numbers finished: no exit hook again
  FoldedPaths folded_;
};

}  // namespace regiontrace::region_stats
