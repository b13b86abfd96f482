#include "thread_registry.hpp"

namespace regiontrace::region_stats {

ThreadRegistry::ThreadRegistry(std::vector<std::int64_t> bounds_ns, std::size_t max_steps)
    : bounds_ns_(std::move(bounds_ns)),
      max_steps_(max_steps),
      slots_storage_(std::make_unique<std::array<std::atomic<ThreadStats*>, kSlots>>()),
      slots_(*slots_storage_) {}

ThreadStats& ThreadRegistry::create(std::uint64_t thread_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<ThreadStats>& s = threads_[thread_id];
  if (!s) {
    s = std::make_unique<ThreadStats>(thread_id, bounds_ns_, max_steps_);
    if (thread_id < kSlots) slots_[thread_id].store(s.get(), std::memory_order_release);
  }
  return *s;
}

std::vector<PathRecord> ThreadRegistry::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<PathRecord> out;
  for (const auto& [id, stats] : threads_) {
    std::vector<PathRecord> part = stats->snapshot();
    for (PathRecord& r : part) out.push_back(std::move(r));
  }
  return out;
}

std::size_t ThreadRegistry::thread_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_.size();
}

}  // namespace regiontrace::region_stats
