// What one application thread has open, for the memory sink: a stack of
// selected regions with the figures taken at entry, and the peak of each
// device since the innermost one opened.
//
// Nested peaks without resetting anything global: opening a region saves the
// running peak and restarts it from the current figure; closing takes the
// region's peak and folds it back into the saved one. Allocation events that
// libtorch reports on this thread's behalf (its own, and those of workers
// that inherited its thread-local state) raise the running peak with one
// atomic max, whichever thread they arrive on.
//
// Thread rules: open()/close()/cached_path() and the public plain fields run
// on the owning thread only; current_path and note_peak() may be used from
// any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "memory_counters.hpp"
#include "memory_devices.hpp"
#include "region_paths.hpp"
#include "regiontrace/sdk/events.hpp"

namespace regiontrace::memory {

// One device's figures for a region instance.
struct DeviceFigures {
  std::int32_t device = 0;  // memory_devices index
  std::int64_t entry = 0;
  std::int64_t exit = 0;
  std::int64_t peak = 0;
};

// The devices of a record, lowest index first: the CPU and two GPUs without a
// heap allocation (records are copied into the writer's queue, so they are
// kept small), more spill to the heap.
class DeviceFigureList {
 public:
  void push_back(const DeviceFigures& f) {
    if (count_ < kInline) {
      inline_[count_] = f;
    } else {
      more_.push_back(f);
    }
    ++count_;
  }
  std::size_t size() const { return count_; }
  const DeviceFigures& operator[](std::size_t i) const {
    return i < kInline ? inline_[i] : more_[i - kInline];
  }
  const DeviceFigures* find(int device) const {
    for (std::size_t i = 0; i < count_; ++i) {
      if ((*this)[i].device == device) return &(*this)[i];
    }
    return nullptr;
  }
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t i = 0; i < count_; ++i) fn((*this)[i]);
  }

 private:
  static constexpr std::size_t kInline = 3;
  DeviceFigures inline_[kInline];
  std::size_t count_ = 0;
  std::vector<DeviceFigures> more_;
};

// A region instance that just ended, with its figures.
struct ClosedRegion {
  int path = RegionPaths::kOutside;
  std::int64_t step = kNoStep;
  std::int64_t start_ns = 0;
  bool stood_aside = false;  // another profiler held the reporting slot
  bool unmeasured = false;   // stood aside and heard no event: no figures of its own
  DeviceFigureList devices;
  std::int64_t exclusive_net = 0;  // exit - entry over all devices, minus nested regions'
};

class ThreadAccounting {
 public:
  ThreadAccounting(std::uint64_t generation, std::uint64_t thread_id)
      : generation(generation), thread_id(thread_id) {}
  ThreadAccounting(const ThreadAccounting&) = delete;
  ThreadAccounting& operator=(const ThreadAccounting&) = delete;

  const std::uint64_t generation;  // of the sink instance that made it
  const std::uint64_t thread_id;

  // Any thread.
  std::atomic<int> current_path{RegionPaths::kOutside};
  // An event attributed to this thread arrived. Only "any since?" is asked,
  // so a lost update between threads does no harm: no read-modify-write.
  void note_heard() {
    heard_.store(heard_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void note_peak(int device, std::int64_t bytes) {
    std::atomic<std::int64_t>& p = peak_[device];
    std::int64_t seen = p.load(std::memory_order_relaxed);
    while (bytes > seen && !p.compare_exchange_weak(seen, bytes, std::memory_order_relaxed)) {
    }
  }

  // Owner thread.
  void open(RegionId id, int path, std::int64_t step, std::int64_t time_ns,
            const MemoryCounters& counters, bool stood_aside);
  // False when `id` is not open here (its begin came before the sink started).
  bool close(RegionId id, const MemoryCounters& counters, bool stood_aside, ClosedRegion* out);
  bool empty() const { return depth_ == 0; }
  int cached_path(std::string_view path, std::string_view name, RegionPaths& paths);
  // Drops what a finished thread no longer needs (its reporter, caches).
  void release();

  // The reporter object installed for this thread (allocation_reporter.cpp
  // owns its type) and its address as c10 sees it, for identity checks.
  std::shared_ptr<void> reporter;
  const void* reporter_id = nullptr;
  // Depth of the region whose exit by exception took the last snapshot, so
  // one exception unwinding through several regions takes one snapshot.
  int unwind_snapshot_depth = -1;

 private:
  // Reused from one region to the next: only the seen devices' slots of the
  // arrays are written and read.
  struct Frame {
    RegionId id;
    int path;
    std::int64_t step;
    std::int64_t start_ns;
    bool stood_aside;
    std::uint64_t heard_at_open;
    std::uint32_t devices;
    std::int64_t children_net;
    std::int64_t entry[kMaxDevices];
    std::int64_t saved_peak[kMaxDevices];
  };
  std::vector<Frame> frames_;
  std::size_t depth_ = 0;  // frames_[0, depth_) are open
  std::atomic<std::int64_t> peak_[kMaxDevices] = {};
  std::atomic<std::uint64_t> heard_{0};
  std::unordered_map<std::uint64_t, int> path_cache_;
  // The last path looked up: a loop re-entering one region compares its
  // path with this instead of hashing it.
  std::string last_path_;
  int last_index_ = RegionPaths::kOutside;
};

}  // namespace regiontrace::memory
