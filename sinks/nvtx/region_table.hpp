// Per-region state looked up by RegionId on the hot path without a lock.
//
// Entries are created in on_region_routed (rare, serialised by the caller)
// and never move or die while the table lives: chunks of 256 entries are
// published once through atomic pointers, so a reader costs two loads.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "regiontrace/sdk/events.hpp"

namespace regiontrace::nvtx {

template <typename Entry>
class RegionTable {
 public:
  static constexpr std::size_t kChunkBits = 8;
  static constexpr std::size_t kChunkSize = std::size_t{1} << kChunkBits;
  static constexpr std::size_t kMaxChunks = 4096;  // a million regions

  RegionTable() {
    for (auto& c : chunks_) c.store(nullptr, std::memory_order_relaxed);
  }
  ~RegionTable() {
    for (auto& c : chunks_) delete[] c.load(std::memory_order_relaxed);
  }
  RegionTable(const RegionTable&) = delete;
  RegionTable& operator=(const RegionTable&) = delete;

  // The entry, or null when `id` was never created (or is out of range).
  const Entry* find(RegionId id) const {
    const std::size_t chunk = id >> kChunkBits;
    if (chunk >= kMaxChunks) return nullptr;
    const Slot* c = chunks_[chunk].load(std::memory_order_acquire);
    if (c == nullptr) return nullptr;
    const Slot& s = c[id & (kChunkSize - 1)];
    return s.ready.load(std::memory_order_acquire) ? &s.entry : nullptr;
  }

  // Stores `entry` for `id`. Callers serialise; returns false when `id` is
  // beyond the table or already set.
  bool set(RegionId id, const Entry& entry) {
    const std::size_t chunk = id >> kChunkBits;
    if (chunk >= kMaxChunks) return false;
    Slot* c = chunks_[chunk].load(std::memory_order_relaxed);
    if (c == nullptr) {
      c = new Slot[kChunkSize];
      chunks_[chunk].store(c, std::memory_order_release);
    }
    Slot& s = c[id & (kChunkSize - 1)];
    if (s.ready.load(std::memory_order_relaxed)) return false;
    s.entry = entry;
    s.ready.store(true, std::memory_order_release);
    return true;
  }

 private:
  struct Slot {
    Entry entry{};
    std::atomic<bool> ready{false};
  };
  std::array<std::atomic<Slot*>, kMaxChunks> chunks_;
};

}  // namespace regiontrace::nvtx
