// Bytes libtorch has allocated, per device, as the sink sees them.
//
// cpu: the sink's own running sum of the allocation events it receives
// (libtorch's CPU figure counts whatever it learned before the sink started,
// and the sink cannot read it before the first event). cuda:N: the caching
// allocator's device-wide `allocated` bytes, which every CUDA event carries
// (read from the allocator when the sink starts), right even for
// allocations made on threads the sink does not hear; a plain store, so
// events racing on two threads may leave the older figure until the next.
#pragma once

#include <atomic>
#include <cstdint>

#include "memory_devices.hpp"

namespace regiontrace::memory {

class MemoryCounters {
 public:
  // Returns the figure after the change.
  std::int64_t add(int device, std::int64_t delta) {
    mark_seen(device);
    return slots_[device].bytes.fetch_add(delta, std::memory_order_relaxed) + delta;
  }
  // add() for callers serialised by a lock that every other adder of
  // `device` holds too (the tracking table's): a plain load and store.
  std::int64_t add_serialised(int device, std::int64_t delta) {
    mark_seen(device);
    std::atomic<std::int64_t>& b = slots_[device].bytes;
    const std::int64_t now = b.load(std::memory_order_relaxed) + delta;
    b.store(now, std::memory_order_relaxed);
    return now;
  }
  void set(int device, std::int64_t value) {
    mark_seen(device);
    slots_[device].bytes.store(value, std::memory_order_relaxed);
  }
  std::int64_t current(int device) const {
    return slots_[device].bytes.load(std::memory_order_relaxed);
  }
  // Devices that had at least one event; the CPU always counts as seen.
  std::uint32_t seen() const { return seen_.load(std::memory_order_relaxed); }

 private:
  void mark_seen(int device) {
    const std::uint32_t bit = 1u << device;
    if ((seen_.load(std::memory_order_relaxed) & bit) == 0) seen_.fetch_or(bit);
  }
  // One cache line each: CPU events from many threads hit slot 0 only.
  struct alignas(64) Slot {
    std::atomic<std::int64_t> bytes{0};
  };
  Slot slots_[kMaxDevices];
  std::atomic<std::uint32_t> seen_{1u << kCpuDevice};
};

}  // namespace regiontrace::memory
